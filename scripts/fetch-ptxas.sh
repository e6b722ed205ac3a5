#!/usr/bin/env bash
# Prints the path of a ptxas for the CUDA checks, fetching one if needed:
# $KE_PTXAS, ptxas on PATH, /usr/local/cuda/bin/ptxas, an earlier fetch in
# build/ptxas, else the pinned wheel nvidia-cuda-nvcc-cu12==12.9.86 (pip)
# installed into build/ptxas. Exits non-zero, loudly, when none is found.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${KE_PTXAS_DIR:-${KE_BUILD_DIR:-$root/build}/ptxas}
wheel=nvidia-cuda-nvcc-cu12==12.9.86

usable() { [[ -n "$1" && -x "$1" ]] && "$1" --version > /dev/null 2>&1; }

for candidate in "${KE_PTXAS:-}" "$(command -v ptxas || true)" \
    /usr/local/cuda/bin/ptxas "$dest/nvidia/cuda_nvcc/bin/ptxas"; do
  if usable "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

echo "fetch-ptxas: no ptxas found; installing $wheel into $dest" >&2
# Debian's pip refuses installs into its "externally managed" Python unless
# told otherwise; --target keeps the wheel in build/ptxas regardless.
python3 -m pip install --quiet --no-deps --target "$dest" "$wheel" >&2 ||
  python3 -m pip install --quiet --no-deps --break-system-packages \
    --target "$dest" "$wheel" >&2 || {
  echo "fetch-ptxas: ERROR: pip could not install $wheel" >&2
  exit 1
}
if usable "$dest/nvidia/cuda_nvcc/bin/ptxas"; then
  echo "$dest/nvidia/cuda_nvcc/bin/ptxas"
  exit 0
fi
echo "fetch-ptxas: ERROR: $wheel has no usable ptxas" >&2
exit 1
