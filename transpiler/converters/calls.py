"""Calls of user functions → ``_lx.call(f, ...)``, which converts ``f`` too when it is user
code (not jax, numpy, the standard library or an installed package)."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import USER_CALL, user_callee

from laxify.transpiler.converters.base import Context, OwnCodeConverter

__all__ = ["transform"]

class CallTransformer(OwnCodeConverter):
    def leave_Call(self, original_node, updated_node):
        if not user_callee(updated_node.func):
            return updated_node
        callee = cst.Attribute(cst.Name("_lx"), cst.Name("call"))
        return updated_node.with_changes(func=callee, args=[cst.Arg(updated_node.func), *updated_node.args])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (USER_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(CallTransformer(ctx))
