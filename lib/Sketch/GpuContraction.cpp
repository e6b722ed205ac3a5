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

std::optional<TensorCoreGemm> ke::analyzeTensorCoreGemm(Operation *anchor,
                                                        bool anySpatialRank) {
  if (std::optional<MmaContraction> c =
          analyzeContraction(anchor, /*allowTransposedA=*/true))
    return TensorCoreGemm{*c, {}};
  unsigned spatial;
  if (isa<linalg::Conv2DNhwcHwcfOp>(anchor))
    spatial = 2;
  else if (anySpatialRank && isa<linalg::Conv1DNwcWcfOp>(anchor))
    spatial = 1;
  else if (anySpatialRank && isa<linalg::Conv3DNdhwcDhwcfOp>(anchor))
    spatial = 3;
  else
    return std::nullopt;
  auto op = cast<linalg::LinalgOp>(anchor);
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (!op.hasPureTensorSemantics() ||
      llvm::any_of(loops, ShapedType::isDynamic))
    return std::nullopt;
  // Loops (n, [od,] [oh,] ow, f, [kd,] [kh,] kw, c).
  TensorCoreGemm g;
  g.convLoops = loops;
  g.c.m = g.c.k = 1;
  for (unsigned d = 0; d <= spatial; ++d)
    g.c.m *= loops[d];
  g.c.n = loops[spatial + 1];
  for (unsigned d = spatial + 2; d < loops.size(); ++d)
    g.c.k *= loops[d];
  g.c.a = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  g.c.b = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  g.c.c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
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
  // Described as a 2-D convolution (n, oh, ow, f, kh, kw, c); a 3-D one
  // adds od and kd (tiled by 1), a 1-D one drops oh and kh (extent 1).
  bool conv1d = loops.size() == 5, conv3d = loops.size() == 9;
  unsigned oh0 = conv3d ? 2 : 1;
  int64_t outH = conv1d ? 1 : loops[oh0];
  int64_t outW = conv1d ? loops[1] : loops[oh0 + 1];
  // Output pixels as (oh, ow) rows: `rows` pixels cover min(rows, ow) of a
  // row and as many rows as that leaves.
  auto pixels = [&](int64_t rows) {
    int64_t ow = std::min(rows, outW);
    int64_t oh = std::min(outH, std::max<int64_t>(1, rows / ow));
    return std::make_pair(oh, ow);
  };
  auto [blockOh, blockOw] = pixels(t.blockM);
  auto [warpOh, warpOw] = pixels(t.warpM);
  LoopNestDescription d;
  d.ranges = SmallVector<int64_t>(loops);
  SmallVector<bool> reduction = {false, false, false, false, true, true, true};
  SmallVector<int64_t> block = {1, blockOh, blockOw, t.blockN, 0, 0, 0};
  SmallVector<int64_t> stage = {0, 0, 0, 0, 1, 1, t.kStage};
  SmallVector<int64_t> warp = {1, warpOh, warpOw, t.warpN, 0, 0, 0};
  SmallVector<int64_t> inner = {1, 1, std::min(t.instrM, warpOw),
                                t.instrN, 1, 1, t.instrK};
  // A 3-D convolution's od and kd (after n and after f) by 1.
  if (conv3d) {
    reduction.insert(reduction.begin() + 4, true);
    reduction.insert(reduction.begin() + 1, false);
    for (SmallVector<int64_t> *level : {&block, &stage, &warp, &inner}) {
      level->insert(level->begin() + 4, level == &stage ? 1 : 0);
      level->insert(level->begin() + 1, level == &stage ? 0 : 1);
    }
  }
  // A 1-D convolution has no oh (index 1) and no kh (index 4).
  if (conv1d) {
    reduction.erase(reduction.begin() + 4);
    reduction.erase(reduction.begin() + 1);
    for (SmallVector<int64_t> *level : {&block, &stage, &warp, &inner}) {
      level->erase(level->begin() + 4);
      level->erase(level->begin() + 1);
    }
  }
  d.reduction = reduction;
  d.addLevel(TileLevelRole::Threads, block, true);
  d.addLevel(TileLevelRole::Cache, stage, false);
  d.addLevel(TileLevelRole::Register, warp, true);
  d.addLevel(TileLevelRole::Inner, inner, false);
  d.threads = t.threads;
  d.vectorLoop = conv3d ? 4 : conv1d ? 2 : 3;
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
