//===- GraphSupport.cpp - What the graph preparation passes share ---------===//
//
// See GraphSupport.h.
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

Value ke::createInsertGather(OpBuilder &rewriter, Location loc,
                        RankedTensorType destType, Value init, Value background,
                        Value source, ArrayRef<int64_t> offsets,
                        ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                        const llvm::SmallBitVector &dropped) {
  unsigned rank = destType.getRank();
  AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{destType}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{identity}, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        auto index = [&](int64_t v) {
          return arith::ConstantIndexOp::create(b, loc, v).getResult();
        };
        Value zero = index(0);
        Value inside;
        SmallVector<Value> sourceIndices;
        for (unsigned d = 0; d < rank; ++d) {
          // rel = i - offset; inserted where 0 <= rel < size * stride and
          // rel % stride == 0, from source position rel / stride.
          Value i = linalg::IndexOp::create(b, loc, d);
          if (offsets[d] == 0 && strides[d] == 1 &&
              sizes[d] == destType.getDimSize(d)) {
            // Inserted whole (a batch or channel dimension): no check.
            if (!dropped.test(d))
              sourceIndices.push_back(i);
            continue;
          }
          Value rel = arith::SubIOp::create(b, loc, i, index(offsets[d]));
          Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                            rel, zero);
          Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             rel, index(sizes[d] * strides[d]));
          Value here = arith::AndIOp::create(b, loc, low, high);
          if (strides[d] != 1)
            here = arith::AndIOp::create(
                b, loc, here,
                arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::eq,
                    arith::RemSIOp::create(b, loc, rel, index(strides[d])),
                    zero));
          inside = inside
                       ? arith::AndIOp::create(b, loc, inside, here).getResult()
                       : here;
          if (dropped.test(d))
            continue;
          // Clamped into the source where the position is not inserted,
          // so that the read stays in bounds.
          Value position =
              strides[d] == 1
                  ? rel
                  : arith::DivSIOp::create(b, loc, rel, index(strides[d]))
                        .getResult();
          sourceIndices.push_back(
              arith::SelectOp::create(b, loc, here, position, zero));
        }
        Value value = tensor::ExtractOp::create(b, loc, source, sourceIndices);
        Value result =
            inside ? arith::SelectOp::create(b, loc, inside, value,
                                             background ? background : args[0])
                         .getResult()
                   : value;
        linalg::YieldOp::create(b, loc, result);
      });
  return generic.getResult(0);
}

Value ke::createPermutedEmpty(OpBuilder &builder, Location loc, Value value,
                              ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return tensor::EmptyOp::create(builder, loc, shape, type.getElementType());
}

Value ke::createTranspose(OpBuilder &builder, Location loc, Value value,
                          ArrayRef<int64_t> perm) {
  Value empty = createPermutedEmpty(builder, loc, value, perm);
  return linalg::TransposeOp::create(builder, loc, value, empty, perm)
      .getResult()[0];
}
