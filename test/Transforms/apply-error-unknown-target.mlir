// An unknown target string is an error that lists the valid ones.
// RUN: ke-opt %s --ke-apply-tuned-schedules="target=tpu" --verify-diagnostics

// expected-error@+1 {{ke: unknown target 'tpu'}}
module {
  func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
