"""Which parameters' arrays a function may change in place, as NumPy code changes an argument.

A NumPy array argument is traced, as a JAX array is, but NumPy code changes it in place: the
caller sees the change, and so does every other name of the array or of a view of it::

    x += 1                   x[0] = 5                 x[1:] *= 2
    a = x; a += 1            row = x[1]; row[0] = 7   np.add(x, 1, out=x)
    for row in x: row *= 2   x.sort()

A traced value cannot change in place, so where a NumPy array is given for such a parameter the
function runs as Python (runtime/writeback.py ``numpy_in_place``).

Conservative: a name bound from the parameter (``a = x``, ``row = x[i]``, ``t = x.T``,
``v = x.reshape(...)``, ``for row in x``), anywhere in the function, may be a view of its array.
"""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.names import target_names
from laxify.transpiler.analysis.walk import preorder

__all__ = ["arrays_changed_in_place"]

# Methods of a NumPy array that give a view of it (``x.reshape(...)`` shares ``x``'s data).
_VIEW_METHODS = frozenset({"reshape", "view", "ravel", "transpose", "swapaxes", "squeeze", "diagonal"})
# Attributes that are no view of the array's data.
_NOT_VIEWS = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})
# Methods of a NumPy array that change it in place.
_CHANGING_METHODS = frozenset({"sort", "fill", "put", "itemset", "resize", "partition", "setfield", "byteswap"})
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
_WATCHED = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.Call})
# The statements (where a change is reported): libcst's concrete statement classes.
_STATEMENTS = frozenset(
    kind
    for kind in vars(cst).values()
    if isinstance(kind, type)
    and issubclass(kind, (cst.BaseSmallStatement, cst.BaseCompoundStatement))
    and not kind.__name__.startswith("Base")
)


def _root(expr: cst.BaseExpression) -> str | None:
    """The name whose array ``expr`` may be (a view of): ``x`` for ``x``, ``x[1:]``, ``x.T``,
    ``x.reshape(2, 2)``; ``None`` for anything else."""
    while True:
        kind = type(expr)
        if kind is cst.Name:
            return expr.value
        if kind is cst.Subscript:
            expr = expr.value
        elif kind is cst.Attribute:
            if expr.attr.value in _NOT_VIEWS:
                return None
            expr = expr.value
        elif kind is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _VIEW_METHODS:
            expr = expr.func.value
        else:
            return None


def _params(fn: cst.FunctionDef) -> list[str]:
    params = fn.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            names.append(star.name.value)
    return names


def arrays_changed_in_place(fn: cst.FunctionDef) -> dict[str, cst.CSTNode]:
    """``{parameter: the first statement that may change its array in place}`` (see the
    module's docstring), in the order of the parameters."""
    params = _params(fn)
    if not params:
        return {}
    views: dict[str, set[str]] = {}  # name -> the names whose array it may be a view of
    changes: list[tuple[str, cst.CSTNode]] = []  # (the name changed, its statement)

    def bind(target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if type(target) in (cst.Tuple, cst.List) and type(value) in (cst.Tuple, cst.List):
            if len(target.elements) == len(value.elements):
                for t, v in zip(target.elements, value.elements):
                    bind(t.value, v.value)
                return
        root = _root(value)
        if root is not None:
            for name in target_names(target):
                views.setdefault(name, set()).add(root)

    def changed(target: cst.BaseExpression, stmt: cst.CSTNode) -> None:
        if type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                changed(element.value, stmt)
        elif type(target) is cst.Subscript:
            root = _root(target)
            if root is not None:
                changes.append((root, stmt))

    nodes, depths = preorder(fn)  # (one walk, shared with the other analyses of the tree)
    statements: list[tuple[int, cst.CSTNode]] = []  # the statements around the node: (depth, node)
    skip = -1  # the depth of a nested scope being skipped (-1: none)
    for node, depth in zip(nodes, depths):
        if skip >= 0:
            if depth > skip:
                continue
            skip = -1
        kind = type(node)
        if kind in _SCOPES:
            if depth:
                skip = depth  # (a nested function's parameters are its own)
            continue
        if kind not in _STATEMENTS and kind not in _WATCHED:
            continue
        while statements and statements[-1][0] >= depth:
            statements.pop()
        if kind in _STATEMENTS:
            statements.append((depth, node))
            if kind not in _WATCHED:
                continue
        stmt = statements[-1][1] if statements else fn
        if kind is cst.Assign:
            for target in node.targets:
                bind(target.target, node.value)
                changed(target.target, stmt)
        elif kind is cst.AnnAssign:
            if node.value is not None:
                bind(node.target, node.value)
                changed(node.target, stmt)
        elif kind is cst.AugAssign:
            root = _root(node.target)
            if root is not None:
                changes.append((root, stmt))
        elif kind is cst.For or kind is cst.CompFor:
            root = _root(node.iter)
            if root is not None:
                for name in target_names(node.target):
                    views.setdefault(name, set()).add(root)
        else:  # a call
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in _CHANGING_METHODS:
                root = _root(func.value)
                if root is not None:
                    changes.append((root, stmt))
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "out":
                    outs = [e.value for e in arg.value.elements] if type(arg.value) is cst.Tuple else [arg.value]
                    for value in outs:
                        root = _root(value)
                        if root is not None:
                            changes.append((root, stmt))

    found: dict[str, cst.CSTNode] = {}
    for name, stmt in changes:
        for param in _params_behind(name, views, params):
            found.setdefault(param, stmt)
    return {p: found[p] for p in params if p in found}


def _params_behind(name: str, views: dict[str, set[str]], params: list[str]) -> set[str]:
    """The parameters whose array ``name`` may be (a view of)."""
    found, seen, stack = set(), set(), [name]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in params:
            found.add(current)
        stack.extend(views.get(current, ()))
    return found
