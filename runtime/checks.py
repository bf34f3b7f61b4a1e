"""How ``assert`` on traced values behaves while a function is traced: checked at run time
through the run-time report (``to_static(checks=True)``, ``runtime/report.py``) or left
unchecked with a warning.

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
    """``checks``: traced asserts are checked at run time; otherwise ``unchecked`` says what an
    assert on a traced value does: ``"warn"`` once, ``"error"`` (a ConversionError), or
    ``"silent"``."""

    checks: bool = False
    unchecked: str = "warn"


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
