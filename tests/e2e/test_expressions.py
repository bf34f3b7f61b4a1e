"""`and` / `or` / `not`, chained comparisons and conditional expressions end to end.

On traced values they become lax logic (`select_n` for a cheap pure conditional expression,
`cond` when a side holds a call); on Python values they keep Python's exact short-circuit
semantics, which the counters below observe (a side that must not run is never run).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import laxify
from harness import CASE_FIELDS, case, check, jaxpr_of, primitive_counts

COND = {"cond"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


POS = f32(1.0, 2.0, 3.0)
NEG = f32(-1.0, -2.0, -3.0)
SMALL = f32(0.5, 1.0, 0.5)
MIXED = f32(3.0, -1.0, 0.5)


# -- side-effect counters (Python values only: they must see Python's short circuit) ------

CALLS: list[str] = []


@laxify.do_not_convert
def tick(tag, value):
    """Records that this side was evaluated, then returns ``value`` unchanged."""
    CALLS.append(tag)
    return value


@pytest.fixture(autouse=True)
def _reset_calls():
    CALLS.clear()
    yield
    CALLS.clear()


# -- traced `and` / `or` / `not` in conditions ----------------------------------------------

def expr_and_of_two_traced(x, y):
    if x.sum() > 0 and y.sum() > 0:
        z = x + y
    else:
        z = x - y
    return z


def expr_or_of_two_traced(x, y):
    if x.max() > 2 or y.min() < -2:
        z = x * y
    else:
        z = x + 1
    return z


def expr_not_traced_in_if(x):
    if not x.sum() > 0:
        x = -x
    return x


def expr_not_any_in_if(x):
    if not (x > 2).any():
        x = x * 10
    return x


def expr_mixed_and_or_not(x, y):
    if (x.sum() > 0 and not y.sum() > 0) or x.max() > 5:
        z = x
    else:
        z = y
    return z


def expr_traced_and_python_operand(x, n):
    # The left side is traced, the right side a Python comparison: logical_and of both.
    if x.sum() > 0 and n > 1:
        x = x * n
    return x


def expr_python_and_traced_operand(x, n):
    # The left side is a Python bool: Python decides whether the traced side runs at all.
    if n > 1 and x.sum() > 0:
        x = x * n
    return x


def expr_and_with_call_on_right(x):
    # A call on the right: evaluated lazily (inside a cond branch) on the traced path.
    if x.sum() > 0 and jnp.all(x < 2.5):
        x = x + 100
    return x


def expr_and_in_while_condition(x, n):
    i = 0
    while x.sum() < 20 and i < n:
        x = x + 1
        i += 1
    return x, i


def expr_logical_value_returned(x, y):
    sx, sy = x.sum(), y.sum()
    both = sx > 0 and sy > 0
    either = sx > 0 or sy > 0
    neither = not either
    return both, either, neither


def expr_logical_value_with_calls(x, y):
    # Calls on the right-hand sides: lazily evaluated, in cond branches.
    both = x.sum() > 0 and y.sum() > 0
    either = x.sum() > 0 or y.sum() > 0
    return both, either


# -- chained comparisons --------------------------------------------------------------------

def expr_chained_comparison_in_if(x):
    if 0 < x.sum() < 5:
        y = x * 2
    else:
        y = x - 1
    return y


def expr_chained_comparison_three_links(x):
    s = x.sum()
    if -10 < s <= 3 != s:
        y = x + s
    else:
        y = x
    return y


def expr_chained_comparison_value(x):
    return 0 < x.sum() < 5


# -- conditional expressions on traced values -----------------------------------------------

def expr_ifexp_cheap_pure(x):
    y = x * 2 if x.sum() > 0 else x - 1
    return y


def expr_ifexp_with_call(x):
    y = jnp.sin(x) if x.sum() > 0 else jnp.cos(x)
    return y


def expr_ifexp_scalar_operands(x):
    s = x.sum()
    sign = 1.0 if s > 0 else -1.0
    return x * sign


def expr_ifexp_nested(x):
    s = x.sum()
    y = x * 3 if s > 5 else (x * 2 if s > 0 else -x)
    return y


def expr_ifexp_in_scan(x):
    acc = jnp.float32(0)
    for v in x:
        acc = acc + (v if v > 0 else -v)
    return acc


TRACED_CASES = [
    case(expr_and_of_two_traced, (POS, POS), (POS, NEG), (NEG, POS), prims=COND),
    case(expr_or_of_two_traced, (POS, POS), (SMALL, NEG), (SMALL, SMALL), prims=COND),
    case(expr_not_traced_in_if, (POS,), (NEG,), prims=COND),
    case(expr_not_any_in_if, (POS,), (SMALL,), prims=COND),
    case(expr_mixed_and_or_not, (POS, NEG), (POS, POS), (NEG, POS), (f32(9.0, -5.0, -5.0), POS),
         prims=COND),
    case(expr_traced_and_python_operand, (POS, 3), (NEG, 3), (POS, 1), prims=COND),
    case(expr_python_and_traced_operand, (POS, 3), (NEG, 3), prims=COND),
    case(expr_and_with_call_on_right, (POS,), (SMALL,), (NEG,), prims=COND),
    case(expr_and_in_while_condition, (POS, 0), (POS, 2), (POS, 100), (f32(30.0), 5),
         prims={"while"}),
    case(expr_logical_value_returned, (POS, POS), (POS, NEG), (NEG, NEG), prims=STATIC),
    case(expr_logical_value_with_calls, (POS, POS), (POS, NEG), (NEG, NEG), (NEG, POS), prims=COND),
    case(expr_chained_comparison_in_if, (SMALL,), (POS,), (NEG,), prims=COND),
    case(expr_chained_comparison_three_links, (SMALL,), (f32(1.0, 1.0, 1.0),), (POS,), (f32(-20.0),),
         prims=COND),
    case(expr_chained_comparison_value, (SMALL,), (POS,), (NEG,), prims=STATIC),
    case(expr_ifexp_cheap_pure, (POS,), (NEG,), prims=STATIC),
    case(expr_ifexp_with_call, (POS,), (NEG,), prims=COND),
    case(expr_ifexp_scalar_operands, (POS,), (NEG,), prims=STATIC),
    case(expr_ifexp_nested, (POS,), (SMALL,), (NEG,), prims=None),
    case(expr_ifexp_in_scan, (MIXED,), (NEG,), prims={"scan"}),
]


@pytest.mark.parametrize(CASE_FIELDS, TRACED_CASES)
def test_traced_logic_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_cheap_conditional_expression_is_a_select():
    counts = primitive_counts(jaxpr_of(expr_ifexp_cheap_pure, POS))
    assert counts["select_n"] >= 1, counts
    assert counts["cond"] == 0, counts


def test_conditional_expression_with_a_call_is_a_cond():
    counts = primitive_counts(jaxpr_of(expr_ifexp_with_call, POS))
    assert counts["cond"] == 1, counts
    # Each side's call sits in its own branch: sin in one, cos in the other.
    assert counts["sin"] == 1 and counts["cos"] == 1, counts




def expr_and_not_pure(x, y):
    sx, sy = x.sum(), y.sum()
    return sx > 0 and not sy > 0


def test_and_not_on_pure_operands_matches_python():
    check(expr_and_not_pure, (POS, NEG), (POS, POS), (NEG, NEG))


def test_and_not_on_pure_operands_has_no_cond():
    counts = primitive_counts(jaxpr_of(expr_and_not_pure, POS, NEG))
    assert counts["cond"] == 0, counts


def test_nested_cheap_conditional_expressions_are_selects():
    counts = primitive_counts(jaxpr_of(expr_ifexp_nested, POS))
    assert counts["select_n"] >= 2, counts
    assert counts["cond"] == 0, counts


def test_traced_and_with_call_on_right_is_lazy():
    # `jnp.all(...)` on the right becomes a cond branch, not an eagerly computed operand.
    jaxpr = jaxpr_of(expr_and_with_call_on_right, POS)
    assert primitive_counts(jaxpr)["cond"] >= 2, jaxpr


def test_chained_comparison_is_logical_and():
    counts = primitive_counts(jaxpr_of(expr_chained_comparison_value, POS))
    assert counts["and"] == 1, counts
    assert counts["cond"] == 0, counts


# -- Python values keep Python's short circuit ------------------------------------------------

def expr_none_guard_short_circuits(x, n):
    # With n None, `n > 2` would raise TypeError: it must not be evaluated.
    if n is not None and n > 2:
        x = x * n
    return x


def expr_or_default_python_value(x, scale):
    s = scale or 2.5
    return x * s


def expr_and_returns_python_operand(x, n):
    k = n and n * 3
    return x + k


def expr_or_selects_mode_string(x, mode):
    if (mode or "sum") == "sum":
        return x.sum()
    return x.max()


STATIC_CASES = [
    case(expr_none_guard_short_circuits, (POS, None), (POS, 1), (POS, 5), prims=STATIC),
    case(expr_or_default_python_value, (POS, None), (POS, 0), (POS, 4.0), prims=STATIC),
    case(expr_and_returns_python_operand, (POS, 0), (POS, 2), prims=STATIC),
    case(expr_or_selects_mode_string, (POS, None), (POS, "sum"), (POS, "max"), prims=STATIC),
]


@pytest.mark.parametrize(CASE_FIELDS, STATIC_CASES)
def test_python_logic_stays_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def expr_or_default_returns_label(label):
    return label or "unnamed"


def expr_and_returns_python_value(a, b):
    return a and b


def test_or_returns_the_python_operand_not_a_bool():
    fn = laxify.convert(expr_or_default_returns_label)
    assert fn(None) == "unnamed"
    assert fn("") == "unnamed"
    assert fn("model") == "model"
    fn = laxify.convert(expr_and_returns_python_value)
    assert fn(0, 5) == 0 and type(fn(0, 5)) is int
    assert fn([], 5) == []
    assert fn(2, "x") == "x"


def expr_counted_and(x, flag):
    if flag and tick("right", x.sum() > 0):
        x = x + 1
    return x


def expr_counted_or(x, flag):
    if flag or tick("right", x.sum() > 0):
        x = x + 1
    return x


def expr_counted_ifexp(x, flag):
    return tick("then", x * 2) if flag else tick("else", x - 1)


def expr_counted_not(x, flag):
    y = tick("operand", flag)
    if not y:
        x = -x
    return x


@pytest.mark.parametrize("run", ["convert", "to_static", "jit_convert"])
def test_python_short_circuit_evaluates_only_needed_sides(run):
    def call(fn, *args):
        if run == "convert":
            return laxify.convert(fn)(*args)
        if run == "to_static":
            return laxify.to_static(fn, fallback="error")(*args)
        return jax.jit(laxify.convert(fn), static_argnums=1)(*args)

    call(expr_counted_and, POS, False)
    assert CALLS == []
    call(expr_counted_and, POS, True)
    assert CALLS == ["right"]
    CALLS.clear()

    call(expr_counted_or, POS, True)
    assert CALLS == []
    call(expr_counted_or, POS, False)
    assert CALLS == ["right"]
    CALLS.clear()

    call(expr_counted_ifexp, POS, True)
    assert CALLS == ["then"]
    CALLS.clear()
    call(expr_counted_ifexp, POS, False)
    assert CALLS == ["else"]
    CALLS.clear()

    call(expr_counted_not, POS, False)
    assert CALLS == ["operand"]


def test_static_flag_conditional_expression_values():
    check(expr_counted_ifexp, (POS, True), (POS, False), expect_prims=STATIC)


def expr_chained_comparison_with_call_in_middle(x, n):
    if 0 < tick("middle", n) < 5:
        x = x * 2
    return x


def test_chained_comparison_evaluates_middle_once():
    laxify.convert(expr_chained_comparison_with_call_in_middle)(POS, 3)
    assert CALLS == ["middle"]


def test_chained_comparison_computes_traced_middle_once():
    counts = primitive_counts(jaxpr_of(expr_chained_comparison_value, POS))
    assert counts["reduce_sum"] == 1, counts


def test_chained_comparison_short_circuits_on_python_values():
    # 0 < -1 is False: the second link (and its call) must not run, as in Python.
    laxify.convert(expr_chained_comparison_with_call_in_middle)(POS, -1)
    assert CALLS == ["middle"]


def expr_not_of_python_value_in_if(x, flag):
    if not flag:
        x = x + 1
    return x


def test_not_on_python_value_stays_python():
    check(expr_not_of_python_value_in_if, (POS, True), (POS, False), (POS, 0),
          expect_prims=STATIC)
