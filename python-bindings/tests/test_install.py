"""The build step of `pip install ./python-bindings` (setup.py's `plan`):
it uses a build tree that has libke.so and ke-opt, builds them with
scripts/build.sh when they are missing, and refuses what it cannot do."""

import importlib.util
from pathlib import Path

import pytest

_SETUP = Path(__file__).resolve().parent.parent / "setup.py"
_spec = importlib.util.spec_from_file_location("ke_setup", _SETUP)
ke_setup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ke_setup)  # defines plan; setup() runs only as main


def _checkout(tmp_path, built):
    checkout = tmp_path / "ke"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / "scripts" / "build.sh").write_text("exit 1\n")
    if built:
        for artifact in (ke_setup.LIBRARY, ke_setup.DRIVER):
            path = checkout / "build" / artifact
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
    return checkout


def test_found_build_tree_is_used(tmp_path):
    steps = ke_setup.plan({}, _checkout(tmp_path, built=True))
    assert not steps["build"] and not steps["bundle"]
    assert "found" in steps["reason"]


def test_the_build_tree_is_remembered_unless_bundled_or_skipped(tmp_path):
    checkout = _checkout(tmp_path, built=True)
    assert ke_setup.plan({}, checkout)["remember"]
    assert ke_setup.plan({"KE_LIBKE": "build"}, checkout)["remember"]
    assert not ke_setup.plan({"KE_BUNDLE_LIBKE": "1"}, checkout)["remember"]
    assert not ke_setup.plan({"KE_LIBKE": "skip"}, checkout)["remember"]


def test_missing_library_is_built_in_the_checkout(tmp_path):
    checkout = _checkout(tmp_path, built=False)
    steps = ke_setup.plan({}, checkout)
    assert steps["build"] and steps["build_dir"] == checkout / "build"
    assert "not found" in steps["reason"]


def test_build_dir_from_the_environment(tmp_path):
    checkout = _checkout(tmp_path, built=True)
    elsewhere = tmp_path / "elsewhere"
    steps = ke_setup.plan({"KE_BUILD_DIR": str(elsewhere)}, checkout)
    assert steps["build"] and steps["build_dir"] == elsewhere


def test_modes(tmp_path):
    checkout = _checkout(tmp_path, built=True)
    assert ke_setup.plan({"KE_LIBKE": "build"}, checkout)["build"]
    assert not ke_setup.plan({"KE_LIBKE": "skip"}, checkout)["build"]
    assert ke_setup.plan({"KE_BUNDLE_LIBKE": "1"}, checkout)["bundle"]
    with pytest.raises(ValueError, match="expected auto, build or skip"):
        ke_setup.plan({"KE_LIBKE": "always"}, checkout)
    with pytest.raises(ValueError, match="not with KE_LIBKE=skip"):
        ke_setup.plan({"KE_LIBKE": "skip", "KE_BUNDLE_LIBKE": "1"}, checkout)


def test_no_checkout_to_build_from(tmp_path):
    with pytest.raises(ValueError, match="is no ke checkout"):
        ke_setup.plan({}, tmp_path / "not-ke")
    # Skipping needs no checkout.
    assert not ke_setup.plan({"KE_LIBKE": "skip"}, tmp_path / "not-ke")["build"]
