"""``with loop_options(...):`` → push the options, the block (converted like any other
code), pop them: the loops of the block are converted with those options."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import assign, runtime_call

__all__ = ["transform"]


def _is_loop_options(item: cst.WithItem) -> bool:
    call = item.item
    if item.asname is not None or not isinstance(call, cst.Call):
        return False
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    return name == "loop_options"


class LoopOptionsTransformer(OwnCodeConverter):
    def leave_With(self, original_node, updated_node):
        if len(updated_node.items) != 1 or not _is_loop_options(updated_node.items[0]):
            return updated_node
        if updated_node.asynchronous is not None or isinstance(updated_node.body, cst.SimpleStatementSuite):
            return updated_node
        self.ctx.pushes_loop_options = True
        depth = self.ctx.fresh("options")
        push = assign(depth, runtime_call("push_options", updated_node.items[0].item))
        pop = cst.SimpleStatementLine([cst.Expr(runtime_call("pop_options", cst.Name(depth)))])
        push = push.with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel([push, *updated_node.body.body, pop])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.With,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, LoopOptionsTransformer(ctx))
