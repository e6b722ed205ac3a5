//===- GpuContraction.cpp - Matmuls as the tensor-core sketches see them --===//

#include "GpuContraction.h"
#include "GpuSupport.h"
#include "RuleSupport.h"

#include "ScriptWriter.h"

#include "ke/Workload/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace ke;

bool ke::hasMmaEpilogueOnly(Operation *anchor, bool allowPermutedRead) {
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
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input->get() != anchor->getResult(0))
      continue;
    AffineMap read = consumer.getMatchingIndexingMap(input);
    if (!read.isIdentity() && !(allowPermutedRead && read.isPermutation()))
      return false;
  }
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

std::optional<TensorCoreGemm> ke::analyzeTensorCoreGemm(Operation *anchor) {
  if (std::optional<MmaContraction> c =
          analyzeContraction(anchor, /*allowTransposedA=*/true))
    return TensorCoreGemm{*c, {}};
  auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(anchor);
  if (!conv || !conv.hasPureTensorSemantics())
    return std::nullopt;
  auto op = cast<linalg::LinalgOp>(anchor);
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (llvm::any_of(loops, ShapedType::isDynamic))
    return std::nullopt;
  TensorCoreGemm g;
  g.convLoops = loops;
  g.c.m = loops[0] * loops[1] * loops[2];
  g.c.n = loops[3];
  g.c.k = loops[4] * loops[5] * loops[6];
  g.c.a = getElementTypeOrSelf(conv.getInputs()[0].getType());
  g.c.b = getElementTypeOrSelf(conv.getInputs()[1].getType());
  g.c.c = getElementTypeOrSelf(conv.getOutputs()[0].getType());
  return g;
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

LoopNestDescription ke::describeConvGemmNest(ArrayRef<int64_t> loops,
                                             const MmaNestTiles &t) {
  // Output pixels as (oh, ow) rows: `rows` pixels cover min(rows, ow) of a
  // row and as many rows as that leaves.
  auto pixels = [&](int64_t rows) {
    int64_t ow = std::min(rows, loops[2]);
    int64_t oh = std::min(loops[1], std::max<int64_t>(1, rows / ow));
    return std::make_pair(oh, ow);
  };
  auto [blockOh, blockOw] = pixels(t.blockM);
  auto [warpOh, warpOw] = pixels(t.warpM);
  LoopNestDescription d;
  d.ranges = SmallVector<int64_t>(loops);
  d.reduction = {false, false, false, false, true, true, true};
  d.addLevel(TileLevelRole::Threads, {1, blockOh, blockOw, t.blockN, 0, 0, 0},
             true);
  d.addLevel(TileLevelRole::Cache, {0, 0, 0, 0, 1, 1, t.kStage}, false);
  d.addLevel(TileLevelRole::Register, {1, warpOh, warpOw, t.warpN, 0, 0, 0},
             true);
  d.addLevel(TileLevelRole::Inner,
             {1, 1, std::min(t.instrM, warpOw), t.instrN, 1, 1, t.instrK},
             false);
  d.threads = t.threads;
  d.vectorLoop = 3;
  d.vectorWidth = t.vectorWidth;
  return d;
}

SmallVector<int64_t> ke::coveringTileChoices(int64_t extent, int64_t first) {
  SmallVector<int64_t> choices;
  for (int64_t tile = first; tile <= 256; tile *= 2) {
    choices.push_back(tile);
    if (tile >= extent)
      break;
  }
  return choices;
}

std::string
ke::emitMarkScript(Operation *anchor, StringRef rule,
                   const KnobAssignment &knobs, StringRef mark,
                   ArrayRef<std::pair<StringRef, int64_t>> markKnobs,
                   StringRef builder) {
  std::string knobDictionary = "{";
  for (auto [i, knob] : llvm::enumerate(markKnobs))
    knobDictionary += (i ? ", " : "") + knob.first.str() + " = " +
                      std::to_string(knob.second) + " : i64";
  knobDictionary += "}";
  ScriptWriter w;
  w.comment(("sketch " + rule + ": " + knobs.str()).str());
  std::string op = w.match(anchor->getName().getStringRef(), kAnchorAttr);
  std::string knobParam = w.fresh("knobs");
  w.line(knobParam + " = transform.param.constant " + knobDictionary +
         " -> !transform.any_param");
  w.comment((builder + " builds the kernel from the mark").str());
  w.line("transform.annotate " + op + " \"" + mark.str() + "\" = " +
         knobParam + " : !transform.any_op, !transform.any_param");
  if (findKernelNeighbours(anchor).consumer) {
    std::string consumer = w.match("", kConsumerAttr);
    w.line("transform.annotate " + consumer + " \"" + mark.str() +
           ".epilogue\" : !transform.any_op");
  }
  std::string func = w.fresh("func");
  w.line(func + " = transform.structured.match ops{[\"func.func\"]} in "
                "%root : (!transform.any_op) -> !transform.any_op");
  w.line(w.fresh("func") + " = transform.bufferization.one_shot_bufferize " +
         func + " : (!transform.any_op) -> !transform.any_op");
  return w.finish();
}
