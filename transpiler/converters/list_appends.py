"""``xs.append(v)`` inside a loop → ``xs = _lx.append(xs, v)``: the list becomes a value the
loop carries, so that a traced loop can turn it into a stacked per-iteration output."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import APPEND_CALL

from laxify.transpiler.converters.base import Context, OwnCodeConverter
from laxify.transpiler.converters.guards import runtime_call

__all__ = ["transform"]


def _append_call(small: cst.BaseSmallStatement) -> tuple[cst.Name, cst.BaseExpression] | None:
    """``(xs, v)`` for the statement ``xs.append(v)``, else None."""
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return func.value, call.args[0].value


class ListAppendTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context):
        super().__init__(ctx)
        self.loops = 0

    def visit_While(self, node):
        self.loops += 1

    def visit_For(self, node):
        self.loops += 1

    def leave_While(self, original_node, updated_node):
        self.loops -= 1
        return updated_node

    def leave_For(self, original_node, updated_node):
        self.loops -= 1
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        found = _append_call(updated_node) if self.loops else None
        if found is None:
            return updated_node
        name, value = found
        return cst.Assign([cst.AssignTarget(cst.Name(name.value))], runtime_call("append", name, value))


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (APPEND_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(ListAppendTransformer(ctx))
