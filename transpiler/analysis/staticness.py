"""Which expressions are certainly known while tracing (before any signature is known).

``static_rule`` gives the rule the IR's type inference applies to a ``py`` op: ``always``
(``x.shape[0]``, ``len(x)``, literals), ``operands`` (static when the names in ``deps`` are:
``n + 1``), ``never`` (``jnp.sum(x)``, any call we cannot see through).
"""

from __future__ import annotations

import ast

import libcst as cst

from laxify.ir.naming import is_runtime_name

from laxify.transpiler.analysis.features import RANGE_BUILTINS
from laxify.transpiler.analysis.walk import children, concrete_kinds

__all__ = ["StaticInfo", "static_rule", "literal_value", "stmt_static_rule"]

STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
ALWAYS_STATIC_CALLS = frozenset({"len", "isinstance", "type", "callable", "hasattr"})
PURE_BUILTINS = frozenset(
    {"int", "float", "bool", "abs", "min", "max", "round", "str", "range", "tuple", "divmod", "pow", "sum"}
)
# Converted `not`/`and`/`or`/`a if c else b`: static exactly when their operands are.
RUNTIME_OPERATORS = frozenset(
    {"not_", "not_raised", "and_", "or_", "ifexp", "compare", "python_op", "item", "one_item", "divide"}
)
_LITERAL_NAMES = {"True": True, "False": False, "None": None}

StaticInfo = tuple[str, tuple[str, ...]]


def _combine(parts: list[StaticInfo]) -> StaticInfo:
    if any(rule == "never" for rule, _ in parts):
        return "never", ()
    deps: dict[str, None] = {}
    for _, d in parts:
        for n in d:
            deps.setdefault(n)
    return ("operands", tuple(deps)) if deps else ("always", ())


def literal_value(node: cst.BaseExpression):
    """The Python value of a literal expression, or raise ValueError."""
    if type(node) is cst.Name and node.value in _LITERAL_NAMES:
        return _LITERAL_NAMES[node.value]
    if type(node) in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString):
        return ast.literal_eval(node.value)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        return -literal_value(node.expression)
    raise ValueError("not a literal")


def static_rule(node: cst.CSTNode) -> StaticInfo:
    """The static rule of an expression and the names it depends on."""
    if type(node) is cst.Name:
        if node.value in _LITERAL_NAMES:
            return "always", ()
        return "operands", (node.value,)
    if type(node) in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString):
        return "always", ()
    if type(node) is cst.Attribute:
        if node.attr.value in STATIC_ATTRIBUTES:
            return "always", ()
        return static_rule(node.value)
    if type(node) is cst.Lambda and not node.params.params:
        return static_rule(node.body)
    if type(node) is cst.Call:
        func = node.func
        if (
            type(func) is cst.Attribute
            and type(func.value) is cst.Name
            and is_runtime_name(func.value.value)
            and func.attr.value in RUNTIME_OPERATORS
        ):
            return _combine([static_rule(a.value) for a in node.args if a.keyword is None])
        if _of_range_bounds(node):
            # `len(r)`, `sum(r)` of a range of `range(n)`: known while tracing when its bounds are
            return _combine([static_rule(a.value) for a in node.args[1:]])
        if type(func) is cst.Name and func.value in ALWAYS_STATIC_CALLS:
            return "always", ()
        if type(func) is cst.Name and func.value in PURE_BUILTINS:
            return _combine([static_rule(a.value) for a in node.args])
        return "never", ()
    if type(node) in (
        cst.Subscript,
        cst.BinaryOperation,
        cst.UnaryOperation,
        cst.Comparison,
        cst.BooleanOperation,
        cst.IfExp,
        cst.Tuple,
        cst.List,
        cst.SubscriptElement,
        cst.Index,
        cst.Slice,
        cst.Element,
        cst.StarredElement,
        cst.Arg,
        cst.ComparisonTarget,
    ):
        parts = [static_rule(c) for c in children(node) if type(c) in _ANALYSED]
        return _combine(parts) if parts else ("always", ())
    if type(node) in (cst.LeftParen, cst.RightParen):
        return "always", ()
    return "never", ()


def _of_range_bounds(call: cst.Call) -> bool:
    """``_lx.builtin(f, ...)`` of ``range``, ``len`` or ``sum``, which converters/builtin_calls.py
    writes for a range used as a value: as known as its arguments."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and is_runtime_name(func.value.value)
        and func.attr.value in ("builtin", "builtin_in_try")
        and bool(call.args)
        and type(call.args[0].value) is cst.Name
        and call.args[0].value.value in RANGE_BUILTINS
    )


_ANALYSED = concrete_kinds(
    cst.BaseExpression, cst.SubscriptElement, cst.BaseSlice, cst.BaseElement, cst.Arg, cst.ComparisonTarget
)


def stmt_static_rule(stmt: cst.SimpleStatementLine, writes: bool = True) -> StaticInfo:
    """The rule for the names a simple statement line writes (``writes``: whether it writes any;
    an expression statement that writes nothing adds nothing to the rule)."""
    parts: list[StaticInfo] = []
    for small in stmt.body:
        if type(small) in (cst.Assign, cst.AnnAssign) and small.value is not None:
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target]
            if not all(type(t) in (cst.Name, cst.Tuple, cst.List) for t in targets):
                return "never", ()
            parts.append(static_rule(small.value))
        elif type(small) is cst.AugAssign:
            if type(small.target) is not cst.Name:
                return "never", ()
            parts.append(_combine([static_rule(small.target), static_rule(small.value)]))
        elif type(small) is cst.Expr and writes:
            # It writes what it changes in place (`lst.pop()`) or binds (`(y := ...)`): those
            # are known while tracing exactly when the expression is.
            parts.append(static_rule(small.value))
        elif type(small) in (cst.Expr, cst.Pass, cst.Assert):
            continue
        else:
            return "never", ()
    return _combine(parts) if parts else ("always", ())
