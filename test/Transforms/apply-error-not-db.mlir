// A file that is not a tuning database (this test file) is an error.
// RUN: ke-opt %s --ke-apply-tuned-schedules="db=%s" --verify-diagnostics

// expected-error-re@+1 {{ke: cannot open the tuning database '{{.*}}apply-error-not-db.mlir': {{.+}}}}
module {
  func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
