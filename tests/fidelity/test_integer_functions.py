"""Integer functions in the style of textbooks (combinatorics, number theory, fast powers,
digit loops) whose Python ints may pass int32. Each runs eagerly (the oracle) and through
``to_static`` (eager's exact value, ints past int32 included, compiled or by its eager run) and
``laxify.checked(jax.jit(laxify.convert(f)))`` (eager's value, or a located ``OverflowError``
where a Python int passes int32), on inputs that stay within int32 and on inputs that pass it
(``max_product_pair``'s ``int(xs[i]) * int(xs[j])`` among them)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import pytest

import laxify


def ncr(n, r):
    num = 1
    den = 1
    for i in range(r):
        num = num * (n - i)
        den = den * (i + 1)
    return num // den

def catalan(n):
    c = 1
    for i in range(n):
        c = c * 2 * (2 * i + 1) // (i + 2)
    return c

def lcm_range(n):
    l = 1
    for i in range(1, n + 1):
        a, b = l, i
        while b != 0:
            a, b = b, a % b
        l = l * i // a
    return l

def power(base, e):
    result = 1
    b = base
    while e > 0:
        if e % 2 == 1:
            result = result * b
        b = b * b
        e = e // 2
    return result

def triangular_sum(n):
    t = n * (n + 1) // 2
    return t * t

def collatz_peak(n):
    peak = n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        peak = max(peak, n)
    return peak

def digit_product(n):
    p = 1
    while n > 0:
        d = n % 10
        if d > 0:
            p = p * d
        n = n // 10
    return p

def sum_of_cubes(xs):
    total = 0
    for i, v in enumerate(xs):
        k = int(v)
        total = total + k * k * k
    return total

def fib_pair(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a * b

def double_until(x):
    r = 1
    while r < x:
        r = r * 2
    return r * r

def stair_ways(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a

def max_product_pair(xs):
    best = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            p = int(xs[i]) * int(xs[j])
            if p > best:
                best = p
    return best

def factorial_digits(n):
    f = 1
    for i in range(2, n + 1):
        f *= i
    count = 0
    while f > 0:
        f = f // 10
        count += 1
    return count

def square_of_sum_minus(n):
    s = 0
    q = 0
    for i in range(1, n + 1):
        s += i
        q += i * i
    return s * s - q

CASES = [
    (ncr, [(jnp.int32(10), 3), (jnp.int32(30), 8)]),
    (catalan, [(jnp.int32(5),), (jnp.int32(20),)]),
    (lcm_range, [(jnp.int32(10),), (jnp.int32(25),)]),
    (power, [(jnp.int32(3), jnp.int32(5)), (jnp.int32(3), jnp.int32(25))]),
    (triangular_sum, [(jnp.int32(100),), (jnp.int32(1000),)]),
    (collatz_peak, [(jnp.int32(27),), (jnp.int32(77671),)]),
    (digit_product, [(jnp.int32(1234),), (jnp.int32(999999999),)]),
    (sum_of_cubes, [(jnp.array([1., 2., 3.]),), (jnp.array([1000., 2000., 1300.]),)]),
    (fib_pair, [(jnp.int32(10),), (jnp.int32(30),)]),
    (double_until, [(jnp.int32(100),), (jnp.int32(100000),)]),
    (stair_ways, [(jnp.int32(10),), (jnp.int32(50),)]),
    (max_product_pair, [(jnp.array([3., 5., 2.]),), (jnp.array([60000., 50000., 2.]),)]),
    (factorial_digits, [(jnp.int32(10),), (jnp.int32(14),)]),
    (square_of_sum_minus, [(jnp.int32(10),), (jnp.int32(500),)]),
]



def _run(fn, args):
    try:
        return ("ok", int(fn(*args)))
    except Exception as e:  # noqa: BLE001 - the oracle's exception is the expected one
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("fn, args", [(fn, args) for fn, inputs in CASES for args in inputs],
                         ids=lambda v: getattr(v, "__name__", None))
def test_integer_function_like_eager_python(fn, args):
    expected = _run(fn, args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _run(laxify.to_static(fn), args) == expected
    # Where a Python int passed int32 on the way (to_static then ran eagerly and said so), the
    # checked program reports it; elsewhere it gives eager's value.
    overflowed = any("passed int32's range" in str(w.message) for w in caught)
    got = _run(laxify.checked(jax.jit(laxify.convert(fn))), args)
    assert got == expected or (overflowed and got[0] == "Int32OverflowError")
