"""Divisions → ``_lx.divide(a, b)`` (``a /= b`` of a name → ``a = _lx.divide(a, b, True)``):
the quotient rounded as eager JAX rounds it where the dividend is a traced scalar and the
divisor a constant of the program (``runtime/numbers.py`` ``divide``: XLA would multiply by
the constant's reciprocal instead). Anything else is the operator itself.

Left as written: a divisor that is a number literal whose reciprocal is exact (a power of
two) or zero, a string divisor (``path / "name"``), a number or string literal as the
dividend (never a traced scalar), and ``/=`` of an attribute or an item (the object's own
``__itruediv__``, which an assignment of the quotient would bypass).
"""

from __future__ import annotations

import math

import libcst as cst

from laxify.transpiler.analysis.staticness import literal_value
from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above

__all__ = ["transform"]

_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _number(node: cst.BaseExpression):
    """The value of a number literal (``3``, ``-0.5``), else None."""
    try:
        value = literal_value(node)
    except (ValueError, SyntaxError):
        return None
    return value if type(value) in (int, float) else None


def _routed(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """Whether ``left / right`` goes through ``_lx.divide``."""
    if type(left) in _STRINGS or type(right) in _STRINGS or _number(left) is not None:
        return False
    divisor = _number(right)
    if divisor is None:
        return True
    return divisor != 0 and math.isfinite(divisor) and abs(math.frexp(divisor)[0]) != 0.5


def _divide(left: cst.BaseExpression, right: cst.BaseExpression, in_place: bool = False) -> cst.Call:
    args = [cst.Arg(left), cst.Arg(right)]
    if in_place:
        args.append(cst.Arg(cst.Name("True")))
    return cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name("divide")), args)


def _is_target(node: cst.CSTNode) -> bool:
    kind = type(node)
    if kind is cst.BinaryOperation:
        return type(node.operator) is cst.Divide and _routed(node.left, node.right)
    if kind is cst.AugAssign:
        return (
            type(node.operator) is cst.DivideAssign
            and type(node.target) is cst.Name
            and _routed(node.target, node.value)
        )
    return False


class DivisionTransformer(OwnCodeConverter):
    def leave_BinaryOperation(self, original_node, updated_node):
        if not _is_target(original_node):
            return updated_node
        return _divide(updated_node.left, updated_node.right).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar
        )

    def leave_AugAssign(self, original_node, updated_node):
        if not _is_target(original_node):
            return updated_node
        return cst.Assign(
            targets=[cst.AssignTarget(updated_node.target)],
            value=_divide(updated_node.target, updated_node.value, in_place=True),
        )


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Divide, cst.DivideAssign)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return transform_above(node, DivisionTransformer(ctx), _is_target)
