"""``break`` → a flag set where it stood, the rest of the iteration guarded by the flag, and the
loop condition (``while``) or the whole body (``for``) stopped by it; ``else`` runs unless it is set."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, apply
from laxify.transpiler.converters.guards import LoopJumpConverter, assign, loop_test, not_flag

__all__ = ["transform"]


class BreakTransformer(LoopJumpConverter):
    jump = cst.Break
    stem = "break"

    def rebuild(self, loop, flag: str, body: list):
        if isinstance(loop, cst.While):
            test = loop_test(flag, loop.test)
            new_loop = loop.with_changes(test=test, body=loop.body.with_changes(body=body), orelse=None)
        else:
            # The target is rebound under the guard, so after a break it keeps the element
            # it had when the loop broke off (the scan itself runs on to the end).
            item = self.ctx.fresh("item")
            rebind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(loop.target)], cst.Name(item))])
            guarded = cst.If(test=not_flag(flag), body=cst.IndentedBlock([rebind, *body]))
            new_loop = loop.with_changes(
                target=cst.Name(item), body=loop.body.with_changes(body=[guarded]), orelse=None
            )
        out = [assign(flag, cst.Name("False")), new_loop]
        if loop.orelse is not None:
            out.append(cst.If(test=not_flag(flag), body=loop.orelse.body))
        return cst.FlattenSentinel(out)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Break,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, BreakTransformer(ctx))
