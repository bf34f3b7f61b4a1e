"""`range(...)` of traced bounds as a value, not a loop's iterable: `sum(range(n))`, `len`,
`max`/`min`, `any`/`all`, `k in range(n)`, `range(n)[k]`, and a name bound to a range used only
so. The program answers from the bounds (no loop); Python's errors (an empty range's `max`, an
index out of range, a step of 0) are raised where Python raises them. A use that needs the items
one by one (`list(r)`, a `for` over a name, `isinstance`) runs the line as Python.
Oracle: the function run eagerly on the same values, on every sign of bound and step."""

from __future__ import annotations

import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import ROUTES, control_flow_prims, jaxpr_of, outcome


def answers(a, b, s, k):
    r = range(a, b, s)
    return (
        len(r),
        sum(r),
        k in r,
        k not in r,
        any(r),
        all(r),
        sum(r, 10),
        max(r, default=-99),
        min(r, default=99),
    )


def written_in_place(a, b, s, k):
    return len(range(a, b, s)) * 100 + sum(range(a, b, s)) + (k in range(b)) + max(range(a, b, s), default=7)


def item(a, b, s, k):
    return range(a, b, s)[k]


def named_item(a, b, s, k):
    r = range(a, b, s)
    return r[k] + r[-1]


def largest(a, b, s, k):
    return max(range(a, b, s)) - min(range(a, b, s))


def one_bound(a, b, s, k):
    return sum(range(b)) + len(range(a, b))


BOUNDS = list(itertools.product((-3, 0, 2), (-4, 0, 5, 9), (-3, -1, 1, 2)))
KS = (-5, -1, 0, 1, 3, 4, 8)



def _agree(want, got, where):
    if isinstance(want, BaseException):
        assert type(got) is type(want) and str(got) == str(want), (where, want, got)
        return
    assert not isinstance(got, BaseException), (where, got)
    for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got), strict=True):
        assert np.asarray(g).tolist() == np.asarray(w).tolist(), (where, want, got)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn", [answers, written_in_place, item, named_item, largest, one_bound], ids=lambda f: f.__name__)
def test_every_answer_and_error_is_pythons(fn, route):
    run = ROUTES[route](fn)
    ks = KS if fn in (answers, item, named_item, written_in_place) else (0,)
    for (a, b, s), k in itertools.product(BOUNDS, ks):
        args = tuple(jnp.int32(v) for v in (a, b, s, k))
        _agree(outcome(fn, *args), outcome(run, *args), (a, b, s, k))


@pytest.mark.parametrize("fn", [answers, item, largest], ids=lambda f: f.__name__)
def test_the_program_answers_from_the_bounds_without_a_loop(fn):
    args = tuple(jnp.int32(v) for v in (0, 9, 2, 3))
    assert not control_flow_prims(jaxpr_of(fn, *args)) & {"while", "scan"}


def a_step_of_zero(n, s):
    return sum(range(0, n, s))


@pytest.mark.parametrize("route", ROUTES)
def test_a_step_of_zero_is_pythons_value_error(route):
    run = ROUTES[route](a_step_of_zero)
    assert run(jnp.int32(9), jnp.int32(3)) == 9
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
        run(jnp.int32(9), jnp.int32(0))


def floats_searched(n):
    return 2.0 in range(n), 2.5 in range(n), float("nan") in range(n), 10**12 in range(n)


def test_a_python_float_or_a_big_int_is_searched_as_python_compares_it():
    run = laxify.to_static(floats_searched, fallback="error")
    for n in (0, 2, 3, 7):
        assert [bool(v) for v in run(jnp.int32(n))] == list(floats_searched(n))


def a_big_sum(n):
    return sum(range(n))


def test_a_sum_past_the_int_is_pythons_value():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(a_big_sum)(jnp.int32(100_000))
    assert int(got) == 4_999_950_000
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught)
    assert int(laxify.to_static(a_big_sum, fallback="error")(jnp.int32(1000))) == 499_500


def listed(n):
    r = range(n)
    return list(r)


def iterated(n):
    r = range(1, n)
    total = 0
    for i in r:
        total += i * i
    return total, len(r)


def its_type(n):
    r = range(n)
    return isinstance(r, range), len(r)


def its_index_method(n, k):
    return range(n).index(k)


def indexed_in_a_try(n, k):
    try:
        v = range(n)[k]
    except IndexError:
        v = -1
    return v


def largest_in_a_try(n, k):
    try:
        v = max(range(n))
    except ValueError:
        v = -1
    return v + k


@pytest.mark.parametrize(
    "fn", [listed, iterated, its_type, its_index_method, indexed_in_a_try, largest_in_a_try], ids=lambda f: f.__name__
)
def test_a_use_that_needs_python_gives_eagers_value(fn):
    nargs = fn.__code__.co_argcount
    for n, k in ((0, 0), (4, 2), (4, 9)):
        args = (jnp.int32(n), jnp.int32(k))[:nargs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want, got = outcome(fn, *args), outcome(laxify.to_static(fn), *args)
        _agree(want, got, (fn.__name__, n, k))


def shape_from_a_range(x):
    n = len(range(1, x.shape[0], 2))
    return jnp.zeros(n) + sum(range(3))


def test_a_range_of_python_ints_stays_python():
    run = laxify.to_static(shape_from_a_range, fallback="error")
    assert run(jnp.ones(6)).shape == (3,)
    assert run(jnp.ones(6)).tolist() == [3.0, 3.0, 3.0]
