// A database that does not exist is an error: opening would create an empty
// one, and a mistyped path must not quietly mean "no records".
// RUN: ke-opt %s --ke-apply-tuned-schedules="db=%t.missing.db" --verify-diagnostics

// expected-error-re@+1 {{ke: tuning database '{{.*}}.missing.db' does not exist}}
module {
  func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
