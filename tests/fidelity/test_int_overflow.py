"""Python ints that a traced loop holds as int32 arrays: eager Python's ints
never overflow, the program's int32 would wrap. ``+``, ``-``, ``*`` and ``**`` of two such values
in a traced loop's body are checked at run time: ``to_static`` gives eager's exact integer with a
FallbackWarning at the user's line where the value passed int32, ``laxify.checked(jax.jit(
laxify.convert(f)))`` raises a located ``OverflowError``. A counter's step (``i += 1``) and the
user's own int32 arrays are not checked (the latter wrap, as in eager JAX)."""

from __future__ import annotations

import math
import traceback
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from fidelity_tools import line_of
from test_integer_functions import max_product_pair as largest_pair_product
from laxify.runtime import trace


def fact(n):
    r = 1
    for i in range(1, n + 1):
        r = r * i
    return r


def fib(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


def squares(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def cubes(n):
    s = 0
    k = 0
    while k < n:
        s = s + k ** 3
        k += 1
    return s


def fact_shifted(n):
    r = 1
    for k in range(n):
        r = r * (k + 1)
    return r


def doubling_in_branch(x):
    r = 1
    for i in range(x.shape[0]):
        if x[i] > 0:
            r = r * 3
    return r


def nested(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total = total + i * j
    return total


def counter_sum(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + x[i]
        i += 1
    return s, i


def counter_steps(n):
    k = 0
    j = 100
    while k < n:
        k += 3
        j = j - 2
    return k, j


def users_int32(n):
    r = jnp.int32(1)
    for i in range(1, n + 1):
        r = r * i
    return r


def _checks(fn, *args) -> bool:
    """Whether the program of ``fn`` holds a run-time check (traced as ``laxify.checked`` does)."""
    with trace.running() as state:
        state.reporting = True
        jax.make_jaxpr(laxify.convert(fn))(*args)
    return state.recorded > 0


def _primitives(fn, *args) -> str:
    return str(jax.make_jaxpr(laxify.convert(fn))(*args))


@pytest.mark.parametrize("fn, n, expected, loop", [
    (fact, 12, math.factorial(12), "while"),
    (fib, 45, 1134903170, "while"),  # (b holds fib(46) then: fib(47) would pass int32)
    (squares, 1000, sum(i * i for i in range(1000)), "while"),
    (cubes, 200, sum(k ** 3 for k in range(200)), "while"),
    (fact_shifted, 12, math.factorial(12), "while"),
    (nested, 300, sum(i * j for i in range(300) for j in range(300)), "while"),
])
def test_within_int32_converts_and_is_checked(fn, n, expected, loop):
    assert fn(jnp.int32(n)) == expected
    static_fn = laxify.to_static(fn, fallback="error")
    checked = laxify.checked(jax.jit(laxify.convert(fn)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert int(static_fn(jnp.int32(n))) == expected
        assert int(checked(jnp.int32(n))) == expected
        assert int(jax.jit(laxify.convert(fn))(jnp.int32(n))) == expected
    assert loop in _primitives(fn, jnp.int32(n))
    assert _checks(fn, jnp.int32(n))


@pytest.mark.parametrize("fn, n, name, snippet", [
    (fact, 13, "r", "r = r * i"),
    (fib, 50, "b", "a, b = b, a + b"),
    (squares, 2000, "s", "s += i * i"),
    (cubes, 400, "s", "s = s + k ** 3"),
    (fact_shifted, 13, "r", "r = r * (k + 1)"),
    (nested, 50000, "total", "total = total + i * j"),
])
def test_overflow_gives_eagers_exact_value(fn, n, name, snippet):
    if fn is nested:
        n = 2000  # sum of i * j over 2000**2 pairs: about 4e12
    expected = fn(jnp.int32(n))
    assert isinstance(expected, int) and expected > 2 ** 31 - 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(fn)(jnp.int32(n))
    assert type(got) is int and got == expected
    fallbacks = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert len(fallbacks) == 1, [str(w.message) for w in caught]
    assert fallbacks[0].filename == fn.__code__.co_filename
    assert fallbacks[0].lineno == line_of(fn, snippet)
    message = str(fallbacks[0].message)
    assert f"`{name}`" in message and "jax_enable_x64" in message and "_lx" not in message


def test_overflow_under_checked_jit_convert_is_a_located_overflow_error():
    checked = laxify.checked(jax.jit(laxify.convert(fact)))
    with pytest.raises(OverflowError) as info:
        checked(jnp.int32(13))
    message = str(info.value)
    assert "`r`" in message and "int32" in message and "jax_enable_x64" in message and "_lx" not in message
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (fact.__code__.co_filename, line_of(fact, "r = r * i"))
    assert int(checked(jnp.int32(12))) == math.factorial(12)  # the next call is fine


def test_fallback_error_raises_the_overflow_error_at_the_users_line():
    static_fn = laxify.to_static(fib, fallback="error")
    assert int(static_fn(jnp.int32(10))) == 55
    for _ in range(2):  # the first call's path and the cached one's
        with pytest.raises(OverflowError, match="`b`") as info:
            static_fn(jnp.int32(50))
        frames = traceback.extract_tb(info.value.__traceback__)
        assert all(f.filename == __file__ for f in frames), [f.filename for f in frames]
        assert frames[-1].lineno == line_of(fib, "a, b = b, a + b")


def test_to_static_stays_compiled_after_an_overflowing_call():
    static_fn = laxify.to_static(fact)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        assert static_fn(jnp.int32(20)) == math.factorial(20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = static_fn(jnp.int32(10))
    assert isinstance(got, jax.Array) and int(got) == math.factorial(10)


def test_a_python_int_counted_up_in_a_branch_is_checked():
    x = jnp.ones(25)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(doubling_in_branch)(x)
    assert got == 3 ** 25
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught)
    x = jnp.array([1.0, -1.0] * 5)
    assert int(laxify.to_static(doubling_in_branch, fallback="error")(x)) == 3 ** 5


def test_a_counter_loop_holds_no_check():
    x = jnp.arange(6.0)
    assert not _checks(counter_sum, x, jnp.int32(4))
    assert not _checks(counter_steps, jnp.int32(10))
    static_fn = laxify.to_static(counter_sum, fallback="error")
    s, i = static_fn(x, jnp.int32(4))
    assert float(s) == 6.0 and int(i) == 4
    assert "while" in _primitives(counter_sum, x, jnp.int32(4))
    k, j = laxify.to_static(counter_steps, fallback="error")(jnp.int32(10))
    assert (int(k), int(j)) == counter_steps(10)


def test_the_users_int32_array_wraps_as_in_eager_jax():
    expected = users_int32(jnp.int32(13))
    assert expected.dtype == jnp.int32 and int(expected) == 1932053504  # eager JAX wraps too
    assert not _checks(users_int32, jnp.int32(13))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert int(laxify.to_static(users_int32)(jnp.int32(13))) == int(expected)


def test_the_diff_leaves_a_counters_step_and_a_static_loop_alone():
    text = str(laxify.to_static(counter_steps).diff())
    assert "python_op" not in text
    text = str(laxify.to_static(fact).diff())
    assert "r = _lx.python_op('*', r, i, 'r')" in text


def test_x64_carries_int64_and_is_not_checked():
    with jax.enable_x64(True):
        def fact64(n):
            r = 1
            for i in range(1, n + 1):
                r = r * i
            return r

        got = laxify.to_static(fact64, fallback="error")(jnp.int64(20))
        assert got.dtype == jnp.int64 and int(got) == math.factorial(20)
        assert not _checks(fact64, jnp.int64(20))


def test_to_static_returns_the_code_as_an_output_not_through_checkify():
    """A program whose only run-time check is the overflow code stays out of checkify (whose rule
    for `while` makes the program dispatch slowly): the code is one more output, read after the
    call."""
    static_fn = laxify.to_static(fact)
    assert int(static_fn(jnp.int32(5))) == 120
    programs = list(static_fn._programs.values())
    assert len(programs) == 1 and programs[0].checked is None
    traced = programs[0].trace(jnp.int32(5))
    assert "while" in str(traced.jaxpr) and not traced.jaxpr.effects
    assert len(traced.jaxpr.out_avals) == 2  # the result and the report's code


def test_a_program_with_a_raise_reports_the_overflow_too():
    def checked_fact(n):
        if n < 0:
            raise ValueError("n must not be negative")
        r = 1
        for i in range(1, n + 1):
            r = r * i
        return r

    static_fn = laxify.to_static(checked_fact)
    assert int(static_fn(jnp.int32(12))) == math.factorial(12)
    with pytest.raises(ValueError, match="negative"):
        static_fn(jnp.int32(-1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert static_fn(jnp.int32(13)) == math.factorial(13)
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught)


def test_each_element_under_checked_vmap_in_axes():
    checked = laxify.checked(laxify.convert(fact), vmap_in_axes=0)
    assert [int(v) for v in checked(jnp.array([3, 12]))] == [6, math.factorial(12)]
    with pytest.raises(OverflowError, match="`r`"):
        checked(jnp.array([3, 13]))


def test_a_loop_under_the_functions_own_vmap_is_not_checked():
    """Documented gap: converted code inside a `jax.vmap` the function applies itself keeps
    int32 (its values cannot leave that transformation, and checkify refuses a batched while)."""
    def batched(ns):
        return jax.vmap(lambda n: fact(n))(ns)

    got = laxify.to_static(batched)(jnp.array([3, 5, 12], jnp.int32))
    assert [int(v) for v in got] == [6, 120, math.factorial(12)]


def test_a_to_static_function_called_from_another_is_checked():
    inner = laxify.to_static(fact)

    def outer(n):
        return inner(n) + 1

    static_fn = laxify.to_static(outer)
    assert int(static_fn(jnp.int32(5))) == 121
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert static_fn(jnp.int32(13)) == math.factorial(13) + 1
    assert any(issubclass(w.category, laxify.FallbackWarning) and "`r`" in str(w.message) for w in caught)


# -- prints: the compiled run's prints wait for its overflow code ---------------------------------
# (on an input that overflows, the eager run replaces the compiled run, whose prints must then
# not come out: each print happens once)

def fact_printing(x, n):
    print("start", x[0])
    r = 1
    for i in range(n):
        r = r * (i + 1)
        print("step", i, r)
    print("end", r)
    return r


@pytest.mark.parametrize("n", [3, 13])
def test_prints_of_a_checked_loop_happen_once_as_in_python(n, capsys):
    x = jnp.arange(3)
    expected = fact_printing(x, jnp.int32(n))
    eager_out = capsys.readouterr().out
    fn = laxify.to_static(fact_printing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # the first call and a cached one
            got = fn(x, jnp.int32(n))
            assert int(got) == expected
            assert capsys.readouterr().out == eager_out
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught) == (n == 13)


def fact_printing_with_a_guard(x, n):
    if x[0] < -100.0:  # a raise under a traced condition: the program holds a checkify check
        raise ValueError("x too small")
    print("start", x[0])
    r = 1
    for i in range(n):
        r = r * (i + 1)
        print("step", i)
    return r


@pytest.mark.parametrize("n", [3, 13])
def test_prints_of_a_program_with_checks_and_an_overflow_happen_once(n, capsys):
    # The overflow goes through the error channel with the program's other checks; the prints of
    # that compiled run are held too, so that each prints once.
    x = jnp.arange(3.0)
    expected = fact_printing_with_a_guard(x, jnp.int32(n))
    eager_out = capsys.readouterr().out
    fn = laxify.to_static(fact_printing_with_a_guard)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            assert fn(x, jnp.int32(n)) == expected
            assert capsys.readouterr().out == eager_out
    assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught) == (n == 13)
    with pytest.raises(ValueError, match="too small"):
        fn(jnp.full(3, -200.0), jnp.int32(n))
    assert capsys.readouterr().out == ""


# -- after the loop, an enumerate index, a Python int result ------------------------------------

def squared_after_the_loop(n):
    r = 1
    for _ in range(n):
        r = r * 3
    return r * r


def summed_after_the_loop(n):
    a = 1
    for _ in range(n):
        a = a * 2
    total = a + a
    return total


def in_a_branch_after_the_loop(x, n):
    r = 1
    for _ in range(n):
        r = r * 3
    if x > 0:
        r = r * r
    return r


def factorial_then_squared(y):
    r = 1
    for i in range(y[-1] * 3):  # `r * (i + 1)` makes the carry a strong int32 in the loop
        r = r * (i + 1)
    big = max(0, r)
    return max(big, r * r)


def scaled_enumerate_index(a):
    s = 0
    for i, v in enumerate(a):
        s = s + i * 100_000_000
    return s


@pytest.mark.parametrize("fn, small, large, snippet", [
    (squared_after_the_loop, (jnp.int32(5),), (jnp.int32(15),), "return r * r"),
    (summed_after_the_loop, (jnp.int32(10),), (jnp.int32(30),), "total = a + a"),
    (in_a_branch_after_the_loop, (jnp.float32(1.0), jnp.int32(5)), (jnp.float32(1.0), jnp.int32(15)),
     "r = r * r"),
    (scaled_enumerate_index, (jnp.zeros(5),), (jnp.zeros(30),), "s = s + i * 100_000_000"),
    # a loop's result is a Python int after the loop, also where the body made it a strong int32
    (factorial_then_squared, (jnp.array([0, 2], jnp.int32),), (jnp.array([0, 3], jnp.int32),),
     "return max(big, r * r)"),
])
def test_arithmetic_after_a_loop_and_an_enumerate_index_are_checked(fn, small, large, snippet):
    _checked_like_eager(fn, small, large, snippet)


def _checked_like_eager(fn, small: tuple, large: tuple, snippet: str) -> None:
    """Within int32 (``small``): eager's value on both routes, no fallback. Past it (``large``):
    ``to_static`` gives eager's exact int with one FallbackWarning at ``snippet``'s line, the
    checked jit route a located ``OverflowError`` there."""
    expected_small, expected_large = fn(*small), fn(*large)
    assert type(expected_large) is int and expected_large > 2 ** 31 - 1
    static_fn = laxify.to_static(fn)
    checked = laxify.checked(jax.jit(laxify.convert(fn)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert int(static_fn(*small)) == expected_small
        assert int(checked(*small)) == expected_small
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = static_fn(*large)
    assert type(got) is int and got == expected_large
    fallbacks = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert [w.lineno for w in fallbacks] == [line_of(fn, snippet)], [str(w.message) for w in caught]
    with pytest.raises(OverflowError) as info:
        checked(*large)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (fn.__code__.co_filename, line_of(fn, snippet))


def test_a_checked_result_after_the_loop_stays_out_of_checkify():
    static_fn = laxify.to_static(squared_after_the_loop)
    assert int(static_fn(jnp.int32(3))) == 729
    programs = list(static_fn._programs.values())
    assert len(programs) == 1 and programs[0].checked is None
    assert not programs[0].trace(jnp.int32(3)).jaxpr.effects


def python_power(n):
    r = 1
    for _ in range(n):  # a static n: Python's loop, Python's int
        r = r * 3
    return r * r


def test_a_python_int_result_past_int32_is_eagers_exact_int():
    # The program cannot return 3**30 as int32: to_static runs the function eagerly.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(python_power)(15)
    assert type(got) is int and got == 3 ** 30
    messages = [str(w.message) for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert len(messages) == 1 and "205891132094649" in messages[0] and "jax_enable_x64" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert int(laxify.to_static(python_power)(5)) == 3 ** 10


def from_a_traced_if(x):
    r = 1
    if x > 0:
        r = 50_000
    return r * r


def from_a_conditional_expression(x):
    r = 50_000 if x > 0 else 1
    return r * r


def from_int_of_a_traced_value(x):
    k = int(x)
    return k * k * 2


def from_floor_and_max(x):
    k = math.floor(x)
    m = max(k, 3)
    return m * m


def product_of_two_ints(x):
    return int(x[0]) * int(x[1])


def from_int_of_an_int_array(n):
    k = int(n)  # a Python int in eager code; `n` itself stays the user's int32 array
    return k * k


@pytest.mark.parametrize("fn, small, large, snippet", [
    (from_a_traced_if, jnp.float32(-1.0), jnp.float32(1.0), "return r * r"),
    (from_a_conditional_expression, jnp.float32(-1.0), jnp.float32(1.0), "return r * r"),
    (from_int_of_a_traced_value, jnp.float32(30.0), jnp.float32(40_000.0), "return k * k * 2"),
    (from_floor_and_max, jnp.float32(30.5), jnp.float32(60_000.5), "return m * m"),
    (from_int_of_an_int_array, jnp.int32(30), jnp.int32(60_000), "return k * k"),
    (product_of_two_ints, jnp.array([30.0, 40.0]), jnp.array([60_000.0, 50_000.0]), "return int(x[0]) * int(x[1])"),
    # `int(..) * int(..)` inside a loop of the function: both calls are Python ints
    (largest_pair_product, jnp.array([3.0, 5.0, 2.0]), jnp.array([60_000.0, 50_000.0, 2.0]),
     "p = int(xs[i]) * int(xs[j])"),
])
def test_python_ints_of_an_if_and_of_int_floor_max_are_checked_without_a_loop(fn, small, large, snippet):
    _checked_like_eager(fn, (small,), (large,), snippet)


# -- -2**31: the one int32 whose negation, abs and floor division by -1 wrap ---------------------

def negated_power_of_two(n):
    r = -1
    for _ in range(n):
        r = r * 2  # -2**31 itself fits int32
    return -r, abs(r), r // -1


def test_negation_abs_and_floor_division_of_minus_two_to_the_31_are_checked():
    expected = negated_power_of_two(jnp.int32(31))
    assert expected == (2 ** 31, 2 ** 31, 2 ** 31)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(negated_power_of_two)(jnp.int32(31))
    assert tuple(int(v) for v in got) == expected and all(type(v) is int for v in got)
    assert [w.lineno for w in caught if issubclass(w.category, laxify.FallbackWarning)] == [
        line_of(negated_power_of_two, "return -r, abs(r), r // -1")]
    with pytest.raises(OverflowError):
        laxify.checked(jax.jit(laxify.convert(negated_power_of_two)))(jnp.int32(31))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert [int(v) for v in laxify.to_static(negated_power_of_two)(jnp.int32(5))] == [32, 32, 32]


def sign_flips(x, n):
    s = 1
    acc = x
    for i in range(n):
        s = -s  # checked: a Python int
        acc = acc + s * x[i % 3] - i  # `-i` of a range index: bounded, left as written
    return acc, s


def test_a_loop_index_is_not_negated_through_the_check():
    x = jnp.arange(3.0)
    fn = laxify.to_static(sign_flips)
    np.testing.assert_allclose(np.asarray(fn(x, jnp.int32(4))[0]), np.asarray(sign_flips(x, jnp.int32(4))[0]))
    assert "python_op('neg', s, 0" in fn.source and "python_op('neg', i" not in fn.source
