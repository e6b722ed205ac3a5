"""The build step of `pip install ./python-bindings`: finds or builds libke.

The package is pure Python over libke.so (ke's C API, MLIR and LLVM linked
in) and the ke-opt driver; ke/_library.py finds them at run time. Installed
from a ke checkout, this step makes sure they exist:

  KE_LIBKE=auto (default)  use $KE_BUILD_DIR (default <checkout>/build) when
                           it has lib/libke.so and tools/ke-opt/ke-opt, else
                           build both there with scripts/build.sh (it needs
                           the packages scripts/setup.sh installs; a first
                           build of MLIR's static libraries takes a while
                           on few cores, ccache keeps later ones short);
  KE_LIBKE=build           build (or bring up to date) either way;
  KE_LIBKE=skip            install the Python package alone.

KE_BUNDLE_LIBKE=1 copies both into the package (ke/lib/), so that the
installed package, or a wheel built from it, works without the checkout.
Otherwise (auto, build) the package records the build tree's absolute path
(ke/_build_dir.py), where ke/_library.py looks for them: a plain
`pip install ./python-bindings` works from any folder as long as the build
tree stays.
The policy is `plan`, which the package's tests check.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

CHECKOUT = Path(__file__).resolve().parent.parent
LIBRARY = Path("lib") / "libke.so"
DRIVER = Path("tools") / "ke-opt" / "ke-opt"


def plan(env, checkout):
    """What the build step does, from the environment and the checkout:
    a dict with `build_dir`, `build` (run scripts/build.sh), `bundle` (copy
    into ke/lib) and `reason`. Raises ValueError on a bad KE_LIBKE or when a
    needed build has no checkout to build from."""
    mode = env.get("KE_LIBKE", "auto")
    if mode not in ("auto", "build", "skip"):
        raise ValueError("KE_LIBKE=%s: expected auto, build or skip" % mode)
    build_dir = Path(env.get("KE_BUILD_DIR") or checkout / "build")
    found = (build_dir / LIBRARY).is_file() and (build_dir / DRIVER).is_file()
    bundle = env.get("KE_BUNDLE_LIBKE") == "1"
    if mode == "skip":
        build, reason = False, "KE_LIBKE=skip"
    elif mode == "build":
        build, reason = True, "KE_LIBKE=build"
    elif found:
        build, reason = False, "found in %s" % build_dir
    else:
        build, reason = True, "not found in %s" % build_dir
    if build and not (checkout / "scripts" / "build.sh").is_file():
        raise ValueError(
            "libke.so must be built (%s) but %s is no ke checkout; set "
            "KE_BUILD_DIR to a build tree or KE_LIBKE=skip" % (reason, checkout))
    if bundle and mode == "skip":
        raise ValueError("KE_BUNDLE_LIBKE=1 needs libke.so: not with "
                         "KE_LIBKE=skip")
    return {"build_dir": build_dir, "build": build, "bundle": bundle,
            "remember": mode != "skip" and not bundle, "reason": reason}


class BuildPyWithLibke(build_py):
    """build_py, after finding or building libke.so and ke-opt."""

    def run(self):
        try:
            steps = plan(os.environ, CHECKOUT)
        except ValueError as error:
            sys.exit("ke: %s" % error)
        if steps["build"]:
            print("ke: building libke.so and ke-opt (%s) with "
                  "scripts/build.sh" % steps["reason"], file=sys.stderr)
            env = dict(os.environ, KE_BUILD_DIR=str(steps["build_dir"]))
            subprocess.run(["bash", str(CHECKOUT / "scripts" / "build.sh"),
                            "ke", "ke-opt"], check=True, env=env)
        else:
            print("ke: libke.so %s" % steps["reason"], file=sys.stderr)
        super().run()
        target = Path(self.build_lib) / "ke" / "lib"
        # setuptools reuses its build folder: a bundle an earlier build left
        # there would be installed too, and found before this build's (a
        # ke/lib/ in the source tree, copied by hand, is bundled as before).
        if not (Path(__file__).resolve().parent / "ke" / "lib").is_dir():
            shutil.rmtree(target, ignore_errors=True)
        # Likewise a build tree recorded by an earlier build.
        recorded = Path(self.build_lib) / "ke" / "_build_dir.py"
        recorded.unlink(missing_ok=True)
        if steps["remember"]:
            recorded.write_text(
                '"""Written by setup.py: the build tree this package was '
                'installed from."""\nBUILD_DIR = %r\n'
                % str(steps["build_dir"].resolve()))
        if steps["bundle"]:
            target.mkdir(parents=True, exist_ok=True)
            for artifact in (LIBRARY, DRIVER):
                shutil.copy2(steps["build_dir"] / artifact,
                             target / artifact.name)
            print("ke: bundled libke.so and ke-opt into the package",
                  file=sys.stderr)


class PlatformWheel(bdist_wheel):
    """A wheel that bundles libke.so and ke-opt holds x86-64 (or AArch64)
    code: tagged for the platform, still for any CPython 3 (ctypes, no
    extension module)."""

    def finalize_options(self):
        super().finalize_options()
        if os.environ.get("KE_BUNDLE_LIBKE") == "1":
            self.root_is_pure = False

    def get_tag(self):
        python, abi, platform = super().get_tag()
        if os.environ.get("KE_BUNDLE_LIBKE") == "1":
            return "py3", "none", platform
        return python, abi, platform


if __name__ == "__main__":  # setuptools runs it so; the tests import plan
    setup(cmdclass={"build_py": BuildPyWithLibke,
                    "bdist_wheel": PlatformWheel})
