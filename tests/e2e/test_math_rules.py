"""`math` functions on traced values beyond the first set (tests/e2e/test_builtins.py): the
exponentials and hyperbolic functions with Python's `OverflowError: math range error`, the
inverse functions with Python's `ValueError: math domain error`, `fmod`, `hypot`, `gcd` and
`factorial`. Oracle: each function run eagerly on the same values, on inputs that take the
normal path, Python's error, and (without x64) the values only Python's float64 holds (the
program cannot: `to_static` runs eagerly with a warning, `laxify.checked(jax.jit(convert))`
raises `NumberNotHeld`)."""

from __future__ import annotations

import contextlib
import math
import re
import sys
import traceback
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import control_flow_prims, jaxpr_of
from laxify.runtime.numbers import NumberNotHeld


def exp_family(x):
    if x > 1000:  # a traced construct: the rules run on tracers
        x = x - 1
    return math.exp(x), math.expm1(x), math.sinh(x), math.cosh(x)


def inverse_family(x):
    if x > 1000:
        x = x - 1
    return math.asin(x) + math.acos(x) + math.atanh(x) + math.asinh(x)


def logs_and_angles(x):
    if x > 1000:
        x = x - 1
    return math.log1p(x), math.acosh(x + 2), math.degrees(x), math.radians(x), math.erf(x), math.erfc(x)


def fmod_hypot(x, y):
    if x > 1000:
        x = x - 1
    return math.fmod(x, y), math.hypot(x, y), math.hypot(x, y, 2.0)


def integers(n, m):
    if n > 1000:
        n = n - 1
    return math.gcd(n, m), math.factorial(n)


def combinatorics(n, k):
    if n > 1000:
        n = n - 1
    return math.comb(n, k), math.perm(n, k), math.perm(n)


def closeness(a, b):
    if a > 1e30:
        a = a - 1
    return (
        math.isclose(a, b),
        math.isclose(a, b, rel_tol=0.25),
        math.isclose(a, b, abs_tol=1.0),
        math.isnan(a),
        math.isfinite(b),
        math.fsum([a, b, 0.5]),
    )


def log_base(x, base):
    if x > 1e30:
        x = x - 1
    return math.log(x, base), math.log(x)


if sys.version_info >= (3, 11):

    def base_two(x):
        if x > 1000:
            x = x - 1
        return math.exp2(x), math.cbrt(x)


f32, i32 = jnp.float32, jnp.int32
INTEGER_FUNCTIONS = (integers, combinatorics)
ROUTES = {
    "to_static": lambda fn: laxify.to_static(fn),
    "jit": lambda fn: laxify.checked(jax.jit(laxify.convert(fn))),
}


def _outcome(fn, args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return e


def _agree(want, got):
    if isinstance(want, BaseException):
        assert type(got) is type(want) and str(got) == str(want), (want, got)
        return
    assert not isinstance(got, BaseException), got
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.float64(g), np.float64(w), rtol=2e-6, atol=1e-30)


CASES = [
    (exp_family, [(0.5,), (-3.0,), (20.0,), (-50.0,)]),
    (inverse_family, [(0.5,), (-0.25,), (0.0,)]),
    (logs_and_angles, [(0.5,), (3.0,), (-0.5,)]),
    (fmod_hypot, [(7.5, 2.0), (-7.0, 3.0), (3.0, 4.0), (0.0, 1.0), (5.0, np.inf)]),
    (integers, [(5, 15), (12, 18), (0, 0), (1, -4)]),
    (combinatorics, [(5, 2), (6, 0), (3, 5), (12, 6), (0, 0)]),
    (
        closeness,
        [(1.0, 1.0), (1.0, 1.5), (100.0, 130.0), (1.0, np.inf), (np.nan, 2.0), (0.0, -0.0), (3.0, 2.5), (1.0, 1.25)],
    ),  # (1.0, 1.25): one bound is 0.25 exactly, another decides
    (log_base, [(8.0, 2.0), (0.5, 10.0), (3.0, 0.5)]),
]
if sys.version_info >= (3, 11):
    CASES.append((base_two, [(10.0,), (-27.0,), (0.5,)]))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn, inputs", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_values_agree_with_python_and_the_program_is_one(fn, inputs, route):
    kind = i32 if fn in INTEGER_FUNCTIONS else f32
    for values in inputs:
        args = tuple(kind(v) for v in values)
        with warnings.catch_warnings():
            warnings.simplefilter("error", laxify.FallbackWarning)
            got = ROUTES[route](fn)(*args)
        _agree(fn(*args), got)
    expected = {"cond", "while"} if fn in INTEGER_FUNCTIONS else {"cond"}  # (jnp.gcd, comb: while loops)
    assert control_flow_prims(jaxpr_of(fn, *(kind(v) for v in inputs[0]))) == expected


ERRORS = [
    (exp_family, (800.0,), OverflowError, "math range error"),
    (exp_family, (-800.0,), OverflowError, "math range error"),  # sinh, cosh
    (inverse_family, (1.5,), ValueError, "math domain error"),
    (inverse_family, (1.0,), ValueError, "math domain error"),  # atanh
    (logs_and_angles, (-1.0,), ValueError, "math domain error"),  # log1p
    (logs_and_angles, (-4.0,), ValueError, "math domain error"),  # acosh(x + 2)
    (fmod_hypot, (5.0, 0.0), ValueError, "math domain error"),
    (fmod_hypot, (np.inf, 1.0), ValueError, "math domain error"),
    (integers, (-1, 3), ValueError, "factorial() not defined for negative values"),
    (combinatorics, (-1, 2), ValueError, "n must be a non-negative integer"),
    (combinatorics, (3, -1), ValueError, "k must be a non-negative integer"),
    (closeness, (np.inf, -np.inf), ValueError, "-inf + inf in fsum"),
    (log_base, (-1.0, 2.0), ValueError, "math domain error"),
    (log_base, (2.0, -2.0), ValueError, "math domain error"),
    (log_base, (2.0, 1.0), ZeroDivisionError, "float division by zero"),
]
if sys.version_info >= (3, 11):
    ERRORS.append((base_two, (1100.0,), OverflowError, "math range error"))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn, values, error, text", ERRORS, ids=lambda v: getattr(v, "__name__", None))
def test_pythons_error_at_the_users_line(fn, values, error, text, route):
    kind = i32 if fn in INTEGER_FUNCTIONS else f32
    args = tuple(kind(v) for v in values)
    with pytest.raises(error, match=re.escape(text)):
        fn(*args)  # eager Python
    with pytest.raises(error, match=re.escape(text)) as info:
        ROUTES[route](fn)(*args)
    assert traceback.extract_tb(info.value.__traceback__)[-1].filename == __file__


# Values Python's float64 (or unbounded int) holds and float32 (int32) does not.
BEYOND = [
    (exp_family, (100.0,)),
    (exp_family, (-100.0,)),
    (fmod_hypot, (3e38, 3e38)),
    (integers, (13, 2)),
    (combinatorics, (30, 15)),  # perm(30, 15) and 30! pass int32
    (closeness, (4.0, 3.0)),  # rel_tol=0.25, abs_tol=1.0: |a - b| is the bound, to float32's rounding
]
if sys.version_info >= (3, 11):
    BEYOND.append((base_two, (200.0,)))


@pytest.mark.parametrize("fn, values", BEYOND, ids=lambda v: getattr(v, "__name__", None))
def test_values_only_python_holds_run_eagerly(fn, values):
    if jnp.zeros(()).dtype == jnp.float64:
        pytest.skip("x64: the program's float holds them")
    kind = i32 if fn in INTEGER_FUNCTIONS else f32
    args = tuple(kind(v) for v in values)
    with pytest.warns(laxify.FallbackWarning, match="Python number"):
        got = laxify.to_static(fn)(*args)
    want = fn(*args)
    for w, g in zip(want, got):
        assert g == w  # eager's own values: Python's floats and ints
    with pytest.raises(NumberNotHeld):
        laxify.checked(jax.jit(laxify.convert(fn)))(*args)


def caught_domain_error(x):
    if x > 100:
        x = x / 2
    try:
        y = math.asin(x)
    except ValueError:
        y = -1.0
    return y


def suppressed_range_error(x):
    y = -1.0
    with contextlib.suppress(OverflowError):
        y = math.exp(x)
    return y


@pytest.mark.parametrize("fn, inputs", [(caught_domain_error, (0.5, 2.0)), (suppressed_range_error, (1.0, 800.0))])
def test_a_handler_runs_exactly_where_pythons_would(fn, inputs):
    for value in inputs:
        with pytest.warns(laxify.FallbackWarning, match="inside a `try` whose `except` clauses may catch it"):
            got = laxify.to_static(fn)(f32(value))
        assert got == fn(f32(value))
    with pytest.raises(laxify.ConversionError, match="which handler runs would depend on the data"):
        jax.jit(laxify.convert(fn))(f32(inputs[1]))


def close_to_a_tenth(x):
    if x > 1e30:
        x = x - 1
    return math.isclose(x, 0.1)


def test_isclose_with_a_python_float_float32_does_not_hold_is_pythons():
    # float32(0.1) is 0.10000000149... in eager Python's float64, which 0.1 is not close to at
    # rel_tol=1e-9; a float32 test would round 0.1 and say True.
    if jnp.zeros(()).dtype == jnp.float64:
        pytest.skip("x64: the program's float holds 0.1")
    with pytest.warns(laxify.FallbackWarning) as caught:
        got = laxify.to_static(close_to_a_tenth)(f32(0.1))
    assert bool(got) is close_to_a_tenth(f32(0.1)) is False
    assert "op by op): ." not in str(caught[0].message)  # (no empty list of what runs where)


def of_an_int(x, k):
    if k > 0:
        x = (
            x * math.cos(k)
            + math.sqrt(k)
            + math.exp(k)
            + math.atan2(k, 2)
            + math.log(k, 2)
            + float(k)
            + math.hypot(k, 1)
            + math.pow(k, 2)
            + math.fsum([k, 1])
        )
    return x


@pytest.mark.parametrize("route", ROUTES)
def test_a_math_float_of_an_int_is_weakly_typed_as_pythons(route):
    # Python's float meets a float16 array as float16; a strongly typed float32 would make
    # the sum float32 (it did, for an int argument).
    x = jnp.ones(3, jnp.float16)
    want = of_an_int(x, i32(2))
    got = ROUTES[route](of_an_int)(x, i32(2))
    assert got.dtype == want.dtype == jnp.float16
    np.testing.assert_allclose(np.float32(got), np.float32(want), rtol=2e-3)
