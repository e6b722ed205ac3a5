//===- GraphSupport.cpp - What the graph preparation passes share ---------===//
//
// See GraphSupport.h.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ke-graph"

using namespace mlir;

void ke::applyGraphPatterns(Operation *root,
                            const FrozenRewritePatternSet &patterns,
                            llvm::StringRef debugType) {
  // Rounds until nothing changes: within one round the greedy driver does
  // not always revisit an op that a rewrite created and then replaced (a
  // chain of three elementwise generics fused only its last two), so a
  // fresh round collects the ops again. Each round is a rewrite of the
  // whole function, so a few suffice; the bound only guards against
  // patterns that undo each other.
  constexpr int kMaxRounds = 8;
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
      .enableFolding(false)
      .enableConstantCSE(false);
  for (int round = 0; round < kMaxRounds; ++round) {
    // Every op but those that are dead already: the driver erases dead ops
    // it visits, and an input's unused ops are the user's (ke-opt
    // workloads lists them). Ops that the rewrites leave dead are in the
    // list.
    SmallVector<Operation *> ops;
    root->walk([&](Operation *op) {
      if (op != root && !isOpTriviallyDead(op))
        ops.push_back(op);
    });
    bool changed = false;
    LogicalResult converged =
        applyOpPatternsGreedily(ops, patterns, config, &changed);
    LLVM_DEBUG(llvm::dbgs() << "[" << debugType << "] round " << round << ": "
                            << (changed ? "changed" : "no change")
                            << (succeeded(converged) ? "" : ", not converged")
                            << "\n");
    (void)converged;
    (void)debugType;
    if (!changed)
      return;
  }
}

linalg::LinalgOp ke::getDataMovementProducer(Value value, bool allowBroadcast) {
  Operation *def = value.getDefiningOp();
  if (!def || !(isa<linalg::TransposeOp>(def) ||
                (allowBroadcast && isa<linalg::BroadcastOp>(def))))
    return nullptr;
  auto producer = cast<linalg::LinalgOp>(def);
  if (!producer.hasPureTensorSemantics())
    return nullptr;
  return producer;
}

AffineMap ke::composeThroughProducer(linalg::LinalgOp producer,
                                     AffineMap consumerMap) {
  AffineMap inputMap =
      producer.getMatchingIndexingMap(producer.getDpsInputOperand(0));
  AffineMap resultMap =
      producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
  // producer loops -> input indices, after result indices -> producer
  // loops, after consumer loops -> result indices.
  return inputMap.compose(inversePermutation(resultMap)).compose(consumerMap);
}

Value ke::createElementwiseConversion(
    OpBuilder &builder, Location loc, Value input, Type element,
    function_ref<Value(OpBuilder &, Location, Value)> convert) {
  auto type = cast<RankedTensorType>(input.getType());
  Value empty =
      tensor::EmptyOp::create(builder, loc, type.getShape(), element);
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), builder.getContext());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, empty.getType(), ValueRange{input},
             ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
             parallel,
             [&](OpBuilder &b, Location nested, ValueRange args) {
               linalg::YieldOp::create(b, nested,
                                       convert(b, nested, args[0]));
             })
      .getResult(0);
}
