"""The caught-raises converter alone: golden tests (source before, source after), and the cases
it leaves as written (the function then runs as Python where the data decides a handler)."""

from __future__ import annotations

import pytest

from golden import check, check_unchanged
from laxify.transpiler.converters import caught_raises


class Custom(LookupError):
    pass


NAMESPACE = {"Custom": Custom}


def test_a_caught_raise_becomes_a_flag_and_the_handler_an_if_on_it():
    check(caught_raises, """
    def f(a, b):
        try:
            if b == 0:
                raise ZeroDivisionError("b is zero")
            r = a / b
        except ZeroDivisionError:
            r = -1.0
        return r
    """, """
    def f(a, b):
        r = _lx.Fillable('r')
        _lx_caught_1 = 0
        try:
            if b == 0:
                _lx_caught_1 = 1
            if _lx.not_(_lx_caught_1):
                r = a / b
        except ZeroDivisionError:
            r = -1.0
            _lx_caught_1 = -1
        if _lx_caught_1 == 1:
            r = -1.0
        return r
    """)


def test_handlers_are_matched_in_order_by_class_and_the_else_runs_where_nothing_raised():
    check(caught_raises, """
    def f(a, b):
        try:
            if b < 0:
                raise Custom
            r = a
        except (ArithmeticError, KeyError):
            r = 1
        except LookupError:
            r = 2
        else:
            r = r + 1
        return r
    """, """
    def f(a, b):
        r = _lx.Fillable('r')
        _lx_caught_1 = 0
        try:
            if b < 0:
                _lx_caught_1 = 2
            if _lx.not_(_lx_caught_1):
                r = a
        except (ArithmeticError, KeyError):
            r = 1
            _lx_caught_1 = -1
        except LookupError:
            r = 2
            _lx_caught_1 = -1
        if _lx_caught_1 == 2:
            r = 2
        elif _lx.not_(_lx_caught_1):
            r = r + 1
        return r
    """, NAMESPACE)


@pytest.mark.parametrize("body", [
    # the handler reads the exception object
    "try:\n        if b: raise ValueError\n    except ValueError as e:\n        r = str(e)",
    # a `finally`
    "try:\n        if b: raise ValueError\n    except ValueError:\n        r = 1\n    finally:\n        r = 2",
    # the body leaves by a `return`
    "try:\n        if b: raise ValueError\n        return 1\n    except ValueError:\n        r = 1",
    # a `raise` in a loop
    "try:\n        for i in b:\n            raise ValueError\n    except ValueError:\n        r = 1",
    # no handler catches it
    "try:\n        if b: raise KeyError\n    except ValueError:\n        r = 1",
    # its arguments call something
    "try:\n        if b: raise ValueError(describe(b))\n    except ValueError:\n        r = 1",
    # a re-raise, and a raise of an object
    "try:\n        if b: raise\n    except ValueError:\n        r = 1",
    "try:\n        if b: raise error\n    except ValueError:\n        r = 1",
    # a name the body sets, read after, that the handler leaves unset
    "r = 0\n    try:\n        if b: raise ValueError\n        t = 1\n    except ValueError:\n        pass\n    r = t",
])
def test_what_needs_the_exception_itself_is_left_as_written(body):
    lines = body.replace("\n    ", "\n").splitlines()
    check_unchanged(caught_raises, "def f(b):\n" + "".join(f"    {line}\n" for line in lines) + "    return r\n")
