//===- WidenReferenceFloats.cpp - The CPU reference computed in f64 -------===//
//
// ke-widen-reference-floats (ke/Codegen/Passes.td), run on the CPU
// reference's kernel before it is lowered, for its outputs only (the
// unscheduled kernel as written is what the reference's time measures).
// Measured in issue #16: a sequential f32 sum of 10^7-10^8 elements is off
// by about 1e-4 itself, so the more accurate tree sums of parallel
// schedules failed the 1e-4 check against it; a bf16 or f16 sum that
// accumulates in its own type is off by more than the 16-bit tolerance.
// The device reference accumulates in f64 (GpuReferenceLaunches.cpp); this
// gives the CPU reference the same numerics:
//
//   - every linalg op is generalized; one that reads or writes floats
//     narrower than f64 gets f64 outputs (its inits extended), the float
//     arithmetic of its body in f64 (block arguments extended, constants
//     widened), and its results rounded to their types once, after it;
//   - math functions and the body's own truncf/extf stay as written (the
//     value rounded to the written type and carried on in f64), as in the
//     device reference.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_WIDENREFERENCEFLOATSPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

bool isNarrowFloat(Type type) {
  auto f = dyn_cast<FloatType>(type);
  return f && f.getWidth() < 64;
}

/// The arith ops computed in f64: their results' rounding to a narrower
/// type is what the reference avoids.
bool computesInF64(Operation &op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
             arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
             arith::CmpFOp, arith::SelectOp>(op);
}

Value castFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  unsigned fromBits = cast<FloatType>(from).getWidth(),
           toBits = cast<FloatType>(to).getWidth();
  // 16-bit floats to and from f64 through f32: the CPU JIT has no runtime
  // for the direct conversions (__truncdfbf2 and the like). Extension is
  // exact either way; a truncation rounds twice, which moves a value that
  // lies exactly halfway between two 16-bit neighbours after the first
  // rounding by one 16-bit ulp at most.
  if (fromBits < 32 && toBits == 64)
    return arith::ExtFOp::create(
        b, loc, to,
        arith::ExtFOp::create(b, loc, b.getF32Type(), value).getResult());
  if (fromBits == 64 && toBits < 32)
    return arith::TruncFOp::create(
        b, loc, to,
        arith::TruncFOp::create(b, loc, b.getF32Type(), value).getResult());
  if (fromBits < toBits)
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

/// An elementwise generic that casts `input` to element type `to`.
Value castTensor(OpBuilder &b, Location loc, Value input, Type to) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
  Value init = tensor::EmptyOp::create(b, loc, sizes, to);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{input}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iterators,
             [&](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(nested, l,
                                       castFloat(nested, l, args[0], to));
             })
      .getResult(0);
}

/// Rebuilds `generic` with f64 outputs and body arithmetic; returns false
/// when it has no narrow float to widen.
bool widenGeneric(IRRewriter &rewriter, linalg::GenericOp generic) {
  auto narrowElement = [](Value v) {
    return isNarrowFloat(getElementTypeOrSelf(v.getType()));
  };
  if (llvm::none_of(generic->getOperands(), narrowElement))
    return false;
  // Nested regions would see widened values where they expect the written
  // types: such bodies stay as written.
  bool nested = false;
  generic.getRegion().walk([&](Operation *op) {
    nested |= op != generic && op->getNumRegions() > 0;
  });
  if (nested)
    return false;
  Location loc = generic.getLoc();
  Type f64 = rewriter.getF64Type();
  rewriter.setInsertionPoint(generic);
  SmallVector<Value> inits;
  SmallVector<Type> resultTypes;
  for (OpOperand &operand : generic.getDpsInitsMutable()) {
    Value init = operand.get();
    if (narrowElement(init)) {
      // An init the body never reads needs only its shape.
      if (generic.payloadUsesValueFromOperand(&operand))
        init = castTensor(rewriter, loc, init, f64);
      else
        init = tensor::EmptyOp::create(
            rewriter, loc, tensor::getMixedSizes(rewriter, loc, init), f64);
    }
    inits.push_back(init);
    resultTypes.push_back(init.getType());
  }
  auto wide = linalg::GenericOp::create(
      rewriter, loc, resultTypes, generic.getDpsInputs(), inits,
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray());
  Block &oldBody = generic.getRegion().front();
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (BlockArgument arg : oldBody.getArguments()) {
    bool isInit = arg.getArgNumber() >= generic.getNumDpsInputs();
    argTypes.push_back(isInit && isNarrowFloat(arg.getType()) ? f64
                                                              : arg.getType());
    argLocs.push_back(arg.getLoc());
  }
  Block *body = rewriter.createBlock(&wide.getRegion(), {}, argTypes, argLocs);
  rewriter.setInsertionPointToStart(body);
  // Each old value's counterpart, carried in f64 where the old one is a
  // narrower float.
  IRMapping map;
  auto wideOf = [&](Value old) -> Value {
    Value v = map.lookupOrDefault(old);
    return isNarrowFloat(v.getType()) ? castFloat(rewriter, loc, v, f64) : v;
  };
  for (auto [oldArg, newArg] :
       llvm::zip(oldBody.getArguments(), body->getArguments()))
    map.map(oldArg, newArg);
  for (Operation &op : oldBody.without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isNarrowFloat(constant.getType())) {
      auto value = cast<FloatAttr>(constant.getValue());
      map.map(constant.getResult(),
              arith::ConstantOp::create(
                  rewriter, loc, FloatAttr::get(f64, value.getValueAsDouble())));
      continue;
    }
    if (computesInF64(op)) {
      SmallVector<Value> operands;
      for (Value operand : op.getOperands())
        operands.push_back(wideOf(operand));
      SmallVector<Type> types;
      for (Type type : op.getResultTypes())
        types.push_back(isNarrowFloat(type) ? f64 : type);
      OperationState state(op.getLoc(), op.getName(), operands, types,
                           op.getAttrs());
      Operation *computed = rewriter.create(state);
      map.map(op.getResults(), computed->getResults());
      continue;
    }
    // Everything else as written: its float operands in their written
    // types (a truncf rounds once here), its results carried on as they
    // come (widened where the next op computes in f64).
    for (Value operand : op.getOperands()) {
      Value v = map.lookupOrDefault(operand);
      if (v.getType() != operand.getType())
        map.map(operand, castFloat(rewriter, loc, v, operand.getType()));
    }
    Operation *clone = rewriter.clone(op, map);
    map.map(op.getResults(), clone->getResults());
  }
  SmallVector<Value> yielded;
  ArrayRef<Type> initTypes =
      ArrayRef<Type>(argTypes).drop_front(generic.getNumDpsInputs());
  for (auto [value, type] :
       llvm::zip(oldBody.getTerminator()->getOperands(), initTypes)) {
    Value v = map.lookupOrDefault(value);
    yielded.push_back(v.getType() == type ? v
                                          : castFloat(rewriter, loc, v, type));
  }
  linalg::YieldOp::create(rewriter, loc, yielded);

  // The results rounded once to their types.
  rewriter.setInsertionPointAfter(wide);
  SmallVector<Value> results;
  for (auto [old, computed] : llvm::zip(generic.getResults(), wide.getResults()))
    results.push_back(
        old.getType() == computed.getType()
            ? computed
            : castTensor(rewriter, loc, computed,
                         getElementTypeOrSelf(old.getType())));
  rewriter.replaceOp(generic, results);
  return true;
}

struct WidenReferenceFloatsPass
    : ke::impl::WidenReferenceFloatsPassBase<WidenReferenceFloatsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // not a structured named op: left as written
        generic = *generalized;
      }
      widenGeneric(rewriter, generic);
    }
  }
};

} // namespace
