// One workload per distinct anchor, with kind, shapes, element types, flops
// and bytes (conventions in docs/workloads.md).
// RUN: ke-opt workloads %s | FileCheck %s

// Keys survive renaming values and functions and reordering functions.
// RUN: ke-opt workloads %s | sed -e 's/,"locations".*//' | sort > %t.original
// RUN: sed -e 's/%arg/%renamed/g' -e 's/@\([a-z_]*\)(/@zz_\1(/' %s > %t.renamed.mlir
// RUN: ke-opt workloads %t.renamed.mlir | sed -e 's/,"locations".*//' | sort > %t.renamed
// RUN: diff %t.original %t.renamed

// CHECK: {"key":"[[MM:[0-9a-f]{32}]]","op":"linalg.matmul","kind":"contraction","count":2,"shapes":{{\[\[}}64,32],[32,16],[64,16]],"element_types":["f32","f32","f32"]
// CHECK-SAME: "flops":65536,"bytes":18432,"bytes_read":14336,"bytes_written":4096
// CHECK-SAME: "locations":["{{.*}}kinds.mlir:[[@LINE+3]]:{{[0-9]+}}","{{.*}}kinds.mlir:[[@LINE+9]]:{{[0-9]+}}"]
func.func @matmul(%arg0: tensor<64x32xf32>, %arg1: tensor<32x16xf32>,
                  %arg2: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = linalg.matmul ins(%arg0, %arg1 : tensor<64x32xf32>, tensor<32x16xf32>)
                     outs(%arg2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}
func.func @same_matmul_again(%arg0: tensor<64x32xf32>, %arg1: tensor<32x16xf32>,
                             %arg2: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = linalg.matmul ins(%arg0, %arg1 : tensor<64x32xf32>, tensor<32x16xf32>)
                     outs(%arg2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// A different K is a different workload.
// CHECK-NEXT: {"key":"[[MM2:[0-9a-f]{32}]]","op":"linalg.matmul","kind":"contraction","count":1,"shapes":{{\[\[}}64,33],[33,16],[64,16]]
// CHECK-SAME: "flops":67584
func.func @matmul_k33(%arg0: tensor<64x33xf32>, %arg1: tensor<33x16xf32>,
                      %arg2: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = linalg.matmul ins(%arg0, %arg1 : tensor<64x33xf32>, tensor<33x16xf32>)
                     outs(%arg2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// CHECK-NEXT: "op":"linalg.batch_matmul","kind":"contraction","count":1,"shapes":{{\[\[}}2,8,4],[2,4,16],[2,8,16]],"element_types":["f16","f16","f32"]
// CHECK-SAME: "flops":2048,"bytes":2432,"bytes_read":1408,"bytes_written":1024
func.func @bmm(%arg0: tensor<2x8x4xf16>, %arg1: tensor<2x4x16xf16>,
               %arg2: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<2x8x4xf16>, tensor<2x4x16xf16>)
                           outs(%arg2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// CHECK-NEXT: "op":"linalg.conv_2d_nhwc_hwcf","kind":"convolution","count":1,"shapes":{{\[\[}}1,9,9,3],[3,3,3,8],[1,4,4,8]]
// CHECK-SAME: "flops":6912
func.func @conv_strided(%arg0: tensor<1x9x9x3xf32>, %arg1: tensor<3x3x3x8xf32>,
                        %arg2: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%arg0, %arg1 : tensor<1x9x9x3xf32>, tensor<3x3x3x8xf32>)
       outs(%arg2 : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// CHECK-NEXT: "op":"linalg.pooling_nhwc_max","kind":"pooling","count":1
// The window only gives a shape and is not read; the running max is.
// CHECK-SAME: "flops":256,"bytes":1536,"bytes_read":1280,"bytes_written":256
func.func @maxpool(%arg0: tensor<1x8x8x4xf32>, %arg1: tensor<2x2xf32>,
                   %arg2: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%arg0, %arg1 : tensor<1x8x8x4xf32>, tensor<2x2xf32>)
       outs(%arg2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// CHECK-NEXT: "op":"linalg.softmax","kind":"softmax","count":1,"shapes":{{\[\[}}4,128],[4,128]],"element_types":["bf16","bf16"]
// CHECK-SAME: "flops":2560,"bytes":2048,"bytes_read":1024,"bytes_written":1024
func.func @softmax(%arg0: tensor<4x128xbf16>, %arg1: tensor<4x128xbf16>) -> tensor<4x128xbf16> {
  %0 = linalg.softmax dimension(1) ins(%arg0 : tensor<4x128xbf16>)
                                   outs(%arg1 : tensor<4x128xbf16>) -> tensor<4x128xbf16>
  return %0 : tensor<4x128xbf16>
}

// CHECK-NEXT: "op":"linalg.reduce","kind":"reduction","count":1
// CHECK-SAME: "flops":512,"bytes":2176,"bytes_read":2112,"bytes_written":64
func.func @row_sum(%arg0: tensor<16x32xf32>, %arg1: tensor<16xf32>) -> tensor<16xf32> {
  %0 = linalg.reduce ins(%arg0 : tensor<16x32xf32>) outs(%arg1 : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<16xf32>
}

// Elementwise chain on memrefs: exp reads what relu wrote.
// CHECK: "op":"linalg.generic","kind":"elementwise","count":1
// CHECK-SAME: "flops":64,"bytes":512,"bytes_read":256,"bytes_written":256,"fusible":[{"role":"consumer","result":0,"op":"linalg.exp","key":"[[EXP:[0-9a-f]{32}]]"}]
// CHECK-NEXT: {"key":"[[EXP]]","op":"linalg.exp","kind":"elementwise"
// CHECK-SAME: "fusible":[{"role":"producer","operand":0,"op":"linalg.generic"
func.func @relu_exp(%arg0: memref<64xf32>, %arg1: memref<64xf32>, %arg2: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%arg0 : memref<64xf32>) outs(%arg1 : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.maximumf %x, %zero : f32
      linalg.yield %r : f32
  }
  linalg.exp ins(%arg1 : memref<64xf32>) outs(%arg2 : memref<64xf32>)
  return
}
