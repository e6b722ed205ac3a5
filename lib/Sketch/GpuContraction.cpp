//===- GpuContraction.cpp - Matmuls as the tensor-core sketches see them --===//

#include "GpuContraction.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace ke;

bool ke::hasMmaEpilogueOnly(Operation *anchor) {
  auto func = anchor->getParentOfType<func::FuncOp>();
  if (!func)
    return false;
  KernelNeighbours neighbours = findKernelNeighbours(anchor);
  if (neighbours.rowReductions)
    return false;
  if (!neighbours.consumer)
    return true;
  auto consumer = dyn_cast<linalg::LinalgOp>(neighbours.consumer);
  if (!consumer || consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      consumer->getNumResults() != 1 ||
      !consumer.getIndexingMapMatchingResult(consumer->getResult(0))
           .isIdentity())
    return false;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == anchor->getResult(0) &&
        !consumer.getMatchingIndexingMap(input).isIdentity())
      return false;
  return true;
}

bool ke::readOperandLayouts(ArrayRef<AffineMap> maps, unsigned batch,
                        MLIRContext *context, MmaContraction &c,
                        bool allowTransposedA) {
  unsigned rank = batch + 3;
  auto map = [&](ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs;
    for (unsigned b = 0; b < batch; ++b)
      exprs.push_back(getAffineDimExpr(b, context));
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(batch + d, context));
    return AffineMap::get(rank, 0, exprs, context);
  };
  if (maps.size() != 3 || maps[2] != map({0, 1}))
    return false;
  c.transposedA = maps[0] == map({2, 0});
  c.transposedB = maps[1] == map({1, 2});
  // gpu.mma does not take A stored K x M: upstream's ldmatrix .trans
  // addressing of a 16x16 A fragment (getLaneIdToLdMatrixMatrixCoord) gave
  // every such candidate a wrong result on an H100 (relative L2 error 1.0,
  // session 12); gpu.wgmma reads it MN-major with wgmma's transpose.
  if (c.transposedA && !allowTransposedA)
    return false;
  return (c.transposedA || maps[0] == map({0, 2})) &&
         (c.transposedB || maps[1] == map({2, 1}));
}

std::optional<MmaContraction> ke::analyzeContraction(Operation *anchor,
                                                     bool allowTransposedA) {
  auto op = dyn_cast<linalg::LinalgOp>(anchor);
  if (!op || !isStaticTensorOp(op))
    return std::nullopt;
  MmaContraction c;
  if (isa<linalg::BatchMatmulOp>(anchor))
    c.batchLoops = 1;
  else if (!isa<linalg::MatmulOp>(anchor))
    return std::nullopt;
  if (!readOperandLayouts(op.getIndexingMapsArray(), c.batchLoops,
                          op.getContext(), c, allowTransposedA))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (c.batchLoops)
    c.batch = ranges[0];
  c.m = ranges[c.batchLoops];
  c.n = ranges[c.batchLoops + 1];
  c.k = ranges[c.batchLoops + 2];
  c.a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  c.b = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  c.c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  return c;
}

SmallVector<int64_t>
ke::dividingChoices(int64_t extent, ArrayRef<int64_t> candidates, int64_t unit) {
  SmallVector<int64_t> choices;
  for (int64_t c : candidates)
    if (c % unit == 0 && extent % c == 0)
      choices.push_back(c);
  return choices;
}

Knob ke::makeKnob(StringRef name, SmallVector<int64_t> choices, int64_t preferred) {
  Knob knob{name.str(), std::move(choices), 0};
  for (unsigned i = 0; i < knob.choices.size(); ++i)
    if (knob.choices[i] <= preferred)
      knob.defaultIndex = i;
  return knob;
}

LoopNestDescription ke::describeMmaNest(const MmaContraction &c,
                                        const MmaNestTiles &t) {
  LoopNestDescription d;
  d.ranges = c.sizes({c.m, c.n, c.k}, c.batch);
  d.reduction = SmallVector<bool>(c.batchLoops, false);
  d.reduction.append({false, false, true});
  d.addLevel(TileLevelRole::Threads, c.sizes({t.blockM, t.blockN, 0}, 1),
             true);
  d.addLevel(TileLevelRole::Cache, c.sizes({0, 0, t.kStage}, 0), false);
  d.addLevel(TileLevelRole::Register, c.sizes({t.warpM, t.warpN, 0}, 0),
             true);
  d.addLevel(TileLevelRole::Inner, c.sizes({t.instrM, t.instrN, t.instrK}, 0),
             false);
  d.threads = t.threads;
  d.vectorLoop = c.batchLoops + 1;
  d.vectorWidth = t.vectorWidth;
  return d;
}
