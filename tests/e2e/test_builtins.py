"""Builtins and ``math`` functions on traced values: each rule against eager Python on inputs that
take every path (ties, NaN, signs, empty lists), on both routes, and the program they make."""

from __future__ import annotations

import builtins
import math
import os
import traceback
from math import floor

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import check, jaxpr_of, primitive_counts
from laxify.runtime.builtin_rules import BUILTIN_NAMES as RUNTIME_BUILTINS
from laxify.runtime.builtin_rules import MATH_NAMES as RUNTIME_MATH
from laxify.runtime.builtin_rules import RULES
from laxify.transpiler.analysis.features import RANGE_BUILTINS, RULED_BUILTINS, RULED_MATH

COND = {"cond"}
f32 = jnp.float32


def test_the_converter_and_the_runtime_know_the_same_rules():
    assert RULED_BUILTINS == RUNTIME_BUILTINS
    assert RULED_MATH == RUNTIME_MATH
    ruled = RULED_BUILTINS | {"range"}  # (routed where its uses need no item one by one)
    assert "range" in RANGE_BUILTINS
    assert {getattr(builtins, n) for n in ruled} | {getattr(math, n) for n in RULED_MATH} == set(RULES)


# -- max / min ---------------------------------------------------------------------------

def max_min_of_two(x, y):
    return max(x, y) * 10 + min(x, y)


def max_of_two(x, y):
    return max(x, y)


def max_min_of_three_mixed(x, y):
    return max(x, 0.5, y) - min(y, 2.0, x)


def max_of_array_in_condition(v):
    if max(v) > 2:
        return min(v)
    return max(v) + 100


def max_of_list_with_key(a, b, c):
    return max([a, b, c], key=abs)


def max_with_default(v, n):
    return max([v[i] for i in range(n)], default=-1.0)


def test_max_min_of_scalars():
    for x, y in [(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), (-1.0, 0.0)]:
        check(max_min_of_two, (f32(x), f32(y)), expect_prims=())
    for x, y in [(0.0, 1.0), (3.0, -2.0), (0.5, 0.5)]:
        check(max_min_of_three_mixed, (f32(x), f32(y)), expect_prims=())


def test_max_min_keep_the_first_of_equal_values_and_nan_as_python_compares():
    # max(0.0, -0.0) is 0.0 (the first); max(nan, 1.0) is nan, max(1.0, nan) is 1.0.
    for x, y in [(0.0, -0.0), (-0.0, 0.0), (np.nan, 1.0), (1.0, np.nan)]:
        want = max(np.float32(x), np.float32(y))
        for fn in (laxify.to_static(max_of_two), jax.jit(laxify.convert(max_of_two))):
            got = np.asarray(fn(f32(x), f32(y)))
            assert np.array_equal(got, np.float32(want), equal_nan=True) and np.signbit(got) == np.signbit(want)


def test_max_min_of_an_array_is_a_scan_in_pythons_order():
    for v in ([3.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, np.nan, 3.0], [np.nan, 1.0, 0.5]):
        x = jnp.asarray(v, jnp.float32)
        want = max_of_array_in_condition(np.asarray(v, np.float32))
        for fn in (laxify.to_static(max_of_array_in_condition), jax.jit(laxify.convert(max_of_array_in_condition))):
            assert np.array_equal(np.asarray(fn(x)), np.float32(want), equal_nan=True), (v, want)
    counts = primitive_counts(jaxpr_of(max_of_array_in_condition, jnp.ones(3)))
    assert counts["scan"] == 3 and counts["cond"] >= 1
    # A long array does not grow the program: one scan, not 10,000 comparisons.
    assert primitive_counts(jaxpr_of(lambda v: max(v), jnp.ones(10_000)))["scan"] == 1


def test_max_with_key_and_default():
    for a, b, c in [(1.0, -3.0, 2.0), (-1.0, 1.0, 0.5), (2.0, -2.0, 2.0)]:
        check(max_of_list_with_key, (f32(a), f32(b), f32(c)))
    check(max_with_default, (jnp.array([1.0, 5.0, 2.0]), 3), (jnp.array([1.0, 5.0, 2.0]), 0))


def test_max_of_an_empty_list_raises_pythons_error():
    def f(v, n):
        return max([v[i] for i in range(n)])
    with pytest.raises(ValueError) as eager:
        f(jnp.ones(2), 0)
    with pytest.raises(ValueError) as converted:
        laxify.to_static(f)(jnp.ones(2), 0)
    assert str(converted.value) == str(eager.value)


def test_a_users_own_max_is_called_as_written():
    def f(x, y):
        def max(a, b):  # shadows the builtin
            return a + b
        return max(x, y)
    check(f, (f32(1.0), f32(2.0)))


# -- any / all / bool --------------------------------------------------------------------

def any_all_of_array(v):
    if any(v > 2) and not all(v > 0):
        return 1
    return 0


def any_all_of_list(a, b):
    return any([a > 0, b > 0]), all([a > 0, b > 0]), any([a, b]), all([])


def bool_of_scalar(x):
    if bool(x):
        return x + 1
    return x - 1


def test_any_all():
    for v in ([3.0, -1.0], [3.0, 1.0], [0.0, 1.0], [np.nan, 0.0]):
        check(any_all_of_array, (jnp.asarray(v),), expect_prims=COND)
    for a, b in [(1.0, 0.0), (0.0, 0.0), (1.0, 2.0), (-1.0, np.nan)]:
        check(any_all_of_list, (f32(a), f32(b)))


def test_bool():
    for x in (0.0, 2.0, -0.0, np.nan):
        check(bool_of_scalar, (f32(x),), expect_prims=COND)
    check(bool_of_scalar, (jnp.int32(0),), (jnp.int32(3),), expect_prims=COND)


# -- int / float / math ------------------------------------------------------------------

def int_float_of_traced(n, flag):
    k = int(flag) + int(n)
    return float(k) / 2


def math_functions(x, y):
    return (math.isnan(x), math.isinf(y), math.isfinite(x), math.fabs(x), math.atan2(x, y),
            math.copysign(y, x), math.tanh(x), math.atan(y))


def floor_of_an_int(n):
    return math.floor(n) + math.ceil(n * 2) + floor(n)


def test_int_and_float():
    for n, flag in [(3, True), (-4, False), (0, True)]:
        check(int_float_of_traced, (jnp.int32(n), jnp.bool_(flag)))


def test_math_functions():
    for x, y in [(1.0, 2.0), (-0.5, np.inf), (np.nan, -1.0), (0.0, -0.0)]:
        x32, y32 = np.float32(x), np.float32(y)
        want = math_functions(x32, y32)
        for fn in (laxify.to_static(math_functions), jax.jit(laxify.convert(math_functions))):
            got = fn(f32(x), f32(y))
            for w, g in zip(want, got):
                np.testing.assert_allclose(np.asarray(g, np.float64), np.float64(w), rtol=1e-6)
    check(floor_of_an_int, (jnp.int32(3),), (jnp.int32(-7),))


def math_with_a_domain(x):
    return math.sqrt(x) + math.log(x) * 2 + math.log2(x) + math.log10(x) + math.sin(x) + math.cos(x) + math.tan(x)


def sqrt_of_a_branch(x):
    if x >= 0:
        return math.sqrt(x)
    return -math.sqrt(-x)


def test_math_with_a_domain_as_python_and_its_error_at_the_users_line():
    for v in (0.5, 2.0, 100.0, 1e6):
        check(math_with_a_domain, (f32(v),))
    check(sqrt_of_a_branch, (f32(4.0),), (f32(-9.0),), (f32(0.0),), expect_prims={"cond"})
    check(math_with_a_domain, (jnp.int32(7),))  # ints: as floats, as Python
    for v in (0.0, -1.0, -np.inf):
        with pytest.raises(ValueError, match="math domain error"):
            math_with_a_domain(np.float32(v))  # eager Python
        for fn in (laxify.to_static(math_with_a_domain), ):
            with pytest.raises(ValueError, match="math domain error") as info:
                fn(f32(v))
            assert traceback.extract_tb(info.value.__traceback__)[-1].filename == __file__
    got = laxify.to_static(math_with_a_domain)(f32(np.nan))  # NaN: NaN, no error, as Python
    assert np.isnan(got) and math.isnan(math_with_a_domain(np.float32(np.nan)))


def int_floor_ceil_of_floats(x):
    return int(x) + math.floor(x) * 10 + math.ceil(x) * 100


def int_of_a_float_in_a_branch(x):
    if x > 0:
        return int(x * 2)
    return -1


def test_int_floor_ceil_of_traced_floats_truncate_and_round_as_python():
    for v in (2.5, -2.5, 7.0, -0.5, 0.0, 1e6 + 0.75):
        check(int_floor_ceil_of_floats, (f32(v),))
    jaxpr = str(jax.make_jaxpr(laxify.convert(int_floor_ceil_of_floats))(f32(1.0)))
    assert "floor" in jaxpr and "ceil" in jaxpr


@pytest.mark.parametrize("value, error, text", [
    (np.nan, ValueError, "cannot convert float NaN to integer"),
    (np.inf, OverflowError, "cannot convert float infinity to integer"),
    (-np.inf, OverflowError, "cannot convert float infinity to integer"),
])
def test_int_of_nan_or_infinity_raises_pythons_error_at_the_users_line(value, error, text):
    with pytest.raises(error, match=text):
        int_floor_ceil_of_floats(np.float32(value))  # eager Python
    with pytest.raises(error, match=text) as info:
        laxify.to_static(int_floor_ceil_of_floats)(f32(value))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename == __file__
    assert frames[-1].line == "return int(x) + math.floor(x) * 10 + math.ceil(x) * 100"
    package = os.path.dirname(os.path.dirname(laxify.__file__))
    assert not [f for f in frames if f.filename.startswith(os.path.join(package, "runtime"))]
    # The first call traces twice (the second time with run-time checks): what laxify handled
    # in between is not shown as the error's context.
    shown = "".join(traceback.format_exception(info.value))
    assert "NeedsChecks" not in shown and os.path.join(package, "laxify") not in shown


def test_int_beyond_int32_is_an_overflow_error_not_a_wrapped_integer():
    with pytest.raises(OverflowError, match="int32"):
        laxify.to_static(int_floor_ceil_of_floats)(f32(3e9))


def test_int_raises_only_on_the_path_python_takes():
    f = laxify.to_static(int_of_a_float_in_a_branch)
    assert int(f(f32(-1.0))) == -1
    assert int(f(f32(-np.inf))) == -1  # the branch with int() is not taken: no error
    assert int(f(f32(2.25))) == 4
    with pytest.raises(OverflowError):
        f(f32(np.inf))


# -- sorted / in -------------------------------------------------------------------------

def sorted_of_list(a, b, c):
    s = sorted([a, b, c])
    r = sorted([a, b, c], reverse=True)
    return s[0] * 100 + s[1] * 10 + s[2], r[0]


def membership(x, seen):
    if x in seen:
        return 1
    if x not in [seen[0] + 1, 7]:
        return 2
    return 3


def membership_in_a_chain(x, seen):
    return 0 < x in seen


def test_sorted():
    for a, b, c in [(3, 1, 2), (1, 1, 0), (-5, 7, 7)]:
        check(sorted_of_list, (jnp.int32(a), jnp.int32(b), jnp.int32(c)))


def sorted_floats(a, b):
    s = sorted([a, 1.0, -b, 0.0])
    r = sorted([a, b, 0.0, -0.0], reverse=True)
    return s, r


def test_sorted_of_floats_is_stable_and_keeps_the_sign_of_zero():
    # Equal floats keep their order (Python's sort is stable): 0.0 and -0.0 are equal keys.
    for a, b in [(3.0, 2.0), (0.0, -0.0), (-0.0, 0.0), (1.0, -1.0), (-7.5, 7.5)]:
        check(sorted_floats, (f32(a), f32(b)))
        got = laxify.to_static(sorted_floats, fallback="error")(f32(a), f32(b))
        want = sorted_floats(f32(a), f32(b))
        signs = [math.copysign(1.0, float(v)) for v in jax.tree_util.tree_leaves(got)]
        assert signs == [math.copysign(1.0, float(v)) for v in jax.tree_util.tree_leaves(want)], (a, b)


def test_sorted_of_floats_with_a_nan_runs_as_python():
    with pytest.warns(laxify.FallbackWarning, match="NaN"):
        got = laxify.to_static(sorted_floats)(f32(np.nan), f32(2.0))
    want = sorted_floats(f32(np.nan), f32(2.0))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def test_in_and_not_in_a_list_of_traced_values():
    for x in (2, 3, 5, 9):
        seen = [jnp.int32(2), jnp.int32(3)]
        check(membership, (jnp.int32(x), seen), static_argnums=())
        check(membership_in_a_chain, (jnp.int32(x), seen), static_argnums=())


def test_in_keeps_pythons_identity_test():
    # `v in [v]` is True by identity even where v == v is not (NaN).
    def f(x):
        y = x * 1
        return y in [x, y]
    check(f, (f32(np.nan),), (f32(1.0),))


def test_builtins_on_python_values_stay_python():
    def f(x, n):
        m = max(n, 3)
        return x * m, int(2.7), sorted([3, 1, 2]), any([0, 0]), 2 in [1, 2]
    check(f, (f32(1.0), 5), (f32(1.0), 1))
    assert "max" not in str(jax.make_jaxpr(laxify.convert(f), static_argnums=1)(f32(1.0), 5))


def any_all_max_of_generators(v):
    return any(e > 2 for e in v), all(e > -5 for e in v), max(e * 2 for e in v), sorted(int(e > 0) for e in v)


def test_generator_expression_arguments():
    check(any_all_max_of_generators, (jnp.array([1.0, 3.0, -2.0]),), (jnp.array([-9.0, 0.0, 1.0]),))
    source = laxify.to_static(any_all_max_of_generators).source
    assert "(e * 2 for e in v)" in source  # a lone generator given to the runtime: in parentheses


SEEN: list = []


@laxify.do_not_convert
def seen(value):
    SEEN.append(value)
    return value


def any_of_python_values_stops_where_python_does(x):
    found = any(seen(v) > 0 for v in [0, 1, 2])
    every = all(seen(v) > 10 for v in [20, 5, 30])
    return x + found + every


def test_any_all_over_a_generator_of_python_values_stop_where_python_stops():
    for fn in (laxify.to_static(any_of_python_values_stops_where_python_does),
               jax.jit(laxify.convert(any_of_python_values_stops_where_python_does))):
        SEEN.clear()
        assert int(fn(jnp.int32(1))) == 2
        assert SEEN == [0, 1, 20, 5]  # any() stops at 1, all() at 5: 2 and 30 never computed
