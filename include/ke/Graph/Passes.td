//===- Passes.td - Graph preparation before workload extraction -*- tablegen -*-===//
//
// Rewrites of whole functions that turn what importers (torch-mlir's
// linalg-on-tensors output) produce into the shapes ke's workload extraction
// and sketch rules handle: data movement folded into indexing maps,
// elementwise chains fused, dead results dropped. prepareGraph
// (GraphPreparation.h) runs them in order; docs/workloads.md says what each
// does to an input.
//
//===----------------------------------------------------------------------===//
#ifndef KE_GRAPH_PASSES
#define KE_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def FoldExtensionsIntoContractionsPass
    : Pass<"ke-fold-extensions-into-contractions"> {
  let summary = "Let matmul and batch_matmul read the bf16/f16 tensors that "
                "their f32 operands extend";
  let description = [{
    torch-mlir imports a bf16 or f16 `nn.Linear` (or `torch.mm`, `bmm`) as
    an elementwise extension of each operand to f32 feeding an f32
    contraction. ke would run each extension as a kernel of its own and
    the contraction on f32 data, which tensor cores do not take. Since
    `linalg.matmul` and `linalg.batch_matmul` extend their operands to the
    result's element type themselves, an input produced by a
    `linalg.generic` that only extends a 16-bit float tensor to f32
    (identity maps, one `arith.extf`) is replaced by that tensor:

        %a32 = linalg.generic ... ins(%a : tensor<..xbf16>) { arith.extf }
        %r = linalg.matmul ins(%a32, %b32 : ..xf32, ..xf32) outs(%c : ..xf32)
      ->
        %r = linalg.matmul ins(%a, %b : ..xbf16, ..xbf16) outs(%c : ..xf32)

    The same computation bit for bit (the products are of the same exactly
    extended values, accumulated in f32). Runs before
    ke-fold-transposes-into-contractions, so that a weight's transpose,
    once it feeds the matmul directly, folds into its maps. The extension
    is left to erase-dead-results when nothing else reads it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldTransposesIntoContractionsPass
    : Pass<"ke-fold-transposes-into-contractions"> {
  let summary = "Fold linalg.transpose producers of matmul and batch_matmul "
                "operands into the contraction's indexing maps";
  let description = [{
    torch-mlir imports every `nn.Linear` as a `linalg.transpose` of the
    weight feeding `linalg.matmul`; ke would extract the transpose as a
    data-movement workload of its own (a full copy of the weight per call).
    This pass rewrites an input operand of `linalg.matmul` or
    `linalg.batch_matmul` on tensors that a `linalg.transpose` produces into
    the transpose's input, read through the composed indexing map, as
    MLIR's `indexing_maps` attribute of those ops allows:

        %wt = linalg.transpose ins(%w : tensor<48x32xf32>)
                outs(%e : tensor<32x48xf32>) permutation = [1, 0]
        %r = linalg.matmul ins(%a, %wt : ...) outs(%c : ...)
      ->
        %r = linalg.matmul indexing_maps = [(m, n, k) -> (m, k),
                                            (m, n, k) -> (n, k),
                                            (m, n, k) -> (m, n)]
               ins(%a, %w : ...) outs(%c : ...)

    The result is the same op a hand-written transposed matmul is, so both
    get the same workload key. A batch_matmul's batch dimension must stay
    first (its verifier allows transposes of the last two dimensions only);
    other permutations are left alone. The transpose is erased when nothing
    else reads it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SplitBiasFromInitsPass : Pass<"ke-split-bias-from-inits"> {
  let summary = "Accumulate convolutions and contractions from zero and add "
                "the broadcast bias they started from in an elementwise "
                "consumer";
  let description = [{
    torch-mlir imports a convolution's bias as a `linalg.broadcast` of the
    bias into the convolution's init. ke would schedule that broadcast as a
    data-movement kernel of its own, writing the whole output once before
    the convolution reads it back, and the elementwise tail after the
    convolution could not take the addition. A convolution (the
    ConvolutionOpInterface) or a matmul-like contraction on floats whose
    init is a broadcast on tensors instead accumulates into a
    `linalg.fill` of zero, and an elementwise `linalg.generic` adds the
    broadcast's input, read through the broadcast's map:

        %bb = linalg.broadcast ins(%bias : tensor<8xf32>)
                outs(%e : tensor<1x8x6x6xf32>) dimensions = [0, 2, 3]
        %y = linalg.conv_2d_nchw_fchw ins(%x, %w : ...) outs(%bb : ...)
      ->
        %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6x6xf32>)
        %c = linalg.conv_2d_nchw_fchw ins(%x, %w : ...) outs(%z : ...)
        %y = linalg.generic {indexing_maps = [id, (d0, d1, d2, d3) -> (d1),
               id], iterator_types = [parallel x 4]} ins(%c, %bias : ...)
               outs(%e : ...) { addf }

    The sum is the same up to the order of additions (PyTorch adds the bias
    after the convolution, too). Integer accumulations stay as they are.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvsToChannelsLastPass : Pass<"ke-convs-to-channels-last"> {
  let summary = "Run channels-first convolutions channels-last, between "
                "transposes";
  let description = [{
    `linalg.conv_1d_ncw_fcw`, `conv_2d_nchw_fchw` and `conv_3d_ncdhw_fcdhw`
    on static tensors (PyTorch's layout, as torch-mlir imports it) become
    `conv_1d_nwc_wcf`, `conv_2d_nhwc_hwcf` and `conv_3d_ndhwc_dhwcf`: the
    input is transposed to channels-last, the filter to spatial x input
    channels x output channels, the init is a fill of the same value into a
    channels-last empty (or a transpose of a non-fill init), and the result
    is transposed back to the original type, so nothing outside the
    convolution changes. Strides and dilations are kept. ke's convolution
    schedules tile output columns by channels with vector loads of both,
    which channels-first does not allow: on an H200, KernelBench's NCHW
    convolutions ran at 0.01-0.1x of cuDNN with scalar code. The output
    transpose is folded into the elementwise ops that read it by
    ke-fold-broadcasts-into-consumers, which runs after this pass.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvTransposePhasesPass : Pass<"ke-conv-transpose-phases"> {
  let summary = "Split a strided ConvTranspose (a convolution over its input "
                "spread out with zeros) into one dense convolution per "
                "output phase";
  let description = [{
    torch-mlir imports a ConvTranspose of stride `s` as a stride-1
    channels-first convolution (`linalg.conv_{1,2,3}d_nc*_fc*`) whose input
    is `tensor.insert_slice %x into %zeros` with spatial strides `s`: run
    as it is, it multiplies every inserted zero (`s^d` times the work in
    `d` dimensions). Along a dimension with insert offset `P`, filter size
    `K` and output size `O`, the outputs `o = s*q + r` of phase `r` meet
    only the taps `k = c + s*j`, `c = (P - r) mod s`, at input
    `q + j + e`, `e = (r + c - P) / s`. Each combination of per-dimension
    phases becomes a dense stride-1 channels-last convolution
    (`linalg.conv_{1,2,3}d_n*c_*cf`) of
    - the input, transposed channels-last once, shifted by `e` and
      zero-padded (a gather generic shared by the phases of one shift;
      the transposed input itself where `e` is 0 and no padding is
      needed),
    - the sub-filter `W[f, c, c + s*j]` (a generic through an affine map),
    into a fill of the original init's value (the init alone where no tap
    of the phase meets the input), transposed to channels-first, and one
    gather generic assembles the channels-first output from the phases
    (`o / s` of phase `o % s`).
    Matched: a unit-stride convolution (any dilation: a phase then has
    dilation `d / gcd(d, s)` and every `s / gcd(d, s)`-th tap) whose input is a
    static, non-rank-reducing insert into a fill of zero that spreads
    spatial dimensions only, whose init is a fill, with at most 16
    phases. Anything else stays.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def InsertsToGathersPass : Pass<"ke-inserts-to-gathers"> {
  let summary = "Rewrite strided tensor.insert_slice and paddings as "
                "elementwise generics that read their source";
  let description = [{
    A whole-model GPU library moves data between kernel groups with box
    copies, which have no element strides and at most three dimensions.
    Each of these becomes an elementwise `linalg.generic` over the
    destination that yields `tensor.extract %source[(i - offset) /
    stride]` where position `i` is inserted in every dimension
    (`0 <= i - offset < size * stride`, `(i - offset) % stride == 0`;
    dropped unit dimensions skipped) and the background elsewhere:
    - a `tensor.insert_slice` with static offsets, sizes and strides, at
      least one stride above 1 (torch-mlir's strided ConvTranspose spreads
      its input this way), into any destination: the background is the
      destination's value;
    - a unit-stride insert into a `linalg.fill` (a padding: a stride-1
      ConvTranspose's), and a `tensor.pad` of static amounts whose value
      is defined outside it: the background is that value, and the generic
      reads no init (the fill goes), writing each element once where a
      fill and a box copy per leading index wrote the inside twice.
    Unit-stride inserts into data stay (a box copy).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FoldBroadcastsIntoConsumersPass
    : Pass<"ke-fold-broadcasts-into-consumers"> {
  let summary = "Fold linalg.broadcast and linalg.transpose producers into "
                "the indexing maps of elementwise linalg.generic consumers";
  let description = [{
    An input of an elementwise `linalg.generic` (all loops parallel) on
    tensors that a `linalg.broadcast` or `linalg.transpose` produces is
    replaced by the producer's input, read through the composed map; the
    producer is erased when nothing else reads it. Example: a bias add

        %bb = linalg.broadcast ins(%b : tensor<48xf32>)
                outs(%e : tensor<64x48xf32>) dimensions = [0]
        %y = linalg.generic {indexing_maps = [id, id, id], ...}
               ins(%x, %bb : ...) outs(%e : ...)
      ->
        %y = linalg.generic {indexing_maps = [id, (d0, d1) -> (d1), id], ...}
               ins(%x, %b : ...) outs(%e : ...)

    Broadcasts that feed anything else (a convolution's init) stay.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def EraseDeadResultsPass : Pass<"ke-erase-dead-results"> {
  let summary = "Drop unused results of linalg.generic ops and the "
                "computation that only they need";
  let description = [{
    torch-mlir's max reduction (softmax, log-softmax, amax) is a generic with
    two results, the maximum and an i64 index of it that nothing reads;
    canonicalization keeps the index because its init is read by the body.
    This pass runs MLIR's erase-unused-operands-and-results patterns
    (`populateEraseUnusedOperandsAndResultsPatterns`), which first cut such
    unused cycles and then drop the result, its init and duplicate operands,
    leaving a one-result row reduction.

    A generic left with no results whose body's only side effects are
    `cf.assert` is erased: torch-mlir's gather (cross-entropy's
    take-along-dim) checks its indices with asserts, elementwise fusion
    copies that body, checks included, into every consumer, and the
    producer it leaves behind is a husk with no tensor to compute.

    A generic that only copies its one input (identity maps, result of the
    input's type, the body yields the input) is replaced by the input: on
    tensors the copy computes nothing (torch-mlir's InstanceNorm copies its
    whole input first).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldReductionUnitDimsPass : Pass<"ke-fold-reduction-unit-dims"> {
  let summary = "Drop the unit dimensions of kept-dimension reductions "
                "(tensor<64x1xf32> read as (d0, d1) -> (d0, 0))";
  let description = [{
    torch-mlir keeps reduced dimensions (`keepdim=True`) as unit dimensions
    read through constant-0 map results: a row maximum is a tensor<64x1xf32>
    written and read as `(d0, d1) -> (d0, 0)`. ke's row-reduction grouping
    (getRowReductions in ke/Workload/Kernel.h) expects the row map
    `(d0, d1) -> (d0)`. This pass runs MLIR's unit-extent-dimension folding
    (`populateFoldUnitExtentDimsPatterns`, reassociative reshapes) on
    linalg.generic ops none of whose loops has extent 1, so only such
    constant-0 operand dimensions go; ops with unit loops (batch 1) keep
    their shapes, and with them their place in the kernel group of the
    contraction or convolution that feeds them. The exception is an
    elementwise generic with unit loops whose inputs all come from
    `tensor.expand_shape` and whose result only `tensor.collapse_shape`
    reads (log-softmax's log of the row sums as tensor<Nx1xf32>): it is
    folded too, so the reshapes go and it fuses with its neighbours. Fills
    and empties of the dropped dimensions fold with their reshapes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def WidenAccumulatorsPass : Pass<"ke-widen-accumulators"> {
  let summary = "Accumulate bf16 and f16 sums in f32";
  let description = [{
    A `linalg.generic` on tensors that sums into a bf16 or f16 accumulator
    (body `addf(acc, f(inputs))`, the accumulator read once) accumulates in
    f32 instead: its init becomes f32 (a fill of the widened constant, or
    an elementwise extf), each term is extended before the addition, and an
    elementwise truncf gives the original type back. PyTorch accumulates
    low-precision sums in f32 too; in bf16, a sum of 4096 values was off by
    1.9e3 (KernelBench's sum reduction in bf16), and means and the
    statistics of norms failed the 1e-2 check. Maximum and minimum, which
    round exactly, and named ops (pooling, contractions) are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ComputeNarrowFloatsInF32Pass : Pass<"ke-compute-narrow-floats-in-f32"> {
  let summary = "Compute each op's bf16 and f16 arithmetic in f32, rounding "
                "its results once";
  let description = [{
    torch-mlir writes a bf16 (f16) op as bf16 arithmetic in its generic's
    body: a sigmoid is `negf`, `exp`, `addf`, `divf`, each rounded to bf16.
    PyTorch's kernels compute in f32 and round each op's result once (their
    "opmath" type). In a `linalg.generic` on tensors, every arith float op
    (add, sub, mul, div, rem, neg, min/max, compare, select) and math op on
    bf16 or f16 values runs in f32 instead; a value leaves f32 only where
    the body needs it in its own type: at the yield, and as the operand of
    an op this pass does not widen (an explicit `truncf` stays: a rounding
    the model asks for). Runs before elementwise fusion, while a generic is
    still one torch op, so that fused chains keep the rounding between
    their ops that PyTorch has. Bodies of ops other than linalg.generic
    (named ops) are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SplitOuterReductionsPass : Pass<"ke-split-outer-reductions"> {
  let summary = "Split a reduction with reduction loops outside parallel "
                "ones into two stages";
  let description = [{
    A `linalg.generic` on tensors whose reduction loops are not all
    innermost (a batch norm's per-channel mean, loops `(n, c, h, w)` with
    `c` parallel) becomes two generics: stage 1 reduces only the trailing
    reduction loops (at least 256 elements), the outer ones made parallel,
    into partial results that start from the combining op's neutral
    element; stage 2 combines the partials over the outer reduction loops
    into the original init. The body must be `combine(acc, f(inputs))`
    with one combining op that has a neutral element
    (`arith::getNeutralElement`) and reads the accumulator once; bodies
    that read `linalg.index` are left alone. Stage 1 is a row reduction,
    which ke's GPU rules split over a block's threads; unsplit, one thread
    summed each channel's 16.7 million values in order (KernelBench's
    BatchNorm: slow, and off by 2e-4).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CollapseReductionDimsPass : Pass<"ke-collapse-reduction-dims"> {
  let summary = "Collapse consecutive reduction loops of a generic into one";
  let description = [{
    A `linalg.generic` on tensors with two or more reduction loops that are
    consecutive, and that every operand reads as one contiguous run of
    dimensions in the same order (a mean over all dimensions but the
    batch), becomes a generic with one reduction loop over collapsed views
    of its operands (upstream's `populateCollapseDimensions`, with
    `tensor.collapse_shape` before and `tensor.expand_shape` after where
    needed). ke's reduction rules take one innermost reduction loop; the
    elementwise rule would otherwise run the whole reduction inside each
    thread. Other generics are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseElementwiseChainsPass : Pass<"ke-fuse-elementwise-chains"> {
  let summary = "Fuse chains of elementwise linalg.generic ops into one";
  let description = [{
    torch-mlir emits the elementwise tail of a layer (bias, activation,
    scaling) as 3-5 generics, each its own kernel in ke. This pass runs
    MLIR's elementwise fusion (`populateElementwiseOpsFusionPatterns`)
    with a control function that fuses a producer into a consumer only when
    both are elementwise generics on tensors (all loops parallel) with one
    result and the consumer is the producer's only user. Elementwise ops are
    never fused into contractions, convolutions or reductions (those are
    named ops or have reduction loops), and no computation is duplicated, so
    a GEMM or convolution followed by N elementwise ops becomes the anchor
    plus one elementwise consumer, which ke's kernel groups fuse into the
    anchor's kernel.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect"];
}

def DemoteF64Pass : Pass<"ke-demote-f64"> {
  let summary = "Compute in f32 what importers compute in f64 from f32 data";
  let description = [{
    torch-mlir computes the variance of LayerNorm, BatchNorm, InstanceNorm
    and GroupNorm in f64: an arith.extf of f32 data to f64, reductions and
    elementwise ops on f64 tensors, and an arith.truncf back. PyTorch's own
    CPU and CUDA kernels accumulate the variance of f32 inputs in f32 (with
    Welford or two-pass sums), so f32 is what the model computes when it
    runs; f64 only doubles the memory traffic and runs at 1/2 (CPU SIMD) to
    1/64 (consumer GPUs) of the f32 rate. This pass demotes every
    linalg.generic whose f64 tensors are all derived from f32 data: its f64
    operands and results become f32, arith.extf from f32 to f64 in bodies
    disappears, arith.truncf from f64 to f32 disappears, f64 arithmetic and
    constants become f32. Ops that read f64 data from elsewhere (a function
    argument, an f64 constant tensor) are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def BoolTensorsAsBytesPass : Pass<"ke-bool-tensors-as-bytes"> {
  let summary = "Store i1 tensors that kernels pass to each other as i8";
  let description = [{
    A `linalg.generic` whose i1 tensor result is read by other ops (after
    fusion: by another kernel) writes i8 instead (`arith.extui` before its
    yield); each generic that reads it takes the i8 tensor and truncates
    the element at the start of its body (`arith.trunci`), any other
    reader gets an elementwise truncation of its own. A vectorized writer
    stores `vector<8xi1>`, which LLVM packs into the bits of one byte,
    while a scalar reader loads a byte per element: cross-entropy's mask of
    valid targets was read wrong and its loss was off by 2 to 6. The
    writer's init must not be read; a result the function returns keeps
    its i1 (the caller's bool tensor), which the lowerings write a byte per
    element (ke-scalarize-bool-transfers). That step alone would make the
    shared mask correct too; as i8 its accesses stay vectorized.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def NormalizeEmptiesPass : Pass<"ke-normalize-empties"> {
  let summary = "One tensor.empty (and fill) per destination, at the start "
                "of its block";
  let description = [{
    A `tensor.empty` names no data, only a shape, but it decides two things
    about the ops that use it as their destination:

    - Ops that share one share a buffer after bufferization. In

          %e = tensor.empty() : tensor<64x1024xf32>
          %z = linalg.fill ins(%c0 : f32) outs(%e : ...)
          %h = linalg.matmul ins(...) outs(%z : ...)
          %g = linalg.generic ins(%h, ...) outs(%e : ...)

      the generic would write the buffer the matmul's result lives in
      while reading it, which bufferization answers with a copy (a runtime
      call no GPU kernel can make), and a kernel group would have one buffer
      for two results. Every use but the first gets a `tensor.empty` of its
      own.
    - Importers (torch-mlir) put each op's `tensor.empty` right before the
      op, after the ops it reads. A kernel group takes an anchor's
      elementwise consumer only when everything the consumer reads exists
      at the anchor (ke/Workload/Kernel.h), so a consumer whose destination
      is created after the anchor would be a kernel of its own. Empties of
      static shape move to the start of their block.
    - A `linalg.fill` that several ops read, some accumulating into it (the
      zero init of two row sums, shared after torch-mlir's CSE), would
      likewise give two kernels one accumulator: the second overwrites the
      first's result. Each accumulating use gets a fill of its own.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def PrepareGraphPass : Pass<"ke-prepare-graph", "::mlir::ModuleOp"> {
  let summary = "Run ke's whole graph preparation (prepareGraph)";
  let description = [{
    Runs the graph preparation that ke-opt's workloads, sketches, tune, bench
    and compile apply to their inputs (see ke/Graph/GraphPreparation.h):
    upstream convert-elementwise-to-linalg (arith and math on whole
    tensors become linalg.generic), ke-fold-transposes-into-contractions, ke-fold-broadcasts-into-consumers,
    ke-erase-dead-results, ke-widen-accumulators,
    ke-compute-narrow-floats-in-f32, ke-fold-reduction-unit-dims,
    ke-split-outer-reductions, ke-collapse-reduction-dims, ke-demote-f64 (unless
    `demote-f64=false`), ke-fuse-elementwise-chains, ke-erase-dead-results
    again, ke-bool-tensors-as-bytes and ke-normalize-empties, in that
    order.
  }];
  let options = [
    Option<"demoteF64", "demote-f64", "bool", /*default=*/"true",
           "Demote f64 computation on f32 data to f32 (ke-demote-f64)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // KE_GRAPH_PASSES
