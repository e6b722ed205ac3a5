// --ke-apply-tuned-schedules with a database: each workload gets its best
// valid record for the target under the current pipeline hash, rebuilt from
// its sketch and knobs; failed records, records of another pipeline and of
// another target are misses. A record whose knobs this ke does not know
// falls back to the default schedule. Records use threads=1, which every
// host has (the threads knob's values are the host's core counts).
// RUN: rm -rf %t && split-file %s %t
// RUN: sed -e 's/@HASH@/%ke_pipeline_hash/' %t/records.jsonl > %t/now.jsonl
// RUN: ke-opt db import %t/now.jsonl --db %t/tuning.db
// RUN: ke-opt %t/input.mlir --ke-apply-tuned-schedules="db=%t/tuning.db target=cpu:x86-64-v3" --verify-diagnostics | FileCheck %s

// The tuned record: outer tiles of 16 rows on an scf.forall (with its
// thread count for the lowering), 8x16 register tiles, 4 k per step.
// CHECK-LABEL: func.func @tuned
// CHECK-NOT:     linalg.
// CHECK:         scf.forall (%{{.*}}) in (4)
// CHECK:         vector.transfer_read {{.*}} : tensor<64x48xf32>, vector<8x4xf32>
// CHECK:       } {ke.num_threads = 1 : i64}

// CHECK-LABEL: func.func @stale
// CHECK-NOT:     linalg.
// CHECK-LABEL: func.func @untuned
// CHECK-NOT:     linalg.

//--- input.mlir
func.func @tuned(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>) -> tensor<64x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  // expected-remark-re@+1 {{ke: applied tuned schedule cpu.tile {threads=1 forall.d0=16 forall.d1=0 reg.d0=8 reg.d1=16 kvec.d2=4 pad=0 unroll=2} (median 1.000e-04 s, record from {{.*}}tuning.db){{$}}}}
  %m = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x32xf32>) outs(%c : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %m : tensor<64x32xf32>
}

func.func @stale(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-remark@+1 {{ke: the tuned record for workload 4ed73019d1d734414c5b7a48df62fe4c does not fit this ke (the schedule has 2 knobs, sketch 'cpu.tile' has 8); applied the default schedule cpu.tile}}
  %m = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %m : tensor<16x16xf32>
}

func.func @untuned(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark@+1 {{ke: no tuned record for workload da13bfb17c7c868e0e02f54cc5e22624; applied the default schedule cpu.tile}}
  %m = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

//--- records.jsonl
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":16,"forall.d1":0,"reg.d0":8,"reg.d1":16,"kvec.d2":4,"pad":0,"unroll":2},"script":"","seconds":[0.0001],"median_seconds":0.0001,"error":"none","message":"","timestamp":1700000001}
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":0,"forall.d1":0,"reg.d0":1,"reg.d1":1,"kvec.d2":1,"pad":0,"unroll":1},"script":"","seconds":[0.0005],"median_seconds":0.0005,"error":"none","message":"","timestamp":1700000002}
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":0,"forall.d1":0,"reg.d0":2,"reg.d1":2,"kvec.d2":1,"pad":0,"unroll":1},"script":"","seconds":[],"median_seconds":null,"error":"wrong-result","message":"relative error 0.5","timestamp":1700000003}
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.0.1","llvm_version":"21.1.0","pipeline_hash":"0000000000000000","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":0,"forall.d1":0,"reg.d0":4,"reg.d1":4,"kvec.d2":1,"pad":0,"unroll":1},"script":"","seconds":[0.00001],"median_seconds":0.00001,"error":"none","message":"","timestamp":1700000004}
{"workload":"552d7502aa61349ce5cab2e896056039","target":"cpu:a64fx","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"threads":1,"forall.d0":0,"forall.d1":0,"reg.d0":4,"reg.d1":4,"kvec.d2":1,"pad":0,"unroll":1},"script":"","seconds":[0.00001],"median_seconds":0.00001,"error":"none","message":"","timestamp":1700000005}
{"workload":"4ed73019d1d734414c5b7a48df62fe4c","target":"cpu:x86-64-v3","device":"test","driver":"","ke_version":"0.1.0","llvm_version":"22.1.8","pipeline_hash":"@HASH@","role":"trial","sketch":"cpu.tile","knobs":{"tile_m":4,"tile_n":8},"script":"","seconds":[0.0002],"median_seconds":0.0002,"error":"none","message":"","timestamp":1700000006}
