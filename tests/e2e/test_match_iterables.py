"""`match` and `enumerate`/`zip`/`reversed` loops end to end.

A `match` on a traced scalar becomes `cond`; on a static value it stays Python. A loop over
`enumerate`/`zip`/`reversed` of arrays becomes one `scan`; over Python lists and dicts it
stays a Python loop (unrolled). Eager Python on concrete arrays is the oracle, on inputs
that take every case.
"""

from __future__ import annotations

import enum

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import CASE_FIELDS, case, check, control_flow_prims, eqn_count, jaxpr_of

COND = {"cond"}
SCAN = {"scan"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


def i32(value):
    return jnp.int32(value)


X = f32(1.0, -2.0, 3.0)


class Mode:
    ADD = 0
    MUL = 1


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


# -- match on a traced scalar: `cond` ---------------------------------------------------

def match_int_literals(x, k):
    match k:
        case 0:
            y = x
        case 1 | 2:
            y = x + k
        case -3:
            y = x * 3
        case _:
            y = -x
    return y


def match_without_wildcard(x, k):
    y = x
    match k:
        case 1:
            y = x + 1
        case 2:
            y = x * 2
    return y


def match_float_subject(x, t):
    match t:
        case 0.5:
            y = x * 0.5
        case 1.5 | 2.5:
            y = x + t
        case _:
            y = x
    return y


def match_literal_with_guard(x, k):
    match k:
        case 1 if x.sum() > 0:
            y = x + 10
        case 1:
            y = x - 10
        case _:
            y = x
    return y


def match_guard_with_call(x, k):
    match k:
        case 1 | 2 if jnp.max(x) > 2:
            y = x * k
        case _:
            y = x
    return y


def match_capture(x, k):
    match k:
        case 0:
            y = x
        case n:
            y = x * n
    return y


def match_capture_with_guard(x, k):
    match k:
        case 0:
            y = x
        case n if n > 2:
            y = x * n
        case n:
            y = x - n
    return y


def match_wildcard_guard(x, k):
    match k:
        case 0:
            y = x
        case _ if x[0] > 0:
            y = x + k
        case _:
            y = x - k
    return y


def match_value_patterns(x, k):
    match k:
        case Mode.ADD:
            y = x + 1
        case Mode.MUL:
            y = x * 2
        case _:
            y = x
    return y


def match_subject_computed_once(x):
    match jnp.argmax(x):
        case 0:
            y = x[0]
        case 1:
            y = x[1] * 2
        case _:
            y = x.sum()
    return y


def match_returns(x, k):
    match k:
        case 0:
            return x + 1
        case 1 | 2:
            return x * k
    return x


def nested_match(x, j, k):
    match j:
        case 0:
            match k:
                case 0:
                    y = x
                case _:
                    y = x + k
        case _:
            y = x * j
    return y


def match_in_scanned_loop(xs):
    s = 0.0
    for i in range(xs.shape[0]):
        match i % 3:
            case 0:
                s = s + xs[i]
            case 1 if xs[i] > 1:
                s = s - xs[i]
            case _:
                s = s * 0.5
    return s


TRACED_CASES = [
    case(match_int_literals, *[(X, i32(k)) for k in (0, 1, 2, -3, 7)], prims=COND),
    case(match_without_wildcard, *[(X, i32(k)) for k in (1, 2, 3)], prims=COND),
    case(match_float_subject, *[(X, jnp.float32(t)) for t in (0.5, 1.5, 2.5, 4.0)], prims=COND),
    case(match_literal_with_guard, (X, i32(1)), (-X, i32(1)), (X, i32(2)), prims=COND),
    case(match_guard_with_call, (X, i32(1)), (X, i32(2)), (X - 2, i32(2)), (X, i32(5)), prims=COND),
    case(match_capture, (X, i32(0)), (X, i32(4)), prims=COND),
    case(match_capture_with_guard, *[(X, i32(k)) for k in (0, 2, 3)], prims=COND),
    case(match_wildcard_guard, (X, i32(0)), (X, i32(5)), (-X, i32(5)), prims=COND),
    case(match_value_patterns, *[(X, i32(k)) for k in (0, 1, 2)], prims=COND),
    case(match_subject_computed_once, (f32(5.0, 1.0, 0.0),), (f32(0.0, 5.0, 1.0),),
         (f32(0.0, 1.0, 5.0),), prims=COND),
    case(match_returns, *[(X, i32(k)) for k in (0, 1, 2, 3)], prims=COND),
    case(nested_match, *[(X, i32(j), i32(k)) for j in (0, 1) for k in (0, 2)], prims=COND),
    case(match_in_scanned_loop, (f32(3.0, 2.0, 0.5, 1.0, 4.0, -1.0, 2.0),), prims={"scan", "cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, TRACED_CASES)
def test_match_on_traced_value_becomes_cond(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- match on a static value: plain Python ----------------------------------------------

def match_static_string(x, mode):
    match mode:
        case "sum":
            y = x.sum()
        case "max" | "top":
            y = x.max()
        case _:
            y = x[0]
    return y


def match_static_string_returns(x, mode):
    match mode:
        case "double":
            return x * 2
        case "half" if x.ndim == 1:
            return x / 2
    return x


def match_static_singletons(x, flag):
    match flag:
        case None:
            y = x
        case True:
            y = x + 1
        case False:
            y = x - 1
        case _:
            y = x * flag
    return y


def match_static_enum(x, color):
    match color:
        case Color.RED:
            y = x + 1
        case Color.BLUE:
            y = x - 1
    return y


def match_static_capture_guard(x, n):
    match n:
        case m if m > 2:
            y = x * m
        case _:
            y = x
    return y


def match_on_shape_sequence_pattern(x):
    # A sequence pattern is not converted: the `match` stays Python, on a static shape.
    match x.shape:
        case (n,):
            y = x * n
        case (n, m):
            y = x.sum(axis=0) * m
        case _:
            y = x
    return y


STATIC_CASES = [
    case(match_static_string, (X, "sum"), (X, "max"), (X, "top"), (X, "first"), prims=STATIC),
    case(match_static_string_returns, (X, "double"), (X, "half"), (X, "other"), prims=STATIC),
    case(match_static_singletons, (X, None), (X, True), (X, False), (X, 3), prims=STATIC),
    case(match_static_enum, (X, Color.RED), (X, Color.BLUE), prims=STATIC),
    case(match_static_capture_guard, (X, 3), (X, 1), prims=STATIC),
    case(match_on_shape_sequence_pattern, (X,), (jnp.ones((2, 3), jnp.float32),), prims=STATIC),
]


@pytest.mark.parametrize(CASE_FIELDS, STATIC_CASES)
def test_match_on_static_value_stays_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_match_on_static_string_has_no_cond_and_traced_int_has_one():
    assert "cond" not in control_flow_prims(jaxpr_of(match_static_string, X, "sum"))
    assert "cond" in control_flow_prims(jaxpr_of(match_int_literals, X, i32(1)))


def test_match_source_is_an_if_chain():
    source = laxify.to_static(match_int_literals).source
    assert "match k:" not in source and "_lx.elif_chain(" in source  # one switch over the cases
    assert "_lx.or_(" in source


# -- enumerate / zip / reversed over arrays: one `scan` ----------------------------------

def enumerate_weighted_sum(xs):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + i * v
    return s


def enumerate_with_start(xs):
    s = 0.0
    for i, v in enumerate(xs, start=3):
        s = s + i * v
    for i, v in enumerate(xs, 1):
        s = s - i
    return s


def enumerate_rows(m):
    out = jnp.zeros(m.shape[1], m.dtype)
    for i, row in enumerate(m):
        out = out + row * (i + 1)
    return out


def zip_two(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def zip_three_rows(a, b, c):
    acc = jnp.zeros(a.shape[1], jnp.float32)
    for ra, rb, rc in zip(a, b, c):
        acc = acc + ra * rb - rc
    return acc


def zip_truncates_to_shortest(xs, ys):
    s = 0.0
    n = 0
    for a, b in zip(xs, ys):
        s = s + a - b
        n = n + 1
    return s, n


def zip_strict(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys, strict=True):
        s = s + a * b
    return s


def enumerate_zip(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        s = s + i * a - b
    return s


def reversed_running(xs):
    s = 0.0
    for v in reversed(xs):
        s = s * 0.5 + v
    return s


def reversed_rows(m):
    acc = jnp.zeros(m.shape[1], m.dtype)
    for row in reversed(m):
        acc = acc * 0.5 + row
    return acc


def enumerate_reversed(xs):
    s = 0.0
    for i, v in enumerate(reversed(xs)):
        s = s + i * v
    return s


def zip_with_reversed(xs):
    s = 0.0
    for a, b in zip(xs, reversed(xs)):
        s = s + a * b
    return s


def range_len(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * i
    return s


def enumerate_with_traced_if(xs):
    s = 0.0
    for i, v in enumerate(xs):
        if v > 1:
            s = s + i
        else:
            s = s - v
    return s


def enumerate_with_break(xs):
    s = 0.0
    for i, v in enumerate(xs):
        if v > 2:
            break
        s = s + v * i
    return s


def enumerate_with_match(xs):
    s = 0.0
    for i, v in enumerate(xs):
        match i:
            case 0:
                s = s + v
            case 1 | 2:
                s = s - v
            case _:
                s = s * 2
    return s


def zip_of_numpy_arrays(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


XS = f32(0.5, 1.5, 2.5, 3.5)
YS = f32(1.0, -1.0, 2.0, -2.0)
M = jnp.arange(12, dtype=jnp.float32).reshape(4, 3)

ARRAY_CASES = [
    case(enumerate_weighted_sum, (XS,), prims=SCAN),
    case(enumerate_with_start, (XS,), prims=SCAN),
    case(enumerate_rows, (M,), prims=SCAN),
    case(zip_two, (XS, YS), prims=SCAN),
    case(zip_three_rows, (M, M * 2, M - 1), prims=SCAN),
    case(zip_truncates_to_shortest, (XS, YS[:3]), (XS[:2], YS), prims=SCAN),
    case(zip_strict, (XS, YS), prims=SCAN),
    case(enumerate_zip, (XS, YS), (XS, YS[:2]), prims=SCAN),
    case(reversed_running, (XS,), prims=SCAN),
    case(reversed_rows, (M,), prims=SCAN),
    case(enumerate_reversed, (XS,), prims=SCAN),
    case(zip_with_reversed, (XS,), prims=SCAN),
    case(range_len, (XS,), prims=SCAN),
    case(enumerate_with_traced_if, (XS,), (-XS,), prims={"scan", "cond"}),
    case(enumerate_with_break, (XS,), (f32(3.0, 1.0),), (XS[:2],), prims={"scan", "cond"}),
    case(enumerate_with_match, (f32(1.0, 2.0, 3.0, 4.0, 5.0),), prims={"scan", "cond"}),
    case(zip_of_numpy_arrays, (np.arange(3, dtype=np.float32), np.ones(3, np.float32)), prims=SCAN),
]


@pytest.mark.parametrize(CASE_FIELDS, ARRAY_CASES)
def test_loop_over_arrays_becomes_scan(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_enumerate_does_not_unroll():
    small, large = jnp.ones(10, jnp.float32), jnp.ones(1000, jnp.float32)
    assert eqn_count(jaxpr_of(enumerate_zip, small, small)) == eqn_count(
        jaxpr_of(enumerate_zip, large, large))


def test_enumerate_index_is_int32():
    jaxpr = jaxpr_of(enumerate_weighted_sum, XS)
    (scan,) = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert [v.aval.dtype for v in scan.invars[-2:]] == [jnp.int32, jnp.float32]


def test_zero_length_arrays_run_no_iteration():
    empty = jnp.zeros(0, jnp.float32)
    check(enumerate_zip, (empty, empty), (XS, empty), expect_prims=STATIC)
    check(reversed_running, (empty,), expect_prims=STATIC)


@pytest.mark.parametrize("run", [
    zip_strict,
    laxify.to_static(zip_strict),
    jax.jit(laxify.convert(zip_strict)),
], ids=["eager", "to_static", "jit_convert"])
def test_zip_strict_length_mismatch_raises_like_python(run):
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is longer than argument 1"):
        run(XS[:3], XS)


def test_enumerate_over_0d_array_raises_like_python():
    for run in (enumerate_weighted_sum, laxify.to_static(enumerate_weighted_sum)):
        with pytest.raises(TypeError, match="0-d"):
            run(jnp.float32(1.0))


# -- Python lists, tuples and dicts: a Python loop, unrolled -----------------------------

def enumerate_list(xs):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + i * v
    return s


def zip_list_and_array(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def reversed_list(xs):
    out = []
    for v in reversed(xs):
        out.append(v * 2)
    return jnp.stack(out)


def dict_items(d):
    s = 0.0
    for k, v in d.items():
        s = s + v.sum()
    return s


def dict_items_static_keys(d, scale):
    s = 0.0
    for k, v in sorted(d.items()):
        if k == "a":
            s = s + v.sum() * scale
        else:
            s = s - v.max()
    return s


def enumerate_static_list_of_numbers(x, weights):
    for i, w in enumerate(weights):
        x = x + i * w
    return x


PYTHON_CASES = [
    case(enumerate_list, ([f32(1.0, 2.0), f32(3.0, 4.0), f32(5.0, 6.0)],), prims=STATIC),
    case(zip_list_and_array, ([jnp.float32(1.0), jnp.float32(2.0)], XS), prims=STATIC),
    case(reversed_list, ([f32(1.0), f32(2.0), f32(3.0)],), prims=STATIC),
    case(dict_items, ({"a": XS, "b": YS, "c": M},), prims=STATIC),
    case(dict_items_static_keys, ({"a": XS, "b": YS}, 2.0), prims=STATIC),
    case(enumerate_static_list_of_numbers, (XS, (0.5, 1.5, 2.5)), prims=STATIC),
]


@pytest.mark.parametrize(CASE_FIELDS, PYTHON_CASES)
def test_python_containers_stay_python_loops(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def pairs_backwards(*seqs):
    return list(reversed(list(zip(*seqs))))


def zip_rebound_locally(xs, ys):
    zip = pairs_backwards
    s = 0.0
    for a, b in zip(xs, ys):
        s = s * 2 + a * b
    return s


def test_rebound_builtin_name_is_the_users_function():
    source = laxify.to_static(zip_rebound_locally).source
    assert "_lx.zip_" not in source
    check(zip_rebound_locally, (XS, YS), expect_prims=STATIC)
