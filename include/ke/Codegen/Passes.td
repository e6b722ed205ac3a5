//===- Passes.td - The steps of ke's CPU and GPU lowerings -*- tablegen -*-===//
//
// Steps of the GPU lowering (ke/Codegen/GpuPipeline.h) and the CPU lowering
// (ke/Codegen/CpuPipeline.h) as passes: each runs in its pipeline's step list, prints itself into the pipeline
// text the pipeline hash covers, and runs alone in ke-opt's mlir-opt mode
// for its lit test (test/Codegen/<pass>.mlir).
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PASSES
#define KE_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

def ExpandMathPass : Pass<"ke-expand-math"> {
  let summary = "Rewrite the math ops that LLVM's CPU lowering cannot take";
  let description = [{
    `convert-math-to-llvm` has no lowering for `math.erf` and `math.erfc`
    (exact GELU), and lowers `math.fpowi` to `llvm.intr.powi`, whose
    exponent must be a scalar i32, while torch-mlir writes `x ** 2` as
    `math.fpowi` with an i64 exponent (RMSNorm, MSELoss, the tanh GELU),
    vectors once vectorized. Upstream's patterns rewrite them into
    arithmetic that lowers anywhere: `math.fpowi` with a constant exponent
    into multiplications (math-expand-ops' fpowi expansion), and, unless
    `approximate-erf=false`, `math.erf` and `math.erfc` on f32 into
    upstream's polynomial approximations (those of
    math-polynomial-approximation, within a few ulp of libm's erff), and
    so are `math.exp`, `math.expm1`, `math.tanh`, `math.log`, `math.log1p`
    and `math.log2` on f32 scalars and fixed-length vectors: LLVM has no
    vector form of them without a vector math library, so a vectorized row
    of exponentials or a tanh GELU's epilogue otherwise becomes one libm
    call per element on the CPU. `math.absi` on vectors of two or more dimensions, which
    convert-math-to-llvm does not lower (it fails in translation), becomes
    `max(x, 0 - x)`, exact for every value. Other math ops are left to
    convert-math-to-llvm. The GPU
    lowerings run it with `approximate-erf=false`: libdevice and ocml have
    `erff`, while their `powi` takes an i32 exponent (an i64 one was called
    through a mismatched prototype and read garbage).

    Unless `expand-bf16-casts=false`, `arith.extf` from and `arith.truncf`
    to bf16 outside linalg ops (a named op's body keeps its form) become
    integer arithmetic (upstream's bf16 expansion: a shift,
    and round-to-nearest-even on the bits). The AArch64 backend cannot
    select bf16 vector element extracts without the BF16 extension (A64FX
    has none): a bf16 kernel computed in f32 (ke-compute-narrow-floats-in-f32)
    crashed it. The GPU lowerings keep the casts: PTX and AMDGPU convert
    natively.
  }];
  let options = [
    Option<"approximateErf", "approximate-erf", "bool", "true",
           "Rewrite math.erf and math.erfc into polynomial approximations">,
    Option<"expandBf16Casts", "expand-bf16-casts", "bool", "true",
           "Rewrite extf/truncf between bf16 and f32 into integer arithmetic">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FreshUnreadInitsPass : Pass<"ke-fresh-unread-inits"> {
  let summary = "Give generics that overwrite a destination other ops "
                "write too a tensor.empty of their own";
  let description = [{
    A linalg.generic on tensors whose iterators are all parallel, whose
    init's indexing map is a permutation (every element is written) and
    whose body does not read that init's block argument computes its
    result without the init's values. Where several generics of a block
    take one value as their init, each such generic but the last gets a
    tensor.empty of the same shape instead (the last keeps the
    destination: the function's result is written there). cpu.softmax runs
    it from its script right after decomposing the softmax
    (`transform.apply_registered_pass`):
    decomposition writes the exponentials into the softmax's output, as the
    divide does, so that once both are tiled into one loop over row blocks
    the exponentials' block was the output's block, and bufferization
    copied the (not yet written) output block into a fresh buffer for them
    on every iteration: the output read from memory once more, 0.65 of the
    copy bandwidth at 4096 x 4096 on this CPU. Upstream's elementwise
    fusion has the same rewrite (RemoveOutsDependency), not exposed alone.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def GpuHoistBarriersPass
    : Pass<"ke-gpu-hoist-barriers", "::mlir::ModuleOp"> {
  let summary = "Move barriers out of loops that write no workgroup memory";
  let description = [{
    map_nested_forall_to_threads puts a gpu.barrier after every thread
    forall, also after one nested in an scf.for (the interleaved row loops of
    the row rules): the block then waits for its slowest warp once per step.
    Threads of a ke kernel exchange data only through workgroup memory (the
    kernel ABI: buffer arguments do not overlap), so a barrier inside a loop
    whose body writes no workgroup memory and calls nothing orders nothing
    between iterations. Such a loop's barriers are erased and, when there
    were any, one barrier after the loop keeps its order with what follows.
    Loops that write workgroup memory keep theirs.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GpuWrapUnmappedKernelPass
    : Pass<"ke-gpu-wrap-unmapped-kernel", "::mlir::ModuleOp"> {
  let summary = "Run a kernel whose schedule mapped nothing in one thread";
  let description = [{
    A kernel whose schedule made no gpu.launch (a 0-d result: nothing to
    spread over blocks) gets its whole body, but the return, wrapped in one
    launch of one block of one thread, so that every kernel module becomes
    device code. Only the kernel function (ke/Workload/Kernel.h) is touched.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuReferenceSplitReductionsPass
    : Pass<"ke-gpu-reference-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Split the long reductions of few outputs in the device reference";
  let description = [{
    The device reference (ke/Codegen/GpuReference.h) gives each output point
    one thread. A reduction with few outputs and long rows (a softmax over
    rows of 393216: 4096 threads, each a chain of 393216 dependent loads
    from rows 1.5 MB apart) would then run for minutes. Such a linalg op on
    tensors (fewer than 65536 output points, one reduction loop of at least
    4096 iterations) is split with upstream's linalg::splitReduction into
    partial reductions over interleaved slices, with the slice index the
    innermost parallel loop (neighbouring threads read neighbouring
    elements) and enough slices for about 262144 threads (a divisor of the
    row), then a reduction of the partials. Only the summation order
    changes. Ops whose combiner upstream does not recognize (an argmax's
    two results) stay whole. Only the kernel function is touched.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GpuReferenceLaunchesPass
    : Pass<"ke-gpu-reference-launches", "::mlir::ModuleOp"> {
  let summary = "Map a bufferized, unscheduled kernel to plain-loop launches";
  let description = [{
    The device reference (ke/Codegen/GpuReference.h): the kernel without a
    schedule, run on the GPU so that tuning at full sizes needs no CPU pass
    over gigabytes. Each linalg op of the kernel function (on memrefs; named
    ops generalized, `memref.copy` as `linalg.copy`) becomes one gpu.launch
    with one thread per point of its parallel loops (blocks of 256, the
    points linearized with the last parallel loop fastest, so that
    neighbouring threads touch neighbouring elements), and its reduction
    loops run in that thread in program order, as convert-linalg-to-loops
    runs them. When no input reads an output's buffer, the outputs are
    read once before the reduction loops and carried in registers in f64,
    and the body's float arithmetic (add, sub, mul, div, min/max, compare,
    select, int-float conversions) runs in f64 too, so that a long
    accumulation is accurate; the body's other ops (math functions, its own
    truncf and extf roundings) run in their own types, and the result is
    rounded to the output's type once. When an input reads an output's
    buffer, each iteration loads and stores the output in its own type, as
    the loops would. No tiling, no shared memory, no vectors. Fails at the
    op on dynamic loop ranges and on ops it cannot map.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GpuCheckMappedPass : Pass<"ke-gpu-check-mapped", "::mlir::ModuleOp"> {
  let summary = "Check that the schedule left nothing on the host";
  let description = [{
    The runner executes the launches only, so host code that touches memory
    (an op the schedule did not map, e.g. an unfused consumer) would
    silently never run. Fails, at the op, on a host op with memory effects
    other than allocations, on a linalg op or a tensor outside the
    launches, and when the module has no gpu.launch at all. Changes nothing.
  }];
}

def GpuSinkConstantsPass : Pass<"ke-gpu-sink-constants", "::mlir::ModuleOp"> {
  let summary = "Clone the constants and buffer reshapes a launch uses into it";
  let description = [{
    Outlining turns every value a launch uses from above into a kernel
    argument, and a captured constant (a vector constant above all) has no
    launch ABI. Constants, and reshapes (expand/collapse_shape) of a host
    buffer, are cloned into the launch body instead, so that outlining
    captures buffers only.
  }];
}

def GpuMergeModulesPass : Pass<"ke-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Merge the outlined gpu.modules into the first";
  let description = [{
    gpu-kernel-outlining makes one gpu.module per launch; a kernel group with
    several launches (a global reduction and its combine) must become one
    binary. Every gpu.module's ops move into the first; a kernel whose name
    clashes takes its old module's name, and the launches are updated.
  }];
}

def GpuAllocsToAttributionsPass
    : Pass<"ke-gpu-allocs-to-attributions", "::mlir::ModuleOp"> {
  let summary = "Turn static allocations in kernels into attributions";
  let description = [{
    A kernel cannot call malloc. Every memref.alloc in a gpu.func becomes a
    workgroup attribution (shared memory, LDS) when its memory space is
    #gpu.address_space<workgroup>, a private attribution otherwise; its
    deallocs are erased. An allocation of dynamic shape or with a non-identity
    layout is an error at the allocation.
  }];
}

def GpuTransposeSharedTilesPass
    : Pass<"ke-gpu-transpose-shared-tiles", "::mlir::ModuleOp"> {
  let summary = "Store shared-memory tiles in the order the threads read them";
  let description = [{
    A workgroup allocation inside a gpu.launch whose every read (a plain,
    in-bounds vector.transfer_read of its full rank) is transposed in its
    last two dimensions right away, and whose every write is a plain
    vector.transfer_write of at most four row segments (directly or through
    a unit-stride subview of the same rank), is reallocated with its last two dimensions swapped: the
    reads read the transposed layout directly, and the writes transpose the
    vector they store. A contraction that reads an operand as (n, k) (a
    transposed-B matmul, nn.Linear) stages [n][k] tiles whose reads along n
    conflict in the shared-memory banks; stored as [k][n] they are read like
    a plain matmul's. Allocations with any other use are left alone.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def GpuHoistAccumulatorTilesPass
    : Pass<"ke-gpu-hoist-accumulator-tiles", "::mlir::ModuleOp"> {
  let summary = "Keep a thread's accumulator tile in registers across a loop";
  let description = [{
    A vector.transfer_read of a tile in an scf.for inside a gpu.launch, and a
    vector.transfer_write of the same tile later in the body (same memref
    value and indices, all defined outside the loop), move out of the loop;
    the tile becomes an iter_arg. The GPU sketches leave this pattern in the
    shared-memory stage loop of a contraction, where every stage would
    otherwise read and write the output tile in global memory. Only done
    when nothing else in the loop touches the tile's buffer, the buffer is
    distinct (a kernel argument or an allocation) and the loop runs at least
    once; upstream's hoistRedundantVectorTransfers refuses tiles that are
    subviews.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def GpuVectorToMmaPass : Pass<"ke-gpu-vector-to-mma", "::mlir::ModuleOp"> {
  let summary = "Turn a launch's warp contractions into ldmatrix and mma.sync";
  let description = [{
    In every gpu.launch that holds vector.contract ops (the gpu.mma sketch
    leaves contractions of one m16n8k16 instruction each, their operands
    2-D reads of shared memory, their accumulators carried by the stage
    loop), upstream's convertVectorToNVVMCompatibleMMASync makes ldmatrix
    loads and nvgpu.mma.sync. MLIR 22 does not lower bf16 mma.sync: a bf16
    contraction's shared tiles are retyped to f16 bit for bit (writes
    bitcast), the contraction is converted as f16, each of its mma.sync
    ops becomes nvvm.mma.sync with bf16 operands, and the tiles get their
    bf16 type back. Before the conversion, accumulators that start from a
    fill take its constant (the fill's store is erased when nothing reads
    it and a later store overwrites it) and the cooperative copies into
    shared memory become 16-byte row loads and stores; after it, the shared
    tiles are swizzled (upstream's optimizeSharedMemoryReadsAndWrites). A
    contraction the conversion does not take is an error, not a silent
    scalar loop. CUDA only. f32 contractions (m16n8k8) become TF32
    mma.sync with allow-tf32 (the +tf32 targets), three of them each with
    tf32x3 as well (+3xtf32), and are an error without it; so do the f32
    mma.sync of launches a pass built with them (gpu.ffma's `mma = 1`).
    Other launches are left alone.
  }];
  let options = [
    Option<"allowTF32", "allow-tf32", "bool", /*default=*/"false",
           "Lower f32 contractions to TF32 mma.sync (10 mantissa bits: the "
           "target must allow it)">,
    Option<"tf32x3", "tf32x3", "bool", /*default=*/"false",
           "With allow-tf32: three TF32 mma.sync per f32 one (each operand "
           "split into two TF32 parts; about 21 mantissa bits)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::vector::VectorDialect"];
}

def WidenReferenceFloatsPass : Pass<"ke-widen-reference-floats"> {
  let summary = "The CPU reference's float arithmetic in f64";
  let description = [{
    Generalizes every linalg op on tensors; one that reads or writes
    floats narrower than f64 gets f64 outputs (its inits extended by an
    elementwise generic), the float arithmetic of its body (add, sub, mul,
    div, rem, neg, min/max, cmpf, select) in f64 with its block arguments
    and constants widened, and its results rounded to their types once by
    an elementwise generic after it. Math functions and the body's own
    truncf/extf stay as written: their operands are rounded to the written
    types and their results carried on. Ops with regions in their bodies
    are left as written. The CPU evaluator runs it on the reference's
    kernel for the outputs candidates are checked against (not for the
    reference's time): a sequential f32 sum of 10^7 elements is itself off
    by about 1e-4, and a 16-bit sum accumulated in 16 bits by more than the
    16-bit tolerance. The device reference computes the same way
    (ke-gpu-reference-launches).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GpuRowSoftmaxPass : Pass<"ke-gpu-row-softmax", "::mlir::ModuleOp"> {
  let summary = "Softmax kernels for rows of any length, for softmaxes the "
                "gpu.softmax sketch marked";
  let description = [{
    Replaces each bufferized linalg.softmax over the last dimension marked
    `ke.softmax = {row_threads, rows, vec, warp}` (static, contiguous f16,
    bf16 or f32 rows) by a gpu.launch: `rows` rows of `row_threads` threads
    per block; each thread reads its `vec`-element vectors of the row once
    keeping an online maximum and sum of exponentials, the row's threads
    combine their pairs (xor shuffles within a warp, shared memory across
    warps), and a second pass stores exp(x - max) / sum. Vectors past the
    row (its length need not be a multiple of anything but `vec`) and rows
    past the last are skipped. Arithmetic is in f32 and rounded once on the
    store. A marked op this cannot build is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuRowArgmaxPass : Pass<"ke-gpu-row-argmax", "::mlir::ModuleOp"> {
  let summary = "argmax / argmin kernels over rows, for arg reductions the "
                "gpu.argrow sketch marked";
  let description = [{
    Replaces each bufferized arg reduction (ke/Workload/ArgReduction.h: one
    float input, a best value and an index as inits, the first maximum or
    minimum of each row over the innermost loop) marked `ke.argrow =
    {row_threads, rows, vec, warp}` by a gpu.launch: `rows` rows of
    `row_threads` threads per block; each thread scans its `vec`-element
    vectors of the row once for its best value and first position (16-bit
    values compared in f32), the row's threads combine theirs (the better
    value, ties to the smaller position), and the row's first thread stores
    the value and the index (the init's where nothing was better). A row
    with a NaN is scanned again in order by that thread with the op's own
    body, so that every row gets the sequential answer. The linalg.fill of
    each init right before the op is folded into the kernel. A marked op
    this cannot build is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuRowNormPass : Pass<"ke-gpu-row-norm", "::mlir::ModuleOp"> {
  let summary = "Norm kernels for rows of any length, for the elementwise "
                "ops with row reductions the gpu.rownorm sketch marked";
  let description = [{
    Replaces each bufferized elementwise op marked `ke.rownorm =
    {row_threads, rows, vec, warp}`, together with the row reductions it
    reads (the ops before it marked `ke.row_reduction`, each with the
    linalg.fill of its init and a float combiner: a layer norm's mean and
    variance, a log-softmax's maximum and sum), by a gpu.launch: `rows` rows
    of `row_threads` threads per block; for each reduction in program order,
    each thread applies the reduction's body to its `vec`-element vectors
    of the row (columns past the row skipped) starting from the combiner's
    neutral element, the row's threads combine their partials with the
    combiner and the fill's value is combined in; then each thread applies
    the elementwise op's body to its vectors and stores them. Operands read
    as stored are loaded as vectors, others through their maps element by
    element. Static f32 operands only. A marked op this cannot build is a
    located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuMfmaMatmulsPass : Pass<"ke-gpu-mfma-matmuls", "::mlir::ModuleOp"> {
  let summary = "CDNA kernels (MFMA 16x16x16) for matmuls the gpu.mfma "
                "sketch marked";
  let description = [{
    Replaces each bufferized linalg.matmul, linalg.batch_matmul or
    linalg.conv_2d_nhwc_hwcf marked `ke.mfma = {block_m, block_n, waves_m,
    waves_n, k_tile, group_m}` (f16 or bf16 operands, an f32 result, A
    stored M x K or K x M, B K x N or N x K), together with the linalg.fill
    of its accumulator right before it, by a gpu.launch: waves_m x waves_n
    64-lane wavefronts per block, one LDS stage of A and B (k_tile K,
    stored as the operands are, rows padded by 16 bytes), the next stage's
    16-byte global loads held in registers while this one multiplies, one
    amdgpu.mfma 16x16x16 per 16x16 accumulator tile and 16 K, and the
    accumulators stored with the fill's value added. Partial tiles are
    zero-filled and their stores masked. A consumer marked
    `ke.mfma.epilogue` (elementwise, reading the result through the identity
    from a temporary buffer) is applied to each accumulator before the
    store, and it and the temporary are gone. A marked op this cannot build
    is a located error. The first step of the ROCm lowering (gfx90a,
    gfx94x, gfx950).

    With `emulate`, each MFMA is computed by the wavefront's lanes instead:
    they exchange their operand fragments through shared memory (in the
    instruction's operand layout) between two block barriers and each lane
    sums its four results, so that the same kernels run, and are checked,
    on a CUDA GPU (`cuda:<sm>+mfma-emulation`).
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "Emulate MFMA with shared memory and scalar arithmetic (for "
           "checking the kernels on other GPUs)">
  ];
  let dependentDialects = ["::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuColumnReducePass : Pass<"ke-gpu-column-reduce", "::mlir::ModuleOp"> {
  let summary = "Kernels for the reductions along an outer loop the "
                "gpu.colreduce sketch marked";
  let description = [{
    Replaces each bufferized linalg op marked `ke.colreduce = {threads_x,
    threads_y, unroll}` (one reduction loop, not the innermost; a body
    `combine(acc, f(inputs))`; ke/Workload/ColumnReduction.h), together with
    the linalg.fill of its init right before it, by a gpu.launch. The loops
    are taken as (batch, rows, columns): the parallel loops before the
    reduction loop, the reduction loop, the parallel loops after it. Blocks
    along x take threads_x columns of one batch index each; thread (x, y)
    applies the op's body, from the combiner's neutral element, to column
    x over rows y * unroll + j * threads_y * unroll (unroll rows at a time,
    so that their loads issue together; the rows past the last whole step
    one at a time). With threads_y > 1 the partial results meet in shared
    memory, and after a barrier thread (x, 0) combines them in order of y
    with the combiner alone, then with the init (the fill's value, else the
    output's element), and stores the result. Columns past the last are
    neither read nor written; every combination order is fixed. A marked op
    this cannot build is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuTransposePass : Pass<"ke-gpu-transpose", "::mlir::ModuleOp"> {
  let summary = "Shared-memory transpose kernels for the transposes the "
                "gpu.transpose sketch marked";
  let description = [{
    Replaces each bufferized linalg.transpose marked `ke.transpose = {tile,
    rows}` by a gpu.launch. The transpose is taken over its merged
    dimensions (ke/Workload/Transpose.h: output dimensions that stay
    adjacent in the input move as one, dimensions of extent 1 join their
    neighbours), both buffers collapsed to them. Each block moves a
    tile x tile square of the output dimension the input holds innermost
    by the output's innermost one, with tile x rows threads: it reads the
    square along the input's innermost dimension into a shared tile (rows
    padded by one element), synchronizes, and writes it along the output's
    innermost dimension; the other dimensions and the squares form the grid
    along x. Elements past an extent are neither read nor written. A marked
    op this cannot build (a copy that moves no innermost dimension, knobs
    that do not fit a block) is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuFfmaMatmulsPass : Pass<"ke-gpu-ffma-matmuls", "::mlir::ModuleOp"> {
  let summary = "CUDA-core kernels for the f32 GEMMs the gpu.ffma sketch "
                "marked";
  let description = [{
    Replaces each bufferized linalg.matmul, linalg.batch_matmul (A stored
    M x K or K x M, B K x N or N x K), linalg.conv_2d_nhwc_hwcf or
    linalg.conv_3d_ndhwc_dhwcf with f32 operands marked `ke.ffma =
    {block_m, block_n, k_tile, stages, group_m, thread_n}`, together with
    the linalg.fill of its accumulator right before it, by a gpu.launch of
    every block tile along the grid's x (grouped rasterization): warps of
    4 x 8 threads over 32 x (8 thread_n) warp tiles, each thread 8 x
    thread_n results as blocks of 4 x 4 (conflict-free 16-byte shared
    reads), `stages` shared A and B tiles of k_tile rows stored [k][m] and
    [k][n] (rows padded by 4 elements) in dynamic shared memory, filled by
    cp.async stages - 1 tiles ahead (16-byte copies along M or N, 4-byte
    transposing copies along K; elements past M, N or K zero-filled), one
    barrier per K tile, and the accumulators stored from registers with the
    fill's value added. A consumer marked `ke.ffma.epilogue` (elementwise,
    reading the result from a temporary buffer through the identity or a
    permutation, e.g. a convolution's result written back channels-first)
    is applied to each result before the store, and it and the temporary
    are gone. With `mma = 1` each warp tile is 2 x thread_n m16n8k8 f32
    nvgpu.mma.sync instead (shared rows padded by 8, k_tile a multiple of
    8), which ke-gpu-vector-to-mma makes TF32 or 3xTF32 as the target
    allows; with `exact_tf32 = 1` as well (operands that TF32 holds
    exactly, `ke.exact_in_tf32`) they are TF32 mma.sync from the start, on
    any target. A marked op this cannot build is a located error. CUDA only;
    the first step of the CUDA lowering.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuWgmmaMatmulsPass : Pass<"ke-gpu-wgmma-matmuls", "::mlir::ModuleOp"> {
  let summary = "Hopper kernels (wgmma, cp.async) for matmuls the gpu.wgmma "
                "sketch marked";
  let description = [{
    Replaces each bufferized linalg.matmul or linalg.batch_matmul marked
    `ke.wgmma = {block_m, block_n, stages}` (f16 or bf16 operands, an f32
    result, A stored M x K, B K x N or N x K), together with the
    linalg.fill of its accumulator right before it, by a gpu.launch:
    block_m / 64 warpgroups per block, `stages` shared A and B tiles of 64 K
    elements in dynamic shared memory (1024-byte aligned, the 128-byte
    swizzle), cp.async copies stages - 2 tiles ahead, four
    wgmma.mma_async m64n{block_n}k16 per tile and warpgroup with one group
    in flight, and the accumulators stored from registers with the fill's
    value added. A consumer marked `ke.wgmma.epilogue` (elementwise, reading
    the matmul's result through the identity from a temporary buffer) is
    applied to each accumulator before the store, and it and the temporary
    are gone. A marked op this cannot build is a located error. The
    kernel needs sm_90a (ptxas rejects wgmma elsewhere). CUDA only; the
    first step of the CUDA lowering.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuPipelineStageCopiesPass
    : Pass<"ke-gpu-pipeline-stage-copies", "::mlir::ModuleOp"> {
  let summary = "Multi-stage cp.async pipelining of a tensor-core stage loop";
  let description = [{
    For each scf.for inside a gpu.launch whose body runs mma.sync (as
    ke-gpu-vector-to-mma leaves it: 16-byte copies of the A and B tiles
    into shared memory, a barrier, ldmatrix and mma.sync, a barrier): the
    shared tiles move before the loop, barriers that order no conflicting
    shared accesses are erased, the copies become cp.async groups
    (nvgpu::createAsyncGroups), the tiles get `depth` buffers
    (memref::multiBuffer; depth 3, or 2 where three sets exceed 48 KiB) and
    the loop is software-pipelined (scf pipeliner): iteration k issues the
    copies of stage k + depth - 1, waits until stage k's group landed
    (nvgpu.device_async_wait with depth - 1 groups in flight), and
    multiplies stage k; the peeled last stages wait for all. Loops whose
    copies do not become cp.async are left alone; a pipeliner that fails
    half way is an error. CUDA only.
  }];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuStageLoopOccupancyPass
    : Pass<"ke-gpu-stage-loop-occupancy", "::mlir::ModuleOp"> {
  let summary = "Bound a shared-memory stage loop's kernel to two blocks per SM";
  let description = [{
    A kernel (gpu.func) with a contraction's stage loop (an scf.for whose
    body reads global memory with vector.transfer_read ahead of a
    gpu.barrier and writes only workgroup memory), a known block of at most
    256 threads and at most 64 KiB of workgroup memory gets
    `nvvm.minctasm = 2` (PTX .minnctapersm 2): ptxas then keeps it within
    65536 / (2 x threads) registers per thread, so two blocks share an SM
    and hide each other's waits on the stage loads. Without it, GEMMs with
    a fused elementwise tail took 150-170 registers and one block per SM.
    A kernel that already has the attribute is left alone.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def ScalarizeBoolTransfersPass
    : Pass<"ke-scalarize-bool-transfers", "::mlir::ModuleOp"> {
  let summary = "Access i1 vectors in memory one element (byte) at a time";
  let description = [{
    A buffer of i1 holds a byte per element (PyTorch's bool tensors; MLIR's
    lowering of a scalar i1 load or store), but LLVM loads and stores a
    `<8 x i1>` vector as the bits of one byte. 1-D `vector.transfer_read`
    and `vector.transfer_write` (unmasked, a minor dimension or a
    broadcast; out-of-bounds elements checked one by one) and
    `vector.load`/`vector.store` of i1 vectors on memrefs of i1 become one
    `memref.load` or `memref.store` per element. Runs after
    convert-vector-to-scf in the CPU and GPU lowerings: before it,
    `torch.where(mask, x, 0)` read a bool mask's first byte as eight
    elements and `x > 0` wrote packed bits.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuFlattenVectorCastsPass
    : Pass<"ke-gpu-flatten-vector-casts", "::mlir::ModuleOp"> {
  let summary = "Float casts of n-D vectors as casts of their 1-D rows";
  let description = [{
    `arith.extf` and `arith.truncf` of a vector of rank 2 or more become
    one cast per innermost row (`vector.extract` of the row, the 1-D cast,
    `vector.insert` into the result). The NVVM conversion
    lowers bf16 casts of 1-D vectors only: a bf16 convolution with an f32
    result (torch-mlir's bf16 Conv1d) left an unrealized cast of
    `vector<1x3x1xbf16>` that translation to LLVM IR rejected.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuLowerVectorTransfersPass
    : Pass<"ke-gpu-lower-vector-transfers", "::mlir::ModuleOp"> {
  let summary = "Lower what convert-vector-to-scf leaves to 1-D loads and stores";
  let description = [{
    Runs after convert-vector-to-scf{full-unroll}: transposed and
    broadcasting transfers become minor-identity ones, transfers of rank 1
    become vector.load/store, and n-D broadcasts, transposes, shape casts
    and insert/extract_strided_slice become 1-D vector ops, which the NVVM
    and ROCDL conversions handle (the strided slices of the full suite's
    NCHW strided convolution failed in translation before).
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GpuAnnotateVectorAlignmentPass
    : Pass<"ke-gpu-annotate-vector-alignment", "::mlir::ModuleOp"> {
  let summary = "Give vector loads and stores the alignment their indices prove";
  let description = [{
    Kernel buffers are 16-byte aligned (the runners allocate each on its own
    and pass offset 0). A vector.load or vector.store in a gpu.func on a view
    of a kernel argument gets alignment 16 times the power of two that
    provably divides its element offset (through subviews, affine maps,
    arith ops and scf.for induction variables), capped at 16 bytes, when
    that beats element alignment. A 128-bit access at a multiple of four f32
    elements then becomes one ld.global.v4 / st.global.v4.
  }];
}

def GpuAlignKernelPointersPass
    : Pass<"ke-gpu-align-kernel-pointers", "::mlir::ModuleOp"> {
  let summary = "Mark kernel pointer parameters align 16, read-only ones noalias";
  let description = [{
    After the conversion to NVVM: every generic or global pointer parameter
    of a kernel llvm.func in a gpu.module gets `llvm.align = 16`, and the
    pointers the kernel only loads through also get `llvm.noalias` (kernel
    buffers do not overlap), so that loads of read-only buffers go through
    ld.global.nc and repeated reads reuse registers across barriers.
  }];
}

def GpuLaunchHostCombinesPass
    : Pass<"ke-gpu-launch-host-combines", "::mlir::ModuleOp"> {
  let summary = "Run a global reduction's combine of block partials on the GPU";
  let description = [{
    Launch 2 of a global reduction (gpu.reduce on a 0-d result): the schedule
    leaves the combine of the per-block partials on the host, a
    vector.reduction of a whole static host allocation. It becomes a launch
    of one block of T = min(B, 256) threads (T dividing B): thread t reduces
    partials t, t+T, ... in order, the block combines with gpu.all_reduce,
    and thread 0 combines the init and runs the host code that followed
    (the store). Every order of combination is fixed, so the result is the
    same from run to run. One such combine per kernel module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GpuCombinePartialsPass
    : Pass<"ke-gpu-combine-partials", "::mlir::ModuleOp"> {
  let summary = "Combine a block's partial results with gpu.all_reduce";
  let description = [{
    The block combine that gpu.reduce schedules leave in their kernels reads
    a whole row of partials (one per thread) in the few threads that own a
    row, under a block-uniform scf.if: `vector.load shared[row][0] :
    vector<T>` and `vector.reduction`. Every thread instead loads its own
    element of each row before the scf.if and reduces it with the whole
    block (gpu.all_reduce, uniform), and the owning thread picks its row's
    result: warp shuffles and one small shared-memory step instead of a
    serial sum. Needs a [T, 1, 1] known block size, 32-bit elements or
    16-bit floats (combined in f32), at most 16 rows; other combines are
    left alone.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // KE_CODEGEN_PASSES
