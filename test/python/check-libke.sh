#!/usr/bin/env bash
# libke.so is self-contained and exports only the C API: its dynamic
# symbols are the ke_* functions of include/ke-c/ke.h (nothing of ke, MLIR,
# LLVM or libstdc++, which could clash with a host's own copies), and it
# needs nothing beyond glibc's libc and libm (and the loader).
# Usage: check-libke.sh LIBKE_SO HEADER
set -euo pipefail
lib=$1
header=$2
status=0
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
others=$(grep -v '^ke_' <<< "$exported" || true)
if [[ -n "$others" ]]; then
  echo "libke.so exports symbols other than ke_*:"; head -20 <<< "$others"; status=1
fi
declared=$(grep -oE '\bke_[a-z_]+\(' "$header" | tr -d '(' | sort -u)
if [[ "$declared" != "$exported" ]]; then
  echo "libke.so's exports differ from ke.h's functions:"
  diff <(echo "$declared") <(echo "$exported") || true
  status=1
fi
needed=$(readelf -d "$lib" | awk '/NEEDED/ {print $5}' | tr -d '[]' | sort | tr '\n' ' ')
if [[ "$needed" != "libc.so.6 libm.so.6 " && "$needed" != "ld-linux-x86-64.so.2 libc.so.6 libm.so.6 " ]]; then
  echo "libke.so needs more than libc and libm: $needed"; status=1
fi
[[ $status -eq 0 ]] && echo "libke.so: $(wc -l <<< "$exported") ke_* symbols, needs $needed"
exit $status
