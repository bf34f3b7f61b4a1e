"""Everything converted code calls is converted too (DESIGN §5): objects with ``__call__``,
methods of objects other than ``self``, functions returned by calls, recursion with a static
depth, closures, lambdas, ``functools.partial``, static and class methods; private names of
methods are mangled as in their class; conversions free what they convert.

Each case runs eagerly, through ``to_static`` and through ``jit(convert)`` on inputs that take
every path, and its jaxpr must hold the traced construct of the callee (converted, not unrolled
or run as Python)."""

from __future__ import annotations

import functools
import gc
import itertools
import linecache
import textwrap
import weakref

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import CASE_FIELDS, assert_trees_close, case, check, control_flow_prims, jaxpr_of
from laxify import conversion
from laxify.transpiler.analysis.names import stmt_access
from laxify.transpiler.analysis.walk import code_of


def f32(*values):
    return jnp.array(values, jnp.float32)


POS = f32(1.0, 2.0, 3.0)
NEG = f32(-1.0, -2.0, -3.0)
SMALL = f32(0.5, 0.25)


# -- objects with __call__, methods of other objects, calls of call results -----------------

class Doubler:
    def __call__(self, x):
        while x.sum() < 10:
            x = x * 2
        return x


DOUBLER = Doubler()


def calls_a_global_object(x):
    return DOUBLER(x)


class Scaler:
    def __init__(self, k):
        self.k = k

    def run(self, x):
        if x.sum() > 0:
            return x * self.k
        return -x


SCALER = Scaler(2.0)


def calls_methods_of_a_local_and_a_global_object(x):
    local = Scaler(3.0)
    return local.run(x) + SCALER.run(x)


def calls_an_object_passed_in_a_list(x):
    layers = [Scaler(2.0), DOUBLER]
    for layer in layers:
        x = layer(x) if callable(layer) else layer.run(x)
    return layers[0].run(x)


def outer(n):
    def inner(x):
        if x.sum() > 0:
            return x * n
        return -x
    return inner


def calls_a_call_result(x):
    return outer(3)(x)


# -- recursion ------------------------------------------------------------------------------

def recursive(x, depth):
    if depth == 0:
        return x
    if x.sum() > 100:
        x = x / 2
    return recursive(x * 2, depth - 1) + 1


def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x + 1, n - 1)


def is_odd(x, n):
    if n == 0:
        return -x
    if x.sum() > 0:
        x = x * 2
    return is_even(x, n - 1)


def recursion_in_a_closure(x, n):
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)
    if x.sum() > 0:
        x = x * fact(n)
    return x


def traced_depth(x, n):  # two calls of itself per call: a tree of calls, no loop
    if n == 0:
        return x
    return traced_depth(x * 2, n - 1) + traced_depth(x, n - 1)


# -- closures, lambdas, bound methods, partials, static and class methods -----------------

def chain_of_callables(x):
    add = lambda v: v + 1  # noqa: E731

    def inner(v, k):
        if v.sum() > 0:
            return add(v) * k
        return v

    p = functools.partial(inner, k=2.0)
    return p(SCALER.run(x))


class Kinds:
    @staticmethod
    def static(x):
        if x.sum() > 0:
            return x * 2
        return x

    @classmethod
    def klass(cls, x):
        while x.sum() < 5:
            x = x + 1
        return x

    def both(self, x):
        return self.static(x) + self.klass(x)


def calls_static_and_class_methods(x):
    return Kinds.static(x) + Kinds.klass(x) + Kinds().both(x)


PARTIAL = functools.partial(Scaler.run, Scaler(4.0))


def calls_a_global_partial(x):
    return PARTIAL(x)


# -- library model objects ------------------------------------------------------------------

class EqxModel(eqx.Module):
    w: jax.Array

    def __call__(self, x):
        if x.sum() > 0:
            return x * self.w
        return x - self.w

    def step(self, x):
        while x.sum() < 10:
            x = x * 2
        return x


EQX = EqxModel(jnp.float32(2.0))


def calls_an_equinox_module(x):
    return EQX(x) + EQX.step(jnp.abs(x))


CASES = [
    case(calls_a_global_object, (SMALL,), (f32(20.0),), prims={"while"}),
    case(calls_methods_of_a_local_and_a_global_object, (POS,), (NEG,), prims={"cond"}),
    case(calls_an_object_passed_in_a_list, (POS,), (NEG,), prims={"cond", "while"}),
    case(calls_a_call_result, (POS,), (NEG,), prims={"cond"}),
    case(recursive, (POS, 3), (f32(90.0, 30.0), 2), prims={"cond"}),
    case(is_even, (POS, 4), (NEG, 3), prims={"cond"}),
    case(recursion_in_a_closure, (POS, 5), (NEG, 3), prims={"cond"}),
    case(chain_of_callables, (POS,), (NEG,), prims={"cond"}),
    case(calls_static_and_class_methods, (POS,), (NEG * 4,), prims={"cond", "while"}),
    case(calls_a_global_partial, (POS,), (NEG,), prims={"cond"}),
    case(calls_an_equinox_module, (POS,), (NEG,), prims={"cond", "while"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_called_callables_are_converted(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_recursion_with_a_static_depth_unrolls():
    """Three levels: three traced `if`s, one per level."""
    jaxpr = jaxpr_of(recursive, POS, 3)
    assert sum(eqn.primitive.name == "cond" for eqn in jaxpr.jaxpr.eqns) == 3


def test_recursion_with_a_traced_depth_falls_back():
    # Eager Python ends the recursion on concrete values: to_static runs it eagerly, with one
    # FallbackWarning at the outermost recursive call; where nothing can run eagerly (an outer
    # jax.jit, fallback="error") the same text is a located ConversionError.
    with pytest.warns(laxify.FallbackWarning, match="calls itself") as caught:
        got = laxify.to_static(traced_depth)(POS, jnp.int32(3))
    np.testing.assert_allclose(got, traced_depth(POS, jnp.int32(3)))
    line = traced_depth.__code__.co_firstlineno + 3
    assert [(w.filename, w.lineno) for w in caught if issubclass(w.category, laxify.FallbackWarning)] == [
        (__file__, line)]
    for run in (lambda: laxify.to_static(traced_depth, fallback="error")(POS, jnp.int32(3)),
                lambda: jax.jit(laxify.convert(traced_depth))(POS, jnp.int32(3))):
        with pytest.raises(laxify.ConversionError) as info:
            run()
        message = str(info.value)
        assert "`traced_depth` calls itself " in message
        assert "reached Python's recursion limit" in message
        assert f'File "{__file__}", line {line}\n    return traced_depth(x * 2, n - 1) + traced_depth(x, n - 1)\n' in message
        assert "Make the depth a Python value" in message
        assert "_lx" not in message


def test_do_not_convert_objects_run_as_written():
    @laxify.do_not_convert
    class Eager:
        def __call__(self, x):
            return x.sum() > 0  # no control flow: a traced comparison is fine

    eager = Eager()

    def uses(x):
        return jnp.where(eager(x), x, -x)

    check(uses, (POS,), (NEG,), expect_prims=())


def test_library_calls_are_left_as_written_in_the_source():
    source = laxify.to_static(chain_of_callables).source
    assert "_lx.call(p, _lx.call(SCALER.run, x))" in source
    source = laxify.to_static(calls_an_equinox_module).source
    assert "_lx.call(EQX, x) + _lx.call(EQX.step, jnp.abs(x))" in source


# -- name mangling --------------------------------------------------------------------------

class Private:
    def __init__(self):
        self.__k = 2.0

    def __helper(self, x):
        if x.sum() > 0:
            return x * self.__k
        return x

    def run(self, x):
        __local = self.__helper(x)
        if __local.sum() > 1:
            __local = __local + self.__k
        return __local

    def closure(self):
        def inner(x):
            if x.sum() > 0:
                return x * self.__k
            return x
        return inner

    def uses_super(self, x):
        if x.sum() > 0:
            x = x * self.__k
        return x + super().__hash__() * 0

    class Nested:
        __scale = 3.0

        def run(self, x):
            if x.sum() > 0:
                return x * self.__scale
            return x


class _Underscored:
    __k = 5.0

    def run(self, x):
        if x.sum() > 0:
            return x * self.__k
        return x


def make_local_class():
    class Local:
        __k = 3.0

        def __grow(self, x):
            while x.sum() < 100:
                x = x * self.__k
            return x

        def run(self, x):
            __kept = x  # a private local that a closure captures

            def read():
                return __kept + 1

            scale = lambda v: v * self.__k  # noqa: E731
            if x.sum() > 0:
                __kept = scale(self.__grow(__kept))
            return read()

    return Local()


PRIVATE = Private()


@pytest.mark.parametrize("fn, prims", [
    (PRIVATE.run, {"cond"}), (PRIVATE.closure(), {"cond"}), (PRIVATE.uses_super, {"cond"}),
    (Private.Nested().run, {"cond"}), (_Underscored().run, {"cond"}), (make_local_class().run, {"cond", "while"}),
], ids=["method", "closure_in_method", "super", "nested_class", "underscored_class", "class_in_a_function"])
def test_private_names_are_mangled_as_in_their_class(fn, prims):
    check(fn, (POS,), (NEG,), expect_prims=prims)


def test_private_method_called_from_a_converted_function():
    def calls(x):
        return PRIVATE.run(x)

    check(calls, (POS,), (NEG,), expect_prims={"cond"})


# -- memory: conversions do not keep what they converted alive --------------------------------

_cells = itertools.count()


def define(src: str, name: str, namespace: dict):
    """``name`` from ``src``, exec'd under a fresh file name registered in linecache."""
    src = textwrap.dedent(src).lstrip("\n")
    filename = f"<laxify-calls-{next(_cells)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


REDEFINED = '''
def make():
    def helper(v, n):  # recursive: its closure cell holds itself
        if v.sum() > 0:
            v = v * 2
        return v if n == 0 else helper(v, n - 1)

    class Model:
        def __call__(self, v):
            while v.sum() < 10:
                v = v * 2
            return v

    model = Model()

    def f(x):
        return helper(x, 1) + model(x)

    return f, helper, model
'''


def test_functions_called_from_converted_code_are_freed_when_redefined():
    """As re-run notebook cells: each run defines new functions (new code objects) that a
    converted function calls; none of them stays alive, nor do their conversions or trees."""
    start = len(conversion._CACHE)
    refs = []
    for _ in range(50):
        f, helper, model = define(REDEFINED, "make", {"jnp": jnp})()
        assert_trees_close(f(SMALL), laxify.to_static(f, fallback="error")(SMALL), what="redefined")
        refs += [weakref.ref(f), weakref.ref(helper), weakref.ref(model)]
        del f, helper, model
    gc.collect()
    assert sum(ref() is not None for ref in refs) == 0
    assert len(conversion._CACHE) <= start + 3
    # The analyses' memos are emptied after each conversion: they hold no tree.
    assert code_of.cache_info().currsize == 0
    assert stmt_access.cache_info().currsize == 0


def test_converted_code_is_not_converted_again():
    converted = laxify.convert(recursive)

    def calls(x):
        return converted(x, 2)

    check(calls, (POS,), expect_prims={"cond"})
    assert control_flow_prims(jaxpr_of(calls, POS)) == {"cond"}


class Stats:
    def sum(self, x):  # the name of an array method: taken for the array's on other objects
        if x.sum() > 0:
            return x.sum() * 2
        return x.sum()


STATS = Stats()


def calls_a_user_method_named_like_an_array_method(x):
    return laxify.convert(STATS.sum)(x)


def test_user_method_named_like_an_array_method_converts_through_convert():
    """docs/semantics.md: `laxify.convert(obj.sum)(x)` converts a user method named `sum`."""
    check(calls_a_user_method_named_like_an_array_method, (POS,), (NEG,), expect_prims={"cond"})


# -- super() inside converted control flow ----------------------------------------------------

class Base:
    k = 3.0

    def scale(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class Derived(Base):
    def in_a_branch(self, x):
        if x.sum() > 1:
            y = super().scale(x) * super().k if x.sum() > 2 else x + 1
        else:
            y = x
        return y

    def in_a_loop(self, x):
        while x.sum() < 20:
            x = super().scale(x) + 1
        return x


@pytest.mark.parametrize("fn, inputs, prims", [
    (Derived().in_a_branch, [(POS,), (POS - 1.2,), (NEG,)], {"cond"}),
    (Derived().in_a_loop, [(POS,), (f32(30.0),)], {"cond", "while"}),
], ids=["branch", "loop"])
def test_super_inside_converted_control_flow(fn, inputs, prims):
    """The converted code moves `super()` into generated functions: it is made explicit."""
    check(fn, *inputs, expect_prims=prims)
