"""The array-update converter alone, golden tests (source before, source after)."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.analysis.features import SUBSCRIPT_UPDATE, features
from laxify.transpiler.converters import array_updates
from laxify.transpiler.converters.array_updates import describe_update
from laxify.transpiler.converters.base import Context


def convert(before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = array_updates.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(before: str, after: str) -> None:
    code = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    compile(code, "<converted>", "exec")


def test_item_assignment_becomes_an_assignment_of_the_name():
    check("""
    def f(x, i, v):
        x[i] = v  # keep me
        return x
    """, """
    def f(x, i, v):
        x = _lx.setitem(x, i, v)  # keep me
        return x
    """)


def test_augmented_operators_pass_their_operator():
    check("""
    def f(x, i, v):
        x[i] += v
        x[i] -= v
        x[i] *= v
        x[i] /= v
        x[i] //= v
        x[i] %= v
        x[i] **= v
        x[i] @= v
        x[i] &= v
        x[i] |= v
        x[i] ^= v
        x[i] <<= v
        x[i] >>= v
        return x
    """, """
    def f(x, i, v):
        x = _lx.setitem_op(x, i, "+", v)
        x = _lx.setitem_op(x, i, "-", v)
        x = _lx.setitem_op(x, i, "*", v)
        x = _lx.setitem_op(x, i, "/", v)
        x = _lx.setitem_op(x, i, "//", v)
        x = _lx.setitem_op(x, i, "%", v)
        x = _lx.setitem_op(x, i, "**", v)
        x = _lx.setitem_op(x, i, "@", v)
        x = _lx.setitem_op(x, i, "&", v)
        x = _lx.setitem_op(x, i, "|", v)
        x = _lx.setitem_op(x, i, "^", v)
        x = _lx.setitem_op(x, i, "<<", v)
        x = _lx.setitem_op(x, i, ">>", v)
        return x
    """)


def test_tuples_slices_ellipsis_and_paths():
    check("""
    def f(grid, state, i, j):
        grid[i, j] += 1
        grid[..., 0] = 0
        grid[1:3] = 0
        grid[i, 1:] = 0
        state["h"][i] = 2.0
        state.buf[i] *= 2
        return grid, state
    """, """
    def f(grid, state, i, j):
        grid = _lx.setitem_op(grid, (i, j), "+", 1)
        grid = _lx.setitem(grid, (..., 0), 0)
        grid = _lx.setitem(grid, _lx.at[1:3], 0)
        grid = _lx.setitem(grid, _lx.at[i, 1:], 0)
        state = _lx.setitem(state, _lx.at["h"][i], 2.0)
        state = _lx.setitem_op(state, _lx.at.buf[i], "*", 2)
        return grid, state
    """)


def test_several_targets_take_the_value_once_in_order():
    check("""
    def f(x, i):
        a = x[0] = i
        x[i], i = 1.0, 2
        return a, x, i
    """, """
    def f(x, i):
        _lx_value_1 = i; a = _lx_value_1; x = _lx.setitem(x, 0, _lx_value_1)
        _lx_value_2, _lx_value_3 = 1.0, 2; x = _lx.setitem(x, i, _lx_value_2); i = _lx_value_3
        return a, x, i
    """)


def test_globals_closures_attributes_and_nested_defs_are_left_alone():
    check("""
    def f(x, i):
        global G
        G[i] = 1.0
        BUF[i] = 1.0
        f(x)[i] = 1.0
        x.attr = 1.0
        x.__dict__["k"] = 1.0
        def inner(y):
            y[i] = 1.0
        return x
    """, """
    def f(x, i):
        global G
        G[i] = 1.0
        BUF[i] = 1.0
        f(x)[i] = 1.0
        x.attr = 1.0
        x.__dict__["k"] = 1.0
        def inner(y):
            y[i] = 1.0
        return x
    """)


def test_alias_read_after_the_update_is_passed_to_the_runtime():
    check("""
    def f(x, i):
        y = x
        x[i] = 1.0
        y[0] += 1.0
        return y
    """, """
    def f(x, i):
        y = x
        x = _lx.setitem(x, i, 1.0, alias=("x", "y"))
        y = _lx.setitem_op(y, 0, "+", 1.0)
        return y
    """)


def test_alias_not_read_after_or_assigned_anew_is_no_alias():
    check("""
    def f(x, i):
        y = x
        x[i] = 1.0
        y = 2.0
        z = x
        z = z + 1
        x[i] = 2.0
        return x, y, z
    """, """
    def f(x, i):
        y = x
        x = _lx.setitem(x, i, 1.0)
        y = 2.0
        z = x
        z = z + 1
        x = _lx.setitem(x, i, 2.0)
        return x, y, z
    """)


def test_alias_read_earlier_in_the_loop_counts():
    check("""
    def f(x, n):
        y = x
        s = 0.0
        for i in range(n):
            s = s + x[i]
            y[i] = 0.0
        return s
    """, """
    def f(x, n):
        y = x
        s = 0.0
        for i in range(n):
            s = s + x[i]
            y = _lx.setitem(y, i, 0.0, alias=("y", "x"))
        return s
    """)


def test_feature_marker_only_for_subscript_targets():
    def found(src: str) -> bool:
        return SUBSCRIPT_UPDATE in features(cst.parse_module(textwrap.dedent(src)))
    assert found("x[0] = 1\n")
    assert found("x[0] += 1\n")
    assert found("a, x[0] = 1, 2\n")
    assert not found("x = y[0]\n")
    assert not found("x.a = 1\n")


def test_describe_update_gives_the_user_form_and_the_functional_form():
    module = cst.parse_module(convert("""
    def f(x, s, i, v):
        x[i] += v
        x[i] //= v
        s["h"][1:2] = v
    """))
    rows = [describe_update(line.body[0], module) for line in module.body[0].body.body]
    assert rows == [
        ("x[i] += v", "x = x.at[i].add(v)"),
        ("x[i] //= v", "x = x.at[i].set(x[i] // v)"),
        ('s["h"][1:2] = v', 's["h"] = s["h"].at[1:2].set(v)'),
    ]


def test_update_of_a_for_target_with_the_iterable_read_after():
    check("""
    def f(grid):
        for row in grid:
            row[0] = 0.0
        return grid
    """, """
    def f(grid):
        for row in grid:
            row = _lx.setitem(row, 0, 0.0, alias=("row", "grid", "for"))
        return grid
    """)
