"""``continue`` → a per-iteration flag set where it stood; the rest of the iteration is guarded."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, apply
from laxify.transpiler.converters.guards import LoopJumpConverter, assign

__all__ = ["transform"]


class ContinueTransformer(LoopJumpConverter):
    jump = cst.Continue
    stem = "continue"

    def rebuild(self, loop, flag: str, body: list):
        # The flag is reset at the top of every iteration.
        body = [assign(flag, cst.Name("False")), *body]
        return loop.with_changes(body=loop.body.with_changes(body=body))


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Continue,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, ContinueTransformer(ctx))
