"""`for` end to end: static ranges and arrays become `scan`, traced bounds become `while`.

Loops run with zero, one and many trips; a static loop that touches no traced value, or
iterates over a Python list, stays Python. Static trip counts must not unroll.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import laxify

from harness import CASE_FIELDS, case, check, eqn_count, jaxpr_of, scanned_operands

SCAN = {"scan"}
WHILE = {"while"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


def i32(value):
    return jnp.int32(value)


X12 = jnp.arange(1.0, 13.0, dtype=jnp.float32)
ROWS = jnp.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.0], [7.0, 8.0, -9.0]], jnp.float32)


# -- static ranges: scan ---------------------------------------------------------------

def for_range_accumulates_from_int_zero(x):
    acc = 0
    for i in range(5):
        acc = acc + x[i]
    return acc


def for_range_start_stop_step(x):
    acc = x[0] * 0
    for i in range(2, 11, 4):
        acc = acc + x[i] * i
    return acc


def for_range_negative_step(x):
    acc = x[0] * 0
    for i in range(10, 0, -3):
        acc = acc * 2 + x[i]
    return acc


def for_range_down_to_zero(x):
    out = x * 0
    for i in range(5, -1, -1):
        out = out.at[i].set(x[5 - i])
    return out


def for_range_one_trip(x):
    for i in range(3, 4):
        x = x + i
    return x


def for_range_static_argument(x, n):
    for i in range(n):
        x = x * 0.5 + i
    return x


def for_range_len_of_array(x):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i] * x[i]
    return total


def for_range_target_used_after(x):
    for i in range(4):
        x = x + i
    return x, i


def for_range_target_preassigned_used_after(x):
    i = 0
    for i in range(3):
        x = x * 2
    return x, i


def for_range_index_times_value(x):
    acc = jnp.zeros((), jnp.float32)
    for i in range(x.shape[0]):
        acc = acc + i * x[i]
    return acc


def for_range_tuple_carry(x):
    a, b = 0.0, 1.0
    for i in range(5):
        a, b = b, a + b * x[i]
    return a, b


def for_range_counts_with_bool(x):
    count = 0
    for i in range(x.shape[0]):
        count = count + (x[i] > 0)
    return count


def for_range_nested(x):
    acc = 0.0
    for i in range(3):
        for j in range(4):
            acc = acc + x[i, j] * (i + j)
    return acc


def for_range_with_if_else(x):
    acc = 0.0
    for i in range(6):
        if x[i] > 0:
            acc = acc + x[i]
        else:
            acc = acc - 1
    return acc


def for_range_with_while_inside(x):
    for i in range(3):
        while x[i] < 10:
            x = x.at[i].set(x[i] * 2)
    return x


def for_range_body_local_temporary(x):
    for i in range(4):
        t = jnp.sin(x) * i
        x = x + t
    return x


def for_range_updates_array_in_place(x):
    for i in range(1, x.shape[0]):
        x = x.at[i].add(x[i - 1])
    return x


def for_range_carries_dict(x):
    state = {"sum": 0.0, "max": -jnp.inf}
    for i in range(4):
        state = {"sum": state["sum"] + x[i], "max": jnp.maximum(state["max"], x[i])}
    return state


def for_range_if_on_index(x):
    acc = 0.0
    for i in range(6):
        if i % 3 == 0:
            acc = acc + x[i]
        else:
            acc = acc - x[i]
    return acc


def for_range_if_on_index_and_value(x):
    acc = 0.0
    for i in range(6):
        if i % 2 == 0 and x[i] > 0:
            acc = acc + x[i]
    return acc


def for_range_if_on_static_flag(x, flag):
    for i in range(3):
        if flag:
            x = x + i
        else:
            x = x - i
    return x


def for_range_reverse_from_shape(x):
    acc = jnp.zeros((), x.dtype)
    for i in range(x.shape[0] - 1, -1, -1):
        acc = acc * 2 + x[i]
    return acc


def for_range_inner_bound_is_outer_index(x):
    acc = 0.0
    for i in range(4):
        for j in range(i):
            acc = acc + x[i] * x[j]
    return acc


def for_range_if_while_three_levels(x):
    total = 0.0
    for i in range(3):
        if x[i] > 0:
            j = 0
            while j < 2:
                total = total + x[i] * j
                j += 1
        else:
            total = total - 1
    return total


def while_with_for_inside(x):
    while x.sum() < 30:
        for i in range(3):
            x = x.at[i].add(1.0)
    return x


SCAN_CASES = [
    case(for_range_accumulates_from_int_zero, (X12,), prims=SCAN),
    case(for_range_start_stop_step, (X12,), prims=SCAN),
    case(for_range_negative_step, (X12,), prims=SCAN),
    case(for_range_down_to_zero, (f32(1, 2, 3, 4, 5, 6),), prims=SCAN),
    case(for_range_one_trip, (f32(1.0, 2.0),), prims=SCAN),
    case(for_range_static_argument, (f32(1.0, 2.0), 1), (f32(1.0, 2.0), 7), prims=SCAN),
    case(for_range_len_of_array, (f32(1.0, -2.0, 3.0),), (f32(4.0),), prims=SCAN),
    case(for_range_target_used_after, (f32(1.0, 2.0),), prims=SCAN),
    case(for_range_target_preassigned_used_after, (f32(1.0, 2.0),), prims=SCAN),
    case(for_range_index_times_value, (f32(1.0, 2.0, 3.0, 4.0),), prims=SCAN),
    case(for_range_tuple_carry, (f32(1.0, 0.5, -1.0, 2.0, 0.25),), prims=SCAN),
    case(for_range_counts_with_bool, (f32(1.0, -2.0, 3.0, 0.0),), prims=SCAN),
    case(for_range_nested, (jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4),), prims=SCAN),
    case(for_range_with_if_else, (f32(1.0, -2.0, 3.0, -4.0, 5.0, 0.0),), prims={"scan", "cond"}),
    case(for_range_with_while_inside, (f32(1.0, 20.0, 3.0),), prims={"scan", "while"}),
    case(for_range_body_local_temporary, (f32(0.1, 0.2),), prims=SCAN),
    case(for_range_updates_array_in_place, (f32(1.0, 2.0, 3.0, 4.0),), prims=SCAN),
    case(for_range_carries_dict, (f32(3.0, -1.0, 7.0, 2.0),), prims=SCAN),
    case(for_range_if_on_index, (jnp.arange(6.0, dtype=jnp.float32),), prims={"scan", "cond"}),
    case(for_range_if_on_index_and_value, (jnp.arange(6.0, dtype=jnp.float32) - 2,),
         prims={"scan", "cond"}),
    case(for_range_if_on_static_flag, (f32(1.0, 2.0), True), (f32(1.0, 2.0), False), prims=SCAN),
    case(for_range_reverse_from_shape, (f32(1.0, 0.0, 1.0, 1.0),), (f32(3.0),), prims=SCAN),
    # docs/semantics.md: an index used as a `range` bound keeps the outer loop Python
    # (unrolled); each inner loop then has static bounds and is a scan.
    case(for_range_inner_bound_is_outer_index, (f32(1.0, 2.0, 3.0, 4.0),), prims=SCAN),
    # The inner `while j < 2` counts with a Python int to a static limit: Python (unrolled).
    case(for_range_if_while_three_levels, (f32(1.0, -2.0, 3.0),), (f32(-1.0, -1.0, -1.0),),
         prims={"scan", "cond"}),
    case(while_with_for_inside, (f32(10.0, 10.0, 11.0),), (f32(9.0, 10.0, 10.0),),
         (f32(1.0, 2.0, 3.0),), prims={"while", "scan"}),
]


# -- zero-trip static ranges: values only (an empty scan or no loop are both fine) -----

def for_range_zero(x):
    for i in range(0):
        x = x + 1
    return x


def for_range_empty_start_after_stop(x):
    acc = x * 0
    for i in range(5, 2):
        acc = acc + x * i
    return acc


def for_range_empty_wrong_sign_step(x):
    for i in range(0, 10, -1):
        x = x - i
    return x


ZERO_TRIP_CASES = [
    case(for_range_zero, (f32(1.0, 2.0),)),
    case(for_range_empty_start_after_stop, (f32(1.0, 2.0),)),
    case(for_range_empty_wrong_sign_step, (f32(1.0, 2.0),)),
    case(for_range_static_argument, (f32(1.0, 2.0), 0)),
]


# -- traced bounds: while --------------------------------------------------------------

def for_range_traced_stop(x, n):
    for i in range(n):
        x = x + i
    return x


def for_range_traced_start_and_stop(x, a, b):
    acc = x * 0
    for i in range(a, b):
        acc = acc + x * i
    return acc


def for_range_traced_stop_step_two(x, n):
    acc = 0.0
    for i in range(0, n, 2):
        acc = acc + x[i]
    return acc


def for_range_traced_start_negative_step(x, n):
    acc = x[0] * 0
    for i in range(n, 0, -1):
        acc = acc * 10 + x[i]
    return acc


def for_range_traced_target_after(x, n):
    for i in range(n):
        x = x * 2
    return x, i


def for_range_traced_target_preassigned(x, n):
    i = 0
    for i in range(n):
        x = x * 2
    return x, i


def for_range_traced_with_if(x, n):
    acc = 0.0
    for i in range(n):
        if x[i] > 0:
            acc = acc + x[i]
    return acc


WHILE_CASES = [
    case(for_range_traced_stop, (f32(1.0, 2.0), i32(0)), (f32(1.0, 2.0), i32(1)),
         (f32(1.0, 2.0), i32(6)), prims=WHILE),
    case(for_range_traced_start_and_stop, (f32(1.0), i32(3), i32(3)), (f32(1.0), i32(3), i32(4)),
         (f32(1.0), i32(-2), i32(5)), (f32(1.0), i32(5), i32(2)), prims=WHILE),
    case(for_range_traced_stop_step_two, (X12, i32(0)), (X12, i32(1)), (X12, i32(9)), prims=WHILE),
    case(for_range_traced_start_negative_step, (X12, i32(0)), (X12, i32(1)), (X12, i32(5)),
         prims=WHILE),
    case(for_range_traced_target_preassigned, (f32(1.0), i32(0)), (f32(1.0), i32(1)),
         (f32(1.0), i32(4)), prims=WHILE),
    case(for_range_traced_with_if, (f32(1.0, -2.0, 3.0, -4.0), i32(0)),
         (f32(1.0, -2.0, 3.0, -4.0), i32(1)), (f32(1.0, -2.0, 3.0, -4.0), i32(4)),
         prims={"while", "cond"}),
]


# -- iterating over an array: scan over the leading axis -------------------------------

def for_over_rows(x):
    acc = jnp.zeros(x.shape[1], x.dtype)
    for row in x:
        acc = acc + row * row
    return acc


def for_over_vector_elements(x):
    total = 0.0
    biggest = -jnp.inf
    for v in x:
        total = total + v
        biggest = jnp.maximum(biggest, v)
    return total, biggest


def for_over_rows_with_if(x):
    acc = jnp.zeros(x.shape[1], x.dtype)
    for row in x:
        if row.sum() > 0:
            acc = acc + row
        else:
            acc = acc - 1
    return acc


def for_over_rows_target_after(x):
    acc = 0.0
    for row in x:
        acc = acc + row.max()
    return acc, row


def for_over_rows_target_preassigned(x):
    row = x[0] * 0
    for row in x:
        x = x + 1
    return row


def for_range_appends_then_stacks(x):
    outs = []
    for i in range(4):
        outs.append(x[i] * 2)
    return jnp.stack(outs), outs[-1], len(outs)


def for_over_rows_appends_in_both_branches(x):
    outs = []
    for row in x:
        if row.sum() > 0:
            outs.append(row)
        else:
            outs.append(-row)
    return jnp.stack(outs)


def for_over_rows_unpacks_each_row(x):
    acc = 0.0
    for a, b in x:
        acc = acc + a * b
    return acc


def for_over_rows_python_counter(x):
    n = 0
    for row in x:
        n += 1
    return n, x


def for_over_rows_counts_positive(x):
    n = 0
    for row in x:
        if row.sum() > 0:
            n += 1
    return n


def for_over_rows_static_len_test(x):
    acc = 0.0
    for row in x:
        if len(row) > 2:
            acc = acc + row.sum()
        else:
            acc = acc - row.sum()
    return acc


ARRAY_CASES = [
    case(for_over_rows_unpacks_each_row, (jnp.ones((1, 2), jnp.float32),),
         (jnp.arange(6.0, dtype=jnp.float32).reshape(3, 2),), prims=SCAN),
    case(for_over_rows_python_counter, (ROWS,), prims=SCAN),
    case(for_over_rows_counts_positive, (ROWS,), (-ROWS[:1],), prims={"scan", "cond"}),
    case(for_over_rows_static_len_test, (ROWS,), (ROWS[:, :2],), prims=SCAN),
    case(for_range_appends_then_stacks, (f32(1.0, -2.0, 3.0, 4.0),), prims=SCAN),
    case(for_over_rows_appends_in_both_branches, (ROWS,), prims={"scan", "cond"}),
    case(for_over_rows, (ROWS,), (ROWS[:1],), prims=SCAN),
    case(for_over_vector_elements, (f32(3.0, -1.0, 7.0),), (f32(2.0),), prims=SCAN),
    case(for_over_rows_with_if, (ROWS,), prims={"scan", "cond"}),
    case(for_over_rows_target_after, (ROWS,), (ROWS[:1],), prims=SCAN),
    case(for_over_rows_target_preassigned, (ROWS,), (ROWS[:1],), prims=SCAN),
]


def for_over_empty_array(x):
    acc = jnp.zeros(x.shape[1:], x.dtype)
    for row in x:
        acc = acc + row
    return acc


ZERO_TRIP_CASES.append(case(for_over_empty_array, (jnp.zeros((0, 3), jnp.float32),)))


# -- static loops that stay Python -----------------------------------------------------

def for_static_touches_no_traced_value(x):
    s = 0
    for i in range(4):
        s = s + i
    return x * s


def for_over_python_list(x):
    for w in [1.0, 2.0, 3.0]:
        x = x * w
    return x


def for_builds_python_list(x):
    scales = []
    for k in range(3):
        scales.append(k * 2)
    return x * scales[-1], len(scales)


# DESIGN §5: a static loop whose body needs Python semantics stays Python (unrolled).

def for_index_as_slice_bound(x):
    acc = 0.0
    for i in range(1, 4):
        acc = acc + x[:i].sum()
    return acc


def for_index_as_shape(x):
    acc = 0.0
    for i in range(3):
        acc = acc + jnp.ones((i + 1,), x.dtype).sum() * x[i]
    return acc


def for_index_into_python_list(x):
    weights = [1.0, 2.0, 3.0]
    acc = 0.0
    for i in range(3):
        acc = acc + x[i] * weights[i]
    return acc


def for_shape_grows_each_iteration(x):
    for i in range(3):
        x = jnp.concatenate([x, x[:1]])
    return x


def for_carries_python_string(x):
    tag = ""
    for i in range(3):
        tag = tag + "a"
        x = x * 2
    return x, len(tag)


def for_stores_into_python_dict(x):
    d = {}
    for i in range(3):
        d[i] = x[i] * 2
    return d[0] + d[2]


STATIC_CASES = [
    case(for_static_touches_no_traced_value, (f32(1.0, 2.0),), prims=STATIC),
    case(for_over_python_list, (f32(1.0, 2.0),), prims=STATIC),
    case(for_builds_python_list, (f32(1.0, 2.0),), prims=STATIC),
    case(for_index_as_slice_bound, (f32(1.0, 2.0, 3.0, 4.0),), prims=STATIC),
    case(for_index_as_shape, (f32(1.0, 2.0, 3.0),), prims=STATIC),
    case(for_shape_grows_each_iteration, (f32(1.0, 2.0),), prims=STATIC),
    case(for_carries_python_string, (f32(1.0, 2.0),), prims=STATIC),
    case(for_stores_into_python_dict, (f32(1.0, 2.0, 3.0),), prims=STATIC),
]
# A Python list of numbers indexed by the scan's index: its items as one array, indexed
# (runtime/numbers.py `item`), not an unrolled loop.
SCAN_CASES.append(case(for_index_into_python_list, (f32(1.0, 2.0, 3.0),), prims=SCAN))


@pytest.mark.parametrize(CASE_FIELDS, SCAN_CASES)
def test_static_range_becomes_scan(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, ZERO_TRIP_CASES)
def test_zero_trip_loop(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, WHILE_CASES)
def test_traced_range_becomes_while(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, ARRAY_CASES)
def test_loop_over_array_becomes_scan(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, STATIC_CASES)
def test_static_loop_stays_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_traced_range_target_used_after_is_unbound_when_the_loop_runs_zero_times():
    """Python leaves `i` unbound when a traced-length loop runs zero times: UnboundLocalError
    at run time, at the loop's line; otherwise the last index."""
    f = laxify.to_static(for_range_traced_target_after)
    x, i = f(f32(1.0), i32(3))
    assert float(x[0]) == 8.0 and int(i) == 2
    with pytest.raises(UnboundLocalError, match="^cannot access local variable 'i' where it is not") as info:
        f(f32(1.0), i32(0))
    with pytest.raises(UnboundLocalError):
        for_range_traced_target_after(f32(1.0), 0)
    assert info.value.__traceback__.tb_next is not None
    last = info.value.__traceback__
    while last.tb_next is not None:
        last = last.tb_next
    assert last.tb_frame.f_code.co_filename == __file__


def test_float_accumulator_from_int_zero_is_float32():
    x = f32(0.5, 1.5, 2.5, 3.5, 4.5)
    out = jaxpr_of(for_range_accumulates_from_int_zero, x).out_avals[0]
    assert out.dtype == jnp.float32 and out.shape == ()


# -- no unrolling: program size independent of the trip count --------------------------

def for_range_many_trips(x, n):
    acc = jnp.zeros_like(x)
    for i in range(n):
        acc = acc + jnp.sin(x + i) * 0.5
    return acc


def for_array_many_rows(xs):
    acc = jnp.zeros(xs.shape[1], xs.dtype)
    for row in xs:
        acc = jnp.tanh(acc + row)
    return acc


def test_static_range_does_not_unroll():
    x = f32(0.1, 0.2)
    small, large = (jaxpr_of(for_range_many_trips, x, n) for n in (10, 1000))
    assert eqn_count(small) == eqn_count(large)
    check(for_range_many_trips, (x, 1000), expect_prims=SCAN, rtol=1e-4, atol=1e-4)


def test_array_loop_does_not_unroll():
    small = jnp.ones((10, 2), jnp.float32)
    large = jnp.ones((1000, 2), jnp.float32)
    assert eqn_count(jaxpr_of(for_array_many_rows, small)) == eqn_count(
        jaxpr_of(for_array_many_rows, large))
    rows = jnp.asarray(np.linspace(-1.0, 1.0, 2000, dtype=np.float32).reshape(1000, 2))
    check(for_array_many_rows, (rows,), expect_prims=SCAN, rtol=1e-4, atol=1e-5)


def for_range_index_reads_with_a_step(x, n):
    acc = jnp.zeros((), x.dtype)
    for i in range(3, n, 2):
        acc = acc * 0.5 + x[i] * i
    return acc


def test_static_range_index_is_carried_not_scanned_over():
    # The index is one carried int32 (as lax.fori_loop carries it), not a scan over an array
    # of n indices: no iota, no buffer of n ints in the compiled program.
    x = jnp.asarray(np.linspace(-1.0, 1.0, 4000, dtype=np.float32))
    jaxpr = jaxpr_of(for_range_index_reads_with_a_step, x, 4000)
    scans = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 1
    scan = scans[0]
    assert scanned_operands(scan) == 0  # no xs
    assert not any(e.primitive.name == "iota" for e in jaxpr.jaxpr.eqns)
    f = laxify.to_static(for_range_index_reads_with_a_step, static_argnums=1)
    temp = f.lower(x, 4000).compile().memory_analysis().temp_size_in_bytes
    assert temp < 4000, temp  # 2000 int32 indices alone would take 8000 bytes
    check(for_range_index_reads_with_a_step, (x, 4000), expect_prims=SCAN, rtol=1e-4, atol=1e-4)
    check(for_range_index_reads_with_a_step, (x, 4), expect_prims=SCAN)
    check(for_range_index_reads_with_a_step, (x, 3), expect_prims=STATIC)


# -- reversed(range(...)) of traced bounds --------------------------------------------------


def reversed_count(n):
    t = 0
    for i in reversed(range(n)):
        t = t * 2 + i
    return t


def reversed_stepped(x, a, b, s):
    acc = x
    for i in reversed(range(a, b, s)):
        acc = acc * 0.5 + i
    return acc


def reversed_index_after(n):
    i = -7
    for i in reversed(range(1, n)):
        pass
    return i  # (Python keeps the last index the loop took)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (reversed_count, [(jnp.int32(n),) for n in (0, 1, 5, -2)]),
        (
            reversed_stepped,
            [
                (jnp.float32(1.0), jnp.int32(a), jnp.int32(b), jnp.int32(s))
                for a, b, s in ((0, 10, 3), (10, 0, -3), (5, 5, 1), (2, 9, 2), (9, 2, -1), (3, 0, 2))
            ],
        ),
        (reversed_index_after, [(jnp.int32(n),) for n in (0, 1, 4)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_reversed_range_of_traced_bounds_is_one_loop(fn, inputs):
    check(fn, *inputs, expect_prims={"while"})


def test_reversed_range_with_a_zero_step_raises_pythons_error():
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
        laxify.to_static(reversed_stepped)(jnp.float32(1.0), jnp.int32(0), jnp.int32(5), jnp.int32(0))
