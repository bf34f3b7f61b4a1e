"""The IR checker: every op's own rules plus scoping (each value defined once, before use)."""

from __future__ import annotations

from laxify.ir.core import Function, Region, Value, VerifyError
from laxify.ir.ops import ReturnOp, YieldOp

__all__ = ["verify", "VerifyError"]


def _check_region(region: Region, visible: set[int], defined: set[int], top: bool) -> None:
    scope = set(visible)
    for arg in region.args:
        _define(arg, scope, defined, "block argument")
    for k, op in enumerate(region.ops):
        op.verify()
        for v in op.operands:
            if id(v) not in scope:
                op.fail(f"operand {v} is not defined before its use")
        if isinstance(op, YieldOp) and (top or k != len(region.ops) - 1):
            op.fail("'yield' must be the last op of a control-flow region")
        if isinstance(op, ReturnOp) and not top:
            op.fail("'return' may only appear in the function body, not inside a region")
        for inner in op.regions:
            _check_region(inner, scope, defined, top=False)
        for r in op.results:
            _define(r, scope, defined, f"result of '{op.name}'")


def _define(v: Value, scope: set[int], defined: set[int], what: str) -> None:
    if id(v) in defined:
        raise VerifyError(f"{v} ({what}) is defined more than once")
    defined.add(id(v))
    scope.add(id(v))


def verify(fn: Function) -> None:
    """Raise :class:`VerifyError` with the IR text if ``fn`` breaks an invariant."""
    try:
        defined: set[int] = set()
        scope: set[int] = set()
        for p in fn.params:
            _define(p, scope, defined, "parameter")
        _check_region(fn.body, scope, defined, top=True)
    except VerifyError as e:
        raise VerifyError(f"{e}\n\nin:\n{fn}") from None
