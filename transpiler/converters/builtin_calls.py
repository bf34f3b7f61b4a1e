"""Builtins and ``math`` functions that have a rule for traced values → ``_lx.builtin(f, ...)``
(``_lx.builtin_in_try`` in the body of a ``try`` with ``except`` clauses or of a ``with``);
``a in b`` / ``a not in b`` → ``_lx.contains(b, a)`` / ``_lx.not_contains(b, a)``.

The runtime (``runtime/builtin_rules.py``) applies the rule only when an argument is traced and
the callee is the builtin itself, so a name the module rebinds later still means what it holds
then. A name the function binds itself (a parameter, an assignment) or a module global that is
not the builtin (the user's own ``max``) is left to the calls converter.
"""

from __future__ import annotations

import builtins
import math

import libcst as cst

from laxify.transpiler.analysis.features import BUILTIN_CALL, CONTAINS, RULED_BUILTINS, RULED_MATH
from laxify.transpiler.analysis.walk import caught_below, descendants
from laxify.transpiler.converters.base import Context, OwnCodeConverter, parenthesized_generator, transform_above

__all__ = ["BUILTIN_NAMES", "MATH_NAMES", "transform"]

BUILTIN_NAMES, MATH_NAMES = RULED_BUILTINS, RULED_MATH
_MATH_FUNCTIONS = frozenset(id(getattr(math, name)) for name in MATH_NAMES)


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("_lx"), cst.Name(name))


class BuiltinCallTransformer(OwnCodeConverter):
    def ruled(self, func: cst.BaseExpression) -> bool:
        """Whether ``func`` names a builtin or math function with a rule."""
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.ctx.local_names:
                return False
            is_global, value = self.ctx.global_value(name)
            if is_global:  # `from math import floor`, or a global that shadows a builtin
                return id(value) in _MATH_FUNCTIONS or (name in BUILTIN_NAMES and value is getattr(builtins, name))
            return name in BUILTIN_NAMES
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in MATH_NAMES:
            is_global, value = self.ctx.global_value(func.value.value)
            return is_global and value is math
        return False

    caught: frozenset = frozenset()  # ids of the calls in a `try` or `with` body

    def leave_Call(self, original_node, updated_node):
        if not self.ruled(updated_node.func):
            return updated_node
        args = [parenthesized_generator(a) for a in updated_node.args]
        entry = "builtin_in_try" if id(original_node) in self.caught else "builtin"
        return updated_node.with_changes(func=_runtime(entry), args=[cst.Arg(updated_node.func), *args])

    def leave_Comparison(self, original_node, updated_node):
        if len(updated_node.comparisons) != 1:
            return updated_node  # chained: `_lx.compare` (logical expressions) does the `in`
        target = updated_node.comparisons[0]
        if isinstance(target.operator, cst.In):
            name = "contains"
        elif isinstance(target.operator, cst.NotIn):
            name = "not_contains"
        else:
            return updated_node
        return cst.Call(
            _runtime(name),
            [cst.Arg(target.comparator), cst.Arg(updated_node.left)],
            lpar=updated_node.lpar,
            rpar=updated_node.rpar,
        )


def _rewrites(transformer: BuiltinCallTransformer, node: cst.CSTNode) -> bool:
    kind = type(node)
    if kind is cst.Call:
        return transformer.ruled(node.func)
    if kind is cst.Comparison:
        return len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn))
    return False


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (BUILTIN_CALL, CONTAINS)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    transformer = BuiltinCallTransformer(ctx)
    calls = {id(n) for n in descendants(node.body) if type(n) is cst.Call and transformer.ruled(n.func)}
    transformer.caught = frozenset(caught_below(node, calls)) if calls else frozenset()
    return transform_above(node, transformer, lambda n: _rewrites(transformer, n))
