// cpu.rfactor: a reduction split into parallel partial reductions plus a
// combine, each partial reduction tiled for vectors. `sketches` shows the
// first rule that matches (cpu.tile), so the rule is exercised by tuning:
// random search samples every rule that matches.
// RUN: ke-opt sketches %s --target cpu:a64fx | FileCheck %s --check-prefix=FIRST
// RUN: ke-opt tune %s --trials 6 --seed 2 --min-seconds 0.001 --no-progress --records %t.jsonl > %t.json
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
