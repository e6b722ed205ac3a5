#!/usr/bin/env bash
# Runs every test of ke on a fresh Debian 12 machine: installs the packages,
# builds, makes the Python venv (torch, torch-mlir: scripts/setup-python.sh),
# then ctest runs the lit tests, the unit tests, the Python package's tests,
# 60 s of fuzzing and the check of the packed ke-opt.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
# The venv of the `python` test; torch is downloaded once into pip's cache.
bash "$root/scripts/setup-python.sh"
# ptxas and CUDA's libdevice, which the PTX lit tests link math functions
# from: a CUDA toolkit's, or else the pinned pip wheel in $build/ptxas (lit
# and the ptxas checks find it there). Without them those tests fail and say so.
bash "$root/scripts/fetch-ptxas.sh" > /dev/null ||
  echo "test: no ptxas and libdevice: the CUDA tests will fail" >&2
cd "$build"
ctest --output-on-failure "$@"
