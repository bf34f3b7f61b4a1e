"""The try-statements converter alone: golden tests (source before, source after). What it
writes is run by tests/e2e/test_try.py (a refusal of JAX's while tracing reaches laxify, not
the user's handlers, `finally` or managers)."""

from __future__ import annotations

from golden import check
from laxify.transpiler.converters import try_statements


def test_handlers_let_internal_errors_pass_first_and_finally_keeps_them():
    check(try_statements, """
    def f(x):
        try:
            y = x + 1
        except ValueError:
            y = x
        except:
            y = -x
        finally:
            return y
    """, """
    def f(x):
        try:
            y = x + 1
        except _lx.internal_errors:
            raise
        except ValueError:
            y = x
        except:
            y = -x
        finally:
            with _lx.finally_block():
                return y
    """)


def test_a_one_line_finally_becomes_a_block():
    check(try_statements, """
    def f(x):
        try:
            y = x + 1
        finally: y = x
        return y
    """, """
    def f(x):
        try:
            y = x + 1
        finally:
            with _lx.finally_block():
                y = x
        return y
    """)


def test_each_manager_of_a_with_is_wrapped_in_its_order():
    check(try_statements, """
    def f(x):
        with open(x) as a, lock:
            with suppress(KeyError): y = a.read()
        return y
    """, """
    def f(x):
        with _lx.unsuppressing(open(x)) as a, _lx.unsuppressing(lock):
            with _lx.unsuppressing(suppress(KeyError)): y = a.read()
        return y
    """)


def test_except_star_handlers_are_left_as_written():
    check(try_statements, """
    def f(x):
        try:
            y = x + 1
        except* ValueError:
            y = x
        return y
    """, """
    def f(x):
        try:
            y = x + 1
        except* ValueError:
            y = x
        return y
    """)
