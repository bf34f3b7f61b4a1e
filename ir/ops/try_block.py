"""``try``: a Python ``try`` statement whose blocks are converted, entered while tracing."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Op, register_op


@register_op
@dataclass(eq=False)
class TryOp(Op):
    """A ``try`` statement kept as Python around converted blocks: one region per block in
    the order written (the ``try`` body, each ``except``, the ``else``, the ``finally``), each
    opened by its header in ``headers`` (``"try:"``, ``"except ValueError as e:"``, ...).

    The operands are the inputs; every region receives them as its first block arguments (an
    ``except`` region then one argument per name its ``as`` binds: ``targets[k]``) and yields
    one value per result. Only the body starts from the operands: a handler may start from any
    point of the body (whatever had run when it raised), and ``else``/``finally`` after it, so
    their arguments stand for the names' values at that point, of unknown type. The blocks run
    as Python while tracing (an exception is a Python exception raised while tracing, as under
    ``jax.jit``); what they contain is converted like any other block.

    Equivalent Python, for ``y = try(x) {headers = ["try:", "except ValueError:"]}
    {^(x): yield(f(x))}, {^(x): yield(x)}``::

        try:
            y = f(x)
        except ValueError:
            y = x
    """

    name = "try"

    def verify(self) -> None:
        headers = self.attributes.get("headers")
        if not isinstance(headers, (list, tuple)) or not all(isinstance(h, str) for h in headers):
            self.fail("'headers' attribute must be a list of strings")
        if len(headers) != len(self.regions) or len(self.regions) < 2:
            self.fail(
                f"'try' needs one header per region and at least 2 regions, found "
                f"{len(headers)} header(s) and {len(self.regions)} region(s)"
            )
        targets = self.attributes.get("targets", [0] * len(self.regions))
        if len(targets) != len(self.regions) or not all(isinstance(t, int) and t >= 0 for t in targets):
            self.fail("'targets' must give a non-negative int per region")
        for k, (region, extra) in enumerate(zip(self.regions, targets)):
            if len(region.args) != len(self.operands) + extra:
                self.fail(
                    f"region {k} has {len(region.args)} argument(s), expected "
                    f"{len(self.operands)} input(s) and {extra} target(s)"
                )
            self.expect_yield(region, len(self.results), f"region {k}")
