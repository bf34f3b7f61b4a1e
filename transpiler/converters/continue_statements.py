"""``continue`` → a per-iteration flag set where it stood; the rest of the iteration is guarded."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, Converter
from laxify.transpiler.converters.guards import assign, contains, guard_block, rewrite_blocks

__all__ = ["transform"]

_LOOPS = (cst.While, cst.For)


class ContinueTransformer(Converter):
    def leave_While(self, original_node, updated_node):
        return self._loop(updated_node)

    def leave_For(self, original_node, updated_node):
        return self._loop(updated_node)

    def _loop(self, loop):
        if not contains(loop.body, (cst.Continue,), stop=_LOOPS):
            return loop
        flag = self.ctx.fresh("continue")

        def replace(_jump):
            return [assign(flag, cst.Name("True"))]

        def rewrite(stmt):
            return rewrite_blocks(stmt, block, self.ctx.positions)

        def block(stmts):
            return guard_block(stmts, flag, (cst.Continue,), replace, rewrite, _LOOPS, self.ctx.positions)

        body = [assign(flag, cst.Name("False")), *block(list(loop.body.body))]
        return loop.with_changes(body=loop.body.with_changes(body=body))


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Continue,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(ContinueTransformer(ctx))
