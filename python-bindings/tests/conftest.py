"""Shared fixtures of ke's Python tests.

torch and torch-mlir are required, not optional: a missing one fails the
run with what to install (scripts/setup-python.sh makes the venv), so CI
can never pass by skipping the model tests.
"""

import pytest

try:
    import torch  # noqa: F401
    import torch_mlir  # noqa: F401
except ImportError as error:  # pragma: no cover
    raise pytest.UsageError(
        "ke's Python tests need torch and torch-mlir (%s): run "
        "scripts/setup-python.sh and use $KE_BUILD_DIR/venv/bin/python, or "
        "pip install 'torch==2.*' torch-mlir ml_dtypes numpy pytest "
        "matplotlib" % error)

# Tolerance of ke's correctness checks (lib/Runtime/HostBuffer.cpp,
# getTolerance): relative L2 error per element type.
TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-9,
             torch.float16: 1e-2, torch.bfloat16: 3e-2}


def relative_error(actual, expected):
    actual, expected = actual.double(), expected.double()
    norm = expected.norm().item()
    return (actual - expected).norm().item() / (norm if norm else 1.0)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
