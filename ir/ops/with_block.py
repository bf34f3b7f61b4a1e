"""``with``: a block run inside Python context managers, entered and left while tracing."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op


@register_op
@dataclass(eq=False)
class WithOp(Op):
    """Runs its one region inside the ``with`` statement whose first line is ``code`` (Python
    such as ``with jax.named_scope("blk") as s:``), and returns what the region yields.

    The operands are the inputs: the region receives them as its first block arguments,
    followed by ``num_targets`` arguments for the names the ``as`` targets bind. The region
    yields one value per result. The items stay Python: they are entered and left while the
    function is traced, around whatever the region becomes.

    Equivalent Python, for ``y = with(x) {code = "with scope('a') as s:", num_targets = 1}
    {^(x, s): yield(x + 1)}``::

        with scope('a') as s:
            y = x + 1
    """

    name = "with"

    @property
    def num_targets(self) -> int:
        return self.attributes["num_targets"]

    def verify(self) -> None:
        if not isinstance(self.attributes.get("code"), str):
            self.fail("'code' attribute must be a string")
        n = self.attributes.get("num_targets")
        if not isinstance(n, int) or n < 0:
            self.fail("'num_targets' must be a non-negative int")
        self.expect_regions(1)
        region = self.regions[0]
        if len(region.args) != len(self.operands) + n:
            self.fail(
                f"region has {len(region.args)} argument(s), expected {len(self.operands)} input(s) and {n} target(s)"
            )
        self.expect_yield(region, len(self.results), "region")
