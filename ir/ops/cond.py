"""``cond``: n-way conditional, from ``if``/``elif``/``else`` (and ``match``)."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op


@register_op
@dataclass(eq=False)
class CondOp(Op):
    """Runs one of its regions, chosen by the first operand, and returns what it yields.

    With two regions the selector is a predicate: region 0 runs when it is true. With more,
    it is an index into the regions (``lax.switch``). The other operands are the inputs;
    each region receives them as its block arguments and yields one value per result.
    ``static=True`` (set by static folding) means the selector is known while tracing.

    Equivalent Python, for ``y = cond(p, x) {^(x): yield(x+1)}, {^(x): yield(x-1)}``::

        if p:
            y = x + 1
        else:
            y = x - 1
    """

    name = "cond"

    @property
    def selector(self):
        return self.operands[0]

    @property
    def inputs(self):
        return self.operands[1:]

    def verify(self) -> None:
        if not self.operands:
            self.fail("'cond' needs a selector operand")
        if len(self.regions) < 2:
            self.fail(f"'cond' needs at least 2 regions, found {len(self.regions)}")
        for k, region in enumerate(self.regions):
            if len(region.args) != len(self.inputs):
                self.fail(
                    f"region {k} has {len(region.args)} argument(s) but the op has "
                    f"{len(self.inputs)} input(s)"
                )
            self.expect_yield(region, len(self.results), f"region {k}")
