#!/usr/bin/env bash
# Configures (once) and builds ke in $KE_BUILD_DIR (default: build/) with
# clang-22, lld, Ninja and ccache. Arguments are Ninja targets (default: all).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}

# Paths under the checkout hash as relative ones, so that another clone of
# ke (CI's clean clone, a second worktree) hits the same ccache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
# Two parallel MLIR compiles fit comfortably in memory (0.5-1.5 GB each).
# Builds started at the same time (several shells on one tree) queue on a
# lock instead of running two Ninjas in one build directory.
mkdir -p "$build"
exec flock "$build/.build.lock" ninja -C "$build" "$@"
