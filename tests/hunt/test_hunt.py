"""The hunt for silent differences in Python's numbers (``make hunt``) as a test: no input of tests/hunt/numbers gives through ``to_static`` a
result other than eager's without a word (class ``WRONG`` of tests/hunt/run.py), and none hangs.
Slow (the whole folder is: tests/conftest.py); ``make hunt`` prints the full table.

A row that is a known, documented bug is listed in ``KNOWN`` with the reason, and is an
``xfail(strict=True)``: it fails the test the day it is fixed, to be removed from the list.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("laxify_hunt_run", Path(__file__).resolve().parent / "run.py")
hunt = importlib.util.module_from_spec(_spec)
sys.modules["laxify_hunt_run"] = hunt
_spec.loader.exec_module(hunt)

# Rows that are known, documented bugs (none today): (module, function, index) → the reason.
KNOWN: dict[tuple[str, str, int], str] = {}

# Silent differences, differences after a FallbackWarning (the fallback must give eager's
# result), and programs that never end. (A located error or a crash is loud: the report lists them.)
BAD = ("WRONG", "warned-differs", "hang")


def _ids():
    out = []
    for module in hunt.MODULES:
        for index, (_, fn, _args) in enumerate(hunt.cases((module,))):
            out.append((module, fn.__name__, index))
    return out


@pytest.fixture(scope="module")
def rows():
    found = hunt.collect(hunt.MODULES, with_jit=False)
    return {(r["module"], r["fn"], r["index"]): r for r in found}


def _params():
    params = []
    for key in _ids():
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        params.append(pytest.param(key, id=f"{key[0]}.{key[1]}[{key[2]}]", marks=marks))
    return params


@pytest.mark.parametrize("key", _params())
def test_no_silent_difference(rows, key):
    assert key in rows, f"{key} was not run (see tests/hunt/run.py's worker)"
    row = rows[key]
    assert row["static_class"] not in BAD, hunt._detail(row, "static")


def test_enough_functions():
    functions = {(m, f) for m, f, _ in _ids()}
    assert len(functions) >= 150
