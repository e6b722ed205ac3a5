//===- GpuReductions.h - Block-wide combines of GPU reductions --*- C++ -*-===//
#ifndef KE_LIB_CODEGEN_GPUREDUCTIONS_H
#define KE_LIB_CODEGEN_GPUREDUCTIONS_H

#include "mlir/IR/BuiltinOps.h"

namespace ke {

/// Rewrites the block combine that gpu.reduce schedules leave in their
/// launches into gpu.all_reduce, which the device lowering turns into warp
/// shuffles (shfl.sync.bfly, ds_bpermute) and one small shared-memory step.
///
/// The combine reads a whole row of the partial results, one per thread, in
/// the few threads that own a row:
///   store partial -> shared[r][tid];  gpu.barrier
///   scf.if (tid < R) { v = vector.load shared[row][0] : vector<T>
///                      s = vector.reduction <kind>, v, acc ... }
/// with T the block's threads (a [T, 1, 1] block). Every thread instead
/// loads its own element of each row r before the scf.if and reduces it
/// with the whole block (gpu.all_reduce <kind> uniform), and the owning
/// thread picks its row's result. The sum is over the same elements, so
/// this is semantics-preserving (only the association order of the combine
/// changes). 32-bit element types and 16-bit floats (combined in f32);
/// other combines are left alone.
void combinePartialsWithAllReduce(mlir::ModuleOp module);

/// Launch 2 of a global reduction (gpu.reduce on a 0-d result): the
/// schedule leaves the combine of the per-block partial results on the host
///   %p = vector.transfer_read %partials[0] : memref<B>, vector<B>
///   %r = vector.reduction <kind>, %p, %init
///   ... (the store of %r into the result)
/// with %partials a host allocation (a scratch buffer of the runner). This
/// puts it in a launch of one block of T threads (T = min(B, 256), dividing
/// B): thread t reduces partials t, t+T, ... in order, the block combines
/// the threads' values (gpu.all_reduce -> shuffles), and thread 0 combines
/// the init and runs the rest of the host code (the store). Every order of
/// combination is fixed, so the result is the same from run to run.
void launchHostCombines(mlir::ModuleOp module);

} // namespace ke

#endif // KE_LIB_CODEGEN_GPUREDUCTIONS_H
