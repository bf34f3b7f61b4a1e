"""No silent difference on small textbook-style functions (``textbook_algorithms.py`` and
``numeric_and_stateful_functions.py``): each runs eagerly (the oracle: NumPy copies where the
function changes an array in place, fresh copies of list arguments) and through both routes, ``laxify.to_static(f)`` and
``jax.jit(laxify.convert(f))``. Each route must agree with eager Python (the result, and for
``to_static`` the list/dict arguments as eager leaves them), or fall back with a
``FallbackWarning`` and agree, or raise a located ``laxify.ConversionError``: never give another
value. ``python tests/fidelity/test_textbook_functions.py`` prints the counts.
"""

from __future__ import annotations

import copy
import sys
import traceback
import warnings
from collections import Counter
from pathlib import Path

import jax
import numpy as np
import pytest

import laxify

sys.path.insert(0, str(Path(__file__).resolve().parent))
from numeric_and_stateful_functions import CASES as NUMERIC_AND_STATEFUL  # noqa: E402
from textbook_algorithms import CASES as ALGORITHMS  # noqa: E402

CASES = ALGORITHMS + NUMERIC_AND_STATEFUL

CLASSES = ("converted, agrees", "fell back, agrees", "located error", "error at the user's line",
           "unclear error", "WRONG")


def _copy(value, numpy: bool):
    if isinstance(value, list):
        return [_copy(v, numpy) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v, numpy) for v in value)
    if isinstance(value, dict):
        return {k: _copy(v, numpy) for k, v in value.items()}
    if numpy and isinstance(value, jax.Array):
        return np.array(value)
    return copy.copy(value)


def _normal(value):
    """Numbers and arrays as float64 arrays, containers item by item, for comparison."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _normal(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        try:
            a = np.asarray(value)
            if a.dtype.kind in "biuf":
                return ("num", a.astype(np.float64))
        except (ValueError, TypeError):
            pass
        return ("seq", tuple(_normal(v) for v in value))
    a = np.asarray(value)
    return ("num", a.astype(np.float64)) if a.dtype.kind in "biuf" else ("obj", repr(value))


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "num":
        return a[1].shape == b[1].shape and bool(np.allclose(a[1], b[1], rtol=1e-5, atol=1e-6))
    if a[0] in ("seq", "dict"):
        if len(a[1]) != len(b[1]):
            return False
        if a[0] == "dict":
            return all(x[0] == y[0] and _same(x[1], y[1]) for x, y in zip(a[1], b[1]))
        return all(_same(x, y) for x, y in zip(a[1], b[1]))
    return a == b


def agree(x, y) -> bool:
    return _same(_normal(x), _normal(y))


def _located(error: laxify.ConversionError, fn) -> bool:
    """The error names the user's file and a line of the function, and no made-up name."""
    text = str(error)
    filename = fn.__code__.co_filename
    return filename in text and "_lx" not in text


def run_route(route: str, fn, args: tuple, mutates: bool) -> tuple[str, str]:
    """(class, detail) of one route on one input."""
    eager_args = _copy(args, numpy=mutates)
    try:
        expected = fn(*eager_args)
    except Exception as e:  # noqa: BLE001 - every case must run eagerly
        raise AssertionError(f"eager run of {fn.__name__}{args!r} raised {e!r}") from e
    call_args = _copy(args, numpy=False)
    callee = laxify.to_static(fn) if route == "to_static" else jax.jit(laxify.convert(fn))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            actual = callee(*call_args)
            jax.block_until_ready(actual)
        except laxify.ConversionError as e:
            if not _located(e, fn):
                return "WRONG", f"unlocated ConversionError: {e}"
            return "located error", str(e).splitlines()[0]
        except Exception as e:  # noqa: BLE001
            # Not silent: JAX's or Python's own error, raised on the user's line (a Python list
            # indexed by a traced value under jit, ...), or any other error (unclear).
            frames = traceback.extract_tb(e.__traceback__)
            users = bool(frames) and frames[-1].filename == fn.__code__.co_filename
            first = str(e).splitlines()[0] if str(e) else ""
            return ("error at the user's line" if users else "unclear error"), f"{type(e).__name__}: {first}"
    fell_back = any(issubclass(w.category, laxify.FallbackWarning) for w in caught)
    if not agree(expected, actual):
        return "WRONG", f"eager {expected!r} vs {route} {actual!r}"
    if route == "to_static":
        for k, (e, a) in enumerate(zip(eager_args, call_args)):
            if isinstance(e, (list, dict)) and not agree(e, a):
                return "WRONG", f"argument {k} after the call: eager {e!r} vs to_static {a!r}"
    return ("fell back, agrees" if fell_back else "converted, agrees"), ""


def run_case(fn, inputs, mutates: bool) -> dict[str, tuple[str, str]]:
    """The class of each route over all inputs: the worst one (WRONG > error > fallback)."""
    worst: dict[str, tuple[str, str]] = {}
    for route in ("to_static", "jit(convert)"):
        for args in inputs:
            kind, detail = run_route(route, fn, args, mutates)
            if route not in worst or CLASSES.index(kind) > CLASSES.index(worst[route][0]):
                worst[route] = (kind, detail)
    return worst


# Under `jax.jit(laxify.convert(f))`, value-dependent Python (a Python list indexed by a traced
# value, the key of the C builtin `min`, a str chosen by a traced value) is the located error
# of fallback="error", raised by the handler at each converted function's edge (histogram_list,
# mode_small, counts_in_nested_list, min_index_key, list_index_update, dict_of_lists,
# ternary_chain). The one unclear error: an update of a closure's array (`nonlocal a;
# a[i] = v`) is not rewritten (docs/semantics.md, Array updates), so JAX raises its own
# TypeError "JAX arrays are immutable".
KNOWN_UNCLEAR = {("rotate_by_reversal", "jit(convert)")}


@pytest.mark.filterwarnings("ignore::laxify.FallbackWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__)
def test_no_silent_difference(case):
    fn, inputs, mutates = case
    for route, (kind, detail) in run_case(fn, inputs, mutates).items():
        assert kind != "WRONG", f"{fn.__name__} through {route}: {detail}"
        if kind == "unclear error":
            assert (fn.__name__, route) in KNOWN_UNCLEAR, f"{fn.__name__} through {route}: {detail}"


def test_the_algorithms_are_at_least_a_hundred_functions():
    assert len({fn.__name__ for fn, _, _ in ALGORITHMS}) >= 100
    assert len({fn.__name__ for fn, _, _ in CASES}) == len(CASES)


def main() -> None:
    counts = {route: Counter() for route in ("to_static", "jit(convert)")}
    wrong = []
    for fn, inputs, mutates in CASES:
        for route, (kind, detail) in run_case(fn, inputs, mutates).items():
            counts[route][kind] += 1
            if kind in ("WRONG", "unclear error", "error at the user's line"):
                wrong.append(f"{kind}: {fn.__name__} [{route}]: {detail}")
    print(f"{len(CASES)} functions tried")
    for route, c in counts.items():
        print(route, ", ".join(f"{k}: {c[k]}" for k in CLASSES))
    for line in wrong:
        print(line[:300])


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
