"""Shapes of real code that crashed or raised where eager Python returns.

Each case runs eagerly (the oracle), through ``to_static`` (``fallback="error"``: it must
convert) and through ``jax.jit(laxify.convert(f))``, on inputs that take every path, and the
program must hold the control-flow primitives named.
"""

from __future__ import annotations

import statistics
import struct
import warnings

import jax
import jax.numpy as jnp
import pytest
from jax import lax

import laxify
from harness import CASE_FIELDS, assert_trees_close, case, check

COND = {"cond"}
WHILE = {"while"}
SCAN = {"scan"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32) if len(values) != 1 else jnp.float32(values[0])


# -- a `for` loop's variable after the loop ------------------------------------------------


def marks_then_reads_index(a):
    # the shape of an iterative merge sort: the inner loop's index read after it (`mid = i`)
    n = a.shape[0]
    p = 1
    mid = -1
    while p < n:
        for i in range(0, n, p):
            a = a.at[i].add(1)
        mid = i
        p *= 2
    return a, mid


def slices_with_last_index(x):
    # after a scanned loop with static bounds the index is the range's last item, a Python
    # int as in Python: it can bound a slice
    acc = 0.0
    for i in range(0, x.shape[0], 2):
        acc = acc + x[i]
    return x[:i] * acc


def keeps_value_when_loop_runs_zero_times(x, n):
    i = -1
    for i in range(n):
        x = x + i
    return x, i


# -- match with sequence, mapping and class patterns -----------------------------------------


class Point:
    __match_args__ = ("v",)

    def __init__(self, v):
        self.v = v


def match_sequence_returns(x, cmd):
    match cmd:
        case [a, b]:
            return x + a + b
        case (k,):
            return x * k
        case _:
            pass
    return x - 1


def match_class_returns(x, p):
    match p:
        case Point(v=0):
            return x
        case Point(v):
            return x * v
    return -x


def match_breaks_loop(x, n):
    for i in range(n):
        match (i, 2):
            case [3, _]:
                break
            case _:
                x = x + 1
    return x


def match_mapping_traced_branch(x, scale):
    match {"scale": scale} if scale else {}:
        case {"scale": s}:
            if x > 0:
                return x * s
            return -x
    return x


def match_in_zero_trip_while(x):
    while x > 0:
        match [x]:
            case [p]:
                x = p - 1
    return x


# -- walrus in a while test ----------------------------------------------------------------


def walrus_halves(x, t):
    while (t := t * 0.5) > 0.3:
        x = x + 1
    return x


def walrus_counts_from_int(x):
    k = 0
    while (k := k + 1) <= 2:
        x = x * 2
    return x


def walrus_counts_from_traced(x):
    k = x
    while (k := k + 1) <= 2:
        x = x * 2
    return x


# -- module functions named like list methods --------------------------------------------


def appends_in_if(s, torque):
    if torque > 0:
        s = jnp.append(s, torque)
    else:
        s = jnp.append(s, -torque)
    return s


def sorts_in_if(s):
    if s[0] > 0:
        s = jnp.sort(s)
    return s


def inserts_in_while(s):
    i = 0
    while s[0] > 0 and i < 3:
        s = jnp.insert(s[:-1], 0, s[0] - 1)
        i += 1
    return s


def adds_and_lax_sorts_in_if(s):
    if s[0] > 0:
        s = jnp.add(s, 1)
        s = lax.sort(s)
    return s


def list_append_in_if_still_changes_the_list(x):
    out = [x]
    if x > 0:
        out.append(x * 2)
    else:
        out.append(-x)
    return out


# -- a list appended and popped in zip/enumerate loops --------------------------------------


def window_over_zip(v):
    lst = [0.0, 0.0]
    for e, g in zip(v, v):
        lst.append(e * g)
        lst.pop(0)
    return lst


def window_over_enumerate(v):
    lst = [0.0, 0.0]
    for i, e in enumerate(v):
        lst.append(e + i)
        lst.pop(0)
    return lst


# -- closures over names -------------------------------------------------------------------


def closure_in_try(x):
    try:
        if x > 0:
            e = x + 1
            x = (lambda: e)()
    except ValueError:
        x = x - 1
    return x


def memoised_fibonacci(n):
    cache: dict[int, int] = {0: 0, 1: 1}

    def rec(k):
        if k in cache:
            return cache[k]
        cache[k] = rec(k - 1) + rec(k - 2)
        return cache[k]

    return [rec(i) for i in range(n + 1)]


def annotated_capture_in_traced_branch(x):
    if x > 0:
        memo: dict[int, float] = {1: 2.0}

        def h(k):
            return memo.get(k, 0.0) + k

        y = h(1) * x
    else:
        y = x
    return y


def annotated_capture_in_loop(x, n):
    memo: dict[int, float] = {1: 2.0}

    def h(k):
        return memo.get(k, 0.0) + k

    for _ in range(n):
        memo: dict[int, float] = {1: 3.0}
        x = x + h(1)
    return x


# -- generator expressions and the standard library --------------------------------------


def _total(values):
    return sum(values)


def sums_a_generator(x):
    return _total(v * v for v in (x, 2 * x))


def stdlib_pstdev(x):
    return statistics.pstdev([2.0, 4.0]) + x


CASES = [
    case(marks_then_reads_index, (jnp.array([2, 1, 3]),), (jnp.array([5, 1]),), prims=SCAN),
    case(slices_with_last_index, (f32(1.0, 2.0, 3.0, 4.0, 5.0),), (f32(1.0, 2.0),), prims=SCAN),
    case(keeps_value_when_loop_runs_zero_times, (f32(1.0), 0), prims=STATIC),
    case(keeps_value_when_loop_runs_zero_times, (f32(1.0), 3), prims=SCAN),
    case(match_sequence_returns, (f32(1.0), (1, 2)), (f32(1.0), (3,)), (f32(1.0), 5), prims=STATIC),
    case(match_class_returns, (f32(2.0), Point(0)), (f32(2.0), Point(3)), (f32(2.0), "no"), prims=STATIC),
    case(match_breaks_loop, (f32(1.0), 6), (f32(1.0), 2), prims=STATIC),
    case(match_mapping_traced_branch, (f32(2.0), 3.0), (f32(-2.0), 3.0), prims=COND),
    case(match_mapping_traced_branch, (f32(2.0), 0.0), prims=STATIC),
    case(match_in_zero_trip_while, (f32(2.5),), (f32(-2.5),), prims=WHILE),
    case(walrus_halves, (f32(1.0), f32(3.0)), (f32(1.0), f32(0.1)), prims=WHILE),
    case(walrus_counts_from_int, (f32(1.0),), prims=STATIC),
    case(walrus_counts_from_traced, (f32(1.0),), (f32(5.0),), prims=WHILE),
    case(appends_in_if, (jnp.arange(3.0), f32(1.0)), (jnp.arange(3.0), f32(-1.0)), prims=COND),
    case(sorts_in_if, (f32(3.0, 1.0, 2.0),), (f32(-3.0, 1.0, 2.0),), prims=COND),
    case(inserts_in_while, (f32(3.0, 1.0, 2.0),), (f32(-3.0, 1.0, 2.0),), prims=WHILE),
    case(adds_and_lax_sorts_in_if, (f32(3.0, 1.0, 2.0),), (f32(-3.0, 1.0, 2.0),), prims=COND),
    case(list_append_in_if_still_changes_the_list, (f32(2.0),), (f32(-2.0),), prims=COND),
    case(window_over_zip, (jnp.arange(4.0),), prims=STATIC),
    case(window_over_enumerate, (jnp.arange(4.0),), prims=STATIC),
    case(closure_in_try, (f32(2.0),), (f32(-2.0),), prims=COND),
    case(memoised_fibonacci, (5,), (0,), prims=STATIC),
    case(annotated_capture_in_traced_branch, (f32(2.0),), (f32(-2.0),), prims=COND),
    case(annotated_capture_in_loop, (f32(2.0), 3), prims=SCAN),
    case(annotated_capture_in_loop, (f32(2.0), 0), prims=STATIC),
    case(sums_a_generator, (f32(3.0),), prims=STATIC),
    case(stdlib_pstdev, (f32(3.0),), prims=STATIC),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_converts_as_eager_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_match_mapping_pattern_on_a_dict_argument():
    def f(x, d):
        match d:
            case {"scale": s}:
                return x * s
        return x

    sf = laxify.to_static(f, fallback="error")
    for d in ({"scale": 3.0}, {"other": 1}):
        assert_trees_close(f(f32(2.0), d), sf(f32(2.0), d), what=str(d))


@pytest.mark.parametrize(
    "fn, args",
    [
        (appends_in_if, (jnp.arange(3.0), f32(1.0))),
        (sorts_in_if, (f32(3.0, 1.0, 2.0),)),
        (inserts_in_while, (f32(3.0, 1.0, 2.0),)),
        (adds_and_lax_sorts_in_if, (f32(3.0, 1.0, 2.0),)),
    ],
)
def test_inspection_tools_take_module_functions_for_calls(fn, args):
    sf = laxify.to_static(fn)
    explained = str(sf.explain(*args))
    assert "lax." in explained and "Python" not in explained, explained
    assert "jnp" not in [line.split("=")[0].strip() for line in sf.ir(*args).splitlines()]
    sf.graph(*args)


def test_generator_argument_next_to_another_stays_parenthesised():
    sf = laxify.to_static(sums_a_generator)
    assert "(v * v for v in (x, 2 * x))" in sf.source


def test_c_function_given_a_traced_value_names_the_call():
    def packs(x):
        b = struct.pack(">f", x)
        return struct.unpack(">f", b)[0] + 1.0

    x = f32(2.5)
    with pytest.warns(laxify.FallbackWarning) as record:
        got = laxify.to_static(packs)(x)
    assert got == packs(x)
    text = str(record[0].message)
    assert "`struct.pack` needs a concrete value, and `x` is a traced value here" in text
    assert "struct.error: required argument is not a float" in text
    assert "_lx" not in text
    # Where nothing can run eagerly, the same text as a located error (it was the raw
    # `struct.error`), and `to_static(fallback="error")` says the same.
    for run in (jax.jit(laxify.convert(packs)), laxify.to_static(packs, fallback="error")):
        with pytest.raises(laxify.ConversionError, match="`struct.pack` needs a concrete value") as info:
            run(x)
        assert info.value.location.line == packs.__code__.co_firstlineno + 1


def test_the_users_own_raise_of_a_traced_value_stays_the_users_error():
    def refuses(x):
        raise ValueError(x)

    with pytest.raises(ValueError):
        laxify.to_static(refuses, fallback="error")(f32(1.5))


def test_a_failure_of_laxify_converting_a_callee_runs_it_as_written(monkeypatch):
    from laxify import conversion

    def helper(v):
        return v * 3.0

    def caller(x):
        return helper(x) + 1.0

    real = conversion.convert_function

    def failing(fn):
        if fn is helper:
            raise RuntimeError("an internal failure")
        return real(fn)

    monkeypatch.setattr(conversion, "convert_function", failing)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = laxify.to_static(caller, fallback="error")(f32(2.0))
    assert float(got) == 7.0
    texts = [str(w.message) for w in record if issubclass(w.category, laxify.FallbackWarning)]
    assert any("laxify failed to convert `" in t and "RuntimeError: an internal failure" in t for t in texts), texts
