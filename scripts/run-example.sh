#!/usr/bin/env bash
# The main job: installs and builds what is needed, prints the workloads of
# examples/mlp.mlir, then tunes them on this CPU and prints, per workload, the
# reference (unscheduled), untuned-default and best times with the speedup.
# The search explores KE_EXPLORE candidates per workload (default 48) and
# refines the best with droplet search up to KE_TRIALS (default 64). Records
# go to the default tuning database (ke-tuning.db, embedded SQLite) in the
# build directory: running it again resumes and adds to it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}
trials=${KE_TRIALS:-64}
explore=${KE_EXPLORE:-48}
model=${1:-$root/examples/mlp.mlir}

bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" ke-opt
ke_opt="$build/tools/ke-opt/ke-opt"

"$ke_opt" --version
echo
echo "== workloads of $(basename "$model")"
"$ke_opt" workloads "$model" | python3 "$root/scripts/summarize-workloads.py"
echo
echo "== tuning on this CPU (explore $explore, then droplet search, up to $trials trials per workload)"
cd "$build"
"$ke_opt" tune "$model" --trials "$trials" --explore "$explore" \
  --log "$build/example-log.csv" > "$build/example-summary.json"
python3 "$root/scripts/summarize-tuning.py" < "$build/example-summary.json"
echo "(database: $build/ke-tuning.db; convergence log: $build/example-log.csv)"
