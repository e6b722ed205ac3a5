// RUN: ke-opt %s --ownership-based-buffer-deallocation | FileCheck %s
// RUN: ke-opt compile %s --target cpu --emit=llvm -o - | FileCheck %s --check-prefix=LLVM

// A temporary that a schedule leaves in an scf.forall body (a row block's
// intermediate) is freed in that body. The CPU pipeline deallocates after
// bufferization, and ke registers scf's buffer-deallocation interfaces:
// without them the temporary stayed allocated, one per iteration and call
// (the suite's 4096 x 4096 softmax leaked 64 MiB a call, and paid for fresh
// pages each time).

// CHECK-LABEL: func.func @forall_temporary
// CHECK:         scf.forall
// CHECK:           %[[TMP:.*]] = memref.alloc() : memref<64xf32>
// CHECK:           memref.copy %[[TMP]]
// CHECK:           %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[TMP]]
// CHECK:           bufferization.dealloc (%[[BASE]] : memref<f32>) if (%true
// CHECK:         }
// CHECK:         return

// LLVM-LABEL: define {{.*}}@forall_temporary
// LLVM:         call {{.*}}@malloc(i64
// LLVM:         call void @free(
func.func @forall_temporary(%out: memref<4x64xf32>) {
  %cst = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    %tmp = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%tmp : memref<64xf32>)
    %row = memref.subview %out[%i, 0] [1, 64] [1, 1]
        : memref<4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.copy %tmp, %row
        : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
  }
  return
}
