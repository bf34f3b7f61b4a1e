"""``and``/``or``/``not`` and chained comparisons → ``_lx.and_``/``_lx.or_``/``_lx.not_``:
Python's short-circuit for Python values, ``jnp.logical_*`` for traced ones. The right-hand
side is passed as a lambda, evaluated only when needed (lazily, in a ``lax.cond`` branch, when
it contains a call that may have effects)."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import CHAINED_COMPARISON

from laxify.transpiler.analysis.walk import children

from laxify.transpiler.analysis.staticness import RUNTIME_OPERATORS
from laxify.transpiler.converters.base import Context, OwnCodeConverter
from laxify.transpiler.converters.guards import contains, lazy_lambda, runtime_call

__all__ = ["transform", "lazy_keyword", "may_have_effects"]


_OPERATORS = {
    cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
    cst.Equal: "==", cst.NotEqual: "!=", cst.In: "in", cst.NotIn: "not in", cst.Is: "is",
    cst.IsNot: "is not",
}


def _is_runtime_operator(node: cst.CSTNode) -> bool:
    func = getattr(node, "func", None)
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == "_lx" and func.attr.value in RUNTIME_OPERATORS)


def may_have_effects(node: cst.CSTNode) -> bool:
    """Calls are assumed to have effects or cost; attribute reads and arithmetic are not.
    The converters' own operator calls (``_lx.and_`` ...) count by their operands."""
    if isinstance(node, cst.Call) and not _is_runtime_operator(node):
        return True
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return False
    return any(may_have_effects(child) for child in children(node))


def lazy_keyword() -> cst.Arg:
    """``lazy=True``: evaluate the operand in a ``lax.cond`` branch when traced."""
    return cst.Arg(cst.Name("True"), keyword=cst.Name("lazy"),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def _lazy_arg(node: cst.BaseExpression) -> list[cst.Arg]:
    return [lazy_keyword()] if may_have_effects(node) else []


class LogicalTransformer(OwnCodeConverter):
    def leave_UnaryOperation(self, original_node, updated_node):
        if not isinstance(updated_node.operator, cst.Not):
            return updated_node
        return runtime_call("not_", updated_node.expression).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_BooleanOperation(self, original_node, updated_node):
        if contains(updated_node.right, (cst.NamedExpr,)) or isinstance(updated_node.right, cst.NamedExpr):
            return updated_node
        name = "and_" if isinstance(updated_node.operator, cst.And) else "or_"
        call = runtime_call(name, updated_node.left, lazy_lambda(updated_node.right))
        return call.with_changes(args=[*call.args, *_lazy_arg(updated_node.right)],
                                 lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Comparison(self, original_node, updated_node):
        if len(updated_node.comparisons) < 2:
            return updated_node
        # a < f(b) < c  →  _lx.compare(a, ("<", lambda: f(b)), ("<", lambda: c)): each operand
        # is evaluated once, and only as far as Python's short-circuit goes.
        pairs = [
            cst.Tuple([cst.Element(cst.SimpleString(repr(_OPERATORS[type(t.operator)]))),
                       cst.Element(lazy_lambda(t.comparator))])
            for t in updated_node.comparisons
        ]
        call = runtime_call("compare", updated_node.left, *pairs)
        later = [t.comparator for t in updated_node.comparisons[1:]]
        if any(may_have_effects(c) for c in later):
            call = call.with_changes(args=[*call.args, lazy_keyword()])
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.BooleanOperation, cst.Not, CHAINED_COMPARISON)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return node.visit(LogicalTransformer(ctx))
