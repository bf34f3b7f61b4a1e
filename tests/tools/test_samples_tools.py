"""Every tool (diff, ir, explain, graph) runs on the converted functions of every sample."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import jax
import numpy as np
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


_F32 = np.float32
SPECIALISED = [  # (sample, function, arguments): small, fast to specialise
    ("newton.py", "newton_sqrt", lambda: (_spec((3,)), 1e-4)),
    ("quickstart.py", "collatz", lambda: (_spec((), np.int32),)),
    ("integers.py", "gcd", lambda: (_spec((), np.int32), _spec((), np.int32))),
    ("integers.py", "sieve", lambda: (30,)),
    ("integers.py", "edit_distance", lambda: (_spec((5,), np.int32), _spec((6,), np.int32))),
    ("kmeans.py", "kmeans", lambda: (_spec((20, 2)), _spec((3, 2)), 10)),
    ("mandelbrot.py", "escape", lambda: (_spec((), np.complex64), _spec((), np.complex64), 50)),
    ("sinkhorn.py", "sinkhorn", lambda: (_spec((4,)), _spec((5,)), _spec((4, 5)), 0.1, 1e-3)),
    ("physics.py", "simulate", lambda: (_spec((3, 2)), _spec((3, 2)), 5, 0.01, -9.8, 0.1, 1.0, 0.9)),
]


def _definitions(text: str) -> list[str]:
    spec = importlib.util.spec_from_file_location("laxify_tools_test_ir", Path(__file__).with_name("test_ir.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._definitions(text)


def _spec(shape, dtype=_F32):
    return jax.ShapeDtypeStruct(shape, np.dtype(dtype))


@pytest.mark.parametrize("sample, name, arguments", SPECIALISED, ids=lambda v: v if isinstance(v, str) else "")
def test_specialised_tools_type_every_value(sample, name, arguments):
    f = converted_functions(SAMPLES_DIR / sample)[name]
    args = arguments()
    text = f.ir(*args)
    untyped = [d for d in _definitions(text) if ":" not in d or d.endswith(": ?")]
    assert not untyped, f"{sample}::{name}: untyped {untyped}"
    explanation = f.explain(*args)
    assert explanation.entries and "_lx" not in str(explanation)
    assert "_lx" not in str(f.graph(*args))
