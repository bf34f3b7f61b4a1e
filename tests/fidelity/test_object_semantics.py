"""Python's object semantics under conversion (issue 22): identity, ``~``/``-`` on Python bools,
effects on Python objects under traced control flow, list operators after an append loop,
item-update dtypes, int overflow.

Each case runs eagerly (the oracle: on NumPy copies where the function changes an array in
place), through ``laxify.to_static`` and through ``jax.jit(laxify.convert(f))``. A case laxify
converts gives eager's result on every path and holds the ``cond``/``while``/``scan`` expected;
a case it cannot convert faithfully is never a silent wrong result: ``to_static`` runs it
eagerly with a ``FallbackWarning`` at the user's line, ``jit(convert)`` raises a located
``ConversionError``.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from fidelity_tools import assert_clean_error, line_of
from harness import assert_trees_close


def _eager_args(args, mutates: bool):
    """The arguments of the eager run: NumPy copies of arrays where the function mutates them."""
    if not mutates:
        return args
    return tuple(np.array(a) if isinstance(a, (jax.Array, np.ndarray)) else a for a in args)


def _primitives(jaxpr) -> set[str]:
    found = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for sub in jax.core.subjaxprs(eqn) if hasattr(jax.core, "subjaxprs") else ():
            found |= _primitives(sub)
        for value in eqn.params.values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                inner = getattr(item, "jaxpr", None)
                if inner is not None:
                    found |= _primitives(getattr(inner, "jaxpr", inner))
    return found


def converts(fn, *inputs, prims=(), mutates: bool = False):
    """Eager, ``to_static`` and ``jit(convert)`` agree on every input tuple, with no warning,
    and the traced program of the first input holds ``prims``."""
    static_fn = laxify.to_static(fn, fallback="error")
    jitted = jax.jit(laxify.convert(fn))
    for args in inputs:
        expected = fn(*_eager_args(args, mutates))
        with warnings.catch_warnings():
            warnings.simplefilter("error", laxify.FallbackWarning)
            assert_trees_close(expected, static_fn(*args), what=f"to_static{args}")
            assert_trees_close(expected, jitted(*args), what=f"jit(convert){args}")
    held = _primitives(jax.make_jaxpr(laxify.convert(fn))(*inputs[0]).jaxpr)
    for prim in prims:
        assert prim in held, f"no `{prim}` in the traced program: {sorted(held)}"


def falls_back(fn, *args, snippet: str, name: str | None = None, mutates: bool = False):
    """``to_static`` gives eager's result with a FallbackWarning at the line holding ``snippet``;
    ``jit(convert)`` raises a ConversionError located there."""
    expected = fn(*_eager_args(args, mutates))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(fn)(*_eager_args(args, mutates))
    assert_trees_close(expected, got, what="to_static")
    fallbacks = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert fallbacks, "no FallbackWarning"
    assert fallbacks[0].lineno == line_of(fn, snippet), (fallbacks[0].lineno, str(fallbacks[0].message))
    assert "_lx" not in str(fallbacks[0].message)
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(*args)
    assert_clean_error(info.value, fn, name, snippet)
    return expected


# -- 1. identity on values that became traced ---------------------------------------------

def bubble_sort_done_is_false(xs):
    done = False
    while done is False:
        done = True
        for i in range(xs.shape[0] - 1):
            if xs[i] > xs[i + 1]:
                t = xs[i]
                xs[i] = xs[i + 1]
                xs[i + 1] = t
                done = False
    return xs


def test_bubble_sort_with_identity_flag():
    converts(bubble_sort_done_is_false, (jnp.array([5, 4, 3, 2, 1]),), (jnp.array([1, 2, 3, 4, 5]),),
             (jnp.array([2, 1, 2, 0, 7]),), prims=("while", "cond"), mutates=True)


def count_while_changed_is_true(x):
    changed = True
    n = 0
    while changed is True:
        changed = False
        if x[n] > 0:
            changed = True
        n = n + 1
    return n


def test_while_flag_is_true():
    converts(count_while_changed_is_true, (jnp.array([1.0, 1.0, -1.0, 1.0]),), (jnp.array([-1.0, 1.0]),),
             prims=("while",))


def flag_is_not_false(x):
    flag = False
    if x > 0:
        flag = True
    other = not flag
    return flag is not False, flag is True, other is False, True is flag


def test_identity_with_bool_literals_on_both_paths():
    converts(flag_is_not_false, (jnp.array(1.0),), (jnp.array(-1.0),), prims=("cond",))


def same_object_after_traced_if(x, c):
    y = x
    if c > 0:
        y = x * 2
    return y is x


def test_identity_of_arrays_that_may_differ_per_path_falls_back():
    for c in (1.0, -1.0):
        falls_back(same_object_after_traced_if, jnp.array(1.0), jnp.array(c), snippet="return y is x")


def bool_or_array(x):
    flag = False
    if x > 0:
        flag = x > 1
    return flag is False


def test_flag_that_is_an_array_on_some_path_falls_back():
    falls_back(bool_or_array, jnp.array(0.5), snippet="return flag is False", name=None)


def array_is_true(x):
    m = x + 1
    return m is True, m is None, m is not None


def test_array_is_never_a_python_constant():
    converts(array_is_true, (jnp.array(1.0),))


# -- 9. ~ and - on Python bools that became traced ----------------------------------------

def invert_and_negate_flag(x):
    flag = False
    if x > 0:
        flag = True
    return ~flag, -flag, +flag


def test_invert_and_negate_python_bool():
    converts(invert_and_negate_flag, (jnp.array(1.0),), (jnp.array(-1.0),), prims=("cond",))


def invert_bool_array(x):
    mask = x > 0
    return ~mask


def test_invert_of_a_boolean_array_stays_elementwise():
    converts(invert_bool_array, (jnp.array([1.0, -1.0]),))
