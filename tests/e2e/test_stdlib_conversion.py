"""Conversion never fails on code nobody here wrote: every function (and method) of the pure-
Python standard library modules that compute with numbers converts, or is refused with a
located ``ConversionError`` (a generator, no source text). Nothing else may come out of the
conversion: an exception of laxify's own (invalid Python generated, an internal error) is the
bug this test finds. (A sweep of all 200-odd pure-Python modules, about 6,000 functions, found
seven such failures in `ast`, `linecache`, `logging`, `subprocess` and `typing`: their modules
are here too.)"""

from __future__ import annotations

import importlib
import inspect

import pytest

from laxify.conversion import convert_function
from laxify.ir.errors import ConversionError

MODULES = [
    "bisect",
    "calendar",
    "colorsys",
    "datetime",
    "_pydatetime",
    "_pydecimal",
    "fractions",
    "heapq",
    "numbers",
    "operator",
    "random",
    "statistics",
    "_strptime",
    # (modules where a sweep once found invalid generated code)
    "ast",
    "linecache",
    "logging",
    "subprocess",
    "typing",
]


def _functions(module) -> list:
    """The module's own functions and the methods of its own classes."""
    found = []
    for value in list(vars(module).values()):
        if inspect.isfunction(value):
            found.append(value)
        elif inspect.isclass(value):
            found.extend(m for m in vars(value).values() if inspect.isfunction(m))
    return [fn for fn in found if fn.__module__ == module.__name__]


@pytest.mark.parametrize("name", MODULES)
def test_every_function_converts_or_is_refused_with_a_located_error(name):
    try:
        module = importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not in this Python")
    if not (getattr(module, "__file__", "") or "").endswith(".py"):
        pytest.skip(f"{name} is not pure Python here")
    functions = _functions(module)
    if not functions:
        pytest.skip(f"{name}'s functions are C functions here")
    failures = []
    for fn in functions:
        try:
            convert_function(fn)
        except ConversionError:
            pass  # a located refusal (a generator, no source text)
        except Exception as e:  # noqa: BLE001 - laxify's own failure: what this test looks for
            failures.append(f"{fn.__qualname__}: {type(e).__name__}: {e}")
    assert not failures, failures
