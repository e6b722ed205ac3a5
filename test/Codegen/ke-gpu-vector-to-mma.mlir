// RUN: ke-opt %s --ke-gpu-vector-to-mma --split-input-file --verify-diagnostics | FileCheck %s

// A warp's 16x8x16 contraction with its operands in shared memory becomes
// ldmatrix (A: x4; B, stored K x N: x2 transposed) and mma.sync, its
// accumulator loaded and stored per lane. The shared tiles are swizzled:
// their writes become 16-byte stores whose column is XORed with the row,
// and the ldmatrix reads follow.
// CHECK-LABEL: func.func @f16
// CHECK: gpu.launch
// CHECK: %[[COL:.*]] = arith.xori
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[COL]]] : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NOT: vector.store {{.*}}vector<16xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: vector.load %{{.*}} : memref<16x8xf32>, vector<2xf32>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-2: vector.store %{{.*}} : memref<16x8xf32>, vector<2xf32>
// CHECK-NOT: vector.contract
#mapA = affine_map<(m, n, k) -> (m, k)>
#mapB = affine_map<(m, n, k) -> (k, n)>
#mapC = affine_map<(m, n, k) -> (m, n)>
func.func @f16(%a: memref<16x16xf16>, %b: memref<16x8xf16>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %sa = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x8xf16, #gpu.address_space<workgroup>>
    %ga = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
    vector.transfer_write %ga, %sa[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x16xf16, #gpu.address_space<workgroup>>
    %gb = vector.transfer_read %b[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16>, vector<16x8xf16>
    vector.transfer_write %gb, %sb[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf16>, memref<16x8xf16, #gpu.address_space<workgroup>>
    gpu.barrier
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %va = vector.transfer_read %sa[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
    %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
    %vc = vector.transfer_read %c[%c0, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %r = vector.contract {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

// -----

// bf16: MLIR 22 lowers no bf16 mma.sync. The contraction is converted as
// f16 on the same bits (the shared tiles retyped for the conversion), each
// mma.sync is then nvvm.mma.sync with bf16 operands, two per i32, and the
// tiles get their bf16 type back: the copies are bf16 loads and stores
// again, ldmatrix loads bf16.
// CHECK-LABEL: func.func @bf16
// CHECK: memref.alloc() : memref<16x16xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() : memref<16x8xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[A:.*]] = vector.load %{{.*}} : memref<16x16xbf16>, vector<8xbf16>
// CHECK: vector.store %[[A]], {{.*}} : memref<16x16xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: {{[^b]}}f16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<2x2xbf16>
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvgpu.mma.sync
// CHECK: vector.from_elements
// CHECK-NOT: vector.contract
#mapA = affine_map<(m, n, k) -> (m, k)>
#mapB = affine_map<(m, n, k) -> (k, n)>
#mapC = affine_map<(m, n, k) -> (m, n)>
func.func @bf16(%a: memref<16x16xbf16>, %b: memref<16x8xbf16>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : bf16
    %padf = arith.constant 0.0 : f32
    %sa = memref.alloc() : memref<16x16xbf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x8xbf16, #gpu.address_space<workgroup>>
    %ga = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xbf16>, vector<16x16xbf16>
    vector.transfer_write %ga, %sa[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xbf16>, memref<16x16xbf16, #gpu.address_space<workgroup>>
    %gb = vector.transfer_read %b[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xbf16>, vector<16x8xbf16>
    vector.transfer_write %gb, %sb[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xbf16>, memref<16x8xbf16, #gpu.address_space<workgroup>>
    gpu.barrier
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %va = vector.transfer_read %sa[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xbf16, #gpu.address_space<workgroup>>, vector<16x16xbf16>
    %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xbf16, #gpu.address_space<workgroup>>, vector<16x8xbf16>
    %vc = vector.transfer_read %c[%c0, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %r = vector.contract {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<16x16xbf16>, vector<16x8xbf16> into vector<16x8xf32>
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

// -----

// A contraction whose operand is not a read of memory (here a sum of two
// reads) cannot become mma.sync: upstream's conversion says which op it
// could not take, and the launch fails; never a silent fallback.
func.func @not_a_read(%a: memref<16x16xf16>, %b: memref<16x8xf16>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{contractions could not become mma.sync}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %va = vector.transfer_read %a[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
    // expected-error @+2 {{unhandled vector to mma type}}
    // expected-error @+1 {{failed to convert op during vector-to-nvgpu conversion}}
    %vs = arith.addf %va, %va : vector<16x16xf16>
    %vb = vector.transfer_read %b[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16>, vector<16x8xf16>
    %vc = vector.transfer_read %c[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %vs, %vb, %vc : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
    vector.transfer_write %r, %c[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

// -----

// The cooperative copies become 16-byte row loads and stores (what
// cp.async is made of, ke-gpu-pipeline-stage-copies); the accumulator
// starts from the fill's constant, not from a read of the zeros the fill
// stored (which nothing reads any more, and the final store overwrites:
// erased).
// CHECK-LABEL: func.func @stage_loop
// CHECK-NOT: vector.load %{{.*}} : memref<16x8xf32>
// CHECK-NOT: vector.transfer_write %{{.*}} : vector<16x8xf32>, memref<16x8xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %cst{{.*}}) -> (vector<2x2xf32>)
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x64xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvgpu.mma.sync
// CHECK: vector.store %{{.*}} : memref<16x8xf32>, vector<2xf32>
func.func @stage_loop(%a: memref<16x64xf16>, %b: memref<64x8xf16>, %c: memref<16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %sa = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x8xf16, #gpu.address_space<workgroup>>
    %zero = arith.constant dense<0.0> : vector<16x8xf32>
    vector.transfer_write %zero, %c[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.barrier
    %init = vector.transfer_read %c[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%sum = %init) -> (vector<16x8xf32>) {
      %ga = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x64xf16>, vector<16x16xf16>
      vector.transfer_write %ga, %sa[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x16xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %gb = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x8xf16>, vector<16x8xf16>
      vector.transfer_write %gb, %sb[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf16>, memref<16x8xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %va = vector.transfer_read %sa[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
      %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %sum : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
      gpu.barrier
      scf.yield %r : vector<16x8xf32>
    }
    vector.transfer_write %acc, %c[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.terminator
  }
  return
}

// -----

// A fused consumer (bias, ReLU, the cast to bf16) is the epilogue: the
// accumulators go to a private f32 block tile, which the consumer reads.
// Each lane computes the elements of the fragment it holds (two rows of two
// for m16n8): its bias elements read as two, the ops on vectors of two, two
// bf16 written per row. Its reads of the block tile take the values of the
// accumulator stores at the same positions (the mma.sync results), and the
// tile is gone.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: memref.alloc() : memref<16x8xf32, #gpu.address_space<private>>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} -> (vector<2x2xf32>)
// CHECK: nvgpu.mma.sync
// CHECK-DAG: %[[ROW0:.*]] = vector.extract %[[ACC]][0] : vector<2xf32> from vector<2x2xf32>
// CHECK-DAG: %[[ROW1:.*]] = vector.extract %[[ACC]][1] : vector<2xf32> from vector<2x2xf32>
// CHECK: %[[BIAS:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<8xbf16>, vector<2xbf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[BIAS]] : vector<2xbf16> to vector<2xf32>
// CHECK: %[[SUM0:.*]] = arith.addf %[[ROW0]], %[[WIDE]] : vector<2xf32>
// CHECK: %[[RELU0:.*]] = arith.maximumf %[[SUM0]], %{{.*}} : vector<2xf32>
// CHECK: %[[OUT0:.*]] = arith.truncf %[[RELU0]] : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store %[[OUT0]], %{{.*}} : memref<16x8xbf16>, vector<2xbf16>
// CHECK: %[[SUM1:.*]] = arith.addf %[[ROW1]], %{{.*}} : vector<2xf32>
// CHECK: vector.store %{{.*}} : memref<16x8xbf16>, vector<2xbf16>
// CHECK-NOT: private
// CHECK-NOT: vector<16x8xf32>
func.func @epilogue(%a: memref<16x64xf16>, %b: memref<64x8xf16>, %bias: memref<8xbf16>, %out: memref<16x8xbf16>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %padb = arith.constant 0.0 : bf16
    %row = affine.apply affine_map<()[s0] -> ((s0 floordiv 32) * 16)>()[%tx]
    %sa = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x8xf16, #gpu.address_space<workgroup>>
    %tile = memref.alloc() : memref<16x8xf32, #gpu.address_space<private>>
    %zero = arith.constant dense<0.0> : vector<16x8xf32>
    vector.transfer_write %zero, %tile[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32, #gpu.address_space<private>>
    %init = vector.transfer_read %tile[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32, #gpu.address_space<private>>, vector<16x8xf32>
    %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%sum = %init) -> (vector<16x8xf32>) {
      %ga = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x64xf16>, vector<16x16xf16>
      vector.transfer_write %ga, %sa[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x16xf16, #gpu.address_space<workgroup>>
      %gb = vector.transfer_read %b[%k, %c0], %pad {in_bounds = [true, true]} : memref<64x8xf16>, vector<16x8xf16>
      vector.transfer_write %gb, %sb[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf16>, memref<16x8xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %va = vector.transfer_read %sa[%row, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
      %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %sum : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
      gpu.barrier
      scf.yield %r : vector<16x8xf32>
    }
    vector.transfer_write %acc, %tile[%row, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32, #gpu.address_space<private>>
    gpu.barrier
    %v = vector.transfer_read %tile[%row, %c0], %padf {in_bounds = [true, true]} : memref<16x8xf32, #gpu.address_space<private>>, vector<16x8xf32>
    %bv = vector.transfer_read %bias[%c0], %padb {in_bounds = [true]} : memref<8xbf16>, vector<8xbf16>
    %bw = arith.extf %bv : vector<8xbf16> to vector<8xf32>
    %bb = vector.broadcast %bw : vector<8xf32> to vector<16x8xf32>
    %s = arith.addf %v, %bb : vector<16x8xf32>
    %m = arith.maximumf %s, %zero : vector<16x8xf32>
    %t = arith.truncf %m : vector<16x8xf32> to vector<16x8xbf16>
    vector.transfer_write %t, %out[%row, %c0] {in_bounds = [true, true]} : vector<16x8xbf16>, memref<16x8xbf16>
    gpu.terminator
  }
  return
}

// -----

// An epilogue op ke cannot compute per lane (a transpose of the tile: a
// lane would need elements other lanes hold) fails the launch with a
// diagnostic at the op; never a silent fallback.
func.func @epilogue_transpose(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %out: memref<16x16xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f16
    %padf = arith.constant 0.0 : f32
    %sa = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %sb = memref.alloc() : memref<16x16xf16, #gpu.address_space<workgroup>>
    %tile = memref.alloc() : memref<16x16xf32, #gpu.address_space<private>>
    %zero = arith.constant dense<0.0> : vector<16x8xf32>
    %va = vector.transfer_read %sa[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
    %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %zero : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
    vector.transfer_write %r, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32, #gpu.address_space<private>>
    %v = vector.transfer_read %tile[%c0, %c0], %padf {in_bounds = [true, true]} : memref<16x16xf32, #gpu.address_space<private>>, vector<8x16xf32>
    // expected-error @+1 {{an op of a tensor-core epilogue that ke cannot apply per lane}}
    %t = vector.transpose %v, [1, 0] : vector<8x16xf32> to vector<16x8xf32>
    vector.transfer_write %t, %out[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
    gpu.terminator
  }
  return
}
