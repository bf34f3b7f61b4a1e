"""The walrus-test converter alone, golden tests (source before, source after)."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.converters import walrus_conditions
from laxify.transpiler.converters.base import Context


def convert(before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = walrus_conditions.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(before: str, after: str) -> None:
    code = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    compile(code, "<converted>", "exec")


def test_if_test_that_binds_runs_before_the_if():
    check("""
    def f(x):
        if (s := x.sum()) > 0:
            x = x * s
        return x, s
    """, """
    def f(x):
        _lx_test_1 = (s := x.sum()) > 0
        if _lx_test_1:
            x = x * s
        return x, s
    """)


def test_elif_test_that_binds_runs_only_when_earlier_tests_fail():
    check("""
    def f(x):
        if x.max() > 9:
            y = x
        elif (m := x.min()) < 0:
            y = x - m
        else:
            y = x
        return y
    """, """
    def f(x):
        if x.max() > 9:
            y = x
        else:
            _lx_test_1 = (m := x.min()) < 0
            if _lx_test_1:
                y = x - m
            else:
                y = x
        return y
    """)


def test_while_test_that_binds_is_evaluated_before_the_loop_and_after_each_iteration():
    check("""
    def f(x):
        while (s := x.sum()) < 10:
            x = x + 1
        return s
    """, """
    def f(x):
        _lx_test_1 = (s := x.sum()) < 10
        while _lx_test_1:
            x = x + 1
            _lx_test_1 = (s := x.sum()) < 10
        return s
    """)


def test_while_with_continue_evaluates_its_test_at_the_top_of_each_iteration():
    check("""
    def f(x):
        while (s := x.sum()) < 10:
            x = x + 1
            if s > 3:
                continue
            x = x * 2
        return s
    """, """
    def f(x):
        while True:
            _lx_test_1 = (s := x.sum()) < 10
            if not _lx_test_1:
                break
            x = x + 1
            if s > 3:
                continue
            x = x * 2
        return s
    """)


def test_tests_without_walrus_and_while_else_are_left_alone():
    before = """
    def f(x):
        if x.sum() > 0:
            x = x + 1
        while (s := x.sum()) < 10:
            x = x + 1
        else:
            x = x * s
        return x
    """
    assert convert(before) == textwrap.dedent(before).lstrip("\n")


def test_a_test_that_is_a_walrus_alone_is_hoisted_in_parentheses():
    # `_lx_test_1 = spec := g()` is no Python (linecache.lazycache, subprocess._text_encoding).
    check("""
    def f(g, x):
        if spec := g():
            x = x + spec
        while f := x.f_back:
            x = f
        return x
    """, """
    def f(g, x):
        _lx_test_1 = (spec := g())
        if _lx_test_1:
            x = x + spec
        _lx_test_2 = (f := x.f_back)
        while _lx_test_2:
            x = f
            _lx_test_2 = (f := x.f_back)
        return x
    """)
