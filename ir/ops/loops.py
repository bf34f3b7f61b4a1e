"""Loops: ``while``, ``for_range`` (``for i in range(...)``) and ``scan`` (``for x in xs``).

Each loop op's operands end with its carried initial values followed by the loop-invariant
values its regions read (``consts``); ``num_carries`` splits the two. Regions receive the
carries then the consts as block arguments and yield the new carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, Region, register_op


class _LoopOp(Op):
    lead: int = 0  # operands before the carries (bounds, the sequence)

    @property
    def num_carries(self) -> int:
        return self.attributes["num_carries"]

    @property
    def inits(self):
        return self.operands[self.lead : self.lead + self.num_carries]

    @property
    def consts(self):
        return self.operands[self.lead + self.num_carries :]

    def _verify_counts(self) -> None:
        n = self.attributes.get("num_carries")
        if not isinstance(n, int) or n < 0 or self.lead + n > len(self.operands):
            self.fail(f"'num_carries' must be an int between 0 and {len(self.operands) - self.lead}")
        if len(self.results) != n:
            self.fail(f"defines {len(self.results)} result(s) but carries {n} value(s)")
        max_iters = self.attributes.get("max_iters")
        if max_iters is not None and (not isinstance(max_iters, int) or max_iters < 0):
            self.fail("'max_iters' must be a non-negative int")

    def _verify_body(self, body: Region, extra_args: int) -> None:
        want = extra_args + len(self.operands) - self.lead
        if len(body.args) != want:
            self.fail(f"body has {len(body.args)} argument(s), expected {want}")
        self.expect_yield(body, self.num_carries, "body")


@register_op
@dataclass(eq=False)
class WhileOp(_LoopOp):
    """Repeats the body while the condition region yields true.

    Equivalent Python, for ``i = while(i0) {cond: yield(i < n)} {body: yield(i + 1)}``::

        i = i0
        while i < n:
            i = i + 1
    """

    name = "while"

    def verify(self) -> None:
        self._verify_counts()
        self.expect_regions(2)
        before, body = self.regions
        if len(before.args) != len(self.operands):
            self.fail(f"condition has {len(before.args)} argument(s), expected {len(self.operands)}")
        self.expect_yield(before, 1, "condition")
        self._verify_body(body, 0)


@register_op
@dataclass(eq=False)
class ForRangeOp(_LoopOp):
    """Runs the body once per element of ``range(start, stop, step)``.

    The body's first argument is the loop index. ``range_args`` is how many arguments the
    ``range(...)`` call was written with (3 if absent): ``range`` is called with those when it
    is not the builtin at run time. Equivalent Python::

        for i in range(start, stop, step):
            acc = acc + i
    """

    name = "for_range"
    lead = 3

    def verify(self) -> None:
        if len(self.operands) < 3:
            self.fail("'for_range' needs start, stop and step operands")
        if self.attributes.get("range_args", 3) not in (1, 2, 3):
            self.fail("'range_args' must be 1, 2 or 3")
        self._verify_counts()
        self.expect_regions(1)
        self._verify_body(self.regions[0], 1)


@register_op
@dataclass(eq=False)
class ScanOp(_LoopOp):
    """Runs the body once per element of a sequence (the leading axis of an array).

    The body's first argument is the element. Equivalent Python::

        for x in xs:
            acc = acc + x
    """

    name = "scan"
    lead = 1

    def verify(self) -> None:
        if not self.operands:
            self.fail("'scan' needs the sequence as its first operand")
        self._verify_counts()
        self.expect_regions(1)
        self._verify_body(self.regions[0], 1)
