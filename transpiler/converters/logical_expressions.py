"""``and``/``or``/``not`` and chained comparisons → ``_lx.and_``/``_lx.or_``/``_lx.not_``/
``_lx.compare``: Python's short-circuit for Python values; for traced ones the operand Python
would give (``jnp.where``, or ``jnp.logical_*`` for booleans). The right-hand side is passed as
a lambda, evaluated only when needed (lazily, in a ``lax.cond`` branch, when it contains a call
that may have effects). An ``and``/``or`` whose value is only tested for truth (the test of an
``if``, ``while``, conditional expression or ``assert``, the operand of ``not``, or an operand
of such an ``and``/``or``) is marked: its result is then a boolean, and a Python operand such
as ``None`` decides by its Python truth value, stopping the evaluation where it decides the
result. ``condition=True`` marks the whole test of a statement or expression (its result stays
traced when a traced operand was read), ``truth_only=True`` an ``and``/``or`` inside one (its
result is a Python bool where a Python operand decided it, so that the enclosing ``and``/``or``
short-circuits as in Python). A chain ``a or b or c`` is one call with a lambda per later
operand."""

from __future__ import annotations

import libcst as cst

from laxify.ir.naming import is_runtime_name

from laxify.transpiler.analysis.features import CHAINED_COMPARISON

from laxify.transpiler.analysis.walk import children

from laxify.transpiler.analysis.staticness import RUNTIME_OPERATORS
from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above
from laxify.transpiler.converters.guards import contains, lazy_lambda, runtime_call

__all__ = ["transform", "lazy_keyword", "may_have_effects"]


_OPERATORS = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}


def _is_runtime_operator(node: cst.CSTNode) -> bool:
    func = getattr(node, "func", None)
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and is_runtime_name(func.value.value)
        and func.attr.value in RUNTIME_OPERATORS
    )


def may_have_effects(node: cst.CSTNode) -> bool:
    """Calls are assumed to have effects or cost; attribute reads and arithmetic are not.
    The converters' own operator calls (``_lx.and_`` ...) count by their operands."""
    stack = [node]  # not recursion: an `and` chain of 5,000 operands nests 5,000 deep
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and not _is_runtime_operator(node):
            return True
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(children(node))
    return False


def _flag(name: str) -> cst.Arg:
    """``name=True``."""
    return cst.Arg(
        cst.Name("True"),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def lazy_keyword() -> cst.Arg:
    """``lazy=True``: evaluate the operand in a ``lax.cond`` branch when traced."""
    return _flag("lazy")


def _same_chain(node: cst.BooleanOperation, left: cst.BaseExpression) -> bool:
    """``left`` continues the chain of ``node``: ``a or b or c`` is one call of three operands."""
    return isinstance(left, cst.BooleanOperation) and not left.lpar and type(left.operator) is type(node.operator)


class LogicalTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context):
        super().__init__(ctx)
        # Original `and`/`or` nodes whose value is only tested for truth: the whole test of an
        # `if`/`while`/conditional expression/`assert` (conditions), or inside one (tested).
        self._conditions: set[cst.BooleanOperation] = set()
        self._tested: set[cst.BooleanOperation] = set()
        # Left operands that continue their parent's chain (converted with the parent).
        self._chained: set[cst.BooleanOperation] = set()

    def _condition(self, expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.BooleanOperation):
            self._conditions.add(expr)

    def _tests(self, expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.BooleanOperation):
            self._tested.add(expr)

    def visit_If(self, node) -> None:
        self._condition(node.test)

    def visit_While(self, node) -> None:
        self._condition(node.test)

    def visit_IfExp(self, node) -> None:
        self._condition(node.test)

    def visit_Assert(self, node) -> None:
        self._condition(node.test)

    def visit_CompIf(self, node) -> None:
        self._condition(node.test)

    def visit_UnaryOperation(self, node) -> None:
        if isinstance(node.operator, cst.Not):
            self._tests(node.expression)

    def visit_BooleanOperation(self, node) -> None:
        if _same_chain(node, node.left):
            self._chained.add(node.left)
        if node in self._tested or node in self._conditions:
            # `bool(a or b)` is `bool(a) or bool(b)`
            self._tests(node.left)
            self._tests(node.right)

    def leave_UnaryOperation(self, original_node, updated_node):
        if not isinstance(updated_node.operator, cst.Not):
            return updated_node
        return runtime_call("not_", updated_node.expression).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar
        )

    def leave_BooleanOperation(self, original_node, updated_node):
        if original_node in self._chained:
            return updated_node  # the parent converts the whole chain
        operands = [updated_node.right]
        first = updated_node.left
        while _same_chain(updated_node, first):
            operands.append(first.right)
            first = first.left
        operands.reverse()
        if any(contains(o, (cst.NamedExpr,)) or isinstance(o, cst.NamedExpr) for o in operands):
            return updated_node  # `lambda: (n := ...)` would bind `n` in the lambda
        name = "and_" if isinstance(updated_node.operator, cst.And) else "or_"
        call = runtime_call(name, first, *(lazy_lambda(o) for o in operands))
        flags = []
        if any(may_have_effects(o) for o in operands):
            flags.append(lazy_keyword())
        if original_node in self._conditions:
            flags.append(_flag("condition"))
        elif original_node in self._tested:
            flags.append(_flag("truth_only"))
        return call.with_changes(args=[*call.args, *flags], lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Comparison(self, original_node, updated_node):
        if len(updated_node.comparisons) < 2:
            return updated_node
        # a < f(b) < c  →  _lx.compare(a, ("<", lambda: f(b)), ("<", lambda: c)): each operand
        # is evaluated once, and only as far as Python's short-circuit goes.
        pairs = [
            cst.Tuple(
                [
                    cst.Element(cst.SimpleString(repr(_OPERATORS[type(t.operator)]))),
                    cst.Element(lazy_lambda(t.comparator)),
                ]
            )
            for t in updated_node.comparisons
        ]
        call = runtime_call("compare", updated_node.left, *pairs)
        later = [t.comparator for t in updated_node.comparisons[1:]]
        if any(may_have_effects(c) for c in later):
            call = call.with_changes(args=[*call.args, lazy_keyword()])
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.BooleanOperation, cst.Not, CHAINED_COMPARISON)


def _target(node: cst.CSTNode) -> bool:
    """A node this converter rewrites (or marks: the operands of ``not``, ``and``, ``or``)."""
    kind = type(node)
    return (
        kind is cst.BooleanOperation
        or (kind is cst.UnaryOperation and type(node.operator) is cst.Not)
        or (kind is cst.Comparison and len(node.comparisons) > 1)
    )


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    # The `if`/`while`/conditional/`assert` whose test is an `and`/`or` is above it: entered.
    return transform_above(node, LogicalTransformer(ctx), _target)
