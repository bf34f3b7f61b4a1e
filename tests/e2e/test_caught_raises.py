"""A `raise` under a traced condition that a handler of its own `try` catches: the handler is the
branch taken where the data raises, in one program (transpiler/converters/caught_raises.py),
on both routes. Where that rewrite does not hold (the exception object is read, a helper's
`raise`, a name the handler leaves unset), the function runs as Python as before. Oracle: the
function run eagerly, on inputs that take every path (no raise, each handler, the `else`)."""

from __future__ import annotations

import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import control_flow_prims, jaxpr_of


class BadInput(ValueError):
    pass


def safe_divide(a, b):
    try:
        if b == 0:
            raise ZeroDivisionError("b is zero")
        r = a / b
    except ZeroDivisionError:
        r = -1.0
    return r


def handlers_in_order(a, b):
    try:
        if b < 0:
            raise BadInput(f"negative {b}")  # a ValueError: the first handler
        elif b == 0:
            raise ArithmeticError
        r = a * b
        if r > 10:
            raise KeyError("big")
        r = r + 1
    except ValueError:
        r = -1.0
    except (ArithmeticError, KeyError):
        r = -2.0
    else:
        r = r * 10
    return r


def keeps_a_parameter(a, b):
    try:
        if b > 1:
            raise OverflowError
        a = a * b
    except ArithmeticError:  # OverflowError's base
        a = a - 100
    return a


def always_raises(a, b):
    try:
        raise LookupError
    except LookupError:
        r = a + b
    return r


CONVERTED = [
    (safe_divide, [(6.0, 3.0), (6.0, 0.0)]),
    (handlers_in_order, [(1.0, -1.0), (1.0, 0.0), (5.0, 3.0), (1.0, 2.0)]),
    (keeps_a_parameter, [(3.0, 2.0), (3.0, 0.5)]),
    (always_raises, [(1.0, 2.0)]),
]


@pytest.mark.parametrize("fn, inputs", CONVERTED, ids=lambda v: getattr(v, "__name__", ""))
def test_the_handler_runs_where_the_data_raises_in_one_program(fn, inputs):
    routes = (laxify.to_static(fn), jax.jit(laxify.convert(fn)))
    for values in inputs:
        args = tuple(jnp.float32(v) for v in values)
        want = fn(*args)
        for route in routes:
            with warnings.catch_warnings():
                warnings.simplefilter("error", laxify.FallbackWarning)
                got = route(*args)
            np.testing.assert_allclose(got, want)
    prims = control_flow_prims(jaxpr_of(fn, *(jnp.float32(v) for v in inputs[0])))
    assert prims == (frozenset() if fn is always_raises else {"cond"})


def uncaught_kind(a, b):
    try:
        if b == 0:
            raise KeyError("missing")
        r = a / b
    except ZeroDivisionError:
        r = -1.0
    return r


def test_a_raise_no_handler_catches_still_raises():
    # (not rewritten: the function runs as Python, as before)
    f = laxify.to_static(uncaught_kind)
    with pytest.raises(KeyError, match="missing"):
        uncaught_kind(jnp.float32(1.0), jnp.float32(0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        with pytest.raises(KeyError, match="missing"):
            f(jnp.float32(1.0), jnp.float32(0.0))
        assert float(f(jnp.float32(1.0), jnp.float32(4.0))) == 0.25


def check(v):
    if v < 0:
        raise ValueError("negative")
    return v * 2


def helper_raises(a, b):
    try:
        if b == 0:
            raise ValueError("zero")
        r = check(a) / b
    except ValueError:
        r = -1.0
    return r


def handler_leaves_it_unset(a, b):
    try:
        if b == 0:
            raise ValueError("zero")
        r = a / b
    except ValueError:
        print("caught")
    return a


@pytest.mark.parametrize("fn", [helper_raises, handler_leaves_it_unset], ids=lambda f: f.__name__)
def test_what_the_rewrite_cannot_hold_runs_as_python(fn, capsys):
    for values in itertools.product((3.0, -3.0), (2.0, 0.0)):
        args = tuple(jnp.float32(v) for v in values)
        want = fn(*args)
        eager_out = capsys.readouterr().out
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            got = laxify.to_static(fn)(*args)
        assert capsys.readouterr().out == eager_out
        np.testing.assert_allclose(got, want)


def unbound_on_a_path(a, b):
    try:
        if b < 2.0:
            if a > -1.0:
                raise LookupError("m")
        else:
            r = a * 2.0
    except LookupError:
        r = -1.0
    return r


def test_a_name_unbound_on_the_path_taken_raises_as_python_does():
    # (it returned None: the return of an unbound name was taken for laxify's placeholder)
    with pytest.raises(UnboundLocalError):
        unbound_on_a_path(jnp.float32(-2.0), jnp.float32(-1.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        with pytest.raises(UnboundLocalError):
            laxify.to_static(unbound_on_a_path)(jnp.float32(-2.0), jnp.float32(-1.5))
        with pytest.raises(UnboundLocalError):
            laxify.convert(unbound_on_a_path)(jnp.float32(-2.0), jnp.float32(-1.5))
        assert laxify.to_static(unbound_on_a_path)(jnp.float32(1.0), jnp.float32(3.0)) == 2.0
        assert laxify.to_static(unbound_on_a_path)(jnp.float32(0.0), jnp.float32(-1.5)) == -1.0
