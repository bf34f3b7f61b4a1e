"""The end of a function whose ``return``s were converted, and returns of names that may
have no value."""

from __future__ import annotations

import linecache
import sys

from laxify.ir.errors import Location, NeedsPython
from laxify.runtime.dispatch.values import Fillable, Undefined, is_traced

__all__ = ["check_defined", "final_return", "returned"]


def final_return(flag, value, def_line: int):
    """The end of a function whose ``return``s were converted: return the value, or ``None``
    when no ``return`` ran (falling off the end), exactly as Python does."""
    if not is_traced(flag):
        # A value not set where the flag is: a `raise` recorded for run time (never read).
        return value if flag and not isinstance(value, Undefined) else None
    if value is None or isinstance(value, Undefined):
        return None  # every path that returns returns None, as falling off the end does
    filename = sys._getframe(1).f_code.co_filename
    raise NeedsPython(  # eager Python runs it: to_static falls back
        "some paths through this function return a value and others, decided by a traced "
        "value, fall off its end (returning None), and one XLA program cannot return both",
        Location(filename, def_line, 0, linecache.getline(filename, def_line).rstrip("\n")),
        "Add a `return` at the end of the function (or in every branch) so that every path "
        "returns a value of the same structure.",
    )


def returned(value):
    """The end of a function whose every path returns or raises: the value, or ``None`` where
    only raises set it (a raise recorded for run time returns a value no one reads: laxify's
    placeholder, a ``Fillable``). A name with no value that a ``return`` read (``return r``
    where ``r`` was assigned on other paths only) stays what it is: ``check_defined`` raises
    Python's ``UnboundLocalError`` for it."""
    return None if isinstance(value, Fillable) else value


def check_defined(value):
    """``return value`` where ``value`` may be a name with no value on this path."""
    if isinstance(value, Undefined):
        value._fail()
    return value
