"""Python lists mutated under traced control flow: the converted function either gives
Python's value or a located ``laxify.ConversionError``; never a different value.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import pytest

import laxify

from fidelity_tools import check_value_or_clean_error
from harness import CASE_FIELDS, case, check

XS = jnp.array([1.0, 2.0, 3.0], jnp.float32)
ZEROS = jnp.zeros(3, jnp.float32)
ROWS = jnp.arange(1.0, 13.0, dtype=jnp.float32).reshape(4, 3)


# -- append in the branches of a traced `if` (no loop) -------------------------------------

def append_in_both_branches(x):
    a = []
    if x[0] > 0:
        a.append(x)
    else:
        a.append(x * 0 + 9)
    return a[0]


def append_in_both_branches_after_items(x):
    a = [x * 5]
    if x.sum() > 0:
        a.append(x + 1)
    else:
        a.append(x - 1)
    return a[0] + a[1], len(a)


def append_then_stack_after_if(x):
    a = [x]
    if x.sum() > 0:
        a.append(x * 2)
    else:
        a.append(-x)
    return jnp.stack(a)


def extend_in_both_branches(x):
    a = []
    if x.sum() > 0:
        a.extend([x, x + 1])
    else:
        a.extend([x * 0, x - 1])
    return a[1]


def item_assigned_in_traced_branch(x):
    a = [x, x * 2]
    if x.sum() > 0:
        a[0] = x * 3
    return a[0] + a[1]


def list_rebuilt_in_traced_while(x):
    a = [x, 0]
    while a[0].sum() < 20:
        a = [a[0] * 2, a[1] + 1]
    return a[0], a[1]


def item_assigned_in_traced_while(x):
    a = [x, x * 0]
    while a[0].sum() < 20:
        a[0] = a[0] * 2
        a[1] = a[1] + 1
    return a[0], a[1]




# -- append in a scanned loop, read inside the loop ---------------------------------------

def read_second_to_last_while_appending(xs):
    acc = []
    out = 0.0
    for i, v in enumerate(xs):
        if i > 1:
            out = acc[-2]
        acc.append(v)
    return out


def read_last_after_append(xs):
    acc = []
    total = 0.0
    for v in xs:
        acc.append(v * 2)
        total = total + acc[-1]
    return total, jnp.stack(acc)


def read_len_inside_appending_loop(x):
    acc = []
    total = x * 0
    for i in range(4):
        acc.append(x * i)
        total = total + len(acc)
    return total


def append_under_traced_if_in_static_loop(x):
    outs = []
    h = x
    for i in range(4):
        if h.sum() > 3:
            outs.append(h - 1)
        else:
            outs.append(h + 2)
        h = outs[-1]
    return jnp.stack(outs)


def read_traced_index_after_items(xs):
    acc = [xs[0] * 10]
    s = 0.0
    for i, v in enumerate(xs):
        acc.append(v)
        s = s + acc[i] * acc[-1]
    return s, jnp.stack(acc)


def read_tuple_items_while_appending(xs):
    acc = [(xs[0], xs[1])]
    for v in xs:
        a, b = acc[-1]
        acc.append((a + v, b * 0.5))
    return acc[-1]


def read_first_item_every_iteration(xs):
    acc = []
    s = 0.0
    for v in xs:
        acc.append(v)
        s = s + acc[0]
    return s


CASES = [
    case(append_in_both_branches, (ZEROS,), (XS,), prims={"cond"}),
    case(append_in_both_branches_after_items, (XS,), (-XS,), prims={"cond"}),
    case(append_then_stack_after_if, (XS,), (-XS,), prims={"cond"}),
    case(extend_in_both_branches, (XS,), (-XS,), prims={"cond"}),
    case(item_assigned_in_traced_branch, (XS,), (-XS,), prims={"cond"}),
    case(list_rebuilt_in_traced_while, (XS,), prims={"while"}),
    case(item_assigned_in_traced_while, (XS,), prims={"while"}),
    case(read_second_to_last_while_appending, (ROWS[:, 0],), prims={"scan", "cond"}),
    case(read_last_after_append, (XS,), prims={"scan"}),
    case(read_len_inside_appending_loop, (XS,), prims=()),
    case(append_under_traced_if_in_static_loop, (XS,), (-XS,), prims={"scan", "cond"}),
    case(read_traced_index_after_items, (XS,), (ROWS[:, 1],), prims={"scan"}),
    case(read_tuple_items_while_appending, (XS,), prims={"scan"}),
    case(read_first_item_every_iteration, (XS,), prims={"scan"}),
]


def read_item_not_there_yet(xs):
    acc = []
    for v in xs:
        acc.append(v)
        if v > 1:
            _ = acc[2]
    return jnp.stack(acc)


def test_read_of_an_item_the_list_does_not_have_yet_warns_at_run_time():
    """Python raises IndexError at the second iteration; the scan reads zeros and says so."""
    with pytest.raises(IndexError):
        read_item_not_there_yet(XS)
    static = laxify.to_static(read_item_not_there_yet)
    with pytest.warns(RuntimeWarning, match=r"`acc\[2\]` is read inside this loop .* Python raises IndexError"):
        out = static(XS)
    assert jnp.array_equal(out, XS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        static(jnp.array([0.0, 0.5, 1.0], jnp.float32))  # the read never runs: no warning


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_list_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- pop and other mutations under a traced trip count or branch: right value or a clean error --

def pop_in_traced_range(n):
    items = [1, 3, 4]
    s = 0
    for _ in range(n):
        s += items.pop()
    return s


def pop_in_traced_while(x):
    items = [1.0, 3.0, 4.0]
    while x.sum() < 10:
        x = x + items.pop()
    return x


def pop_in_traced_branch(x):
    items = [x, x * 2]
    if x.sum() > 0:
        y = items.pop()
    else:
        y = items[0]
    return y, len(items)


def insert_in_traced_branch(x):
    items = [x]
    if x.sum() > 0:
        items.insert(0, x * 2)
    else:
        items.insert(0, x * 3)
    return items[0], items[1]


def append_in_traced_while_without_max_iters(x):
    outs = []
    while x.sum() < 10:
        x = x + 1
        outs.append(x)
    return len(outs)


def _xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


POS, NEG, MINUS_ONES = XS, -XS, -jnp.ones(3, jnp.float32)

MUTATIONS = [
    pytest.param(pop_in_traced_range, (jnp.int32(2),), "items", ("s += items.pop()", "for _ in range(n):"), id="pop_in_traced_range"),
    pytest.param(pop_in_traced_while, (MINUS_ONES,), "items", ("x = x + items.pop()", "while x.sum() < 10:"), id="pop_in_traced_while"),
    pytest.param(pop_in_traced_branch, (POS,), "items", "if x.sum() > 0:", id="pop_in_traced_branch-taken"),
    pytest.param(pop_in_traced_branch, (NEG,), "items", "if x.sum() > 0:", id="pop_in_traced_branch-not_taken"),
    pytest.param(insert_in_traced_branch, (POS,), "items", "if x.sum() > 0:", id="insert_in_traced_branch-pos"),
    pytest.param(insert_in_traced_branch, (NEG,), "items", "if x.sum() > 0:", id="insert_in_traced_branch-neg"),
    pytest.param(append_in_traced_while_without_max_iters, (XS,), "outs", "while x.sum() < 10:",
                 id="append_in_traced_while_without_max_iters"),
]


@pytest.mark.parametrize("fn, args, name, snippet", MUTATIONS)
def test_list_mutation_is_right_or_a_located_error(fn, args, name, snippet):
    check_value_or_clean_error(fn, *args, name=name, snippet=snippet)

