#!/usr/bin/env bash
# Writes what ke generates for every small-suite workload and example into
# OUT_DIR, so that a refactoring that must not change behaviour can be
# checked with `diff -r BEFORE AFTER`: the transform scripts of `ke-opt
# sketches` (cpu, cuda:sm_90, rocm:gfx942), the PTX of `compile --target
# cuda:sm_90`, the AMDGCN assembly of `--target rocm:gfx942` and the x86-64
# assembly of the CPU path, all with default schedules (no database).
# Pipeline hashes go to OUT_DIR/hashes.txt: they are meant to change when a
# lowering changes, so diff them separately.
# Usage: snapshot-codegen.sh KE_OPT OUT_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
keopt=$(realpath "$1")
out=$2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" # no ke-tuning.db here: default schedules only
export KE_DB=

for target in cpu cuda:sm_90 rocm:gfx942; do
  echo "$target $("$keopt" compile --target "$target" --print-pipeline-hash)"
done > "$out/hashes.txt"

for input in "$root"/benchmarks/suite/small/*.mlir "$root"/examples/*.mlir; do
  name=$(basename "$input" .mlir)
  for target in cpu cuda:sm_90 rocm:gfx942; do
    tag=${target//:/-}
    "$keopt" sketches "$input" --target "$target" \
      > "$out/$name.$tag.sketches" 2>&1 || echo "exit $?" >> "$out/$name.$tag.sketches"
    "$keopt" compile "$input" --target "$target" --emit=asm -o "$out/$name.$tag.s" \
      > "$out/$name.$tag.log" 2>&1 || echo "exit $?" >> "$out/$name.$tag.log"
  done
done
echo "snapshot-codegen: $(ls "$out" | wc -l) files in $out"
