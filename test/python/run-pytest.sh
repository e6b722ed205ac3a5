#!/usr/bin/env bash
# ctest's `python` entry: runs the Python package's tests with the venv of
# scripts/setup-python.sh. A missing venv is a failure that says what to
# run, never a skip (CI must not pass without the model tests).
# Usage: run-pytest.sh VENV_PYTHON PACKAGE_DIR
set -euo pipefail
python=$1
package=$2
if [[ ! -x "$python" ]]; then
  echo "python: no venv at $python; run scripts/setup-python.sh (scripts/test.sh does)" >&2
  exit 1
fi
cd "$package/tests"
exec "$python" -m pytest -q -p no:cacheprovider --durations=5 .
