#!/usr/bin/env bash
# Runs every test of ke on a fresh Debian 12 machine: installs the packages,
# builds, then ctest runs the lit tests, the unit tests, 60 s of fuzzing and
# the check of the packed ke-opt.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure "$@"
