// RUN: ke-opt %s --ke-gpu-check-mapped --split-input-file --verify-diagnostics

// Host code that touches memory would never run: the runner executes the
// launches only.
func.func @kernel(%in: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{the schedule left this op on the host, outside the GPU launches}}
  %v = memref.load %in[%c0] : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %out[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A linalg op outside the launches is an unmapped part of the schedule.
func.func @kernel(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error@+1 {{the schedule left this op outside the GPU launches}}
  linalg.fill ins(%zero : f32) outs(%out : memref<4xf32>)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// Tensors left behind mean the script did not bufferize.
func.func @kernel(%out: memref<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{the schedule left tensors behind (the GPU pipeline needs the script to bufferize)}}
  %t = tensor.empty() : tensor<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return %t : tensor<4xf32>
}

// -----

// expected-error@+1 {{the schedule made no gpu.launch}}
module {
  func.func @kernel(%out: memref<4xf32>) {
    return
  }
}

// -----

// A mapped kernel passes unchanged; host allocations (scratch buffers) are
// fine.
func.func @kernel(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %scratch = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  memref.dealloc %scratch : memref<4xf32>
  return
}
