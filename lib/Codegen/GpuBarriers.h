//===- GpuBarriers.h - Barriers that streaming loops do not need -*- C++ -*-===//
//
// Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//
#ifndef KE_LIB_CODEGEN_GPUBARRIERS_H
#define KE_LIB_CODEGEN_GPUBARRIERS_H

#include "mlir/IR/BuiltinOps.h"

namespace ke {

/// Moves the barriers out of loops that write no workgroup memory.
///
/// map_nested_forall_to_threads puts a gpu.barrier after every thread
/// forall, also after one nested in an scf.for (the interleaved row loops of
/// the row rules, tileRowInterleaved): the block then waits for its
/// slowest warp once per step, and no warp issues the next step's loads
/// before the barrier, which halves the bandwidth of a streaming loop.
/// Threads of a ke kernel exchange data only through workgroup (shared)
/// memory: a global buffer is read-only in a launch or each of its elements
/// is written by one thread and read by no other (the kernel ABI: buffer
/// arguments do not overlap). So a barrier inside a loop whose body writes
/// no workgroup memory (and calls nothing) orders nothing between
/// iterations; the barriers of such a loop body are erased and, when there
/// were any, one barrier after the loop keeps its order with what follows.
/// Returns the number of barriers erased.
unsigned hoistBarriersOutOfStreamingLoops(mlir::ModuleOp module);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUBARRIERS_H
