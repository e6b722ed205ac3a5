"""`python -m ke import`: a PyTorch module from a file to MLIR that
ke-opt takes, and clear errors for bad arguments and unsupported models."""

import re
import subprocess
import sys

import ke
from ke._library import find_ke_opt

MODEL = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)
    def forward(self, x):
        return torch.relu(self.fc(x))

def make():
    return Net()

class Scan(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)
'''


def run(*args):
    return subprocess.run([sys.executable, "-m", "ke", *args],
                          capture_output=True, text=True)


def test_import_writes_mlir_that_ke_opt_reads(tmp_path):
    source = tmp_path / "net.py"
    source.write_text(MODEL)
    out = tmp_path / "net.mlir"
    done = run("import", "%s:make" % source, "--input", "4x16", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "func.func @forward(%arg0: tensor<4x16xf32>" in text
    workloads = subprocess.run([str(find_ke_opt()), "workloads", str(out)],
                               capture_output=True, text=True)
    assert workloads.returncode == 0, workloads.stderr
    # nn.Linear is one contraction, its bias and ReLU fused into one op.
    assert '"kind":"contraction"' in workloads.stdout
    assert "linalg.transpose" not in workloads.stdout


def test_import_weights_as_arguments(tmp_path):
    source = tmp_path / "net.py"
    source.write_text(MODEL)
    out = tmp_path / "net.mlir"
    done = run("import", "%s:Net" % source, "--input", "4x16", "--weights",
               "arguments", "--training", "-o", str(out))
    assert done.returncode == 0, done.stderr
    signature = re.search(r"func.func @forward\((.*)\) ->", out.read_text())
    assert re.findall(r"%arg\d+: (tensor<[^>]*>)", signature.group(1)) == [
        "tensor<4x16xf32>", "tensor<8x16xf32>", "tensor<8xf32>"]
    bad = run("import", "%s:Net" % source, "--input", "4x16", "--weights",
              "resources")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_import_errors(tmp_path):
    source = tmp_path / "net.py"
    source.write_text(MODEL)
    done = run("import", "%s:Scan" % source, "--input", "2x8")
    assert done.returncode == 1
    assert "tm_tensor.scan" in done.stderr
    done = run("import", "%s:Missing" % source, "--input", "2x8")
    assert done.returncode != 0 and "has no 'Missing'" in done.stderr
    done = run("import", "%s:Net" % source, "--input", "2xq")
    assert done.returncode != 0 and "bad shape" in done.stderr
