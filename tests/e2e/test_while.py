"""`while` end to end: a traced condition becomes `while`, a static one stays a Python loop.

Every loop runs on inputs that make it take zero, one and many trips.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from harness import CASE_FIELDS, case, check

WHILE = {"while"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


def i32(value):
    return jnp.int32(value)


# -- traced conditions -----------------------------------------------------------------

def while_doubles_until_large(x):
    while x.sum() < 100:
        x = x * 2
    return x


def while_python_counter_traced_bound(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x, i


def while_counts_halvings(x):
    steps = 0
    while x.sum() > 1:
        x = x / 2
        steps = steps + 1
    return steps, x


def while_nested_triangle(x, n):
    i = 0
    total = x * 0
    while i < n:
        j = 0
        while j < i:
            total = total + x
            j += 1
        i += 1
    return total


def while_collatz_if_inside(k):
    steps = 0
    while k > 1:
        if k % 2 == 0:
            k = k // 2
        else:
            k = 3 * k + 1
        steps += 1
    return k, steps


def while_if_elif_inside(x, n):
    i = 0
    a = x * 0
    while i < n:
        if i % 3 == 0:
            a = a + x
        elif i % 3 == 1:
            a = a * 2
        else:
            a = a - 1
        i += 1
    return a


def while_fibonacci_tuple_unpacking(limit):
    a, b = 0, 1
    while b < limit:
        a, b = b, a + b
    return a, b


def while_newton_sqrt(x):
    y = x
    while jnp.abs(y * y - x) > 1e-4:
        y = 0.5 * (y + x / y)
    return y


def while_body_local_temporary(x, n):
    i = 0
    while i < n:
        t = x * 2
        x = t - 1
        i += 1
    return x


def while_on_element_of_carry(x):
    while x[0] < x[1]:
        x = x.at[0].add(3.0)
    return x


def while_inside_traced_if(x):
    if x.sum() > 0:
        while x.sum() < 10:
            x = x + 1
    else:
        x = -x
    return x


def while_two_loops_in_sequence(x):
    while x.sum() < 10:
        x = x + 1
    while x.max() > 20:
        x = x - 5
    return x


def while_carries_dict(x, n):
    state = {"v": x, "k": jnp.int32(0)}
    while state["k"] < n:
        state = {"v": state["v"] * 2, "k": state["k"] + 1}
    return state


def while_accumulates_float_from_zero(x, n):
    acc = 0.0
    i = 0
    while i < n:
        acc = acc + x[i]
        i += 1
    return acc


def while_traced_counter_static_limit(x):
    i = jnp.int32(0)
    while i < 4:
        x = x + 1
        i = i + 1
    return x, i


def while_python_flag_set_by_traced_value(x):
    done = False
    while not done:
        x = x * 2
        done = x.sum() > 100
    return x


def while_int_accumulator_widened_to_float(x, n):
    acc = 0
    i = 0
    while i < n:
        acc = acc + x[i]
        i += 1
    return acc


def while_traced_index_until_threshold(x):
    i = 0
    s = 0.0
    while s < 5:
        s = s + x[i]
        i = i + 1
    return i, s


TRACED_CASES = [
    case(while_doubles_until_large, (f32(60.0, 50.0),), (f32(30.0, 30.0),), (f32(1.0, 2.0),),
         prims=WHILE),
    case(while_python_counter_traced_bound, (f32(1.0, 2.0), i32(0)), (f32(1.0, 2.0), i32(1)),
         (f32(1.0, 2.0), i32(5)), prims=WHILE),
    case(while_counts_halvings, (f32(0.5),), (f32(1.5),), (f32(100.0),), prims=WHILE),
    case(while_nested_triangle, (f32(1.0, 2.0), i32(0)), (f32(1.0, 2.0), i32(1)),
         (f32(1.0, 2.0), i32(4)), prims=WHILE),
    case(while_collatz_if_inside, (i32(1),), (i32(2),), (i32(6),), (i32(27),),
         prims={"while", "cond"}),
    case(while_if_elif_inside, (f32(1.0, 2.0), i32(0)), (f32(1.0, 2.0), i32(1)),
         (f32(1.0, 2.0), i32(7)), prims={"while", "cond"}),
    case(while_fibonacci_tuple_unpacking, (i32(1),), (i32(2),), (i32(100),), prims=WHILE),
    case(while_newton_sqrt, (jnp.float32(1.0),), (jnp.float32(4.0),), (jnp.float32(10.0),),
         prims=WHILE),
    case(while_body_local_temporary, (f32(1.0), i32(0)), (f32(1.0), i32(1)), (f32(1.0), i32(3)),
         prims=WHILE),
    case(while_on_element_of_carry, (f32(5.0, 1.0),), (f32(0.0, 2.0),), (f32(0.0, 10.0),),
         prims=WHILE),
    case(while_inside_traced_if, (f32(20.0),), (f32(9.5),), (f32(1.0, 2.0),), (f32(-1.0, -2.0),),
         prims={"cond", "while"}),
    case(while_two_loops_in_sequence, (f32(15.0),), (f32(5.0, 4.0),), (f32(40.0),),
         prims=WHILE),
    case(while_carries_dict, (f32(1.0, 3.0), i32(0)), (f32(1.0, 3.0), i32(1)),
         (f32(1.0, 3.0), i32(4)), prims=WHILE),
    case(while_accumulates_float_from_zero, (f32(1.5, 2.5, 3.5), i32(0)),
         (f32(1.5, 2.5, 3.5), i32(1)), (f32(1.5, 2.5, 3.5), i32(3)), prims=WHILE),
    case(while_python_flag_set_by_traced_value, (f32(60.0),), (f32(1.0, 2.0),), prims=WHILE),
    # Zero trips differ by design: eager keeps the int 0, the loop carry is widened to float32.
    case(while_int_accumulator_widened_to_float, (f32(1.5, 2.5, 3.5), i32(1)),
         (f32(1.5, 2.5, 3.5), i32(3)), prims=WHILE),
    case(while_traced_index_until_threshold, (f32(6.0, 1.0, 1.0),), (f32(1.0, 2.0, 6.0),),
         prims=WHILE),
    # The counter is an array made inside the function: concrete while tracing, so either a
    # `while` or an unrolled loop is a fair program. Only the values are checked.
    case(while_traced_counter_static_limit, (f32(1.0, 2.0),), prims=None),
]


# -- static conditions: a plain Python loop, no `while` in the program -----------------

def while_on_static_count(x, n):
    i = 0
    while i < n:
        x = x * 2
        i += 1
    return x


def while_on_shape_halves_array(x):
    while x.shape[0] > 1:
        x = x.reshape(-1, 2).sum(axis=1)
    return x


def while_static_with_traced_if_inside(x, n):
    i = 0
    while i < n:
        if x.sum() > 0:
            x = x - 1
        else:
            x = x + 2
        i += 1
    return x


STATIC_CASES = [
    case(while_on_static_count, (f32(1.0, 2.0), 0), (f32(1.0, 2.0), 1), (f32(1.0, 2.0), 3),
         prims=STATIC),
    case(while_on_shape_halves_array, (f32(1.0),), (f32(1.0, 2.0),),
         (jnp.arange(8, dtype=jnp.float32),), prims=STATIC),
    case(while_static_with_traced_if_inside, (f32(2.5), 2), (f32(0.5), 1), (f32(1.5), 4),
         prims={"cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, TRACED_CASES)
def test_traced_while_becomes_while_loop(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, STATIC_CASES)
def test_static_while_stays_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)
