// GPU targets have no sketch rules yet: asking for them is an error.
// RUN: ke-opt %s --ke-apply-tuned-schedules="target=cuda:sm_90" --verify-diagnostics
// RUN: ke-opt %s --ke-apply-tuned-schedules="target=rocm:gfx942" --verify-diagnostics

// expected-error@+1 {{schedules for GPU targets come with issues #5 (CUDA) and #6 (ROCm); only cpu targets are supported}}
module {
  func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
