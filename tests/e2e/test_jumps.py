"""`break`, `continue`, `return` and loop `else` end to end.

Every function runs eagerly (the oracle), through `to_static` and through `jax.jit(convert)`,
on inputs that take every path: the loop ends by its condition or by each jump, zero, one and
many trips, each `return` taken. The jaxpr check says which loops and conditionals are traced.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import laxify

from harness import CASE_FIELDS, case, check, jaxpr_of, primitive_counts

WHILE = {"while"}
WHILE_COND = {"while", "cond"}
SCAN = {"scan"}
SCAN_COND = {"scan", "cond"}
COND = {"cond"}


def f32(*values):
    return jnp.array(values, jnp.float32)


def i32(value):
    return jnp.int32(value)


ROWS = jnp.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.0], [7.0, 8.0, -9.0], [0.5, 0.5, 0.5]],
                 jnp.float32)
NEGATIVE_ROWS = -jnp.abs(ROWS)
POSITIVE_ROWS = jnp.abs(ROWS)
X8 = jnp.arange(1.0, 9.0, dtype=jnp.float32)


# -- break -----------------------------------------------------------------------------

def break_in_traced_while(x):
    while x.sum() < 100:
        x = x + 1
        if x.max() > 5:
            break
        x = x * 2
    return x


def break_python_counter_traced_exit(x):
    i = 0
    while i < 100:
        x = x + 1.0
        if x.sum() > 50:
            break
        i += 1
    return x, i


def break_in_static_range(x):
    acc = x[0] * 0
    i = -1
    for i in range(8):
        if acc > 10:
            break
        acc = acc + x[i]
    return acc, i


def break_in_traced_range(x, n):
    acc = x[0] * 0
    i = -1
    for i in range(n):
        acc = acc + x[i]
        if acc > 10:
            break
    return acc, i


def break_over_array_rows(xs):
    total = jnp.zeros(xs.shape[1], xs.dtype)
    row = total
    for row in xs:
        if row.sum() > 5:
            break
        total = total + row
    return total, row


def break_several_in_one_loop(x):
    steps = 0
    while x < 1000:
        if x % 7 == 0:
            break
        x = x + 3
        if x % 5 == 0:
            break
        x = x * 2
        steps += 1
    return x, steps


def break_in_nested_if(x):
    while x.sum() < 50:
        if x[0] > 0:
            if x[1] > 3:
                break
            x = x.at[1].add(1.0)
        x = x + 1
    return x


def break_inner_loop_only(x):
    total = x * 0
    for i in range(4):
        j = 0
        while j < 10:
            if x[j % 4] * j > 6:
                break
            total = total.at[i].add(x[j % 4])
            j += 1
    return total


def break_inner_traced_outer_python(x, n):
    # Outer: a Python loop (n is static); inner: a traced while with a traced break.
    k = 0
    while k < n:
        while x.sum() < 40:
            x = x * 2
            if x.max() > 9:
                break
        x = x - 3
        k += 1
    return x


def break_outer_traced_inner_python(x):
    while x.sum() < 30:
        for step in [1.0, 2.0, 3.0]:
            if step > 2.0:
                break
            x = x + step
        if x.max() > 8:
            break
    return x


def break_both_levels_traced(xs):
    count = 0
    v = xs[0, 0] * 0
    for row in xs:
        v = row[0]
        while v < 20:
            v = jnp.abs(v) * 2 + 1
            if v > 7:
                break
        if v > 15:
            break
        count = count + 1
    return count, v


def break_over_enumerate_rows(xs):
    total = xs[0] * 0
    for i, row in enumerate(xs):
        if row.sum() > i * 3:
            break
        total = total + row * i
    return total


# -- continue --------------------------------------------------------------------------

def continue_in_traced_while(x, n):
    i = 0
    acc = x * 0
    while i < n:
        i += 1
        if x[i % 3] < 0:
            continue
        acc = acc + x[i % 3]
    return acc, i


def continue_in_static_range(x):
    acc = x[0] * 0
    for i in range(8):
        if x[i] % 2 == 0:
            continue
        acc = acc + x[i] * i
    return acc, i


def continue_in_traced_range(x, n):
    acc = x[0] * 0
    for i in range(n):
        if acc > 6:
            continue
        acc = acc + x[i]
    return acc


def continue_over_array_rows(xs):
    acc = jnp.zeros(xs.shape[1], xs.dtype)
    for row in xs:
        if row.sum() < 0:
            continue
        acc = acc + row
    return acc


def continue_and_break_in_one_loop(xs):
    acc = jnp.zeros(xs.shape[1], xs.dtype)
    for row in xs:
        if row[0] < 0:
            continue
        acc = acc + row
        if acc.sum() > 10:
            break
        acc = acc * 2
    return acc


def continue_in_else_branch(xs):
    acc = xs[0] * 0
    for row in xs:
        if row.sum() > 0:
            if row.max() > 7:
                continue
            acc = acc + 1
        else:
            continue
        acc = acc + row
    return acc


def continue_inner_loop_only(x):
    total = x[0] * 0
    for i in range(3):
        for j in range(4):
            if x[j] > x[i]:
                continue
            total = total + x[j]
        total = total * 2
    return total


def continue_over_zip(xs, ws):
    acc = xs[0] * 0
    for row, w in zip(xs, ws):
        if w < 0:
            continue
        acc = acc + row * w
    return acc


# -- return ----------------------------------------------------------------------------

def return_in_one_branch_code_after(x):
    if x.sum() > 0:
        return x * 2
    x = x + 1
    return x - 10


def return_in_both_branches(x):
    if x.sum() > 0:
        return x * 2
    else:
        return x - 1


def return_in_elif_chain(x):
    if x.sum() > 10:
        return x
    elif x.sum() > 0:
        x = x * 3
    else:
        return -x
    x = x + 1
    return x


def return_inside_traced_while(x, n):
    i = 0
    while i < n:
        if x[i] > 2:
            return x[i] * 10
        i += 1
    return -1.0


def return_inside_static_range(x):
    acc = x[0] * 0
    for i in range(8):
        acc = acc + x[i]
        if acc > 10:
            return acc, i
    return acc * 0, -1


def return_inside_traced_range(x, n):
    acc = x[0] * 0
    for i in range(n):
        acc = acc + x[i]
        if acc > 10:
            return acc
    return -acc


def return_over_array_rows(xs):
    for row in xs:
        if row.sum() > 5:
            return row
    return xs[0] * 0


def return_nested_ifs_in_loop(x):
    while x.sum() < 100:
        if x[0] > 3:
            if x[1] > 3:
                return x * -1
            x = x.at[1].add(2.0)
        x = x + 1
    return x


def return_several(x):
    s = x.sum()
    if s > 100:
        return x * 0
    x = x * 2
    if s > 10:
        return x
    x = x + 1
    if s > 0:
        return x * 3
    return x * 4


def return_tuple(x):
    if x.sum() > 0:
        y = x + 1
        return y, y.sum()
    return x, x.max()


def return_from_inner_loop(x):
    for i in range(3):
        j = 0
        while j < 5:
            if x[i] * j > 6:
                return x[i] + j
            j += 1
    return x[0] * 0


def return_after_break(x):
    acc = x[0] * 0
    for i in range(8):
        if x[i] < 0:
            break
        acc = acc + x[i]
    if acc > 5:
        return acc
    return -acc


def return_falls_off_when_static(x, n):
    # n is a Python int: Python decides, and the function returns None when n <= 0.
    if n > 0:
        return x * n


# -- loop else -------------------------------------------------------------------------

def while_else_with_break(x):
    while x.sum() < 20:
        x = x + 1
        if x.max() > 6:
            break
    else:
        x = -x
    return x


def while_else_without_break(x):
    while x.sum() < 20:
        x = x + 1
    else:
        x = x * 10
    return x


def for_else_with_break(xs):
    found = xs[0] * 0
    for row in xs:
        if row.sum() > 5:
            found = row
            break
    else:
        found = found - 1
    return found


def for_else_static_range_with_break(x):
    acc = x[0] * 0
    for i in range(6):
        acc = acc + x[i]
        if acc > 8:
            break
    else:
        acc = acc * 100
    return acc


def for_else_without_break(xs):
    acc = xs[0] * 0
    for row in xs:
        acc = acc + row
    else:
        acc = acc * 2
    return acc


def for_else_traced_range_with_break(x, n):
    acc = x[0] * 0
    for i in range(n):
        acc = acc + x[i]
        if acc > 8:
            break
    else:
        acc = acc - 100
    return acc


BREAK_CASES = [
    # ends by the condition at once (zero trips), by the break at once or later, by the
    # condition after one trip
    case(break_in_traced_while, (f32(60.0, 50.0),), (f32(5.0, 1.0),), (f32(0.0, 0.5),),
         (jnp.full(30, 1.5, jnp.float32),), prims=WHILE_COND),
    case(break_python_counter_traced_exit, (f32(60.0),), (f32(10.0, 20.0),), (f32(-1000.0),),
         prims=WHILE_COND),
    case(break_in_static_range, (X8,), (-X8,), (f32(20.0, 1, 1, 1, 1, 1, 1, 1),),
         prims=SCAN_COND),
    case(break_in_traced_range, (X8, i32(0)), (X8, i32(3)), (X8, i32(8)), (-X8, i32(8)),
         prims=WHILE_COND),
    case(break_over_array_rows, (ROWS,), (NEGATIVE_ROWS,), (POSITIVE_ROWS,), prims=SCAN_COND),
    case(break_several_in_one_loop, (i32(7),), (i32(1),), (i32(2),), (i32(5000),), (i32(4),),
         prims=WHILE_COND),
    case(break_in_nested_if, (f32(1.0, 0.0),), (f32(-1.0, 5.0),), (f32(60.0, 0.0),),
         prims=WHILE_COND),
    case(break_inner_loop_only, (f32(1.0, 2.0, 3.0, 4.0),), (f32(0.0, 0.0, 0.0, 0.0),),
         (f32(7.0, 0.5, 0.5, 0.5),), prims=SCAN_COND | WHILE),
    case(break_inner_traced_outer_python, (f32(1.0, 2.0), 1), (f32(1.0, 2.0), 3),
         (f32(50.0), 2), prims=WHILE_COND),
    case(break_outer_traced_inner_python, (f32(1.0, 2.0),), (f32(40.0),), (f32(5.0, -5.0),),
         prims=WHILE_COND),
    case(break_over_enumerate_rows, (ROWS,), (NEGATIVE_ROWS,), (POSITIVE_ROWS * 3,),
         prims=SCAN_COND),
    case(break_both_levels_traced, (ROWS,), (NEGATIVE_ROWS,), (POSITIVE_ROWS * 3,),
         prims={"scan", "while", "cond"}),
]

CONTINUE_CASES = [
    case(continue_in_traced_while, (f32(1.0, -2.0, 3.0), i32(0)), (f32(1.0, -2.0, 3.0), i32(1)),
         (f32(1.0, -2.0, 3.0), i32(7)), prims=WHILE_COND),
    case(continue_in_static_range, (X8,), (X8 * 2,), prims=SCAN_COND),
    case(continue_in_traced_range, (X8, i32(0)), (X8, i32(2)), (X8, i32(8)), prims=WHILE_COND),
    case(continue_over_array_rows, (ROWS,), (NEGATIVE_ROWS,), prims=SCAN_COND),
    case(continue_and_break_in_one_loop, (ROWS,), (NEGATIVE_ROWS,), (POSITIVE_ROWS,),
         prims=SCAN_COND),
    case(continue_in_else_branch, (ROWS,), (POSITIVE_ROWS,), prims=SCAN_COND),
    case(continue_over_zip, (ROWS, f32(1.0, -1.0, 2.0, -2.0)), (ROWS, f32(-1.0, -1.0, -1.0, 3.0)),
         prims=SCAN_COND),
    case(continue_inner_loop_only, (f32(3.0, 1.0, 2.0, 4.0),), prims=SCAN_COND),
]

RETURN_CASES = [
    case(return_in_one_branch_code_after, (f32(1.0),), (f32(-1.0),), prims=COND),
    case(return_in_both_branches, (f32(1.0, 2.0),), (f32(-3.0, 2.0),), prims=COND),
    case(return_in_elif_chain, (f32(20.0),), (f32(2.0),), (f32(-2.0),), prims=COND),
    case(return_inside_traced_while, (f32(1.0, 2.0, 3.0, 4.0), i32(0)),
         (f32(1.0, 2.0, 3.0, 4.0), i32(2)), (f32(1.0, 2.0, 3.0, 4.0), i32(4)),
         prims=WHILE_COND),
    case(return_inside_static_range, (X8,), (-X8,), prims=SCAN_COND),
    case(return_inside_traced_range, (X8, i32(0)), (X8, i32(3)), (X8, i32(8)),
         prims=WHILE_COND),
    case(return_over_array_rows, (ROWS,), (NEGATIVE_ROWS,), prims=SCAN_COND),
    case(return_nested_ifs_in_loop, (f32(4.0, 0.0),), (f32(-5.0, 0.0),), (f32(200.0, 0.0),),
         prims=WHILE_COND),
    case(return_several, (f32(200.0),), (f32(20.0),), (f32(2.0),), (f32(-2.0),), prims=COND),
    case(return_tuple, (f32(1.0, 2.0),), (f32(-1.0, -2.0),), prims=COND),
    case(return_from_inner_loop, (f32(1.0, 2.0, 3.0),), (f32(0.0, 0.0, 0.0),),
         (f32(0.0, 5.0, 0.0),), prims={"scan", "while", "cond"}),
    case(return_falls_off_when_static, (f32(1.0, 2.0), 3), (f32(1.0, 2.0), 0), prims=()),
    case(return_after_break, (X8,), (f32(1, 2, -1, 4, 5, 6, 7, 8),),
         (f32(-1, 2, 3, 4, 5, 6, 7, 8),), prims=SCAN_COND),
]

ELSE_CASES = [
    case(while_else_with_break, (f32(30.0),), (f32(1.0, 2.0),), (f32(5.5, 0.0),),
         (f32(1.0, 1.0, 1.0, 1.0, 1.0),), prims=WHILE_COND),
    case(while_else_without_break, (f32(30.0),), (f32(1.0, 2.0),), prims=WHILE),
    case(for_else_with_break, (ROWS,), (NEGATIVE_ROWS,), prims=SCAN_COND),
    case(for_else_static_range_with_break, (X8,), (X8 * 0,), prims=SCAN_COND),
    case(for_else_without_break, (ROWS,), prims=SCAN),
    case(for_else_traced_range_with_break, (X8, i32(0)), (X8, i32(3)), (X8, i32(8)),
         prims=WHILE_COND),
]


@pytest.mark.parametrize(CASE_FIELDS, BREAK_CASES)
def test_break(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, CONTINUE_CASES)
def test_continue(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, RETURN_CASES)
def test_return(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


@pytest.mark.parametrize(CASE_FIELDS, ELSE_CASES)
def test_loop_else(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- a Python counter with a traced exit -------------------------------------------------

def test_python_counter_with_traced_break_is_one_while_loop():
    """`i = 0; while i < 100: ... if <traced>: break; i += 1`: one traced `while` from the first
    iteration (not 100 unrolled iterations), and `i` counts the iterations before the break."""
    for x, expected_i in ((f32(60.0), 0), (f32(10.0, 20.0), 10), (f32(-1000.0), 100)):
        counts = primitive_counts(jaxpr_of(break_python_counter_traced_exit, x))
        assert counts["while"] == 1, counts
        _, i = laxify.to_static(break_python_counter_traced_exit)(x)
        assert i.dtype == jnp.int32 and int(i) == expected_i
        _, i = jax.jit(laxify.convert(break_python_counter_traced_exit))(x)
        assert int(i) == expected_i


# -- some paths return, others fall off the end --------------------------------------------

def falls_off_in_traced_if(x):
    if x.sum() > 0:
        return x * 2
    x = x + 1


def falls_off_after_traced_loop(x):
    while x.sum() < 10:
        if x.max() > 3:
            return x
        x = x + 1


def _assert_falls_off_error(fn, error: laxify.ConversionError) -> None:
    message = str(error)
    assert "some paths through this function return a value" in message.lower()
    assert "fall off its end" in message
    line = fn.__code__.co_firstlineno
    assert f'File "{__file__}", line {line}' in message, message
    assert f"def {fn.__name__}(x):" in message
    assert "Add a `return` at the end of the function" in message


@pytest.mark.parametrize("fn, returns, falls_off", [
    (falls_off_in_traced_if, f32(1.0, 2.0), f32(-1.0, -2.0)),
    (falls_off_after_traced_loop, f32(1.0, 2.0), f32(20.0, 0.0)),
], ids=["in_traced_if", "after_traced_loop"])
def test_traced_path_falling_off_the_end_is_a_located_error(fn, returns, falls_off):
    # Eagerly, Python returns an array on one path and None on the other: to_static runs it
    # eagerly, with a FallbackWarning at the def; fallback="error" and jit(convert) refuse it.
    assert fn(returns) is not None and fn(falls_off) is None
    x = returns
    for arg in (returns, falls_off):
        with pytest.warns(laxify.FallbackWarning, match="fall off its end") as caught:
            result = laxify.to_static(fn)(arg)
        assert caught[0].lineno == fn.__code__.co_firstlineno
        assert (result is None) == (fn(arg) is None)
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fn, fallback="error")(x)
    _assert_falls_off_error(fn, info.value)
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(x)
    _assert_falls_off_error(fn, info.value)


# -- former bugs, now regression tests ----------------------------------------------------

def break_target_used_after_loop(x):
    acc = x[0] * 0
    for i in range(8):
        acc = acc + x[i]
        if acc > 10:
            break
    return acc, i


def break_name_first_assigned_in_body(xs):
    for row in xs:
        v = row[0]
        if v > 0:
            break
    return v


def while_true_every_path_returns(x):
    while True:
        if x.sum() > 10:
            return x
        x = x + 1


def bare_return_in_traced_branch(x):
    if x.sum() > 0:
        return
    x = x + 1


def return_none_in_both_branches(x):
    if x.sum() > 0:
        return None
    return None


def break_in_one_line_while(x):
    while x.sum() < 10: x = x + 1; break  # noqa: E701, E702
    return x


def break_in_one_line_for(xs):
    acc = xs[0] * 0
    for row in xs: acc = acc + row; break  # noqa: E701, E702
    return acc


def continue_in_one_line_while(x, n):
    i = 0
    while i < n: i = i + 1; continue  # noqa: E701, E702
    return i


def return_in_one_line_for(xs):
    for row in xs: return row  # noqa: E701
    return xs[0] * 0


def nested_def_with_break(x):
    def grow(y):
        while True:
            y = y + 1
            if y.sum() > 3:
                break
        return y
    return grow(x)


def nested_def_with_continue(xs):
    def skip_positive(y):
        acc = y[0] * 0
        for v in y:
            if v > 0:
                continue
            acc = acc + v
        return acc
    return skip_positive(xs)


def return_under_static_false_branch_in_traced_range(x, n):
    s = 0.0
    for i in range(n):
        if 3 > 4:
            return s
        s = s + x[i]
    return s


def return_under_static_false_branch_in_traced_while(x):
    while x.sum() < 10:
        if x.shape[0] > 99:
            return x * 0
        x = x + 1
    return x


def return_under_static_false_branch_in_scan(xs):
    acc = xs[0] * 0
    for row in xs:
        if len(row) == 0:
            return acc
        acc = acc + row
    return acc


def break_in_inner_while_else(x):
    s = 0.0
    for i in range(4):
        j = 0
        while j < 2:
            s = s + x[i]
            j += 1
        else:
            if s > 5:
                break
        s = s + 1
    return s


def continue_in_inner_for_else(x):
    s = 0.0
    for v in x:
        for w in x:
            if w > v:
                break
            s = s + w
        else:
            continue
        s = s * 2
    return s


# Cases that once were bugs (now fixed): kept as regressions.
REGRESSION_CASES = [
    case(break_in_inner_while_else, (f32(1.0, 2.0, 3.0, 0.5),), (f32(0.0, 0.0, 0.0, 0.0),), prims=SCAN_COND),
    case(continue_in_inner_for_else, (f32(1.0, 2.0, 3.0, 0.5),), (f32(3.0, 2.0, 1.0, 0.0),), prims=SCAN_COND),
    case(return_under_static_false_branch_in_traced_range, (X8, i32(3)), (X8, i32(0)), prims=WHILE),
    case(return_under_static_false_branch_in_traced_while, (f32(1.0),), (f32(20.0),), prims=WHILE),
    case(return_under_static_false_branch_in_scan, (ROWS,), prims=SCAN),
    case(break_target_used_after_loop, (X8,), (X8 * 0,), prims=SCAN_COND),
    case(break_name_first_assigned_in_body, (ROWS,), (NEGATIVE_ROWS,), prims=SCAN_COND),
    case(while_true_every_path_returns, (f32(1.0),), (f32(20.0),), prims=WHILE_COND),
    case(bare_return_in_traced_branch, (f32(1.0),), (f32(-1.0),), prims=COND),
    case(return_none_in_both_branches, (f32(1.0),), (f32(-1.0),), prims=COND),
    case(break_in_one_line_while, (f32(1.0),), (f32(20.0),), prims=WHILE),
    case(break_in_one_line_for, (ROWS,), prims=SCAN_COND),
    case(continue_in_one_line_while, (f32(1.0), i32(3)), prims=WHILE),
    case(return_in_one_line_for, (ROWS,), prims=SCAN_COND),
    case(nested_def_with_break, (f32(1.0, 0.0),), prims=WHILE_COND),
    case(nested_def_with_continue, (f32(1.0, -2.0, -3.0),), prims=SCAN_COND),
]


@pytest.mark.parametrize(CASE_FIELDS, REGRESSION_CASES)
def test_fixed_jump_bugs(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- jumps out of a `with loop_options(...)` block -----------------------------------------

def return_inside_loop_options_block(x):
    with laxify.loop_options(max_iters=5):
        while x.sum() < 10:
            x = x * 2
        return x


def break_inside_loop_options_block(x):
    for k in [1, 2, 3]:
        with laxify.loop_options(max_iters=50):
            while x.sum() < 10 * k:
                x = x + 1
            if k == 2:
                break
    return x


def doubles_past_a_thousand(x):
    while x < 1000.0:
        x = x * 2
    return x


@pytest.mark.parametrize("fn, x, expected", [
    (return_inside_loop_options_block, f32(1.0), f32(16.0)),
    (break_inside_loop_options_block, f32(1.0), f32(20.0)),
], ids=["return", "break"])
def test_jump_out_of_loop_options_block_pops_the_options(fn, x, expected):
    from laxify.runtime import options

    try:
        assert bool(jnp.allclose(laxify.to_static(fn)(x), expected))
        assert options.current() == options.LoopOptions()
        assert float(laxify.to_static(doubles_past_a_thousand)(jnp.float32(1.0))) == 1024.0
    finally:
        options.pop(0)  # do not let a leak reach other tests
