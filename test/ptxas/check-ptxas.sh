#!/usr/bin/env bash
# Every small-suite workload compiles for cuda:$KE_PTXAS_CHIP (default
# sm_90; sm_90a takes the wgmma schedules) with its default schedule, and
# `ptxas -arch=CHIP -v` assembles its PTX with no spills: the spill budget
# is 0 bytes of spill stores and loads per kernel (docs/gpu.md). Fails
# loudly when no ptxas can be found or fetched.
# Usage: [KE_PTXAS_CHIP=sm_90a] check-ptxas.sh KE_OPT SUITE.mlir...
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
keopt=$1
shift
chip=${KE_PTXAS_CHIP:-sm_90}
ptxas=$("$root/scripts/fetch-ptxas.sh") || {
  echo "check-ptxas: FAIL: no ptxas (set KE_PTXAS, install CUDA, or allow pip)"
  exit 1
}
echo "check-ptxas: using $ptxas for $chip"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
for input in "$@"; do
  name=$(basename "$input" .mlir)
  if ! KE_PTXAS="$ptxas" "$keopt" compile "$input" \
      --target "cuda:$chip" --emit=asm -o "$work/$name.ptx" \
      > "$work/$name.log" 2>&1; then
    echo "FAIL $name: ke-opt compile"; sed 's/^/  /' "$work/$name.log" | head -5
    failures=$((failures + 1)); continue
  fi
  # A module of several kernel groups writes one PTX module per group, one
  # after the other: assemble each on its own.
  awk -v out="$work/$name" '/^\.version/ {n++} n {print > (out "." n ".ptx")}' \
    "$work/$name.ptx"
  : > "$work/$name.ptxas"
  status=0
  for part in "$work/$name".*.ptx; do
    "$ptxas" -arch="$chip" -v "$part" -o "$part.cubin" >> "$work/$name.ptxas" 2>&1 ||
      status=1
  done
  if [[ $status -ne 0 ]]; then
    echo "FAIL $name: ptxas"; sed 's/^/  /' "$work/$name.ptxas" | head -5
    failures=$((failures + 1)); continue
  fi
  spills=$(grep -o '[0-9]* bytes spill \(stores\|loads\)' "$work/$name.ptxas" |
           awk '{s += $1} END {print s + 0}')
  registers=$(grep -o 'Used [0-9]* registers' "$work/$name.ptxas" |
              awk '{if ($2 > m) m = $2} END {print m + 0}')
  if [[ $spills -ne 0 ]]; then
    echo "FAIL $name: $spills bytes of spills (budget 0)"
    failures=$((failures + 1)); continue
  fi
  echo "ok   $name: $registers registers, 0 spills"
done
echo "check-ptxas: $failures failure(s) among $# workloads"
[[ $failures -eq 0 ]]
