"""The layer folders are installed inside the package only (DESIGN §2): `laxify.ir`, never `ir`."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    # A temporary cwd so that the repository root (which holds ir/, runtime/) is not on sys.path.
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=_clean_env())


def _clean_env() -> dict:
    import os

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.parametrize("name", ["ir", "runtime", "transpiler"])
def test_generic_top_level_names_are_not_installed(name, tmp_path):
    result = _run(f"import {name}", tmp_path)
    assert result.returncode != 0
    assert "ModuleNotFoundError" in result.stderr and repr(name) in result.stderr


def test_layers_import_through_the_package(tmp_path):
    code = (
        "import laxify, laxify.ir, laxify.runtime, laxify.transpiler, laxify.cli\n"
        "assert laxify.ir.__name__ == 'laxify.ir'\n"
        "print(laxify.__version__)\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_console_script_entry_point_is_declared():
    from importlib.metadata import entry_points

    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "laxify"]
    assert script.value == "laxify.cli:main"
    assert callable(script.load())
