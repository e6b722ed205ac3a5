//===- RuleSupport.cpp - What the CPU and GPU sketch rules share ----------===//

#include "RuleSupport.h"

#include "ke/Workload/Kernel.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace ke;

std::string ke::loopKnobName(llvm::StringRef level, unsigned loop) {
  return (level + ".d" + llvm::Twine(loop)).str();
}

std::string ke::typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

unsigned ke::nearestChoice(ArrayRef<int64_t> choices, int64_t value) {
  assert(!choices.empty() && "a knob needs at least one choice");
  assert(llvm::is_sorted(choices) && "knob choices must be sorted");
  auto it = llvm::lower_bound(choices, value);
  return it == choices.end() ? choices.size() - 1 : it - choices.begin();
}

unsigned ke::largestDivisorChoice(ArrayRef<int64_t> choices, int64_t extent,
                                  int64_t value) {
  unsigned best = 0;
  for (auto [index, choice] : llvm::enumerate(choices))
    if (choice <= value && extent % choice == 0)
      best = index;
  return best;
}

bool ke::isStaticTensorOp(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && op->getNumResults() >= 1 &&
         llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

RankedTensorType ke::getLastDimSoftmaxType(Operation *anchor) {
  auto softmax = dyn_cast<linalg::SoftmaxOp>(anchor);
  if (!softmax)
    return nullptr;
  auto type = dyn_cast<RankedTensorType>(softmax.getInput().getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2 ||
      softmax.getDimension() != uint64_t(type.getRank() - 1))
    return nullptr;
  return type;
}

KernelNeighbours ke::findKernelNeighbours(Operation *anchor) {
  KernelNeighbours n;
  anchor->getParentOp()->walk([&](Operation *op) {
    if (op->hasAttr(kConsumerAttr))
      n.consumer = op;
    if (op->hasAttr(kProducerAttr) && !n.firstProducer) {
      n.firstProducer = op;
      n.hasProducers = true;
    }
    if (op->hasAttr(kRowReductionAttr))
      ++n.rowReductions;
  });
  return n;
}

KernelHandles ke::matchKernel(ScriptWriter &w, Operation *anchor) {
  KernelHandles h;
  h.anchor = w.match(anchor->getName().getStringRef(), kAnchorAttr);
  h.neighbours = findKernelNeighbours(anchor);
  if (h.neighbours.consumer)
    h.consumer = w.match("", kConsumerAttr);
  if (h.neighbours.hasProducers)
    h.producers = w.match("", kProducerAttr);
  return h;
}

SmallVector<int64_t> ke::mapToResult(linalg::LinalgOp op,
                                     ArrayRef<int64_t> anchorTiles,
                                     SmallVectorImpl<unsigned> *loopsOut) {
  assert(op->getNumResults() > 0 && "mapToResult needs an op with a result");
  AffineMap map = op.getIndexingMapMatchingResult(op->getResult(0));
  assert(map.isProjectedPermutation(/*allowZeroInResults=*/true) &&
         "the result must be indexed by anchor loops, one per dimension");
  SmallVector<int64_t> tiles;
  for (unsigned d = 0; d < map.getNumResults(); ++d) {
    // A constant index (a keepdim `(d0, 0)`) is not a loop: untiled.
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
    if (!dim) {
      tiles.push_back(0);
      continue;
    }
    unsigned loop = dim.getPosition();
    tiles.push_back(anchorTiles[loop]);
    if (loopsOut && anchorTiles[loop] != 0)
      loopsOut->push_back(loop);
  }
  return tiles;
}

SmallVector<int64_t> ke::mapToConsumer(linalg::LinalgOp op,
                                       Operation *consumer,
                                       ArrayRef<int64_t> anchorTiles,
                                       SmallVectorImpl<unsigned> *loopsOut) {
  SmallVector<unsigned> resultLoops;
  SmallVector<int64_t> resultTiles =
      mapToResult(op, anchorTiles, &resultLoops);
  auto consumerOp = cast<linalg::LinalgOp>(consumer);
  OpOperand *use = nullptr;
  for (OpOperand *operand : consumerOp.getDpsInputOperands())
    if (operand->get() == op->getResult(0))
      use = operand;
  AffineMap map = use ? consumerOp.getMatchingIndexingMap(use) : AffineMap();
  if (!map || map.isIdentity()) {
    if (loopsOut)
      loopsOut->append(resultLoops.begin(), resultLoops.end());
    return resultTiles;
  }
  assert(map.isPermutation() && "the consumer reads the result permuted");
  // Consumer loop `i` is result dimension `d` where map result `d` is `i`.
  SmallVector<int64_t> tiles(map.getNumDims(), 0);
  SmallVector<int64_t> loopOf(map.getNumDims(), -1);
  AffineMap result = op.getIndexingMapMatchingResult(op->getResult(0));
  for (unsigned d = 0; d < map.getNumResults(); ++d) {
    unsigned i = cast<AffineDimExpr>(map.getResult(d)).getPosition();
    tiles[i] = resultTiles[d];
    if (auto dim = dyn_cast<AffineDimExpr>(result.getResult(d)))
      loopOf[i] = dim.getPosition();
  }
  if (loopsOut)
    for (unsigned i = 0; i < tiles.size(); ++i)
      if (tiles[i] != 0 && loopOf[i] >= 0)
        loopsOut->push_back(loopOf[i]);
  return tiles;
}
