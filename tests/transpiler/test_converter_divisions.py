"""The divisions converter alone: golden tests (source before, source after), and the quotients
it routes compared with eager JAX's, bit for bit, where XLA would round them otherwise."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import laxify
from golden import check, check_unchanged
from laxify.transpiler.converters import divisions


def test_a_division_goes_through_the_runtime_with_its_operands():
    check(divisions, """
    def f(x, total, n):
        frac = 1 - min(x, total) / total
        y = (x + 1) / (n - 1) / 3
        return frac, y, [v / n for v in x]
    """, """
    def f(x, total, n):
        frac = 1 - min(x, total) / total
        y = _lx.divide(_lx.divide((x + 1), (n - 1)), 3)
        return frac, y, [_lx.divide(v, n) for v in x]
    """.replace("min(x, total) / total", "_lx.divide(min(x, total), total)"))


def test_an_exact_reciprocal_a_literal_dividend_and_strings_are_left_as_written():
    check_unchanged(divisions, """
    def f(x, path):
        return x / 2, x / 0.5, x / -4, x / 0, 1 / x, 2.5 / x, path / "name", "a" / x
    """)


def test_a_name_divided_in_place_keeps_its_own_in_place_division():
    # `a /= b` is `a = operator.itruediv(a, b)` (a NumPy array changes in place); an attribute
    # or an item keeps the statement (its object's own `__itruediv__` and `__setitem__`).
    check(divisions, """
    def f(x, c, obj, a):
        x /= c
        obj.value /= c
        a[0] /= c
        x /= 2
        return x
    """, """
    def f(x, c, obj, a):
        x = _lx.divide(x, c, True)
        obj.value /= c
        a[0] /= c
        x /= 2
        return x
    """)


def test_a_nested_function_is_left_to_its_own_conversion():
    check(divisions, """
    def f(x, c):
        def g(y):
            return y / c
        return g(x) / c
    """, """
    def f(x, c):
        def g(y):
            return y / c
        return _lx.divide(g(x), c)
    """)


# -- the quotients --------------------------------------------------------------------------------

def polynomial_decay(step, total, power):
    frac = 1 - min(step, total) / total
    return 0.1 * frac**power


def fraction_left(t, n):
    left = 0.0
    while t < n:
        t = t + 1
        left = 1 - t / n
    return left


def scaled_in_place(x, c):
    if x.sum() > 0:
        x /= c
    return x


class Meter:
    def __init__(self):
        self.value = 6.0
        self.divided = 0

    def __itruediv__(self, other):
        self.value = self.value / other
        self.divided += 1
        return self


def in_place_object(x, m):
    if x > 0:
        m /= 3.0
    return m


def _bits(value) -> bytes:
    return np.asarray(value, np.float32).tobytes()


def test_a_quotient_by_a_constant_is_eagers_bit_for_bit():
    # Under plain jax.jit, `1 - 100 / 100` of a traced 100 is 2.2e-8 (the reciprocal of 100,
    # rounded, times 100): the decay is 5e-17 where eager's is 0, and its power -1 is 4.5e7
    # where eager's is inf.
    for args in ((jnp.int32(150), 100, 2), (jnp.int32(100), 100, -1), (jnp.int32(37), 100, 2)):
        want = polynomial_decay(*args)
        assert _bits(laxify.to_static(polynomial_decay)(*args)) == _bits(want), args
        jitted = jax.jit(laxify.convert(polynomial_decay), static_argnums=(1, 2))
        assert _bits(jitted(*args)) == _bits(want), args
    for n in (3, 7, 10, 100):
        want = fraction_left(jnp.int32(0), n)
        assert _bits(laxify.to_static(fraction_left)(jnp.int32(0), n)) == _bits(want) == _bits(0.0)
    for x in (jnp.float32(0.3), jnp.float32(-2.0), jnp.float32(7.0)):
        for c in (3.0, 0.1, 7):
            assert _bits(laxify.to_static(scaled_in_place)(x, c)) == _bits(scaled_in_place(x, c))


def test_the_program_holds_the_division_behind_a_barrier_and_stays_one_loop():
    text = str(jax.make_jaxpr(laxify.convert(fraction_left), static_argnums=1)(jnp.int32(0), 10))
    assert "while" in text and "optimization_barrier" in text and "div" in text
    # An array dividend: XLA multiplies it by the reciprocal of any scalar divisor, constant or
    # not; the barrier would not keep the division (docs/semantics.md), so none is written.
    text = str(jax.make_jaxpr(laxify.convert(scaled_in_place), static_argnums=1)(jnp.float32(1.0), 3.0))
    assert "optimization_barrier" in text and "cond" in text
    text = str(jax.make_jaxpr(laxify.convert(scaled_in_place), static_argnums=1)(jnp.ones(3), 3.0))
    assert "optimization_barrier" not in text and "div" in text


def test_an_objects_own_in_place_division_runs_where_python_runs_it():
    for x, divided, value in ((jnp.float32(1.0), 1, 2.0), (jnp.float32(-1.0), 0, 6.0)):
        m = Meter()
        out = laxify.convert(in_place_object)(x, m)
        assert out is m and m.divided == divided and m.value == value
