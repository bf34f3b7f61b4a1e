"""The ``calls`` and ``print_calls`` converters alone: golden before/after tests, and the
runtime behaviour they lead to (called user functions converted, traced prints at run time)."""

from __future__ import annotations

import functools  # noqa: F401 - a global of the golden sources below (a library module)
import textwrap
import types

import jax
import jax.numpy as jnp
import libcst as cst
import numpy as np

import laxify
from laxify.transpiler.converters import calls, print_calls
from laxify.transpiler.converters.base import Context
from laxify.transpiler.pipeline import local_names


def check(converter, before: str, after: str, namespace: dict | None = None, in_class: bool = False) -> None:
    """``namespace``: the module globals the function sees (default: this test module's);
    ``in_class``: the function is a method (compiled in a class body, as Python does)."""
    text = textwrap.dedent(before).lstrip("\n")
    module = cst.parse_module(text)
    wrapped = "class C:\n" + textwrap.indent(text, "    ") if in_class else text
    code = next(c for c in _codes(compile(wrapped, "<test>", "exec")) if c.co_name == module.body[0].name.value)
    ctx = Context({}, namespace=globals() if namespace is None else namespace, local_names=local_names(code))
    fn = converter.transform(module.body[0], ctx)
    assert module.with_changes(body=[fn]).code == textwrap.dedent(after).lstrip("\n")


def _codes(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _codes(const)


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


class UserModel:
    def run(self, x):
        return x


def test_calls_that_may_reach_user_code_go_through_the_runtime():
    """Methods of objects, call results, subscripts, static methods of user classes, a global
    shadowing a builtin; a name the function binds itself may hold anything."""
    check(calls, """
    def f(x, model, layers):
        a = model.run(x) + outer(3)(x) + layers[0](x) + UserModel.run(None, x)
        b = (lambda v: v)(x) + super().scale() + len(x)
        jnp = model
        return jnp.tanh(a + b)
    """, """
    def f(x, model, layers):
        a = _lx.call(model.run, x) + _lx.call(_lx.call(outer, 3), x) + _lx.call(layers[0], x) + _lx.call(UserModel.run, None, x)
        b = _lx.call((lambda v: v), x) + _lx.call(super().scale) + _lx.call(len, x)
        jnp = model
        return _lx.call(jnp.tanh, a + b)
    """, {**globals(), "len": lambda v: 1})


def test_super_is_made_explicit_in_methods():
    """`super()` moved into a generated function would find that function's arguments."""
    check(calls, """
    def run(self, x):
        return super().run(x) + super().k
    """, """
    def run(self, x):
        return _lx.call(super(__class__, self).run, x) + super(__class__, self).k
    """, in_class=True)


def test_library_calls_and_array_methods_stay_as_written():
    check(calls, """
    def f(x, d):
        y = jnp.sum(x) + jax.nn.relu(x) + np.float32(2) + x.reshape(-1).sum() + x.astype(jnp.float32)
        z = x.at[0].set(1.0) + functools.partial(jnp.add, 1)(x) + Context.fresh
        for k, v in d.items():
            y = y + v
        return UserModel(), tuple(d.keys()), z
    """, """
    def f(x, d):
        y = jnp.sum(x) + jax.nn.relu(x) + np.float32(2) + x.reshape(-1).sum() + x.astype(jnp.float32)
        z = x.at[0].set(1.0) + _lx.call(functools.partial(jnp.add, 1), x) + Context.fresh
        for k, v in d.items():
            y = y + v
        return UserModel(), tuple(d.keys()), z
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
