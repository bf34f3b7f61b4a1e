"""The raise converter alone, golden tests (source before, source after)."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.converters import raise_statements
from laxify.transpiler.converters.base import Context


def convert(before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = raise_statements.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(before: str, after: str) -> None:
    code = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    compile(code, "<converted>", "exec")


def test_raise_in_a_branch_is_recorded_and_returns():
    check("""
    def f(n):
        if n < 0:
            raise ValueError(f"Number {n} must be positive")
        return n
    """, """
    def f(n):
        _lx_raised = False
        if n < 0:
            _lx.raise_(lambda: _lx.exception_(ValueError, _lx.printing.format_("Number {0} must be positive", n))); _lx_raised = True; return _lx.raised()
        return n
    """)


def test_raise_from_a_class_and_a_cause():
    check("""
    def f(x):
        while x > 0:
            if x > 9: raise KeyError from err
            x = x - 1
        return x
    """, """
    def f(x):
        _lx_raised = False
        while x > 0:
            if x > 9: _lx.raise_(lambda: KeyError, lambda: err); _lx_raised = True; return _lx.raised()
            x = x - 1
        return x
    """)


def test_raise_that_ends_the_function_returns_none():
    check("""
    def f(x):
        y = x + 1
        raise NegativeError(y, "bad", code=3)
    """, """
    def f(x):
        y = x + 1
        _lx.raise_(lambda: _lx.exception_(NegativeError, y, "bad", code=3)); return None
    """)


def test_raise_in_a_try_body_says_so_and_a_bare_raise_stays():
    check("""
    def f(x):
        try:
            if x > 0:
                raise ValueError("no")
        except ValueError:
            raise
        return x
    """, """
    def f(x):
        _lx_raised = False
        try:
            if x > 0:
                _lx.raise_(lambda: _lx.exception_(ValueError, "no"), in_try=True); _lx_raised = True; return _lx.raised()
        except ValueError:
            raise
        return x
    """)


def check_value(v):
    if v < 0:
        raise ValueError(f"negative {v}")
    return v


def test_a_call_of_a_function_that_may_raise_is_bracketed():
    # Where the callee raised (`_lx.call_raised()`), the caller raises too: flag and return.
    module = cst.parse_module(textwrap.dedent("""
    def f(x):
        y = check_value(x) * 2.0
        return check_value(y)
    """).lstrip("\n"))
    ctx = Context({})
    ctx.namespace = {"check_value": check_value}
    fn = raise_statements.transform(module.body[0], ctx)
    assert module.with_changes(body=[fn]).code == textwrap.dedent("""
    def f(x):
        _lx_raised = False
        _lx.expect_raise()
        y = check_value(x) * 2.0
        if _lx.call_raised():
            _lx_raised = True
            return _lx.raised()
        _lx.expect_raise()
        _lx_value_1 = check_value(y)
        if _lx.call_raised():
            _lx_raised = True
            return _lx.raised()
        return _lx_value_1
    """).lstrip("\n")
    assert ctx.raised_flag


def test_a_call_inside_a_loop_is_not_bracketed():
    # A `return` flag in a loop body multiplies the tracing of nested loops and branches.
    module = cst.parse_module(textwrap.dedent("""
    def f(x, n):
        for i in range(n):
            x = check_value(x)
        return x
    """).lstrip("\\n"))
    ctx = Context({})
    ctx.namespace = {"check_value": check_value}
    fn = raise_statements.transform(module.body[0], ctx)
    assert fn is module.body[0]
