"""A function that calls itself once per call, with a depth only the data knows, is one
program: a loop down the calls and a loop back up (transpiler/converters/recursion.py).

The oracle is the same function run eagerly on concrete arrays; every function is checked on
inputs that stop at once, after a few levels and after many, on both routes (``to_static``
with ``fallback="error"``, and ``jax.jit(laxify.convert(f))``), and its program must hold the
``while`` loops (a static depth unrolls, as before: no loop).
"""

from __future__ import annotations

import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from tests.e2e.harness import CASE_FIELDS, case, check, control_flow_prims, jaxpr_of

i32 = jnp.int32


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def gcd(a, b):  # a tail call: one loop, nothing saved
    if b == 0:
        return a
    return gcd(b, a % b)


def extended_gcd(a, b):  # a tuple from below, and a value computed before the call
    if b == 0:
        return (1, 0)
    (x, y) = extended_gcd(b, a % b)
    k = a // b
    return (y, x - k * y)


def power(a, n, mod):  # the call's value assigned, then a shared tail after the `if` chain
    if n == 0:
        ans = 1
    elif n == 1:
        ans = a
    else:
        ans = power(a, n // 2, mod)
        ans = ans * ans
        if n % 2:
            ans = ans * a
    if mod:
        ans %= mod
    return ans


def binary_exponent(a, n):  # two calls of itself, on different paths
    if n == 0:
        return 1.0
    if n % 2 == 1:
        return binary_exponent(a, n - 1) * a
    half = binary_exponent(a, n // 2)
    return half * half


def count_ones(number):
    if not number:
        return 0
    return 1 + count_ones(number & (number - 1))


def search(array, low, high, val):  # tail calls; `array` passed on as it is
    if low > high:
        return -1
    mid = low + (high - low) // 2
    if val < array[mid]:
        return search(array, low, mid - 1, val)
    if val > array[mid]:
        return search(array, mid + 1, high, val)
    return mid


def digits_sum(x, n):  # an array argument that changes on the way down, read on the way up
    if n == 0:
        return x
    y = x * 2.0
    below = digits_sum(y, n - 1)
    return below + x.sum()


def gcd_in_one_line(a, b):  # a conditional expression: an `if` with a `return` on each side
    return a if b == 0 else gcd_in_one_line(b, a % b)


def factorial_in_one_line(n):
    return 1 if n <= 1 else n * factorial_in_one_line(n - 1)


def keyword_call(n, acc):
    if n <= 0:
        return acc
    return keyword_call(acc=acc + n, n=n - 1)


def through_a_closure(x, n):  # a nested helper that calls itself through its closure
    def rec(k, acc):
        if k <= 0:
            return acc
        return jnp.clip(rec(k - 1, acc * 2.0 + x) + jnp.sin(acc), -50.0, 50.0)

    return rec(n, x)


def _times(a, b):
    return [[a[0][0] * b[0][0] + a[0][1] * b[1][0], a[0][0] * b[0][1] + a[0][1] * b[1][1]],
            [a[1][0] * b[0][0] + a[1][1] * b[1][0], a[1][0] * b[0][1] + a[1][1] * b[1][1]]]


def matrix_power(m, p):  # a Python list of lists returned: a value the loops carry
    if p == 0:
        return [[1, 0], [0, 1]]
    elif p % 2 == 1:
        return _times(matrix_power(m, p - 1), m)
    else:
        half = matrix_power(m, p // 2)
        return _times(half, half)


FIB = [[i32(1), i32(1)], [i32(1), i32(0)]]
SORTED = jnp.array([1, 3, 5, 7, 9, 11, 13])

CASES = [
    case(factorial, (i32(0),), (i32(1),), (i32(5),), (i32(12),), prims={"while", "cond"}),
    case(gcd, (i32(12), i32(18)), (i32(7), i32(0)), (i32(0), i32(3)), (i32(1071), i32(462)), prims={"while", "cond"}),
    case(extended_gcd, (i32(240), i32(46)), (i32(7), i32(0)), (i32(99), i32(78)), prims={"while", "cond"}),
    case(
        power,
        (i32(2), i32(0), 0),
        (i32(3), i32(1), 0),
        (i32(3), i32(5), 0),
        (i32(2), i32(10), 7),
        prims={"while", "cond"},
    ),
    case(
        binary_exponent,
        (jnp.float32(1.5), i32(0)),
        (jnp.float32(1.5), i32(7)),
        (jnp.float32(0.9), i32(20)),
        prims={"while", "cond"},
    ),
    case(count_ones, (i32(0),), (i32(8),), (i32(63),), (i32(2**30 + 5),), prims={"while", "cond"}),
    case(
        search,
        (SORTED, i32(0), i32(6), i32(7)),
        (SORTED, i32(0), i32(6), i32(1)),
        (SORTED, i32(0), i32(6), i32(13)),
        (SORTED, i32(0), i32(6), i32(4)),
        prims={"while", "cond"},
    ),
    case(digits_sum, (jnp.arange(3.0), i32(0)), (jnp.arange(3.0), i32(4)), prims={"while", "cond"}),
    case(gcd_in_one_line, (i32(12), i32(18)), (i32(7), i32(0)), (i32(1071), i32(462)), prims={"while", "cond"}),
    case(factorial_in_one_line, (i32(0),), (i32(6),), prims={"while", "cond"}),
    case(keyword_call, (i32(0), i32(0)), (i32(6), i32(1)), prims={"while", "cond"}),
    case(matrix_power, (FIB, i32(0)), (FIB, i32(1)), (FIB, i32(10)), prims={"while", "cond"}),
    case(through_a_closure, (jnp.float32(0.5), i32(0)), (jnp.float32(-0.3), i32(6)), prims={"while", "cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_linear_recursion_on_a_traced_depth_is_one_program(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_a_static_depth_still_unrolls():
    jaxpr = jaxpr_of(digits_sum, jnp.arange(3.0), 3, static_argnums=(1,))
    assert control_flow_prims(jaxpr) == frozenset()
    assert laxify.to_static(factorial)(6) == 720


def test_past_the_limit_is_pythons_recursion_error_at_the_call():
    bounded = laxify.to_static(laxify.loop_options(max_iters=20)(factorial))
    assert bounded(i32(20)) == factorial(i32(20))
    with pytest.raises(RecursionError, match="maximum recursion depth exceeded") as info:
        bounded(i32(21))
    last = info.traceback[-1]
    assert (str(last.path), last.lineno + 1) == (__file__, factorial.__code__.co_firstlineno + 3)
    unbounded = laxify.to_static(factorial)
    with pytest.raises(RecursionError):
        unbounded(i32(sys.getrecursionlimit() + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(unbounded(i32(sys.getrecursionlimit() - 1)) * 0) == 0


def test_frames_too_large_for_the_limit_run_as_python():
    big = jnp.ones(300_000)  # saved for the way up, 1.2 MB a level: 1.1 GiB for 1,000 levels
    with pytest.warns(laxify.FallbackWarning, match="MiB") as caught:
        got = laxify.to_static(digits_sum)(big, i32(2))
    np.testing.assert_allclose(got, digits_sum(big, i32(2)))
    assert "loop_options(max_iters=N)" in str(caught[0].message)
    bounded = laxify.to_static(laxify.loop_options(max_iters=8)(digits_sum))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(bounded(big, i32(2)), digits_sum(big, i32(2)))


def test_vmap_and_reverse_mode_through_the_loops():
    ns = jnp.arange(0, 9, dtype=jnp.int32)
    np.testing.assert_array_equal(jax.vmap(laxify.convert(factorial))(ns), [factorial(n) for n in ns])
    bounded = laxify.convert(laxify.loop_options(max_iters=40)(binary_exponent))
    grad = jax.jit(jax.grad(bounded))(jnp.float32(1.1), i32(9))
    np.testing.assert_allclose(grad, 9 * 1.1**8, rtol=1e-5)
    with pytest.raises(laxify.ConversionError, match="max_iters"):
        jax.jit(jax.grad(laxify.convert(binary_exponent)))(jnp.float32(1.1), i32(9))


def test_a_rebound_name_runs_what_it_names_now(monkeypatch):
    converted = laxify.to_static(count_ones)
    assert converted(i32(7)) == 3
    monkeypatch.setitem(globals(), "count_ones", lambda number: 100)
    expected = 1 + 100  # the body's call now reaches the new function
    assert laxify.to_static(converted.__wrapped__)(i32(7)) == expected


def fibonacci(n):  # two calls of itself on one path: a tree of calls
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


def test_a_tree_of_calls_is_not_a_loop():
    assert "_lx.recursion(" not in laxify.to_static(fibonacci).source
    with pytest.warns(laxify.FallbackWarning, match="calls itself"):
        assert laxify.to_static(fibonacci)(i32(7)) == 13


def test_the_tools_show_the_loops():
    converted = laxify.to_static(extended_gcd)
    assert "_lx.recursion_push(" in converted.source
    assert "extended_gcd" in str(converted.diff())
    rows = str(converted.explain(i32(240), i32(46))).splitlines()
    line = extended_gcd.__code__.co_firstlineno + 3
    assert [r.split()[:4] for r in rows if "recursion" in r] == [
        ["line", str(line), "recursion", "lax.while_loop"],
        ["line", str(line), "recursion", "lax.while_loop"],
    ]
    assert "static" in str(converted.explain(240, 46))  # a static depth: the calls unroll
    converted.ir()
