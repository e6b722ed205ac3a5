// More op kinds: 1-d/3-d and depthwise convs, sum pooling, transposed and
// batched matmuls with explicit maps, reduce, dot, transpose on memrefs,
// named elementwise and broadcast. Flops and bytes per docs/workloads.md.
// RUN: ke-opt workloads %s | FileCheck %s

// CHECK: "op":"linalg.conv_1d_nwc_wcf","kind":"convolution",{{.*}}"flops":5376,"bytes":2304,
// CHECK-NEXT: "op":"linalg.conv_3d_ndhwc_dhwcf","kind":"convolution",{{.*}}"flops":27648,"bytes":4640,
// CHECK-NEXT: "op":"linalg.depthwise_conv_1d_nwc_wc","kind":"convolution",{{.*}}"flops":144,"bytes":348,
// CHECK-NEXT: "op":"linalg.pooling_nchw_sum","kind":"pooling",{{.*}}"flops":192,"bytes":1152,
// CHECK-NEXT: "op":"linalg.matmul","kind":"contraction",{{.*}}"flops":1024,"bytes":1408,
// CHECK-NEXT: "op":"linalg.batch_matmul","kind":"contraction",{{.*}}"flops":2048,"bytes":2816,
// CHECK-NEXT: "op":"linalg.reduce","kind":"reduction",{{.*}}"shapes":{{\[\[}}32],[]],{{.*}}"flops":32,"bytes":136,
// CHECK-NEXT: "op":"linalg.dot","kind":"contraction",{{.*}}"flops":64,"bytes":264,
// CHECK-NEXT: "op":"linalg.transpose","kind":"data-movement",{{.*}}"element_types":["f16","f16"],{{.*}}"flops":0,"bytes":512,
// CHECK-NEXT: "op":"linalg.tanh","kind":"elementwise",{{.*}}"flops":32,"bytes":256,
// CHECK-NEXT: "op":"linalg.broadcast","kind":"data-movement",{{.*}}"flops":0,"bytes":640,
func.func @many(%a1: tensor<2x16x8xf32>, %f1: tensor<3x8x4xf32>, %o1: tensor<2x14x4xf32>,
                %a3: tensor<1x6x6x6x2xf32>, %f3: tensor<3x3x3x2x4xf32>, %o3: tensor<1x4x4x4x4xf32>,
                %dw: tensor<1x10x3xf32>, %dwf: tensor<3x3xf32>, %dwo: tensor<1x8x3xf32>,
                %ps: tensor<1x3x8x8xf32>, %pw: tensor<2x2xf32>, %po: tensor<1x3x4x4xf32>,
                %ta: tensor<4x8xf32>, %tb: tensor<16x4xf32>, %tc: tensor<8x16xf32>,
                %bt: tensor<2x8x4xf32>, %btb: tensor<2x16x4xf32>, %btc: tensor<2x8x16xf32>,
                %v: tensor<32xf32>, %s: tensor<f32>, %m: memref<16x8xf16>, %mo: memref<8x16xf16>) {
  %c1 = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
        ins(%a1, %f1 : tensor<2x16x8xf32>, tensor<3x8x4xf32>) outs(%o1 : tensor<2x14x4xf32>) -> tensor<2x14x4xf32>
  %c3 = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
        ins(%a3, %f3 : tensor<1x6x6x6x2xf32>, tensor<3x3x3x2x4xf32>) outs(%o3 : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
  %d1 = linalg.depthwise_conv_1d_nwc_wc {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
        ins(%dw, %dwf : tensor<1x10x3xf32>, tensor<3x3xf32>) outs(%dwo : tensor<1x8x3xf32>) -> tensor<1x8x3xf32>
  %p = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%ps, %pw : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%po : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %mt = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%ta, %tb : tensor<4x8xf32>, tensor<16x4xf32>) outs(%tc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %bm = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
        ins(%bt, %btb : tensor<2x8x4xf32>, tensor<2x16x4xf32>) outs(%btc : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = linalg.reduce { arith.maximumf } ins(%v : tensor<32xf32>) outs(%s : tensor<f32>) dimensions = [0]
  %d = linalg.dot ins(%v, %v : tensor<32xf32>, tensor<32xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  linalg.transpose ins(%m : memref<16x8xf16>) outs(%mo : memref<8x16xf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<32xf32>
  %t = linalg.tanh ins(%v : tensor<32xf32>) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %eb = tensor.empty() : tensor<4x32xf32>
  %b = linalg.broadcast ins(%v : tensor<32xf32>) outs(%eb : tensor<4x32xf32>) dimensions = [0]
  return
}
