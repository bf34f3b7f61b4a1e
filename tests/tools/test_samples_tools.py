"""Every tool (diff, ir, explain, graph) runs on the converted functions of every sample."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import laxify
from laxify.api import StaticFunction

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples"
SAMPLES = sorted(p for p in SAMPLES_DIR.glob("*.py") if not p.name.startswith("_"))


def converted_functions(path: Path) -> dict[str, StaticFunction]:
    """The sample's to_static functions: decorated ones and those passed to laxify.to_static."""
    name = f"laxify_tools_sample_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclass-based model classes look their module up
    sys.path.insert(0, str(SAMPLES_DIR))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SAMPLES_DIR))
    found = {k: v for k, v in vars(module).items() if isinstance(v, StaticFunction)}
    for k in re.findall(r"laxify\.to_static\((\w+)\)", path.read_text()):
        value = vars(module).get(k)
        if callable(value) and not isinstance(value, StaticFunction):
            found[k] = laxify.to_static(value)
    return found


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_tool_runs_on_the_sample(sample):
    functions = converted_functions(sample)
    assert functions, f"{sample.name} converts no function"
    for name, f in functions.items():
        diff = str(f.diff())
        assert diff.startswith("---") and "(laxify)" in diff, name
        assert f.ir().startswith("func @"), name
        explanation = f.explain()
        assert explanation.entries, f"{name}: no construct explained"
        assert "_lx" not in str(explanation), f"{name}: {explanation}"
        dot = str(f.graph())
        assert dot.startswith("digraph") and "_lx" not in dot, name
