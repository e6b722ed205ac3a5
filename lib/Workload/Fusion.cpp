//===- Fusion.cpp - Elementwise producers and consumers of an anchor ------===//
//
// A schedule can fuse an elementwise op into the anchor's tiles when it
// produces an anchor operand (recomputed per tile) or consumes an anchor
// result (computed while the tile is still in cache or registers).
// On tensors this follows SSA use-def chains. On memrefs the dataflow goes
// through buffers, so it looks for the nearest linalg op in the same block
// that writes (producer) or reads (consumer) the same buffer value, and gives
// up at any other use of that buffer, whose effect it cannot see through.
//
//===----------------------------------------------------------------------===//

#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

using namespace mlir;
using namespace ke;

namespace {

bool isFusableElementwise(Operation *op, Operation *anchor) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && op != anchor && linalg::isElementwise(linalgOp);
}

bool writesBuffer(linalg::LinalgOp op, Value buffer) {
  return llvm::is_contained(op.getDpsInits(), buffer);
}

bool readsBuffer(linalg::LinalgOp op, Value buffer) {
  return llvm::is_contained(op.getDpsInputs(), buffer);
}

/// The nearest earlier op in the block that writes `buffer`, if it is a
/// linalg op and nothing else touches the buffer in between.
Operation *findBufferProducer(Operation *anchor, Value buffer) {
  for (Operation *op = anchor->getPrevNode(); op; op = op->getPrevNode()) {
    if (!llvm::is_contained(op->getOperands(), buffer))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (linalgOp && writesBuffer(linalgOp, buffer))
      return op;
    if (!linalgOp)
      return nullptr; // an opaque use, e.g. a call: stop
  }
  return nullptr;
}

/// The nearest later op in the block that reads `buffer`, if it is a linalg
/// op and the buffer is not overwritten or used opaquely first.
Operation *findBufferConsumer(Operation *anchor, Value buffer) {
  for (Operation *op = anchor->getNextNode(); op; op = op->getNextNode()) {
    if (!llvm::is_contained(op->getOperands(), buffer))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (linalgOp && readsBuffer(linalgOp, buffer))
      return op;
    return nullptr; // overwritten or opaque: stop
  }
  return nullptr;
}

void addCandidate(SmallVectorImpl<FusionCandidate> &out, Operation *op,
                  bool isProducer, unsigned index) {
  FusionCandidate candidate{isProducer, index,
                            op->getName().getStringRef().str(),
                            computeWorkloadKey(op)};
  if (!llvm::is_contained(out, candidate))
    out.push_back(std::move(candidate));
}

} // namespace

SmallVector<FusionCandidate> ke::findFusionCandidates(Operation *anchor) {
  SmallVector<FusionCandidate> candidates;
  auto dps = cast<DestinationStyleOpInterface>(anchor);

  for (OpOperand &operand : anchor->getOpOperands()) {
    Value value = operand.get();
    Operation *producer = nullptr;
    if (isa<MemRefType>(value.getType())) {
      // A buffer the anchor only writes has no producer worth fusing.
      auto linalgOp = dyn_cast<linalg::LinalgOp>(anchor);
      if (!dps.isDpsInit(&operand) ||
          (linalgOp && linalgOp.payloadUsesValueFromOperand(&operand)))
        producer = findBufferProducer(anchor, value);
    } else {
      producer = value.getDefiningOp();
    }
    if (isFusableElementwise(producer, anchor))
      addCandidate(candidates, producer, /*isProducer=*/true,
                   operand.getOperandNumber());
  }

  // Results: SSA results on tensors, init buffers on memrefs.
  for (auto [index, init] : llvm::enumerate(dps.getDpsInits())) {
    if (isa<MemRefType>(init.getType())) {
      Operation *consumer = findBufferConsumer(anchor, init);
      if (isFusableElementwise(consumer, anchor))
        addCandidate(candidates, consumer, /*isProducer=*/false, index);
      continue;
    }
    if (index >= anchor->getNumResults())
      continue;
    for (Operation *user : anchor->getResult(index).getUsers())
      if (isFusableElementwise(user, anchor))
        addCandidate(candidates, user, /*isProducer=*/false, index);
  }
  return candidates;
}
