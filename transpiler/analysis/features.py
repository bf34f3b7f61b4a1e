"""Which constructs a function uses, found in one walk, so that the pipeline runs only the
converters that have something to convert."""

from __future__ import annotations

import builtins

import libcst as cst

from laxify.transpiler.analysis.walk import walk

__all__ = ["features", "user_callee", "APPEND_CALL", "CHAINED_COMPARISON", "ITERABLE_CALL", "LOOP_ELSE", "PRINT_CALL",
           "USER_CALL"]

CHAINED_COMPARISON = "chained comparison"
LOOP_ELSE = "loop else"
APPEND_CALL = "append call"
USER_CALL = "user call"
PRINT_CALL = "print call"
ITERABLE_CALL = "for over enumerate/zip/reversed"
_ITERABLE_BUILTINS = frozenset({"enumerate", "zip", "reversed"})

_BUILTINS = frozenset(dir(builtins))


def user_callee(func: cst.BaseExpression) -> bool:
    """A call laxify routes through ``_lx.call``: a plain name that is not a builtin, or a
    method of the object itself (``self.step(x)``)."""
    if isinstance(func, cst.Name):
        return func.value not in _BUILTINS and not func.value.startswith("_lx")
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls"))


def features(node: cst.CSTNode) -> set:
    """Node types present in ``node`` plus markers for the finer cases converters need."""
    found: set = set()
    for n in walk(node):
        kind = type(n)
        found.add(kind)
        if kind is cst.Comparison and len(n.comparisons) > 1:
            found.add(CHAINED_COMPARISON)
        elif kind in (cst.While, cst.For):
            if n.orelse is not None:
                found.add(LOOP_ELSE)
            it = getattr(n, "iter", None)
            if (type(it) is cst.Call and type(it.func) is cst.Name
                    and it.func.value in _ITERABLE_BUILTINS):
                found.add(ITERABLE_CALL)
        elif kind is cst.Call:
            func = n.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append":
                found.add(APPEND_CALL)
            if isinstance(func, cst.Name) and func.value == "print":
                found.add(PRINT_CALL)
            elif user_callee(func):
                found.add(USER_CALL)
    return found
