"""``a if c else b`` → ``_lx.ifexp(c, lambda: a, lambda: b)``: Python for a Python ``c``;
``select_n`` for cheap pure operands, ``lax.cond`` when an operand contains a call."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above
from laxify.transpiler.converters.guards import contains, lazy_lambda, runtime_call
from laxify.transpiler.converters.logical_expressions import lazy_keyword, may_have_effects

__all__ = ["transform"]


class ConditionalTransformer(OwnCodeConverter):
    def leave_IfExp(self, original_node, updated_node):
        if contains(updated_node, (cst.NamedExpr,)):
            return updated_node
        call = runtime_call(
            "ifexp", updated_node.test, lazy_lambda(updated_node.body), lazy_lambda(updated_node.orelse)
        )
        if may_have_effects(updated_node.body) or may_have_effects(updated_node.orelse):
            call = call.with_changes(args=[*call.args, lazy_keyword()])
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.IfExp,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return transform_above(node, ConditionalTransformer(ctx), lambda n: type(n) is cst.IfExp)
