//===- ConvTransposePhases.cpp - Strided ConvTranspose as phase convs -----===//
//
// ke-conv-transpose-phases (ke/Graph/Passes.td). torch-mlir imports a
// ConvTranspose of stride s as a stride-1 convolution over its input spread
// out with zeros (`tensor.insert_slice %x into %zeros [..] [..] [1, 1, s,
// s]`). Run as it is, that convolution multiplies every inserted zero: of
// the K taps a output pixel sees along a dimension, only about K / s meet
// an input pixel, so a 2-D ConvTranspose of stride 2 does 4x its work and a
// 3-D one 8x (KernelBench level 2: 0.12-0.53x of eager on its six strided
// ConvTranspose problems, H200, 2026-11-29).
//
// The rewrite splits the output by phase, as sub-pixel convolution does.
// Along a dimension with stride s, input offset P (the insert's offset),
// filter size K and output size O, the outputs o = s*q + r of phase r only
// meet the taps k = c + s*j with c = (P - r) mod s, reading input
// q + j + e with e = (r + c - P) / s (exact). So phase r is a dense
// stride-1 convolution of the input (shifted by e, zero outside it) with
// the sub-filter W[c + s*j], j < ceil((K - c) / s), into ceil((O - r) / s)
// outputs. Every output pixel then costs K / s taps, as in PyTorch. With
// a dilation d (tap k at o + k*d), phase r meets every t-th tap from its
// first, t = s / gcd(d, s), and its convolution has dilation d / gcd(d, s).
//
// In IR, for each combination of per-dimension phases:
// - the sub-filter is an elementwise generic that reads W through an
//   affine map (offset c, stride s), written channels-last (S... C F);
// - the input is transposed channels-last once (N S... C); shifted and
//   zero-padded, it is a gather generic over that layout, shared by the
//   phases of one shift (a convolution reads what prefix of a larger
//   input it needs), or the transposed input itself where a shift is 0
//   and no padding is needed;
// - the convolution is the channels-last named op (what
//   ke-convs-to-channels-last would make of it), into a fill of the
//   original init's value, transposed back to channels-first (the GEMM
//   kernels write that transpose from registers, as an epilogue).
// The output is one gather generic over the channels-first result that
// picks, per element, its phase's value (o / s in the phase r = o % s).
// Both its reads and its writes then run along the innermost dimension,
// and the elementwise ops after the ConvTranspose fuse with it. (A
// channels-last gather with one transpose after it was slower: its
// consumers read it across channels, one per thread. KernelBench level 2's
// strided ConvTransposes, H200: 0.44-0.94x of eager that way, 0.61-1.17x
// (and 89: 3.2x) this way.)
//
//===----------------------------------------------------------------------===//

#include "GraphSupport.h"

#include "ke/Graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <numeric>

#define DEBUG_TYPE "ke-conv-transpose-phases"

using namespace mlir;

namespace ke {
#define GEN_PASS_DEF_CONVTRANSPOSEPHASESPASS
#include "ke/Graph/Passes.h.inc"
} // namespace ke

namespace {

/// More phases than this (a stride of 3 in 3-D is 27) are left as they are:
/// the output gather reads one value per phase for every element.
constexpr int64_t kMaxPhases = 16;

/// One phase along one spatial dimension (see the file comment).
struct DimPhase {
  int64_t outputs;  // ceil((O - r) / s): the phase's output size
  int64_t first;    // c: its first tap
  int64_t step;     // t: between its taps, s / gcd(d, s)
  int64_t taps;     // J: taps c, c + t, ... below K; 0 when none meets x
  int64_t shift;    // e: input position of output q, tap j is
                    // q + e + j * dilation
  int64_t dilation; // d / gcd(d, s): the phase convolution's dilation
};

/// The phases of one dimension: r = 0 .. s - 1 (outputs 0 when O <= r).
/// With the convolution's dilation d, tap k reads x' at o + k*d: phase r
/// meets the k with k*d = P - r (mod s), which is none or every t-th k from
/// the first, t = s / gcd(d, s); consecutive ones read inputs d / gcd(d, s)
/// apart.
SmallVector<DimPhase> getDimPhases(int64_t stride, int64_t offset,
                                   int64_t filter, int64_t dilation,
                                   int64_t output) {
  SmallVector<DimPhase> phases;
  int64_t g = std::gcd(dilation, stride);
  for (int64_t r = 0; r < stride; ++r) {
    DimPhase p;
    p.outputs = output > r ? (output - r + stride - 1) / stride : 0;
    p.step = stride / g;
    p.dilation = dilation / g;
    p.first = 0;
    p.taps = 0;
    p.shift = 0;
    for (int64_t k = 0; k < std::min(filter, p.step); ++k) {
      if (((k * dilation - (offset - r)) % stride + stride) % stride)
        continue;
      p.first = k;
      p.taps = (filter - 1 - k) / p.step + 1;
      // Exact: r + k*d - P is a multiple of s by the choice of k.
      p.shift = (r + k * dilation - offset) / stride;
      break;
    }
    phases.push_back(p);
  }
  return phases;
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// True when `value` is a pure-tensor linalg.fill of a constant zero.
linalg::FillOp getZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return nullptr;
  Value v = fill.getInputs()[0];
  if (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero()))
    return fill;
  return nullptr;
}

template <typename SourceOp, typename TargetOp, int64_t Spatial>
struct ConvTransposeToPhases : OpRewritePattern<SourceOp> {
  using OpRewritePattern<SourceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(SourceOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "not on tensors");
    if (!llvm::all_of(conv.getStrides().template getValues<int64_t>(),
                      [](int64_t s) { return s == 1; }))
      return rewriter.notifyMatchFailure(conv, "strided");
    SmallVector<int64_t> dilations(
        conv.getDilations().template getValues<int64_t>());
    auto insert = conv.getInputs()[0].template getDefiningOp<tensor::InsertSliceOp>();
    if (!insert)
      return rewriter.notifyMatchFailure(conv, "input is no inserted slice");
    linalg::FillOp zeros = getZeroFill(insert.getDest());
    if (!zeros)
      return rewriter.notifyMatchFailure(conv, "not inserted into zeros");
    auto initFill = conv.getOutputs()[0].template getDefiningOp<linalg::FillOp>();
    if (!initFill || !initFill.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "init is no fill");
    Value source = insert.getSource();
    Value filter = conv.getInputs()[1];
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto filterType = cast<RankedTensorType>(filter.getType());
    auto resultType = cast<RankedTensorType>(conv.getResult(0).getType());
    ArrayRef<int64_t> offsets = insert.getStaticOffsets();
    ArrayRef<int64_t> sizes = insert.getStaticSizes();
    ArrayRef<int64_t> strides = insert.getStaticStrides();
    if (!sourceType.hasStaticShape() || !filterType.hasStaticShape() ||
        !resultType.hasStaticShape() ||
        !insert.getDestType().hasStaticShape() ||
        ShapedType::isDynamicShape(offsets) ||
        ShapedType::isDynamicShape(sizes) ||
        ShapedType::isDynamicShape(strides) ||
        sourceType.getRank() != insert.getDestType().getRank())
      return rewriter.notifyMatchFailure(conv, "dynamic or rank-reducing");
    // Batch and channels inserted whole; the spreading is spatial only.
    for (int64_t d = 0; d < 2; ++d)
      if (offsets[d] != 0 || strides[d] != 1 ||
          sizes[d] != insert.getDestType().getDimSize(d))
        return rewriter.notifyMatchFailure(conv, "not a spatial spreading");
    if (llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      return rewriter.notifyMatchFailure(conv, "unit strides: a padding");

    // The phases of every spatial dimension and their combinations.
    SmallVector<SmallVector<DimPhase>> dims;
    int64_t combinations = 1;
    for (int64_t d = 0; d < Spatial; ++d) {
      dims.push_back(getDimPhases(strides[2 + d], offsets[2 + d],
                                  filterType.getDimSize(2 + d), dilations[d],
                                  resultType.getDimSize(2 + d)));
      combinations *= strides[2 + d];
    }
    if (combinations > kMaxPhases)
      return rewriter.notifyMatchFailure(conv, "too many phases");

    Location loc = conv.getLoc();
    Type element = resultType.getElementType();
    int64_t batch = resultType.getDimSize(0);
    int64_t channels = sourceType.getDimSize(1);
    int64_t features = resultType.getDimSize(1);
    Value initValue = initFill.getInputs()[0];

    // Each phase combination: its per-dimension phases (r), and the result.
    struct Phase {
      SmallVector<int64_t> r;
      SmallVector<DimPhase> dim;
      Value result; // N Q... F from the convolution, then N F Q...
    };
    SmallVector<Phase> phases;
    // Shift vector -> the input extent its convolutions read.
    std::map<SmallVector<int64_t>, SmallVector<int64_t>> extents;
    for (int64_t i = 0; i < combinations; ++i) {
      Phase phase;
      bool empty = false, noTaps = false;
      for (int64_t d = Spatial - 1, rest = i; d >= 0; --d) {
        int64_t s = strides[2 + d];
        phase.r.insert(phase.r.begin(), rest % s);
        phase.dim.insert(phase.dim.begin(), dims[d][rest % s]);
        rest /= s;
      }
      SmallVector<int64_t> shift, extent;
      for (const DimPhase &p : phase.dim) {
        empty |= p.outputs == 0;
        noTaps |= p.taps == 0;
        shift.push_back(p.shift);
        extent.push_back(p.outputs + (p.taps - 1) * p.dilation);
      }
      if (empty)
        continue; // no output has this phase (O < s)
      if (!noTaps) {
        auto [it, inserted] = extents.try_emplace(shift, extent);
        for (int64_t d = 0; d < Spatial && !inserted; ++d)
          it->second[d] = std::max(it->second[d], extent[d]);
      }
      phases.push_back(std::move(phase));
    }

    // The input channels-last once: a transpose, which the GPU rules run
    // through shared tiles at copy bandwidth. The shifted copies below then
    // read and write along the channels; read channels-first, a warp's
    // consecutive channels were a plane apart.
    Type sourceElement = sourceType.getElementType();
    SmallVector<int64_t> toLast{0};
    for (int64_t d = 0; d < Spatial; ++d)
      toLast.push_back(2 + d);
    toLast.push_back(1);
    Value sourceLast = ke::createTranspose(rewriter, loc, source, toLast);
    ArrayRef<int64_t> lastShape =
        cast<RankedTensorType>(sourceLast.getType()).getShape();

    // The shifted, zero-padded inputs: X[n, i..., c] = x[n, i + e..., c]
    // where that is inside x, else 0. Unshifted and within x, a phase reads
    // (a prefix of) x itself.
    std::map<SmallVector<int64_t>, Value> inputs;
    Value zero = arith::ConstantOp::create(rewriter, loc, sourceElement,
                                           rewriter.getZeroAttr(sourceElement));
    for (auto &[shift, extent] : extents) {
      bool within = true;
      for (int64_t d = 0; d < Spatial; ++d)
        within &= shift[d] == 0 && extent[d] <= lastShape[1 + d];
      if (within) {
        inputs[shift] = sourceLast;
        continue;
      }
      // x's position i + e at i: x inserted at offset -e (a negative
      // offset crops), zero elsewhere.
      SmallVector<int64_t> shape{batch}, offsets{0};
      llvm::append_range(shape, extent);
      shape.push_back(channels);
      for (int64_t e : shift)
        offsets.push_back(-e);
      offsets.push_back(0);
      auto type = RankedTensorType::get(shape, sourceElement);
      inputs[shift] = ke::createInsertGather(
          rewriter, loc, type,
          tensor::EmptyOp::create(rewriter, loc, shape, sourceElement), zero,
          sourceLast, offsets, lastShape, SmallVector<int64_t>(shape.size(), 1),
          llvm::SmallBitVector(shape.size()));
    }

    // The phases' convolutions (or their init alone, when no tap meets an
    // input: a phase of a filter smaller than the stride).
    for (Phase &phase : phases) {
      SmallVector<int64_t> resultShape{batch}, taps, shift;
      for (const DimPhase &p : phase.dim) {
        resultShape.push_back(p.outputs);
        taps.push_back(p.taps);
        shift.push_back(p.shift);
      }
      resultShape.push_back(features);
      Value init = linalg::FillOp::create(
                       rewriter, loc, initValue,
                       ValueRange{tensor::EmptyOp::create(rewriter, loc,
                                                          resultShape,
                                                          element)})
                       .getResult(0);
      if (llvm::is_contained(taps, 0)) {
        phase.result = init;
        continue;
      }
      SmallVector<int64_t> phaseDilations;
      for (const DimPhase &p : phase.dim)
        phaseDilations.push_back(p.dilation);
      phase.result =
          TargetOp::create(
              rewriter, loc, TypeRange{init.getType()},
              ValueRange{inputs[shift],
                         createSubFilter(rewriter, loc, filter, phase.dim)},
              ValueRange{init}, conv.getStrides(),
              rewriter.getI64VectorAttr(phaseDilations))
              .getResult(0);
    }
    // Channels-first phases: N Q... F -> N F Q....
    SmallVector<int64_t> toFirst{0, Spatial + 1};
    for (int64_t d = 0; d < Spatial; ++d)
      toFirst.push_back(1 + d);
    for (Phase &phase : phases)
      phase.result = ke::createTranspose(rewriter, loc, phase.result, toFirst);

    Value output = gatherPhases<Phase>(rewriter, loc, resultType, phases, strides);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << conv->getName() << " at "
                            << loc << " -> " << phases.size()
                            << " phase convolutions\n");
    rewriter.replaceOp(conv, output);
    // The spread-out input is dead now unless something else reads it.
    if (insert->use_empty()) {
      rewriter.eraseOp(insert);
      if (zeros->use_empty())
        rewriter.eraseOp(zeros);
    }
    return success();
  }

private:
  /// The sub-filter of one phase, channels-last: F[j..., c, f] =
  /// W[f, c, first + step * j].
  static Value createSubFilter(PatternRewriter &rewriter, Location loc,
                               Value filter, ArrayRef<DimPhase> dim) {
    auto type = cast<RankedTensorType>(filter.getType());
    SmallVector<int64_t> shape;
    for (const DimPhase &p : dim)
      shape.push_back(p.taps);
    shape.push_back(type.getDimSize(1));
    shape.push_back(type.getDimSize(0));
    unsigned rank = shape.size();
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> reads{getAffineDimExpr(Spatial + 1, context),
                                  getAffineDimExpr(Spatial, context)};
    for (int64_t d = 0; d < Spatial; ++d)
      reads.push_back(getAffineDimExpr(d, context) * dim[d].step +
                      dim[d].first);
    AffineMap read = AffineMap::get(rank, 0, reads, context);
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    return linalg::GenericOp::create(
               rewriter, loc, TypeRange{empty.getType()}, ValueRange{filter},
               ValueRange{empty},
               ArrayRef<AffineMap>{read, rewriter.getMultiDimIdentityMap(rank)},
               SmallVector<utils::IteratorType>(rank,
                                                utils::IteratorType::parallel),
               [](OpBuilder &b, Location loc, ValueRange args) {
                 linalg::YieldOp::create(b, loc, args[0]);
               })
        .getResult(0);
  }

  /// The channels-first output: out[n, f, o...] is phase (o % s)'s
  /// channels-first result at [n, f, o / s]. Every phase is read (its index
  /// clamped into it) and the right one selected, which keeps the generic
  /// free of control flow.
  template <typename PhaseT>
  static Value gatherPhases(PatternRewriter &rewriter, Location loc,
                            RankedTensorType type, ArrayRef<PhaseT> phases,
                            ArrayRef<int64_t> strides) {
    SmallVector<int64_t> shape(type.getShape());
    Type element = type.getElementType();
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, element);
    unsigned rank = shape.size();
    Value gathered =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{empty.getType()}, ValueRange{},
            ValueRange{empty},
            ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location loc, ValueRange) {
              Value n = linalg::IndexOp::create(b, loc, 0);
              Value f = linalg::IndexOp::create(b, loc, 1);
              SmallVector<Value> q, r;
              for (int64_t d = 0; d < Spatial; ++d) {
                Value o = linalg::IndexOp::create(b, loc, 2 + d);
                Value s = indexConstant(b, loc, strides[2 + d]);
                q.push_back(arith::DivUIOp::create(b, loc, o, s));
                r.push_back(arith::RemUIOp::create(b, loc, o, s));
              }
              Value result;
              for (const PhaseT &phase : llvm::reverse(phases)) {
                SmallVector<Value> indices{n, f};
                Value match;
                for (int64_t d = 0; d < Spatial; ++d) {
                  indices.push_back(arith::MinUIOp::create(
                      b, loc, q[d],
                      indexConstant(b, loc, phase.dim[d].outputs - 1)));
                  if (strides[2 + d] == 1)
                    continue;
                  Value here = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::eq, r[d],
                      indexConstant(b, loc, phase.r[d]));
                  match = match ? arith::AndIOp::create(b, loc, match, here)
                                      .getResult()
                                : here;
                }
                Value value =
                    tensor::ExtractOp::create(b, loc, phase.result, indices);
                result = result ? arith::SelectOp::create(b, loc, match, value,
                                                          result)
                                      .getResult()
                                : value;
              }
              linalg::YieldOp::create(b, loc, result);
            })
            .getResult(0);
    return gathered;
  }
};

struct ConvTransposePhasesPass
    : ke::impl::ConvTransposePhasesPassBase<ConvTransposePhasesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<
        ConvTransposeToPhases<linalg::Conv1DNcwFcwOp, linalg::Conv1DNwcWcfOp,
                              1>,
        ConvTransposeToPhases<linalg::Conv2DNchwFchwOp,
                              linalg::Conv2DNhwcHwcfOp, 2>,
        ConvTransposeToPhases<linalg::Conv3DNcdhwFcdhwOp,
                              linalg::Conv3DNdhwcDhwcfOp, 3>>(&getContext());
    ke::applyGraphPatterns(getOperation(), std::move(patterns), DEBUG_TYPE);
  }
};

} // namespace
