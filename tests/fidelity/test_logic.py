"""`and` / `or` / `not`, conditional expressions and conditions of `if`/`while` with Python
semantics: `and`/`or` return an operand (not a boolean) unless the operands are booleans,
Python operands (None, numbers, bools) short-circuit where they decide the result, and a
size-1 array is a truth value as in NumPy and JAX.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from harness import CASE_FIELDS, case, check


def f32(*values):
    return jnp.array(values, jnp.float32)


def s32(value):
    return jnp.float32(value)


XS = f32(1.0, 2.0, 3.0)
ONE = f32(1.0)



# -- and / or return an operand ------------------------------------------------------------

def or_with_python_default(x):
    return x or 5.0


def and_of_two_floats(x, y):
    return x and y


def or_of_two_floats(x, y):
    return x or y


def and_or_chain(x, y, z):
    return x and y or z


def or_result_used_in_arithmetic(x, y):
    z = x or y
    return z * 2


def and_of_comparisons_is_boolean(x, y):
    return (x > 0) and (y > 0)


def or_of_comparisons_is_boolean(x, y):
    return (x > 0) or (y > 1)


def not_of_float(x):
    return not x


def or_in_traced_if_condition(x, y):
    if x or y:
        return x + y
    return x - y


CASES = [
    case(or_with_python_default, (s32(0.0),), (s32(2.0),)),
    case(and_of_two_floats, (s32(2.0), s32(3.0)), (s32(0.0), s32(3.0))),
    case(or_of_two_floats, (s32(0.0), s32(3.0)), (s32(2.0), s32(3.0))),
    case(and_or_chain, (s32(2.0), s32(0.0), s32(7.0)), (s32(2.0), s32(3.0), s32(7.0))),
    case(or_result_used_in_arithmetic, (s32(0.0), s32(4.0)), (s32(1.5), s32(4.0))),
    case(and_of_comparisons_is_boolean, (s32(1.0), s32(2.0)), (s32(1.0), s32(-2.0))),
    case(or_of_comparisons_is_boolean, (s32(-1.0), s32(2.0)), (s32(-1.0), s32(0.0))),
    case(not_of_float, (s32(0.0),), (s32(2.0),)),
    case(or_in_traced_if_condition, (s32(0.0), s32(0.0)), (s32(0.0), s32(2.0)), prims={"cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_and_or_value_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- Python operands next to traced ones ----------------------------------------------------

def and_with_python_flag(x, y):
    if x.sum() > 0 and y:
        return x + 1
    return x - 1


def or_none_check_then_compare(x, a):
    if x > 1 or a is None or a > 1:
        return x + 1
    return x - 1


def and_with_none_operand(x, y):
    if x.sum() > 0 and y:
        return x + 1
    return x - 1


def or_none_check_with_number(x, a):
    if x > 1 or a is None or a > 1:
        return x + 1
    return x - 1


def python_operand_first_or(x, a):
    return a or x


def python_operand_first_and(x):
    return 0 and x


def python_flag_first_guards_traced(x, flag):
    if flag and x.sum() > 0:
        return x * 2
    return x


def none_guard_in_while(x, limit):
    while limit is not None and x.sum() < limit:
        x = x * 2
    return x


def chained_comparison_with_python_bound(x, hi):
    if 0 < x.sum() < hi:
        return x + 1
    return x - 1


def ifexp_with_python_condition(x, flag):
    return x * 2 if flag else x - 1


PY_CASES = [
    case(and_with_none_operand, (XS, None), (-XS, None)),
    case(and_with_python_flag, (XS, True), (XS, False), (-XS, True), (XS, 0), (XS, 3)),
    case(or_none_check_then_compare, (s32(0.0), None), (s32(2.0), None)),
    case(or_none_check_with_number, (s32(0.0), 2), (s32(0.0), 0), (s32(2.0), 0), prims={"cond"}),
    case(python_operand_first_or, (s32(1.0), 0), (s32(1.0), 2), prims=()),
    case(python_operand_first_and, (s32(1.0),), prims=()),
    case(python_flag_first_guards_traced, (XS, False), (XS, None), (-XS, True), (XS, True)),
    case(none_guard_in_while, (XS, None), (XS, 50.0), (XS, 2.0)),
    case(chained_comparison_with_python_bound, (XS, 10), (XS, 3), (-XS, 10), prims={"cond"}),
    case(ifexp_with_python_condition, (XS, True), (XS, False), prims=()),
]


@pytest.mark.parametrize(CASE_FIELDS, PY_CASES)
def test_python_operands_short_circuit_as_in_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- a size-1 array is a truth value -------------------------------------------------------

def size1_if(x):
    if x > 0:
        return x + 1
    return x - 1


def size1_while(x):
    while x < 10:
        x = x * 2
    return x


def size1_and(x, y):
    if x > 0 and y > 0:
        return x + y
    return x - y


def size1_or_value(x, y):
    if (x > 5) or (y > 5):
        return x * y
    return x + y


def size1_not(x):
    if not x > 0:
        return x + 1
    return x - 1


def size1_conditional_expression(x):
    return x + 1 if x > 0 else x - 1


def size1_elif(x):
    if x > 5:
        y = x * 3
    elif x > 0:
        y = x * 2
    else:
        y = -x
    return y


def size1_break_condition(x):
    for i in range(10):
        x = x + 1
        if x > 4:
            break
    return x


def size2d_1x1_if(m):
    if m > 0:
        return m * 2
    return m


SIZE1_CASES = [
    case(size1_if, (ONE,), (-ONE,), prims={"cond"}),
    case(size1_while, (ONE,), (f32(20.0),), prims={"while"}),
    case(size1_and, (ONE, ONE), (ONE, -ONE), prims={"cond"}),
    case(size1_or_value, (ONE, f32(6.0)), (ONE, ONE), prims={"cond"}),
    case(size1_not, (ONE,), (-ONE,), prims={"cond"}),
    case(size1_conditional_expression, (ONE,), (-ONE,)),
    case(size1_elif, (f32(7.0),), (ONE,), (-ONE,), prims={"cond"}),
    case(size1_break_condition, (ONE,), (f32(9.0),)),
    case(size2d_1x1_if, (jnp.ones((1, 1), jnp.float32),), (-jnp.ones((1, 1), jnp.float32),),
         prims={"cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, SIZE1_CASES)
def test_size1_array_is_a_truth_value(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)
