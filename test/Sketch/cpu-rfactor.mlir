// cpu.rfactor: a reduction split into parallel partial reductions plus a
// combine, each partial reduction tiled for vectors. `sketches` shows the
// first rule that matches (cpu.tile), so the rule is exercised by tuning:
// random search samples every rule that matches. (Random search, not the
// default: its draws depend on the seed only, while the cost model's picks
// depend on the timings, and once drew no cpu.rfactor in 6 trials.)
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s --check-prefix=FIRST
// RUN: rm -f %t.jsonl
// RUN: ke-opt tune %s --search random --trials 6 --seed 2 --min-seconds 0.001 --no-progress --no-db --records %t.jsonl > %t.json
// RUN: FileCheck %s --check-prefix=TUNED < %t.json
// RUN: FileCheck %s --check-prefix=RECORDS < %t.jsonl

// FIRST: // sketch cpu.tile
// TUNED: "crash": 0
// TUNED: "wrong-result": 0
// TUNED: "op": "linalg.reduce"
// TUNED: "valid": 6
// The search samples both rules that match the reduction.
// RECORDS-DAG: "sketch":"cpu.rfactor"
// RECORDS-DAG: "sketch":"cpu.tile"
func.func @global_sum(%x: tensor<4096xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<4096xf32>) outs(%o : tensor<f32>) dimensions = [0]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// The script, through --sketch (a reduction matches cpu.tile first).
// RUN: ke-opt sketches %s --target cpu:a64fx --sketch cpu.rfactor | FileCheck %s --check-prefix=SCRIPT
// RUN: ke-opt sketches %s --target cpu:a64fx --sketch cpu.rfactor --knobs split.d0=8,kvec.d0=32 | FileCheck %s --check-prefix=KNOBS
// SCRIPT: // sketch cpu.rfactor
// SCRIPT-NEXT: // knob threads: 1 2 4 8 16 32 [48]
// SCRIPT-NEXT: // knob split.d0: 2 4 8 16 32 [64] 128 256
// SCRIPT-NEXT: // knob kvec.d0: 1 2 4 8 [16] 32 64
// SCRIPT: %[[OP:.*]] = transform.structured.match ops{["linalg.reduce"]} attributes {ke.anchor}
// SCRIPT: %{{.*}}, %[[PARTIAL:.*]], %{{.*}}, %{{.*}} = transform.structured.tile_reduction_using_forall %[[OP]] by num_threads = [64]
// SCRIPT: transform.structured.tile_using_for %[[PARTIAL]] tile_sizes [16]
// SCRIPT-NOT: transform.loop.peel
// SCRIPT: lower_multi_reduction lowering_strategy = "innerreduction"
// 4096 / 8 = 512 elements per partial reduction, 16 pieces of 32: no peel.
// KNOBS: tile_reduction_using_forall %{{.*}} by num_threads = [8]
// KNOBS: tile_using_for %{{.*}} tile_sizes [32]
// KNOBS-NOT: transform.loop.peel
