"""How ``assert`` on traced values behaves while a function is traced: checked at run time
through the run-time report (``runtime/report.py``) by default, as Python checks asserts, or
not checked (``to_static(..., checks=False)``; ``python -O`` removes the asserts before
conversion).

The modes are a stack in the trace state, read by ``_lx.assert_`` while tracing, set around
the traced call by the API layer (as loop options are).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from laxify.runtime import trace

__all__ = ["AssertMode", "current", "with_assert_mode"]


@dataclass(frozen=True)
class AssertMode:
    """``checks``: traced asserts are checked at run time, where a report collects them
    (``to_static``, ``laxify.checked``); ``checkify``: also where none does, through checkify's
    channel, which the caller functionalizes itself (``laxify.convert(f, checks=True)``).
    Without ``checks``, ``unchecked`` says what an assert on a traced value does: nothing
    (``"silent"``, what ``checks=False`` asks for) or a ConversionError (``"error"``: a loop the
    split fallback tries to compile then runs as Python, where the assert is Python's)."""

    checks: bool = True
    checkify: bool = False
    unchecked: str = "silent"


_DEFAULT = AssertMode()


def current() -> AssertMode:
    stack = trace.current().asserts
    return stack[-1] if stack else _DEFAULT


def with_assert_mode(fn, mode: AssertMode):
    """``fn`` running with ``mode`` for the asserts it (and what it calls) traces."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        stack = trace.current().asserts
        stack.append(mode)
        try:
            return fn(*args, **kwargs)
        finally:
            stack.pop()

    return run
