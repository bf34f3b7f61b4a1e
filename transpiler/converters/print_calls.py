"""``print(...)`` → ``_lx.print_(...)``: ``jax.debug.print`` when an argument is traced (it
then prints every time the program runs, not once while tracing), Python's ``print`` otherwise."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import PRINT_CALL
from laxify.transpiler.converters.base import Context, OwnCodeConverter

__all__ = ["transform"]


class PrintTransformer(OwnCodeConverter):
    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if isinstance(func, cst.Name) and func.value == "print":
            return updated_node.with_changes(func=cst.Attribute(cst.Name("_lx"), cst.Name("print_")))
        return updated_node


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (PRINT_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(PrintTransformer(ctx))
