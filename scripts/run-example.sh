#!/usr/bin/env bash
# The main job: installs and builds what is needed, prints the workloads of
# examples/mlp.mlir, then tunes them on this CPU and prints, per workload, the
# reference (unscheduled), untuned-default and best times with the speedup.
# KE_TRIALS sets the random candidates per workload (default 30).
# (Issue #4 adds the embedded default database and the real search.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}
trials=${KE_TRIALS:-30}
model=${1:-$root/examples/mlp.mlir}

bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" ke-opt
ke_opt="$build/tools/ke-opt/ke-opt"

"$ke_opt" --version
echo
echo "== workloads of $(basename "$model")"
"$ke_opt" workloads "$model" | python3 "$root/scripts/summarize-workloads.py"
echo
echo "== tuning on this CPU ($trials random schedules per workload)"
"$ke_opt" tune "$model" --trials "$trials" --records "$build/example-records.jsonl" \
  > "$build/example-summary.json"
python3 "$root/scripts/summarize-tuning.py" < "$build/example-summary.json"
echo "(every candidate: $build/example-records.jsonl)"
