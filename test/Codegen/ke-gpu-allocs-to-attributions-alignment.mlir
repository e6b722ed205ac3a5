// RUN: ke-opt %s --ke-gpu-allocs-to-attributions --convert-gpu-to-nvvm | FileCheck %s

// A 2-byte-typed tile of 8 bytes before another: in PTX both are 16-byte
// aligned, so the second one's 128-bit accesses stay aligned (with the
// element type's alignment, 2, it could follow the first at byte 8).
// CHECK: llvm.mlir.global internal @__wg_small_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4 x f16>
// CHECK: llvm.mlir.global internal @__wg_small_1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x f16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @small(%in: memref<256xf16>) kernel {
      %c0 = arith.constant 0 : index
      %a = memref.alloc() : memref<4xf16, #gpu.address_space<workgroup>>
      %b = memref.alloc() : memref<256xf16, #gpu.address_space<workgroup>>
      %v = vector.load %in[%c0] : memref<256xf16>, vector<8xf16>
      vector.store %v, %b[%c0] : memref<256xf16, #gpu.address_space<workgroup>>, vector<8xf16>
      %s = memref.load %in[%c0] : memref<256xf16>
      memref.store %s, %a[%c0] : memref<4xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
