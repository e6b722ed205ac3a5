"""ke-opt as the benchmark scripts call it: where the binary is, and a
subcommand whose JSON summary they read.

KE_OPT overrides the binary; KE_BUILD_DIR the build folder it is taken
from (default: build/ at the repository root).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KE_BUILD_DIR", os.path.join(ROOT, "build"))
KE_OPT = os.environ.get("KE_OPT", os.path.join(BUILD, "tools", "ke-opt", "ke-opt"))


def ke(*cmd):
    """The JSON that `ke-opt CMD...` prints; exits with its stderr's tail
    when it fails."""
    result = subprocess.run([KE_OPT, *cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"ke-opt {' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)
