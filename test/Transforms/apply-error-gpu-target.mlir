// The apply pass rewrites linalg ops into the loops of CPU schedules; GPU
// schedules also outline kernels and lower them to PTX or HSACO, which
// `ke-opt compile --target cuda:...|rocm:...` does. Asking the pass for a GPU
// target is an error that says where to go instead.
// RUN: ke-opt %s --ke-apply-tuned-schedules="target=cuda:sm_90" --verify-diagnostics
// RUN: ke-opt %s --ke-apply-tuned-schedules="target=rocm:gfx942" --verify-diagnostics

// expected-error@+1 {{this pass applies schedules for cpu targets only; GPU kernels are compiled with their schedules by `ke-opt compile --target}}
module {
  func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
