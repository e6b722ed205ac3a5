// RUN: ke-opt %s --split-input-file --verify-diagnostics --ke-gpu-transpose | FileCheck %s

// NCHW -> NHWC, as ke-convs-to-channels-last writes before a convolution:
// taken as 2 x 64 x 49 -> 2 x 49 x 64 (H and W move together), both
// buffers collapsed to it. Squares of 32 x 32: 2 along HW (49, partial),
// 2 along C, times 2 images: 8 blocks of 32 x 8 threads, each reading 4
// rows of its square along HW (the input's innermost) into a padded
// shared tile, a barrier, then writing 4 rows along C (the output's
// innermost). The HW extent is partial, so every access is guarded; C is
// not, so only HW is compared.
// CHECK-LABEL: func.func @nchw_to_nhwc
// CHECK-DAG: %[[IN:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<2x64x7x7xf32> into memref<2x64x49xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2], [3]] : memref<2x7x7x64xf32> into memref<2x49x64xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c32, {{.*}} = %c8{{(_[0-9]+)?}},
// CHECK: %[[TILE:.*]] = memref.alloc() : memref<32x33xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.load %[[IN]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c49
// CHECK: memref.load %[[TILE]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: linalg.transpose
func.func @nchw_to_nhwc(%in: memref<2x64x7x7xf32>, %out: memref<2x7x7x64xf32>) {
  linalg.transpose ins(%in : memref<2x64x7x7xf32>) outs(%out : memref<2x7x7x64xf32>)
    permutation = [0, 2, 3, 1] {ke.transpose = {tile = 32 : i64, rows = 8 : i64}}
  return
}

// -----

// A 2-D transpose of whole squares (64 x 128 -> 128 x 64, bf16): no
// collapse, no guard; tile 16 with 16 x 4 threads, 4 elements each way.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: memref.collapse_shape
// CHECK: memref.alloc() : memref<16x17xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: scf.if
// CHECK-COUNT-4: memref.load %arg0
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store %{{.*}}, %arg1
func.func @whole(%in: memref<64x128xbf16>, %out: memref<128x64xbf16>) {
  linalg.transpose ins(%in : memref<64x128xbf16>) outs(%out : memref<128x64xbf16>)
    permutation = [1, 0] {ke.transpose = {tile = 16 : i64, rows = 4 : i64}}
  return
}

// -----

func.func @copy(%in: memref<3x5x7xf32>, %out: memref<5x3x7xf32>) {
  // expected-error @+1 {{ke.transpose: the input and the output hold the same dimension innermost (a copy)}}
  linalg.transpose ins(%in : memref<3x5x7xf32>) outs(%out : memref<5x3x7xf32>)
    permutation = [1, 0, 2] {ke.transpose = {tile = 32 : i64, rows = 8 : i64}}
  return
}

// -----

func.func @knobs(%in: memref<64x128xf32>, %out: memref<128x64xf32>) {
  // expected-error @+1 {{ke.transpose: rows must divide tile, with at most 1024 threads}}
  linalg.transpose ins(%in : memref<64x128xf32>) outs(%out : memref<128x64xf32>)
    permutation = [1, 0] {ke.transpose = {tile = 32 : i64, rows = 6 : i64}}
  return
}

// -----

func.func @missing(%in: memref<64x128xf32>, %out: memref<128x64xf32>) {
  // expected-error @+1 {{ke.transpose must be a dictionary with integer 'tile' and 'rows'}}
  linalg.transpose ins(%in : memref<64x128xf32>) outs(%out : memref<128x64xf32>)
    permutation = [1, 0] {ke.transpose = {tile = 32 : i64}}
  return
}
