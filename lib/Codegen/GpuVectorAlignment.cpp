//===- GpuVectorAlignment.cpp - Alignment of vector accesses --------------===//
//
// ke-gpu-annotate-vector-alignment (ke/Codegen/Passes.td), a step of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#include "ke/Codegen/Passes.h"
#include "GpuKernelABI.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using ke::kKernelBufferAlignment;

namespace ke {
#define GEN_PASS_DEF_GPUANNOTATEVECTORALIGNMENTPASS
#include "ke/Codegen/Passes.h.inc"
} // namespace ke

namespace {

/// The largest power of two (up to 2^20) that provably divides the index
/// value `value`: constants, sums, products, remainders and shifts of values, affine
/// maps of them, and scf.for induction variables; thread and block ids and
/// anything else count as 1.
int64_t knownPowerOfTwoFactor(Value value, unsigned depth = 0);

int64_t powerOfTwoFactorOf(int64_t constant) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (constant == 0)
    return kCap;
  return std::min<int64_t>(kCap, constant & -constant);
}

int64_t knownPowerOfTwoFactor(AffineExpr expr, ValueRange dims,
                              ValueRange symbols, unsigned depth) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return powerOfTwoFactorOf(constant.getValue());
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return knownPowerOfTwoFactor(dims[dim.getPosition()], depth + 1);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
    return knownPowerOfTwoFactor(symbols[symbol.getPosition()], depth + 1);
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = knownPowerOfTwoFactor(binary.getLHS(), dims, symbols, depth);
  int64_t rhs = knownPowerOfTwoFactor(binary.getRHS(), dims, symbols, depth);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return std::min(lhs, rhs);
  case AffineExprKind::Mul:
    return std::min(kCap, lhs * rhs);
  case AffineExprKind::Mod:
    // x mod c = x - c * floor(x / c): a multiple of what divides both.
    return std::min(lhs, rhs);
  default: // floordiv, ceildiv
    return 1;
  }
}

int64_t knownPowerOfTwoFactor(Value value, unsigned depth) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (depth > 16)
    return 1;
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return powerOfTwoFactorOf(*constant);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && arg == loop.getInductionVar())
      return std::min(knownPowerOfTwoFactor(loop.getLowerBound(), depth + 1),
                      knownPowerOfTwoFactor(loop.getStep(), depth + 1));
    return 1;
  }
  Operation *def = value.getDefiningOp();
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    return knownPowerOfTwoFactor(map.getResult(0), apply.getDimOperands(),
                                 apply.getSymbolOperands(), depth);
  }
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::min(knownPowerOfTwoFactor(def->getOperand(0), depth + 1),
                    knownPowerOfTwoFactor(def->getOperand(1), depth + 1));
  // x rem c = x - c * (x / c): a multiple of what divides both.
  if (isa<arith::RemUIOp>(def))
    return std::min(knownPowerOfTwoFactor(def->getOperand(0), depth + 1),
                    knownPowerOfTwoFactor(def->getOperand(1), depth + 1));
  if (isa<arith::MulIOp>(def))
    return std::min(kCap,
                    knownPowerOfTwoFactor(def->getOperand(0), depth + 1) *
                        knownPowerOfTwoFactor(def->getOperand(1), depth + 1));
  if (isa<arith::ShLIOp>(def))
    if (std::optional<int64_t> shift = getConstantIntValue(def->getOperand(1));
        shift && *shift >= 0 && *shift < 20)
      return std::min(kCap,
                      knownPowerOfTwoFactor(def->getOperand(0), depth + 1)
                          << *shift);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return knownPowerOfTwoFactor(def->getOperand(0), depth + 1);
  return 1;
}

/// The largest power of two known to divide the element offset of `memref`
/// from the start of its buffer, for views of a kernel argument (offset 0);
/// 0 when the view or its buffer is anything else.
int64_t knownOffsetFactor(Value memref, unsigned depth = 0) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (depth > 16)
    return 0;
  if (auto arg = dyn_cast<BlockArgument>(memref)) {
    auto func = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front() ||
        arg.getArgNumber() >= func.getNumArguments())
      return 0; // attributions and loop-carried views
    auto type = dyn_cast<MemRefType>(memref.getType());
    return type && type.getLayout().isIdentity() ? kCap : 0;
  }
  Operation *def = memref.getDefiningOp();
  if (auto cast = dyn_cast_or_null<memref::CastOp>(def))
    return knownOffsetFactor(cast.getSource(), depth + 1);
  if (auto assumed = dyn_cast_or_null<memref::AssumeAlignmentOp>(def))
    return knownOffsetFactor(assumed.getMemref(), depth + 1);
  auto subview = dyn_cast_or_null<memref::SubViewOp>(def);
  if (!subview)
    return 0;
  int64_t factor = knownOffsetFactor(subview.getSource(), depth + 1);
  if (factor == 0)
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(subview.getSourceType().getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return 0;
  for (auto [ofr, stride] : llvm::zip(subview.getMixedOffsets(), strides)) {
    int64_t part = isa<Attribute>(ofr)
                       ? powerOfTwoFactorOf(*getConstantIntValue(ofr))
                       : knownPowerOfTwoFactor(cast<Value>(ofr));
    factor = std::min({factor, kCap, part * powerOfTwoFactorOf(stride)});
  }
  return factor;
}

/// Gives vector loads and stores on kernel buffers the alignment their
/// indices prove: the buffer's 16-byte alignment (kKernelBufferAlignment)
/// times the power of two dividing the element offset, as far as it goes.
/// A 128-bit vector access at a multiple of four f32 elements becomes one
/// ld.global.v4 / st.global.v4 even where LLVM's own analysis gives up
/// (deep address arithmetic); other accesses keep element alignment and
/// are split into scalars.
template <typename OpTy>
void annotateAccessAlignment(OpTy op) {
  auto type = cast<MemRefType>(op.getBase().getType());
  unsigned elementBytes =
      std::max(1u, unsigned(type.getElementTypeBitWidth() / 8));
  int64_t factor = knownOffsetFactor(op.getBase());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (factor == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return;
  for (auto [index, stride] : llvm::zip(op.getIndices(), strides))
    factor = std::min(factor, knownPowerOfTwoFactor(index) *
                                  powerOfTwoFactorOf(stride));
  uint64_t alignment =
      std::min<uint64_t>(kKernelBufferAlignment, factor * elementBytes);
  if (alignment > elementBytes &&
      alignment > op.getAlignment().value_or(0))
    op.setAlignment(alignment);
}

void annotateVectorAlignment(ModuleOp module) {
  module.walk([](gpu::GPUFuncOp func) {
    func.walk([](Operation *op) {
      if (auto load = dyn_cast<vector::LoadOp>(op))
        annotateAccessAlignment(load);
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        annotateAccessAlignment(store);
    });
  });
}

struct GpuAnnotateVectorAlignmentPass : ke::impl::GpuAnnotateVectorAlignmentPassBase<GpuAnnotateVectorAlignmentPass> {
  void runOnOperation() override {
    annotateVectorAlignment(getOperation());
  }
};

} // namespace
