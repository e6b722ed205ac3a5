//===- Passes.td - The steps of ke's GPU lowering ----------*- tablegen -*-===//
//
// Steps of the GPU lowering (ke/Codegen/GpuPipeline.h) as passes: each runs
// in lowerKernelToGpuBinary's step list, prints itself into the pipeline
// text the pipeline hash covers, and runs alone in ke-opt's mlir-opt mode
// for its lit test (test/Codegen/<pass>.mlir).
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PASSES
#define KE_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

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

#endif // KE_CODEGEN_PASSES
