"""Terminators: ``yield`` ends a control-flow region, ``return`` leaves the function."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op


@register_op
@dataclass(eq=False)
class YieldOp(Op):
    """Hands the region's values back to the op that owns the region.

    Equivalent Python, for a branch region of ``y = cond(...)``::

        return (y,)        # inside the branch function
    """

    name = "yield"

    def verify(self) -> None:
        if self.results or self.regions:
            self.fail("'yield' defines no results and has no regions")


@register_op
@dataclass(eq=False)
class ReturnOp(Op):
    """Leaves the function with its operand (or ``None`` when it has none).

    Equivalent Python::

        return value
    """

    name = "return"

    def verify(self) -> None:
        if len(self.operands) > 1:
            self.fail(f"'return' takes at most one operand, found {len(self.operands)}")
        if self.results or self.regions:
            self.fail("'return' defines no results and has no regions")
