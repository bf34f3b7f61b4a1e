"""`sum`/`any`/`all` of a generator expression over `range(...)` as one loop of the program, a
traced `range(n)`'s too: `any`/`all` stop at the item that decides (a later item is never
computed), a `sum` adds as Python's does, the generator's variable stays the generator's; over
an array the generator stays Python's. Oracle: the function run eagerly on the same values, on
inputs that take every path."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import ROUTES, control_flow_prims, jaxpr_of, outcome


def squares(x, n):
    return sum(k * k for k in range(n)) + sum(x[k] * 2 for k in range(n) if k % 2 == 0)


def first_positive(x, n):
    if any(x[k] > 3 for k in range(n)):
        return all(x[k] < 5 for k in range(1, n)), 1
    return sum((x[k] for k in range(n)), 10.0), 0


def stops_where_python_stops(x, n):
    # 10 // (3 - k) fails at k == 3: `any` stops at k == 2, `all` at a false item before it.
    return any(k == 2 or 10 // (3 - k) < 0 for k in range(n)), all(k < n - 2 or k != 1 for k in range(n))


def fails_inside(x, n):
    return sum(10 // (3 - k) for k in range(n))


def keeps_its_variable(x, n):
    k = 100
    total = sum(x[k] for k in range(n))
    return total + k


def over_an_array(x, n):
    return sum(i * v for i, v in enumerate(x)) + any(v > n for v in x)


CASES = [squares, first_positive, stops_where_python_stops, fails_inside, keeps_its_variable, over_an_array]
X = jnp.array([1.0, 4.0, 2.0, 6.0, 0.5, 3.0, 7.0, 2.0])



@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_eagers_value_or_error_on_every_count(fn, route):
    run = ROUTES[route](fn)
    for n in range(0, 9):
        for x in (X, -X, X * 0.5):
            want, got = outcome(fn, x, jnp.int32(n)), outcome(run, x, jnp.int32(n))
            if isinstance(want, BaseException):
                assert type(got) is type(want) and str(got) == str(want), (n, want, got)
                continue
            assert not isinstance(got, BaseException), (n, got)
            for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got), strict=True):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("fn", [squares, first_positive, stops_where_python_stops], ids=lambda f: f.__name__)
def test_a_traced_count_is_a_loop_of_the_program(fn):
    assert "while" in control_flow_prims(jaxpr_of(fn, X, jnp.int32(5)))


def python_floats(n):
    return sum(0.1 * k for k in range(n))


def test_a_sum_of_python_floats_is_pythons_exactly():
    # Python sums float64s (compensated from 3.12 on): a traced loop cannot, and runs eagerly.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(python_floats)(jnp.int32(10))
    assert got == python_floats(10)
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught)


def floats_into_an_array(x, n):
    return sum((0.5 for k in range(n)), x), sum((x * k for k in range(n)), 0.5)


def test_python_float_constants_added_to_an_array_are_one_program():
    # eager adds the constant to the float32 array as the program does; 0.5 + an array item
    # is an array's sum too
    run = laxify.to_static(floats_into_an_array, fallback="error")
    for n in (0, 3, 7):
        want, got = floats_into_an_array(jnp.float32(0.1), jnp.int32(n)), run(jnp.float32(0.1), jnp.int32(n))
        assert [float(g) for g in got] == [float(w) for w in want]
    assert "while" in control_flow_prims(jaxpr_of(floats_into_an_array, jnp.float32(0.1), jnp.int32(3)))


def static_floats(x):
    return x * sum(0.1 for _ in range(10))


def test_a_sum_that_python_computes_while_tracing_is_pythons_exactly():
    got = laxify.to_static(static_floats, fallback="error")(jnp.float32(1.0))
    assert float(got) == np.float32(sum(0.1 for _ in range(10)))


def test_no_name_of_laxifys_in_a_message():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        laxify.to_static(python_floats)(jnp.int32(10))
    assert caught and all("_lx" not in str(w.message) for w in caught)
