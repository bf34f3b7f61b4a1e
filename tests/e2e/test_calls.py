"""Names from outside the function inside converted control flow: globals, closures, nested
functions, lambdas, and calls to other user functions (DESIGN §5: converted recursively)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from harness import CASE_FIELDS, case, check

COND = {"cond"}

SCALE = jnp.float32(3.0)
OFFSETS = (1.0, 2.0, 3.0)


def f32(*values):
    return jnp.array(values, jnp.float32)


POS = f32(1.0, 2.0, 3.0)
NEG = f32(-1.0, -2.0, -3.0)


def reads_global_array_in_branch(x):
    if x.sum() > 0:
        y = x * SCALE
    else:
        y = x
    return y


def reads_global_tuple_in_static_loop(x):
    for offset in OFFSETS:
        if x.sum() > 5:
            x = x - offset
    return x


def make_closure(c):
    def reads_closure_in_branch(x):
        if x.sum() > 0:
            y = x * c
        else:
            y = x - c
        return y
    return reads_closure_in_branch


def nested_def_called_in_branch(x):
    def square(v):
        return v * v
    if x.sum() > 0:
        y = square(x)
    else:
        y = x
    return y


def lambda_called_in_loop(x):
    step = lambda v: v * 0.5 + 1
    for i in range(3):
        x = step(x)
    return x


def plain_helper(v):
    return jnp.tanh(v) * 2


def calls_plain_helper_in_branch(x):
    if x.sum() > 0:
        y = plain_helper(x)
    else:
        y = plain_helper(-x)
    return y


def helper_with_traced_if(v):
    if v.sum() > 0:
        v = v * 2
    return v


def calls_helper_with_traced_if(x):
    return helper_with_traced_if(x) + 1


def helper_with_traced_while(v):
    while v.sum() < 10:
        v = v * 2
    return v


def calls_helper_with_traced_while_in_loop(x):
    for i in range(2):
        x = helper_with_traced_while(x) / 4
    return x


CASES = [
    case(reads_global_array_in_branch, (POS,), (NEG,), prims=COND),
    case(reads_global_tuple_in_static_loop, (f32(4.0, 4.0),), (f32(1.0, 1.0),), prims=COND),
    case(make_closure(jnp.float32(2.0)), (POS,), (NEG,), prims=COND),
    case(nested_def_called_in_branch, (POS,), (NEG,), prims=COND),
    case(lambda_called_in_loop, (POS,), prims={"scan"}),
    case(calls_plain_helper_in_branch, (POS,), (NEG,), prims=COND),
    case(calls_helper_with_traced_if, (POS,), (NEG,), prims=COND),
    case(calls_helper_with_traced_while_in_loop, (f32(1.0, 2.0),), (f32(20.0),),
         prims={"scan", "while"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_outside_names_and_calls(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)
