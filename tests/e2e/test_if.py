"""`if` / `elif` / `else` end to end: traced predicates become `cond`, static ones stay Python.

Every function runs on inputs that take each of its branches; eager Python is the oracle.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from harness import CASE_FIELDS, case, check, jaxpr_of

COND = {"cond"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


POS = f32(1.0, 2.0, 3.0)
NEG = f32(-1.0, -2.0, -3.0)
MIXED = f32(3.0, -1.0, 0.5)


# -- traced predicates -----------------------------------------------------------------

def if_else_on_sum(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    return y


def if_without_else(x):
    y = x
    if x.sum() > 0:
        y = x + 1
    return y


def if_compares_elements_of_two_args(x, y):
    if x[0] > y[1]:
        z = x - y
    else:
        z = x + y
    return z


def if_elif_else(x):
    s = x.sum()
    if s > 10:
        r = x * 3
    elif s > 0:
        r = x * 2
    else:
        r = x * 0
    return r


def if_elif_chain_without_else(x):
    r = x
    if x[0] > 2:
        r = x + 30
    elif x[0] > 1:
        r = x + 20
    elif x[0] > 0:
        r = x + 10
    return r


def nested_if_both_levels(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            r = x + y
        else:
            r = x - y
    else:
        if y.sum() > 0:
            r = y - x
        else:
            r = -x - y
    return r


def nested_if_in_one_branch(x):
    if x[0] > 0:
        if x[1] > 0:
            r = x * 4
        else:
            r = x * 3
    else:
        r = x
    return r


def if_carries_several_names(x):
    a = x
    b = x * 0
    if x[0] > 0:
        a = a + 1
        b = b + a
    else:
        b = b - 1
    return a, b


def if_branches_only_read_a_name(x, y):
    if x.max() > y.max():
        out = x + y
    else:
        out = y * 2
    return out, y


def if_branch_local_temporaries(x):
    if x.sum() > 0:
        t = x * x
        u = t + 1
        out = u.sum()
    else:
        t2 = jnp.abs(x)
        out = t2.max()
    return out


def if_tuple_unpacking(x):
    if x[0] > 0:
        a, b = x[0], x[1]
    else:
        a, b = x[1], x[0]
    return a - b


def if_swaps_arguments(x, y):
    if x.sum() > y.sum():
        x, y = y, x
    return x, y


def if_augmented_assignment(x):
    acc = x
    if x.mean() > 0:
        acc += 1
        acc *= 2
    else:
        acc -= 3
    return acc


def if_augments_python_int(x):
    n = 0
    if x[0] > 0:
        n += 1
    else:
        n -= 1
    return n


def if_yields_dict(x):
    if x.sum() > 0:
        d = {"s": x.sum(), "m": x.max()}
    else:
        d = {"s": -x.sum(), "m": x.min()}
    return d


def if_on_any(x):
    if jnp.any(x > 2):
        y = jnp.where(x > 2, x, 0.0)
    else:
        y = x + 100
    return y


def if_on_traced_bool_argument(x, flag):
    if flag:
        y = x * 10
    else:
        y = x / 10
    return y


def if_against_traced_threshold(x, t):
    if x.sum() > t:
        y = x - t
    else:
        y = x + t
    return y


def two_ifs_in_sequence(x):
    if x[0] > 0:
        x = x * 2
    else:
        x = x - 1
    if x[1] > 0:
        x = x + 100
    return x


def if_on_value_computed_in_earlier_if(x):
    if x[0] > 0:
        s = x.sum()
    else:
        s = -x.sum()
    if s > 3:
        r = x * s
    else:
        r = x
    return r, s


def if_on_integer_scalar(k):
    if k % 2 == 0:
        r = k // 2
    else:
        r = 3 * k + 1
    return r


def if_with_static_if_inside_traced_branch(x, n):
    if x.sum() > 0:
        if n > 1:
            y = x * n
        else:
            y = x
    else:
        y = -x
    return y


def static_mode_then_traced_if(x, mode):
    if mode == "sum":
        s = x.sum()
    else:
        s = x.max()
    if s > 2:
        s = s * 10
    return s


def static_if_then_traced_elif(x, n):
    if n > 3:
        y = x * n
    elif x.sum() > 0:
        y = x + 1
    else:
        y = x - 1
    return y


def traced_if_then_static_elif(x, n):
    if x.sum() > 0:
        y = x + 1
    elif n > 3:
        y = x * n
    else:
        y = x - 1
    return y


def if_on_zero_dim_array(x):
    if x:
        y = 1.0
    else:
        y = 2.0
    return y


def if_then_returns_python_constant(x):
    if x.sum() > 0:
        x = x + 1
    return x, 3


def if_changes_one_of_three_names(x, y, z):
    if x[0] > 0:
        y = y + 1
    else:
        z = z * 2
    return x, y, z


def if_against_static_float(x, t):
    if x.sum() > t:
        x = x - t
    return x


TRACED_CASES = [
    case(if_else_on_sum, (POS,), (NEG,), prims=COND),
    case(if_without_else, (POS,), (NEG,), prims=COND),
    case(if_compares_elements_of_two_args, (POS, NEG), (NEG, POS), prims=COND),
    case(if_elif_else, (f32(5.0, 6.0),), (f32(1.0, 2.0),), (f32(-1.0, -2.0),), prims=COND),
    case(if_elif_chain_without_else, (f32(3.0, 0.0),), (f32(1.5, 0.0),), (f32(0.5, 0.0),),
         (f32(-1.0, 0.0),), prims=COND),
    case(nested_if_both_levels, (POS, POS), (POS, NEG), (NEG, POS), (NEG, NEG), prims=COND),
    case(nested_if_in_one_branch, (POS,), (f32(1.0, -1.0),), (NEG,), prims=COND),
    case(if_carries_several_names, (POS,), (NEG,), prims=COND),
    case(if_branches_only_read_a_name, (POS, NEG), (NEG, POS), prims=COND),
    case(if_branch_local_temporaries, (POS,), (NEG,), prims=COND),
    case(if_tuple_unpacking, (POS,), (NEG,), prims=COND),
    case(if_swaps_arguments, (POS, NEG), (NEG, POS), prims=COND),
    case(if_augmented_assignment, (POS,), (NEG,), prims=COND),
    case(if_augments_python_int, (POS,), (NEG,), prims=COND),
    case(if_yields_dict, (POS,), (NEG,), prims=COND),
    case(if_on_any, (POS,), (NEG,), prims=COND),
    case(if_on_traced_bool_argument, (POS, jnp.bool_(True)), (POS, jnp.bool_(False)), prims=COND),
    case(if_against_traced_threshold, (POS, jnp.float32(1.0)), (POS, jnp.float32(10.0)), prims=COND),
    case(two_ifs_in_sequence, (POS,), (NEG,), (f32(1.0, -5.0),), (f32(-1.0, 5.0),), prims=COND),
    case(if_on_value_computed_in_earlier_if, (POS,), (NEG,), (f32(1.0, 0.5),), prims=COND),
    case(if_on_integer_scalar, (jnp.int32(6),), (jnp.int32(7),), prims=COND),
    case(if_with_static_if_inside_traced_branch, (POS, 3), (POS, 1), (NEG, 3), prims=COND),
    case(static_mode_then_traced_if, (POS, "sum"), (POS, "max"), (f32(0.5, 0.5), "max"),
         prims=COND),
    # The static test comes first: when it holds, no `cond` is left at all.
    case(static_if_then_traced_elif, (POS, 5), prims=STATIC),
    case(static_if_then_traced_elif, (POS, 1), (NEG, 1), prims=COND),
    case(traced_if_then_static_elif, (POS, 5), (NEG, 5), (NEG, 1), prims=COND),
    case(if_on_zero_dim_array, (jnp.bool_(True),), (jnp.float32(0.0),), (jnp.int32(-2),), prims=COND),
    case(if_then_returns_python_constant, (POS,), (NEG,), prims=COND),
    case(if_changes_one_of_three_names, (POS, NEG, MIXED), (NEG, POS, MIXED), prims=COND),
    case(if_against_static_float, (POS, 2.5), (POS, 20.0), prims=COND),
    case(if_else_on_sum, (np.array([1.0, -4.0], np.float32),), (np.array([2.0], np.float32),),
         prims=COND),
]


# -- static predicates: plain Python, no `cond` in the program -------------------------

def if_on_static_string(x, mode):
    if mode == "a":
        y = x + 1
    elif mode == "b":
        y = x * 2
    else:
        y = x - 1
    return y


def if_on_static_int(x, n):
    if n > 3:
        y = x * n
    else:
        y = x - n
    return y


def if_on_leading_dimension(x):
    if x.shape[0] > 2:
        y = x.sum()
    else:
        y = x.max()
    return y


def if_on_len(x):
    if len(x) > 3:
        y = x[:3]
    else:
        y = jnp.concatenate([x, x])
    return y


def if_on_ndim(x):
    if x.ndim == 2:
        y = x.sum(axis=1)
    else:
        y = x * 1.0
    return y


def if_on_none_argument(x, y):
    if y is None:
        z = x
    else:
        z = x + y
    return z


def if_on_dtype(x):
    if x.dtype == jnp.float32:
        y = x * 0.5
    else:
        y = x // 2
    return y


def if_on_static_bool_and_shape_nested(x, flag):
    if flag:
        if x.shape[0] == 2:
            y = x[::-1]
        else:
            y = x
    else:
        y = -x
    return y


STATIC_CASES = [
    case(if_on_static_string, (POS, "a"), (POS, "b"), (POS, "c"), prims=STATIC),
    case(if_on_static_int, (POS, 5), (POS, 3), prims=STATIC),
    case(if_on_leading_dimension, (POS,), (f32(1.0, 2.0),), prims=STATIC),
    case(if_on_len, (f32(1.0, 2.0, 3.0, 4.0),), (POS,), prims=STATIC),
    case(if_on_ndim, (jnp.ones((2, 3), jnp.float32),), (POS,), prims=STATIC),
    case(if_on_none_argument, (POS, None), (POS, NEG), prims=STATIC),
    case(if_on_dtype, (POS,), (jnp.array([4, 7], jnp.int32),), prims=STATIC),
    case(if_on_static_bool_and_shape_nested, (f32(1.0, 2.0), True), (POS, True), (POS, False),
         prims=STATIC),
]


@pytest.mark.parametrize(CASE_FIELDS, TRACED_CASES)
def test_traced_if_becomes_cond(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, STATIC_CASES)
def test_static_if_stays_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- `elif` chains: one `lax.switch` over the arms still possible ------------------------------

def elif_chain_of_eight(x):
    s = x.sum()
    if s > 30:
        y = x * 7
    elif s > 20:
        y = x * 6
    elif s > 10:
        y = x * 5
    elif s > 5:
        y = x * 4
    elif s > 0:
        y = x * 3
    elif s > -5:
        y = x * 2
    elif s > -10:
        y = x * 1
    else:
        y = x * 0
    return y


def elif_arm_under_a_python_false_condition(x, mode):
    # `mode` is static: with "abs" the third arm is never even traced (its body would fail).
    if mode == "neg":
        y = -x
    elif x.sum() > 0:
        y = x * 2
    elif mode is None:
        y = x.no_such_attribute
    elif x[0] > -2:
        y = x + 1
    else:
        y = x - 1
    return y


def elif_python_true_condition_ends_the_chain(x, flag):
    if x.sum() > 0:
        y = x * 2
    elif flag:
        y = x + 1
    elif x.no_such_attribute > 0:
        y = x
    else:
        y = x - 1
    return y


def elif_chain_with_returns(x):
    s = x.sum()
    if s > 10:
        return x * 3
    elif s > 0:
        x = x + 1
    elif s > -10:
        return -x
    return x * 2


def elif_chain_in_a_scan_appending(xs):
    out = []
    for x in xs:
        if x > 1:
            out.append(x * 3)
        elif x > 0:
            out.append(x * 2)
        elif x > -1:
            out.append(x)
        else:
            out.append(-x)
    return jnp.stack(out)


def elif_chain_in_a_while_with_break(x):
    i = 0
    while i < 10:
        if x[0] > 5:
            break
        elif x[1] > 0:
            x = x + 2
        elif x[1] > -5:
            x = x.at[1].add(3.0)
        else:
            x = x * 0.5
        i += 1
    return x, i


def elif_chain_on_integer_conditions(n):
    if n % 3:
        y = n * 10
    elif n % 5:
        y = n * 100
    else:
        y = -n
    return y


ELIF_CASES = [
    case(elif_chain_of_eight, *[(f32(s, 0.0),) for s in (40, 25, 15, 7, 2, -3, -7, -20)], prims=COND),
    case(elif_arm_under_a_python_false_condition, (POS, "abs"), (NEG, "abs"), (f32(-1.0, 0.5), "abs"),
         prims=COND),
    case(elif_arm_under_a_python_false_condition, (POS, "neg"), prims=STATIC),
    case(elif_python_true_condition_ends_the_chain, (POS, True), (NEG, True), prims=COND),
    case(elif_chain_with_returns, (f32(6.0, 6.0),), (f32(1.0, 1.0),), (f32(-1.0, -1.0),),
         (f32(-9.0, -9.0),), prims=COND),
    case(elif_chain_in_a_scan_appending, (f32(2.0, 0.5, -0.5, -3.0),), prims={"cond", "scan"}),
    case(elif_chain_in_a_while_with_break, (f32(1.0, 1.0),), (f32(0.0, -3.0),), (f32(0.0, -9.0),),
         (f32(9.0, 0.0),), prims={"cond", "while"}),
    case(elif_chain_on_integer_conditions, (jnp.int32(7),), (jnp.int32(9),), (jnp.int32(15),),
         prims=COND),
]


@pytest.mark.parametrize(CASE_FIELDS, ELIF_CASES)
def test_elif_chain(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def _switches(jaxpr):
    return [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "cond"]


def test_elif_chain_is_one_switch_with_a_branch_per_arm():
    (switch,) = _switches(jaxpr_of(elif_chain_of_eight, POS))
    assert len(switch.params["branches"]) == 8


def test_python_false_arms_are_left_out_of_the_switch():
    (switch,) = _switches(jaxpr_of(elif_arm_under_a_python_false_condition, POS, "abs", static_argnums=(1,)))
    assert len(switch.params["branches"]) == 3


def test_python_true_condition_leaves_a_two_way_cond():
    (switch,) = _switches(jaxpr_of(elif_python_true_condition_ends_the_chain, POS, True,
                                   static_argnums=(1,)))
    assert len(switch.params["branches"]) == 2


def test_conditions_after_a_traced_one_are_evaluated_while_tracing():
    """Documented order: after a traced condition, each later one is evaluated (once) while
    tracing, as the nested `lax.cond`s of before also traced them; a Python condition that is
    true stops the evaluation, as in Python."""
    seen = []

    def note(k, value):
        seen.append(k)
        return value

    def chain(x, flag):
        if x.sum() > 0:
            y = x
        elif note(1, x[0] > 1):
            y = x + 1
        elif note(2, flag):
            y = x + 2
        elif note(3, x[1] > 1):
            y = x + 3
        else:
            y = x
        return y

    import laxify

    laxify.to_static(chain)(POS, True)
    assert seen == [1, 2]
    seen.clear()
    laxify.to_static(chain)(POS, False)
    assert seen == [1, 2, 3]


def test_non_scalar_elif_condition_is_an_error_at_its_line():
    import laxify

    def chain(x):
        if x.sum() > 0:
            y = x
        elif x > 1:
            y = -x
        else:
            y = x * 2
        return y

    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(chain)(POS)
    message = str(info.value)
    assert "The condition of this `elif` is an array of shape (3,)" in message
    assert "elif x > 1:" in message
