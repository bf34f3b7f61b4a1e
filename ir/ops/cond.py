"""``cond``: n-way conditional, from ``if``/``elif``/``else`` (and ``match``)."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op


@register_op
@dataclass(eq=False)
class CondOp(Op):
    """Runs one of its branch regions, chosen by its conditions, and returns what it yields.

    With two regions the selector (the first operand) is a predicate: region 0 runs when it
    is true. With more and no ``num_tests``, it is an index into the regions. The other
    operands are the inputs; each region receives them as its block arguments and yields one
    value per result. ``static=True`` (set by static folding) means every condition is known
    while tracing.

    Equivalent Python, for ``y = cond(p, x) {^(x): yield(x+1)}, {^(x): yield(x-1)}``::

        if p:
            y = x + 1
        else:
            y = x - 1

    An ``if``/``elif``/.../``else`` chain is one ``cond`` with ``num_tests = m``: the regions
    are m *test* regions (the conditions of the ``elif`` arms, each yielding one value), then
    m + 2 branch regions (the ``if`` arm, the m ``elif`` arms, the ``else``). A test runs only
    when every condition before it is false, as in Python.

    ``return_guard = "<construct>"`` marks the ``if not <returned>:`` that the return converter
    puts around the code after a statement that may return (its true branch is that code):
    messages name the user's statement instead of an ``if`` the user did not write.
    ``after_raise`` marks such an ``if`` (or the one around a loop body) whose flag only a
    ``raise`` sets (``_lx.not_raised``): the runtime may compute its true branch on every run
    (see ``runtime/dispatch/conditionals.py``). Equivalent Python, for
    ``y = cond(p, x) {num_tests = 1} {^(x): yield(x < 0)}, {..1}, {..-1}, {..0}``::

        if p:
            y = 1
        elif x < 0:
            y = -1
        else:
            y = 0
    """

    name = "cond"

    @property
    def selector(self):
        return self.operands[0]

    @property
    def inputs(self):
        return self.operands[1:]

    @property
    def num_tests(self) -> int:
        return self.attributes.get("num_tests", 0)

    @property
    def tests(self):
        """The regions that compute the conditions of the ``elif`` arms."""
        return self.regions[: self.num_tests]

    @property
    def branches(self):
        """The regions that run: one per arm of the chain (``if``, ``elif``s, ``else``)."""
        return self.regions[self.num_tests :]

    def conditions(self) -> list:
        """The values that decide each arm, in order: the selector, then each test's yield."""
        return [self.selector, *(t.terminator.operands[0] for t in self.tests)]

    def verify(self) -> None:
        if not self.operands:
            self.fail("'cond' needs a selector operand")
        m = self.num_tests
        if not isinstance(m, int) or m < 0:
            self.fail("'num_tests' must be a non-negative int")
        if len(self.regions) < 2:
            self.fail(f"'cond' needs at least 2 regions, found {len(self.regions)}")
        if m and len(self.regions) != 2 * m + 2:
            self.fail(
                f"'cond' with {m} test(s) needs {m} test and {m + 2} branch regions, "
                f"found {len(self.regions)} region(s)"
            )
        for k, region in enumerate(self.regions):
            what = f"test {k}" if k < m else f"region {k - m}"
            if len(region.args) != len(self.inputs):
                self.fail(f"{what} has {len(region.args)} argument(s) but the op has {len(self.inputs)} input(s)")
            self.expect_yield(region, 1 if k < m else len(self.results), what)
