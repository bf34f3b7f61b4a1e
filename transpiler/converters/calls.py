"""Calls of user functions → ``_lx.call(f, ...)``, which converts ``f`` too when it is user
code (not jax, numpy, the standard library or an installed package)."""

from __future__ import annotations

import builtins

import libcst as cst

from laxify.transpiler.converters.base import Context, Converter

__all__ = ["transform"]

_BUILTINS = frozenset(dir(builtins))


def _converts(func: cst.BaseExpression) -> bool:
    if isinstance(func, cst.Name):
        return func.value not in _BUILTINS and not func.value.startswith("_lx")
    # Methods of the object itself: `self.step(x)`; other attribute calls are library calls.
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls"))


class CallTransformer(Converter):
    depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.depth -= 1
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if not _converts(updated_node.func):
            return updated_node
        callee = cst.Attribute(cst.Name("_lx"), cst.Name("call"))
        return updated_node.with_changes(func=callee, args=[cst.Arg(updated_node.func), *updated_node.args])


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(CallTransformer(ctx))
