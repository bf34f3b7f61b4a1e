"""The ``calls`` and ``print_calls`` converters alone: golden before/after tests, and the
runtime behaviour they lead to (called user functions converted, traced prints at run time)."""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import libcst as cst
import numpy as np

import laxify
from laxify.transpiler.converters import calls, print_calls
from laxify.transpiler.converters.base import Context


def check(converter, before: str, after: str) -> None:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = converter.transform(module.body[0], Context({}))
    assert module.with_changes(body=[fn]).code == textwrap.dedent(after).lstrip("\n")


def test_user_calls_go_through_the_runtime():
    check(calls, """
    def f(x):
        y = helper(x, scale=2)
        z = jnp.tanh(y) + len(x)
        return self.step(z)
    """, """
    def f(x):
        y = _lx.call(helper, x, scale=2)
        z = jnp.tanh(y) + len(x)
        return _lx.call(self.step, z)
    """)


def test_runtime_calls_and_nested_defs_are_left_alone():
    check(calls, """
    def f(x):
        def g(v):
            return helper(v)
        return _lx.not_(g(x))
    """, """
    def f(x):
        def g(v):
            return helper(v)
        return _lx.not_(_lx.call(g, x))
    """)


def test_print_becomes_the_runtime_print():
    check(print_calls, """
    def f(x):
        print("x is", x, sep=": ")
        return x
    """, """
    def f(x):
        _lx.print_("x is", x, sep=": ")
        return x
    """)


def scaled(v):
    if v.sum() > 0:
        return v * 2
    return -v


def calls_a_helper(x):
    return scaled(x) + 1


def test_called_function_with_traced_if_is_converted():
    for x in (jnp.ones(3), -jnp.ones(3)):
        np.testing.assert_allclose(laxify.to_static(calls_a_helper)(x), calls_a_helper(x))
    jaxpr = str(jax.make_jaxpr(laxify.convert(calls_a_helper))(jnp.ones(3)))
    assert "cond[" in jaxpr


@laxify.do_not_convert
def left_alone(v):
    return v.sum() > 0 if True else None


def calls_left_alone(x):
    return jnp.where(left_alone(x), x, -x)


def test_do_not_convert_is_called_as_written():
    np.testing.assert_allclose(laxify.to_static(calls_left_alone)(jnp.ones(2)), jnp.ones(2))


def prints_traced(x):
    y = x * 2
    print("y sum", y.sum())
    return y


def test_traced_print_prints_at_run_time(capfd):
    f = laxify.to_static(prints_traced)
    f(jnp.ones(2))
    f(jnp.ones(2) * 3)
    jax.effects_barrier()
    out = capfd.readouterr().out
    assert "y sum 4.0" in out and "y sum 12.0" in out
