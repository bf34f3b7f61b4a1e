"""The real-code corpus: functions nobody in this project wrote, run with their own examples.

Two collections, each reported apart (``make realcode``: a figure that holds on one and not
on the other is tuning), all imported, never copied:
- ``algorithms``: the ``algorithms`` package (a pure-Python algorithm collection on PyPI, a
  test dependency): every ``>>> name(args)`` line of its docstrings whose callee is a function
  of that module and whose arguments are literals; and the standard library's pure-Python
  numeric modules (``colorsys``, ``bisect``, ``statistics``, ``heapq``), with examples written
  here from their documentation;
- ``fluids``: the ``fluids`` package (engineering formulas of fluid dynamics on PyPI: friction
  factors, drag, fittings, two-phase flow, geometry; a test dependency), its docstrings'
  ``>>> name(args)`` lines taken the same way. A second style: closed-form formulas with
  `math` functions and regime `if`s, where the first collection is algorithms on integers.

Numeric arguments are passed as JAX values, as a JAX user would call such a function: a Python
int becomes an int32 scalar, a float a float32 scalar, a list of numbers a 1-D array; other
values (strings, nested lists, None) stay as they are.
"""

from __future__ import annotations

import ast
import bisect
import colorsys
import copy
import heapq
import importlib
import inspect
import pkgutil
import statistics
from dataclasses import dataclass
from typing import Any, Callable

import jax.numpy as jnp

__all__ = ["COLLECTIONS", "Case", "cases", "collection_of", "jax_arguments"]


@dataclass(frozen=True)
class Case:
    """One call: ``fn(*args)`` with literal arguments, and where it comes from."""

    fn: Callable
    args: tuple
    source: str  # "algorithms.math.gcd:12" or "stdlib"

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}{self.args!r}"


def _as_jax(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return jnp.int32(value) if -2**31 <= value < 2**31 else value
    if isinstance(value, float):
        return jnp.float32(value)
    if isinstance(value, list) and value and all(type(v) in (int, float) for v in value):
        kind = jnp.float32 if any(type(v) is float for v in value) else jnp.int32
        try:
            return jnp.asarray(value, kind)
        except OverflowError:
            return value
    return value


def jax_arguments(args: tuple) -> tuple:
    """The arguments as a JAX user passes them, fresh for each call (a function that changes
    its list argument in place must not see the previous call's changes)."""
    return tuple(_as_jax(a) for a in copy.deepcopy(args))


def _literal_call(line: str, module) -> tuple[Callable, tuple] | None:
    """``name(literal, ...)`` of a function of ``module`` → (function, arguments)."""
    try:
        node = ast.parse(line.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.keywords:
        return None
    fn = getattr(module, node.func.id, None)
    if not inspect.isfunction(fn) or fn.__module__ != module.__name__:
        return None
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
    except (ValueError, SyntaxError):
        return None
    return fn, args


# Packages of the collection whose functions take numbers (graphs, trees, linked lists and the
# like take objects the project would not pass arrays to).
ALGORITHM_PACKAGES = ("math", "dynamic_programming", "searching", "sorting", "array", "bit_manipulation",
                      "greedy", "matrix", "set", "stack", "queue", "streaming", "heap", "backtracking")


def _examples(module_names, found: list[Case], seen: set) -> None:
    """The literal examples (``>>> name(args)``) of the docstrings of these modules, each once."""
    for name in module_names:
        try:
            module = importlib.import_module(name)
            text = inspect.getsource(module)
        except Exception:  # noqa: BLE001 - a module that does not import is not in the corpus
            continue
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped.startswith(">>> "):
                continue
            call = _literal_call(stripped[4:], module)
            if call is None:
                continue
            key = (call[0].__qualname__, module.__name__, repr(call[1]))
            if key in seen:
                continue
            seen.add(key)
            found.append(Case(call[0], call[1], f"{module.__name__}:{number}"))


def _algorithm_cases() -> list[Case]:
    try:
        import algorithms
    except ImportError:  # not installed: the stdlib cases only
        return []
    found: list[Case] = []
    seen: set = set()
    for package in ALGORITHM_PACKAGES:
        try:
            pkg = importlib.import_module(f"algorithms.{package}")
        except ImportError:
            continue
        names = [f"algorithms.{package}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__)]
        _examples(names, found, seen)
    del algorithms
    return found


# Modules of fluids left out: they need packages fluids does not install (pint, numba) or reach
# the network and write files (design_climate geocodes a city and keeps a cache file).
FLUIDS_LEFT_OUT = ("fluids.units", "fluids.numba", "fluids.numba_vectorized", "fluids.design_climate")


def _fluids_cases() -> list[Case]:
    try:
        import fluids
    except ImportError:
        return []
    found: list[Case] = []
    names = sorted(info.name for info in pkgutil.walk_packages(fluids.__path__, "fluids."))
    _examples([n for n in names if not n.startswith(FLUIDS_LEFT_OUT)], found, set())
    return found


def _stdlib_cases() -> list[Case]:
    colors = [(0.2, 0.4, 0.4), (1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.1, 0.9, 0.3), (0.0, 0.0, 0.0)]
    out = []
    for fn in (colorsys.rgb_to_hsv, colorsys.rgb_to_hls, colorsys.rgb_to_yiq):
        out += [Case(fn, c, "stdlib colorsys") for c in colors]
    for fn in (colorsys.hsv_to_rgb, colorsys.hls_to_rgb, colorsys.yiq_to_rgb):
        out += [Case(fn, c, "stdlib colorsys") for c in [(0.5, 0.5, 0.4), (0.0, 1.0, 1.0), (0.9, 0.2, 0.7),
                                                          (0.3, 0.0, 0.5)]]
    data = [1, 3, 3, 5, 8, 13]
    for x in (0, 3, 4, 13, 20):
        out += [Case(bisect.bisect_left, (data, x), "stdlib bisect"),
                Case(bisect.bisect_right, (data, x), "stdlib bisect")]
    # heapq's pure-Python selections (the module's documented equivalents: sorted(...)[:n]).
    for values, n in (([5, 1, 8, 3, 9, 2], 1), ([5, 1, 8, 3, 9, 2], 3), ([2.5, -1.0, 7.25, 0.5], 2)):
        out += [Case(heapq.nsmallest, (n, values), "stdlib heapq"), Case(heapq.nlargest, (n, values), "stdlib heapq")]
    for values in ([1.0, 2.0, 3.0, 4.0], [2.5, 3.25, 5.5, 11.25, 11.75]):
        out += [Case(fn, (values,), "stdlib statistics")
                for fn in (statistics.fmean, statistics.median, statistics.median_low, statistics.median_high)]
    return out


COLLECTIONS = ("algorithms", "fluids")


def cases(collection: str | None = None) -> list[Case]:
    """The corpus (one collection, or both), in a fixed order."""
    out = []
    if collection in (None, "algorithms"):
        out += _stdlib_cases() + _algorithm_cases()
    if collection in (None, "fluids"):
        out += _fluids_cases()
    return out


def collection_of(case: Case) -> str:
    return "fluids" if case.source.startswith("fluids") else "algorithms"
