"""Closures, nested functions and lambdas read the variables of the converted function as
Python does: at call time (late binding), so a closure called inside a traced loop sees
the value the variable has in that iteration.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from harness import CASE_FIELDS, case, check

XS = jnp.array([1.0, 2.0, 3.0], jnp.float32)


# -- a closure reads a loop variable -------------------------------------------------------

def lambda_reads_while_counter(n):
    i = 0
    get_i = lambda: i  # noqa: E731
    s = 0
    while i < n:
        s = s * 10 + get_i()
        i += 1
    return s


def def_reads_while_counter(n):
    i = 0

    def get_i():
        return i

    s = 0
    while i < n:
        s = s * 10 + get_i()
        i += 1
    return s


def lambda_reads_traced_range_index(n):
    i = 0
    get_i = lambda: i  # noqa: E731
    s = 0
    for i in range(n):
        s = s * 10 + get_i()
    return s


def lambda_reads_static_range_carry(x):
    acc = x
    get = lambda: acc  # noqa: E731
    for _ in range(3):
        acc = acc + get()
    return acc


def lambda_reads_carry_in_traced_while(x):
    get = lambda: x  # noqa: E731
    total = x * 0
    while x.sum() < 20:
        total = total + get()
        x = x * 2
    return total


def nested_def_reads_scanned_element(xs):
    s = 0.0
    for x in xs:
        def get():
            return x
        s = s * 10 + get()
    return s


def nested_def_defined_in_traced_while(x):
    s = x * 0
    while x.sum() < 20:
        def get():
            return x
        s = s + get()
        x = x * 2
    return s


def lambda_reads_name_changed_in_traced_if(x):
    k = 1.0
    scale = lambda v: v * k  # noqa: E731
    if x.sum() > 0:
        k = 2.0
    return scale(x)


def closure_over_value_set_before_loop(x):
    scale = 2.0
    f = lambda v: v * scale  # noqa: E731
    while x.sum() < 20:
        x = f(x)
    return x


def closure_reads_element_in_python_loop(x):
    fns = []
    for w in [1.0, 2.0, 3.0]:
        fns.append(lambda v, w=w: v * w)
    return fns[0](x) + fns[2](x)


# -- late binding of lambdas made in a loop -----------------------------------------------

def lambdas_appended_in_static_loop(x):
    fns = []
    for i in range(3):
        fns.append(lambda: i)
    return x + fns[0]()


def lambdas_appended_then_all_called(x):
    fns = []
    for i in range(4):
        fns.append(lambda: i * 1.0)
    return x * sum(f() for f in fns)


def lambdas_with_default_bind_early(x):
    fns = []
    for i in range(3):
        fns.append(lambda i=i: i)
    return x + fns[0]() + 10 * fns[1]()


N3 = (jnp.int32(3),)

CASES = [
    case(lambda_reads_while_counter, N3, (jnp.int32(0),), prims={"while"}),
    case(def_reads_while_counter, N3, prims={"while"}),
    case(lambda_reads_traced_range_index, N3, (jnp.int32(1),)),
    case(lambda_reads_static_range_carry, (XS,), prims={"scan"}),
    case(lambda_reads_carry_in_traced_while, (XS,), prims={"while"}),
    case(nested_def_reads_scanned_element, (XS,), prims={"scan"}),
    case(nested_def_defined_in_traced_while, (XS,), prims={"while"}),
    case(lambda_reads_name_changed_in_traced_if, (XS,), (-XS,), prims={"cond"}),
    case(closure_over_value_set_before_loop, (XS,), prims={"while"}),
    case(closure_reads_element_in_python_loop, (XS,), prims=()),
    case(lambdas_appended_in_static_loop, (XS,)),
    case(lambdas_appended_then_all_called, (XS,)),
    case(lambdas_with_default_bind_early, (XS,)),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_closure_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)
