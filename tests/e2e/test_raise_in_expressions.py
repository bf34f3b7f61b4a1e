"""A call of a function that may raise inside a conditional expression, an `and`/`or` operand,
or a one-line `if c: y = f(x)`: where the callee raises, the caller stops there as Python's
exception stops it. The callee's flag leaves the `lax.cond` of the expression (or the one-line
suite is bracketed as a block), so the caller does not go on with values nothing should observe:
a `while` loop reading them would run forever
(`y = helper(n) if x > 0 else ...; while y != 1: y = y - 2` for n < 0), and its prints would
come out. Oracle: the function run eagerly on the same arrays, on inputs that raise and that do
not, through `to_static` and `laxify.checked(jax.jit(convert))`."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import pytest

import laxify
from harness import control_flow_prims, jaxpr_of


def helper(v):
    if v < 0:
        raise ValueError(f"negative: {v}")
    return v * 2 + 1


def in_a_conditional_expression(x, n):
    y = helper(n) if x > 0 else n * 2 + 1
    print("after the call", y)
    while y > 1:
        y = y - 2
    return y


def in_an_and(x, n):
    ok = x > 0 and helper(n) > 3
    print("after the call", ok)
    return jnp.where(ok, n, -n)


def in_an_or(x, n):
    ok = x > 5 or helper(n) > 3
    print("after the call", ok)
    return jnp.where(ok, n, -n)


def in_a_one_line_if(x, n):
    y = n * 2 + 1
    if x > 0: y = helper(n)
    print("after the call", y)
    while y > 1:
        y = y - 2
    return y


def ends_only_where_the_helper_did_not_raise(x, n):
    # Where helper(n) raised, `y` is a value nothing observes: the loop must not run on it.
    y = helper(n) if x > 0 else n * 2 + 1
    while y != 1:
        y = y - 2
    return y


FUNCTIONS = [in_a_conditional_expression, in_an_and, in_an_or, in_a_one_line_if]
INPUTS = [(1, 3), (1, -3), (7, -3), (-1, 2), (-1, 3)]


def _eager(fn, args, capsys):
    try:
        value, error = fn(*args), None
    except ValueError as e:
        value, error = None, str(e)
    return value, error, capsys.readouterr().out


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x,n", INPUTS)
def test_a_call_that_raised_in_an_expression_stops_its_caller(fn, x, n, capsys):
    _routes_agree_with_eager(fn, (jnp.int32(x), jnp.int32(n)), capsys)


def _routes_agree_with_eager(fn, args, capsys):
    """``to_static`` and checked ``jit(convert)`` give eager's value or its ``ValueError``, and
    print what eager prints (no print after a call that raised)."""
    value, error, printed = _eager(fn, args, capsys)
    for route in (laxify.to_static(fn), laxify.checked(jax.jit(laxify.convert(fn)))):
        if error is not None:
            with pytest.raises(ValueError) as info:
                route(*args)
            assert str(info.value) == error
        else:
            assert int(route(*args)) == int(value)
        jax.effects_barrier()
        assert capsys.readouterr().out == printed


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_expression_stays_one_program(fn):
    prims = control_flow_prims(jaxpr_of(fn, jnp.int32(1), jnp.int32(3)))
    assert "cond" in prims


@pytest.mark.parametrize("x,n", [(1, 3), (1, -3), (-1, 0)])
def test_a_loop_on_the_value_of_a_call_that_raised_does_not_run(x, n):
    args = (jnp.int32(x), jnp.int32(n))
    for route in (laxify.to_static(ends_only_where_the_helper_did_not_raise),
                  laxify.checked(jax.jit(laxify.convert(ends_only_where_the_helper_did_not_raise)))):
        if n < 0 and x > 0:
            with pytest.raises(ValueError, match="negative: -3"):
                route(*args)
        else:
            assert int(route(*args)) == int(ends_only_where_the_helper_did_not_raise(*args))


# -- a helper that raises whenever it is called, as a lazy operand ----------------------------

def always_raises(v):
    raise ValueError(f"always: {v}")


def returns_an_or_whose_right_side_always_raises(x, n):
    return x or always_raises(n)


def an_and_whose_right_side_always_raises(x, n):
    ok = x > 0 and always_raises(n) > 3
    print("after the call", ok)
    return jnp.where(ok, n, -n)


def a_condition_whose_right_side_always_raises(x, n):
    if x > 5 or always_raises(n) > 3:
        return n
    return -n


def a_chained_comparison_whose_last_part_always_raises(x, n):
    return jnp.where(0 < x < always_raises(n), n, -n)


ALWAYS_RAISING = [returns_an_or_whose_right_side_always_raises, an_and_whose_right_side_always_raises,
                  a_condition_whose_right_side_always_raises, a_chained_comparison_whose_last_part_always_raises]


@pytest.mark.parametrize("fn", ALWAYS_RAISING, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0, 1, 7, -1])
def test_a_lazy_operand_that_always_raises_is_a_raise_at_run_time(fn, x, capsys):
    # The operand's helper raises on every call: the program raises where Python evaluates the
    # operand, and gives the left side elsewhere (it fell back to eager Python, and
    # `jax.jit(convert)` refused it while tracing).
    args = (jnp.int32(x), jnp.int32(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        _routes_agree_with_eager(fn, args, capsys)
    assert "cond" in control_flow_prims(jaxpr_of(fn, *args))
