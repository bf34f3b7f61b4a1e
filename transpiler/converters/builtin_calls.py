"""Builtins and ``math`` functions that have a rule for traced values → ``_lx.builtin(f, ...)``
(``_lx.builtin_in_try`` in the body of a ``try`` with ``except`` clauses or of a ``with``);
``a in b`` / ``a not in b`` → ``_lx.contains(b, a)`` / ``_lx.not_contains(b, a)``.

``range(...)`` is routed too where nothing needs its items one by one (:func:`range_values`):
given to ``len``/``sum``/``max``/``min``/``any``/``all``, searched with ``in``, indexed, or bound
to a name used only so. With a traced bound it is then a range the program answers from its
bounds (``runtime/iterables.py``); elsewhere (a ``for``, ``list(range(n))``) Python's own.

The runtime (``runtime/builtin_rules.py``) applies the rule only when an argument is traced and
the callee is the builtin itself, so a name the module rebinds later still means what it holds
then. A name the function binds itself (a parameter, an assignment) or a module global that is
not the builtin (the user's own ``max``) is left to the calls converter.
"""

from __future__ import annotations

import builtins
import math

import libcst as cst

from laxify.transpiler.analysis.features import (
    BUILTIN_CALL,
    CONTAINS,
    OF_RANGE,
    RANGE_VALUE,
    RULED_BUILTINS,
    RULED_MATH,
    is_range_call,
)
from laxify.transpiler.analysis.walk import caught_below, descendants, preorder
from laxify.transpiler.converters.base import (
    Context,
    OwnCodeConverter,
    holds_builtin,
    parenthesized_generator,
    transform_above,
)

__all__ = ["BUILTIN_NAMES", "MATH_NAMES", "transform"]

BUILTIN_NAMES, MATH_NAMES = RULED_BUILTINS, RULED_MATH
_MATH_FUNCTIONS = frozenset(id(getattr(math, name)) for name in MATH_NAMES)


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("_lx"), cst.Name(name))


class BuiltinCallTransformer(OwnCodeConverter):
    def is_builtin(self, func: cst.BaseExpression, names: frozenset) -> bool:
        return holds_builtin(self.ctx, func, names)

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
    ranges: frozenset = frozenset()  # ids of the `range(...)` calls routed (see `range_values`)
    range_names: frozenset = frozenset()  # names bound only to those, used only so

    def of_range(self, node) -> bool:
        """``len(...)``/``sum(...)`` of a routed range (``max`` and the others are ruled)."""
        if not (self.is_builtin(node.func, OF_RANGE) and node.args and node.args[0].keyword is None):
            return False
        first = node.args[0].value
        return id(first) in self.ranges or (type(first) is cst.Name and first.value in self.range_names)

    def leave_Call(self, original_node, updated_node):
        if (
            id(original_node) not in self.ranges
            and not self.ruled(updated_node.func)
            and not self.of_range(original_node)
        ):
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


def range_values(fn: cst.FunctionDef, transformer: BuiltinCallTransformer) -> tuple[set, set]:
    """The ``range(...)`` calls (ids) whose value needs no item one by one, and the names bound
    only to such calls and used only so. A use that needs no item: the first argument of
    ``len``/``sum``/``max``/``min``/``any``/``all``, the right of ``in``/``not in``, the value
    indexed by one index (not in the body of a ``try`` or ``with``, whose handler may catch its
    ``IndexError``). Anything else (a ``for``, ``list(r)``, ``r.index(k)``, a name of the same
    spelling bound otherwise or in a nested scope) keeps Python's own range."""
    nodes = preorder(fn)[0]  # (the pipeline's walk of this tree, remembered)
    loops = {id(n.iter) for n in nodes if type(n) is cst.For}
    if not any(is_range_call(n) and id(n) not in loops for n in nodes):
        return set(), set()
    in_place: set = set()
    skipped: set = set()  # Name nodes that are not the variable: attributes, keywords
    stores: dict = {}  # name → ids of the Name targets of `name = range(...)`
    subscripts: set = set()
    for node in nodes:
        kind = type(node)
        if kind is cst.Call:
            if transformer.is_builtin(node.func, OF_RANGE) and node.args and node.args[0].keyword is None:
                in_place.add(id(node.args[0].value))
            elif _is_runtime_call(node, ("item", "one_item")) and node.args:
                subscripts.add(id(node.args[0].value))  # (`r[k]`, which int arithmetic routes)
        elif kind is cst.Comparison:
            if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
                in_place.add(id(node.comparisons[0].comparator))
        elif kind is cst.Subscript:
            if len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index and node.slice[0].slice.star is None:
                subscripts.add(id(node.value))
        elif kind is cst.Attribute:
            skipped.add(id(node.attr))
        elif kind is cst.Arg and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif kind is cst.Assign:
            if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name and is_range_call(node.value):
                stores.setdefault(node.targets[0].target.value, set()).add(id(node.targets[0].target))
    # (an item assigned or deleted is no use of a range's: Python's TypeError, from its own range)
    subscripts -= {id(n.value) for t in _stored_targets(nodes) for n in descendants(t) if type(n) is cst.Subscript}
    in_place |= subscripts - caught_below(fn, subscripts)
    calls = {id(n) for n in nodes if is_range_call(n) and transformer.is_builtin(n.func, frozenset({"range"}))}
    names = set()
    for name, targets in stores.items():
        uses = [n for n in nodes if type(n) is cst.Name and n.value == name and id(n) not in skipped]
        if all(id(n) in in_place or id(n) in targets for n in uses):
            names.add(name)
    bound = {
        id(n.value)
        for n in nodes
        if type(n) is cst.Assign and type(n.targets[0].target) is cst.Name and n.targets[0].target.value in names
    }
    return {c for c in calls if c in in_place or c in bound}, names


def _stored_targets(nodes: list) -> list:
    """The targets of the assignments and ``del`` statements among ``nodes``."""
    found = []
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            found += [t.target for t in node.targets]
        elif kind in (cst.AugAssign, cst.AnnAssign, cst.Del):
            found.append(node.target)
    return found


def _is_runtime_call(node: cst.Call, attrs: tuple) -> bool:
    func = node.func
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "_lx"
        and func.attr.value in attrs
    )


def _rewrites(transformer: BuiltinCallTransformer, node: cst.CSTNode) -> bool:
    kind = type(node)
    if kind is cst.Call:
        return transformer.ruled(node.func) or id(node) in transformer.ranges or transformer.of_range(node)
    if kind is cst.Comparison:
        return len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn))
    return False


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (BUILTIN_CALL, CONTAINS, RANGE_VALUE)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    transformer = BuiltinCallTransformer(ctx)
    ranges, names = range_values(node, transformer)
    transformer.ranges, transformer.range_names = frozenset(ranges), frozenset(names)
    calls = {id(n) for n in descendants(node.body) if type(n) is cst.Call and _rewrites(transformer, n)}
    transformer.caught = frozenset(caught_below(node, calls)) if calls else frozenset()
    return transform_above(node, transformer, lambda n: _rewrites(transformer, n))
