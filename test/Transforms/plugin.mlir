// ke's passes in upstream mlir-opt-22 through the pass plugin: the plugin
// shares the host's libMLIR.so, reads the database with its own SQLite, and
// schedules the same way as ke-opt (multi-threaded context included).
// RUN: rm -rf %t && split-file %s %t
// RUN: sed -e 's/@HASH@/%ke_pipeline_hash/' %t/records.jsonl > %t/now.jsonl
// RUN: ke-opt db import %t/now.jsonl --db %t/tuning.db
// RUN: mlir-opt-22 --load-pass-plugin=%ke_plugin --pass-pipeline="builtin.module(ke-apply-tuned-schedules{db=%t/tuning.db target=cpu:x86-64-v3})" %t/input.mlir --verify-diagnostics | FileCheck %s
// RUN: not mlir-opt-22 --load-pass-plugin=%ke_plugin --pass-pipeline="builtin.module(ke-apply-tuned-schedules{db=%t/missing.db})" %t/input.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @tuned
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}) in (4)
// CHECK:       } {ke.num_threads = 1 : i64}
// CHECK-LABEL: func.func @untuned
// CHECK-NOT:     linalg.
// CHECK:         vector.fma

// MISSING: error: ke: tuning database '{{.*}}missing.db' does not exist

//--- input.mlir
func.func @tuned(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>) -> tensor<64x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  // expected-remark@+1 {{ke: applied tuned schedule cpu.tile {threads=1 forall.d0=16 forall.d1=0 reg.d0=8 reg.d1=16 kvec.d2=4 pad=0 unroll=2} (median 1.000e-04 s}}
  %m = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %m : tensor<64x32xf32>
}

func.func @untuned(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark@+1 {{ke: no tuned record for workload da13bfb17c7c868e0e02f54cc5e22624; applied the default schedule cpu.tile}}
  %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

//--- records.jsonl
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":16,"forall.d1":0,"reg.d0":8,"reg.d1":16,"kvec.d2":4,"pad":0,"unroll":2},"script":"","seconds":[0.0001],"median_seconds":0.0001,"error":"none","message":"","timestamp":1700000001}
