"""``while ... else`` / ``for ... else`` without ``break``: the ``else`` block simply follows the
loop (loops with ``break`` had their ``else`` handled by the break converter)."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import LOOP_ELSE

from laxify.transpiler.converters.base import Context, Converter, apply

__all__ = ["transform"]


class LoopElseTransformer(Converter):
    def leave_While(self, original_node, updated_node):
        return self._loop(updated_node)

    def leave_For(self, original_node, updated_node):
        return self._loop(updated_node)

    def _loop(self, loop):
        if loop.orelse is None:
            return loop
        block = loop.orelse.body
        if isinstance(block, cst.SimpleStatementSuite):
            after = [
                cst.SimpleStatementLine([small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                for small in block.body
            ]
        else:
            after = list(block.body)
        return cst.FlattenSentinel([loop.with_changes(orelse=None), *after])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (LOOP_ELSE,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, LoopElseTransformer(ctx))
