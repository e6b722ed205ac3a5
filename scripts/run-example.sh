#!/usr/bin/env bash
# The main job, for now: installs and builds what is needed, then extracts the
# tuning workloads of every model in examples/ and prints them with a summary.
# (Tuning them on this CPU with the default database arrives with issue #3.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" ke-opt
ke_opt="$build/tools/ke-opt/ke-opt"

"$ke_opt" --version
"$ke_opt" target cpu
for model in "$root"/examples/*.mlir; do
  echo
  echo "== $(basename "$model")"
  "$ke_opt" workloads "$model" > "$build/workloads.jsonl"
  python3 "$root/scripts/summarize-workloads.py" < "$build/workloads.jsonl"
done
