"""``break`` → a flag set where it stood, the rest of the iteration guarded by the flag, and the
loop condition (``while``) or the whole body (``for``) stopped by it; ``else`` runs unless it is set."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, Converter
from laxify.transpiler.converters.guards import (
    assign, contains, guard_block, lazy_lambda, not_flag, rewrite_blocks, runtime_call,
)

__all__ = ["transform"]

_LOOPS = (cst.While, cst.For)


class BreakTransformer(Converter):
    # Inner loops are left first, so a `break` found in a loop body is that loop's own.
    def leave_While(self, original_node, updated_node):
        return self._loop(updated_node)

    def leave_For(self, original_node, updated_node):
        return self._loop(updated_node)

    def _loop(self, loop):
        if not contains(loop.body, (cst.Break,), stop=_LOOPS):
            return loop
        flag = self.ctx.fresh("break")

        def replace(_jump):
            return [assign(flag, cst.Name("True"))]

        def rewrite(stmt):
            return rewrite_blocks(stmt, block, self.ctx.positions)

        def block(stmts):
            return guard_block(stmts, flag, (cst.Break,), replace, rewrite, _LOOPS, self.ctx.positions)

        body = block(list(loop.body.body))
        if isinstance(loop, cst.While):
            test = runtime_call("and_", not_flag(flag), lazy_lambda(loop.test))
            new_loop = loop.with_changes(test=test, body=loop.body.with_changes(body=body), orelse=None)
        else:
            item = self.ctx.fresh("item")
            rebind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(loop.target)], cst.Name(item))])
            guarded = cst.If(test=not_flag(flag), body=cst.IndentedBlock([rebind, *body]))
            new_loop = loop.with_changes(target=cst.Name(item), body=loop.body.with_changes(body=[guarded]),
                                         orelse=None)
        out = [assign(flag, cst.Name("False")), new_loop]
        if loop.orelse is not None:
            out.append(cst.If(test=not_flag(flag), body=loop.orelse.body))
        return cst.FlattenSentinel(out)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Break,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(BreakTransformer(ctx))
