"""A name assigned only on paths that return, and assigned again on the paths that go on before
they read it (the shape of fluids' `roots_cubic`: `if a == 0: ... x1 = ...; return (x1, ...)`,
then `if h == 0: return ...` / `elif ...: x1 = ...` / `else: x1 = ...`, `return (x1, ...)`).
Python never reads an unbound name there; laxify refused it ("`x1` is defined in the other
branch of this `if` ... and it is used after the `if`"). A branch where the function has
returned gives values nothing reads, also inside the `if` laxify puts around the code after a
`return`. Oracle: the function run eagerly, on inputs that take every path."""

from __future__ import annotations

import itertools
import warnings

import jax
import jax.numpy as jnp
import pytest

import laxify
from harness import control_flow_prims, jaxpr_of


def nested_returns(a, b, c):
    if a == 0.0:
        if b == 0.0:
            return (c, c)
        x1 = c + 1
        return (x1, x1)
    if c > 5:
        return (c, c)
    elif c > -1:
        x1 = c * 2
    else:
        x1 = c * 3
    return (x1, c)


def returned_value_kept(a, c):
    # The value a returning branch gives must survive the join (its return value is read).
    if a == 0.0:
        x1 = c + 1
        return (x1, x1)
    if c > 5:
        return (c, c)
    x1 = c * 2
    return (x1, c)


INPUTS = [tuple(map(jnp.float32, v)) for v in itertools.product((0.0, 1.0), (0.0, 1.0), (7.0, 0.5, -3.0))]


@pytest.mark.parametrize("fn, width", [(nested_returns, 3), (returned_value_kept, 2)], ids=lambda v: getattr(v, "__name__", ""))
def test_every_path_gives_eagers_value_as_one_program(fn, width):
    routes = (laxify.to_static(fn), jax.jit(laxify.convert(fn)))
    for args in INPUTS:
        args = args[-width:] if width == 2 else args
        want = fn(*args)
        for route in routes:
            with warnings.catch_warnings():
                warnings.simplefilter("error", laxify.FallbackWarning)
                got = route(*args)
            assert [float(v) for v in got] == [float(v) for v in want], (args, got, want)
    assert "cond" in control_flow_prims(jaxpr_of(fn, *INPUTS[0][-width:]))
