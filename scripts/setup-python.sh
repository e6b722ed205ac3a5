#!/usr/bin/env bash
# Makes the Python environment of ke's Python package and its tests:
# $KE_BUILD_DIR/venv (default build/venv), a venv of Debian's python3 with
# PyTorch, torch-mlir (the importer, docs/python.md), numpy, ml_dtypes,
# matplotlib and pytest from PyPI, and the ke package (python-bindings/).
#
# Only scripts/test.sh runs it (the `python` ctest entry needs it), never
# the main example: torch from PyPI is about 2.9 GB with its CUDA
# libraries (PyPI has no CPU-only wheel). pip's cache keeps the download,
# so a second venv (CI's fresh root binds ~/.cache) installs from disk.
# Idempotent: when the venv already has these requirements it only
# reinstalls the ke package (a few seconds).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KE_BUILD_DIR:-$root/build}
venv=$build/venv

# Pinned where a new release could break the import: torch-mlir publishes
# one wheel (20261001) that does not pin torch itself.
requirements=(
  "torch==2.*" "torch-mlir==20261001" "numpy" "ml_dtypes" "pytest"
  "matplotlib"
)
stamp=$venv/.ke-requirements
wanted=$(printf '%s\n' "${requirements[@]}")

if [[ ! -x "$venv/bin/python" ]]; then
  echo "ke setup-python: creating $venv" >&2
  /usr/bin/python3 -m venv "$venv"
fi
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$wanted" ]]; then
  echo "ke setup-python: installing ${requirements[*]} (torch is ~2.9 GB the first time)" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "${requirements[@]}"
  echo "$wanted" > "$stamp"
fi
# The ke package itself: pure Python over libke.so, reinstalled every time,
# then imported from outside the checkout: the installed package must find
# this build's libke.so (the venv lies in the build tree).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-build-isolation --no-deps --force-reinstall "$root/python-bindings"
(cd / && "$venv/bin/python" -c 'import ke; print("ke setup-python: ke", ke.version(), "in", ke.__file__)') >&2
