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


# Network trouble while pip fetches the build backend (setuptools>=77) into its isolated
# build environment: the wheel cannot be built here, which says nothing about the package.
_NO_BACKEND = ("Could not find a version that satisfies the requirement", "No matching distribution",
               "Failed to establish a new connection", "Temporary failure in name resolution")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> "zipfile.ZipFile":  # noqa: F821 (imported inside)
    """The wheel built from a copy of the repository's package folders (a copy, so that the
    build leaves nothing in the working tree)."""
    import shutil
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    for folder in ("laxify", "ir", "runtime", "transpiler"):
        shutil.copytree(root / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"), str(source)],
        capture_output=True, text=True, timeout=300, env=_clean_env())
    if result.returncode != 0 and any(text in result.stdout + result.stderr for text in _NO_BACKEND):
        pytest.skip(f"pip cannot fetch the build backend: {result.stderr.strip().splitlines()[-1]}")
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = (work / "dist").glob("laxify-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def test_wheel_ships_py_typed(wheel):
    names = set(wheel.namelist())
    assert "laxify/py.typed" in names  # PEP 561: editors and type checkers read the hints
    assert "laxify/api.py" in names and "laxify/runtime/__init__.py" in names
    assert not any(name.startswith(("ir/", "runtime/", "transpiler/")) for name in names)


def test_wheel_depends_on_flatbuffers(wheel):
    (metadata,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    requires = [line.split(":", 1)[1].strip() for line in wheel.read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    # laxify.load / StaticFunction.export need it on the base install, not only with an extra.
    assert any(req.startswith("flatbuffers") and "extra ==" not in req for req in requires)
    assert any(req.startswith("flatbuffers") and "extra == \"export\"" in req for req in requires)
