"""``xs.append(v)`` inside a loop → ``xs = _lx.append(xs, v)``: the list becomes a value the
loop carries, so that a traced loop can turn it into a stacked per-iteration output.

After such a loop the name may hold the stacked array. Before a statement that uses the list
as only a list can be used (``xs + ys``, ``xs * 2``, ``xs == ys``, ``xs[1:]``,
``xs.extend(...)``, ``xs += ...``, ``print(xs)``, ``str(xs)``, ``f"{xs}"``) the name gets
``xs = _lx.as_list(xs)``: the same list for a Python list, the list of rows for a stacked
array, so that the operator is the list's, not the array's."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import APPEND_CALL
from laxify.transpiler.analysis.names import block_access
from laxify.transpiler.analysis.walk import children, concrete_kinds

from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply, transform_above
from laxify.transpiler.converters.guards import runtime_call

__all__ = ["grown_lists", "shared_names", "transform"]


def _append_call(small: cst.BaseSmallStatement) -> tuple[cst.Name, cst.BaseExpression] | None:
    """``(xs, v)`` for the statement ``xs.append(v)``, else None."""
    if type(small) is not cst.Expr or type(small.value) is not cst.Call:
        return None
    call = small.value
    func = call.func
    if not (type(func) is cst.Attribute and func.attr.value == "append" and type(func.value) is cst.Name):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return func.value, call.args[0].value


class ListAppendTransformer(OwnCodeConverter):
    """``shared``: names whose list another name (or the caller) may refer to: their appends
    stay Python's ``xs.append(v)`` (see ``shared_names``). So do the appends to a name the
    function does not bind itself (a module's list, a closure's): the object outlives the call,
    and a loop carrying it would make it a local name with no value before the loop."""

    def __init__(self, ctx: Context, fn: cst.FunctionDef, shared: frozenset[str] = frozenset()):
        super().__init__(ctx)
        self.loops = 0
        self.appended: set[str] = set()
        self.shared = shared
        self.fn = fn
        self.bound: frozenset[str] | None = None  # the names the function binds (when needed)

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
        if self.bound is None:
            self.bound = _bound_names(self.fn)
        if name.value in self.shared or name.value not in self.bound:
            return updated_node
        self.appended.add(name.value)
        return cst.Assign([cst.AssignTarget(cst.Name(name.value))], runtime_call("append", name, value))


_ALIASING = (cst.Name, cst.Subscript, cst.Attribute)
_DISPLAYS = (cst.List, cst.Tuple, cst.Set, cst.Dict)


def shared_names(fn: cst.FunctionDef) -> frozenset[str]:
    """Names whose list may be referred to by another name too: parameters (the caller holds
    the list), `global`/`nonlocal` names, targets of `for`/`with`/`except`, names assigned
    from a name, an item or an attribute (`b = a`, `row = grid[0]`), and names given to
    another name or put into a container assigned to a name (`b = a`, `d = {"k": a}`). An
    append loop turns its list into a new stacked value, which such another name would not
    see: their appends stay Python's (a traced loop then falls back, as for any effect on
    an object it does not carry: runtime/effects.py)."""
    params = fn.params
    shared = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            shared.add(star.name.value)
    stack = list(children(fn.body))
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Assign or kind is cst.AnnAssign:
            value = node.value
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
            if isinstance(value, _ALIASING):
                for target in targets:
                    shared |= _bound(target)
            if type(value) is cst.Name:
                shared.add(value.value)
            shared |= _held(value)
        elif kind in (cst.For, cst.CompFor):
            shared |= _bound(node.target)
        elif kind is cst.AsName:
            shared |= _bound(node.name)
        elif kind in (cst.Global, cst.Nonlocal):
            shared |= {item.name.value for item in node.names}
        stack.extend(children(node))
    return frozenset(shared)


def _bound_names(fn: cst.FunctionDef) -> frozenset[str]:
    """The names ``fn`` binds itself: its parameters and the names its body assigns."""
    names = set(block_access(fn.body).binds)
    params = fn.params
    names.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            names.add(star.name.value)
    return frozenset(names)


def _held(value) -> set[str]:
    """The names a display assigned to a name holds (``d = {"k": a}``, ``rows = [a, [b]]``)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) not in _DISPLAYS:
            continue
        for element in node.elements:
            parts = (
                (element.key, element.value) if type(element) is cst.DictElement else (getattr(element, "value", None),)
            )
            for part in parts:
                if type(part) is cst.Name:
                    found.add(part.value)
                else:
                    stack.append(part)
    return found


def grown_lists(stmt: cst.CSTNode) -> list[str]:
    """The names ``stmt`` calls ``append``/``extend``/``insert`` on (not in nested scopes)."""
    found: list[str] = []
    stack = list(children(stmt))
    while stack:
        node = stack.pop()
        if type(node) in _SCOPES:
            continue
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and type(node.func.value) is cst.Name
            and node.func.attr.value in ("append", "extend", "insert")
            and node.func.value.value not in found
        ):
            found.append(node.func.value.value)
        stack.extend(children(node))
    return found


_LIST_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "index", "count", "reverse", "sort", "copy", "clear"}
)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_SUITES = concrete_kinds(cst.BaseSuite)


def _list_names(fn: cst.FunctionDef, appended: set[str]) -> set[str]:
    """Of ``appended``, the names the function binds only to lists (``[]``, ``[...]``,
    ``list(...)``, the appends above, ``+=``/``*=``): those are lists in Python wherever they
    are used."""
    params = fn.params
    names = set(appended) - {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    stack = list(children(fn.body))
    while stack:
        node = stack.pop()
        if type(node) in _SCOPES:
            continue
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                if (
                    type(target.target) is cst.Tuple
                    and type(node.value) is cst.Tuple
                    and len(target.target.elements) == len(node.value.elements)
                ):
                    # `a, b = [], []`: item by item
                    for t, v in zip(target.target.elements, node.value.elements):
                        if type(t.value) is cst.Name and not _list_value(v.value):
                            names.discard(t.value.value)
                        elif type(t.value) is not cst.Name:
                            names -= _bound(t.value)
                elif type(target.target) is cst.Name:
                    if not _list_value(node.value):
                        names.discard(target.target.value)
                else:
                    names -= _bound(target.target)
        elif kind is cst.AugAssign and type(node.target) is cst.Name:
            if type(node.operator) not in (cst.AddAssign, cst.MultiplyAssign):
                names.discard(node.target.value)
        elif kind in (cst.AnnAssign, cst.NamedExpr, cst.For, cst.AsName):
            names -= _bound(getattr(node, "target", None) or getattr(node, "name", None))
        elif kind in (cst.Global, cst.Nonlocal):
            names -= {item.name.value for item in node.names}
        stack.extend(children(node))
    return names


def _bound(target) -> set[str]:
    found, stack = set(), [target]
    while stack:
        t = stack.pop()
        if type(t) is cst.Name:
            found.add(t.value)
        elif type(t) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in t.elements)
        elif type(t) is cst.StarredElement:
            stack.append(t.value)
    return found


def _list_value(value: cst.BaseExpression) -> bool:
    if type(value) in (cst.List, cst.ListComp):
        return True
    if type(value) is not cst.Call:
        return False
    func = value.func
    if type(func) is cst.Name:
        return func.value == "list"
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value.startswith("_lx")
        and func.attr.value in ("append", "as_list")
    )


# Builtins that show a value as text: a list shows its items.
_SHOWN = frozenset({"print", "str", "repr", "format"})


class _Truth:
    """The test of an ``if``/``while`` that is a bare name: a list's truth is its length."""

    def __init__(self, name: cst.Name):
        self.name = name


def _list_uses(node: cst.CSTNode, names: set[str]) -> set[str]:
    """The names of ``names`` that ``node`` (not looking into nested scopes or blocks) uses as
    only a list can be used."""
    if type(node) is _Truth:
        return {node.name.value} & names
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) in _SCOPES or type(n) in _SUITES:
            continue
        kind = type(n)
        if kind is cst.BinaryOperation:
            found |= {e.value for e in (n.left, n.right) if type(e) is cst.Name and e.value in names}
        elif kind is cst.Comparison:
            parts = [n.left, *(c.comparator for c in n.comparisons)]
            found |= {e.value for e in parts if type(e) is cst.Name and e.value in names}
        elif kind is cst.Attribute and type(n.value) is cst.Name and n.value.value in names:
            if n.attr.value in _LIST_METHODS:
                found.add(n.value.value)
        elif kind is cst.Subscript and type(n.value) is cst.Name and n.value.value in names:
            if any(type(e.slice) is cst.Slice for e in n.slice):
                found.add(n.value.value)
        elif kind is cst.AugAssign and type(n.target) is cst.Name and n.target.value in names:
            found.add(n.target.value)
        elif kind is cst.Call and type(n.func) is cst.Name and n.func.value in _SHOWN:
            # `print(xs)`, `str(xs)`: Python shows the list of its items, not the stacked array
            found |= {a.value.value for a in n.args if type(a.value) is cst.Name and a.value.value in names}
        elif kind is cst.FormattedStringExpression and type(n.expression) is cst.Name:
            found |= {n.expression.value} & names
        stack.extend(children(n))
    return found


def _header_parts(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """What of a statement runs before its blocks: a small statement line whole, the test of
    an ``if`` (and its ``elif``s), a ``while`` test, a ``for`` iterable, ``with`` items."""
    kind = type(stmt)
    if kind is cst.SimpleStatementLine:
        return [stmt]
    if kind in (cst.If, cst.While) and type(stmt.test) is cst.Name:
        return [_Truth(stmt.test)]
    if kind is cst.If:
        parts, node = [], stmt
        while type(node) is cst.If:
            parts.append(node.test)
            node = node.orelse.body if node.orelse is not None and type(node.orelse) is cst.Else else (node.orelse)
        return parts
    if kind is cst.While:
        return [stmt.test]
    if kind is cst.For:
        return [stmt.iter]
    if kind is cst.With:
        return [item.item for item in stmt.items]
    return []


def _statement_uses(stmt: cst.CSTNode, names: set[str]) -> set[str]:
    """The names of ``names`` that what ``stmt`` runs before its blocks uses as only a list can
    be used."""
    used: set[str] = set()
    for part in _header_parts(stmt):
        used |= _list_uses(part, names)
    return used


def _len_of_list(node: cst.CSTNode, names: set[str], ctx: Context) -> bool:
    """Whether ``node`` is ``len(xs)`` of one of ``names``, ``len`` being the builtin."""
    if type(node) is not cst.Call:
        return False
    func, args = node.func, node.args
    return (
        type(func) is cst.Name
        and func.value == "len"
        and len(args) == 1
        and args[0].keyword is None
        and not args[0].star
        and type(args[0].value) is cst.Name
        and args[0].value.value in names
        and "len" not in ctx.local_names
        and not ctx.global_value("len")[0]
    )


class ListUseTransformer(OwnCodeConverter):
    """Puts ``xs = _lx.as_list(xs)`` before each statement that uses a list as only a list can,
    and makes ``len(xs)`` ``_lx.list_len(xs)`` (the traced count of a list appended to in a
    loop bounded by ``max_iters``, Python's ``len`` otherwise)."""

    def __init__(self, ctx: Context, names: set[str]):
        super().__init__(ctx)
        self.names = names

    def leave_Call(self, original_node, updated_node):
        if _len_of_list(updated_node, self.names, self.ctx):
            return updated_node.with_changes(func=runtime_call("list_len").func)
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        body, changed = [], False
        for stmt in updated_node.body:
            used = _statement_uses(stmt, self.names)
            if used:
                line = cst.SimpleStatementLine(
                    [
                        cst.Assign([cst.AssignTarget(cst.Name(name))], runtime_call("as_list", cst.Name(name)))
                        for name in sorted(used)
                    ]
                )
                pos = self.ctx.positions.get(stmt)
                if pos is not None:
                    self.ctx.positions.setdefault(line, pos)
                body.append(line)
                changed = True
            body.append(stmt)
        return updated_node.with_changes(body=body) if changed else updated_node


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (APPEND_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    appends = ListAppendTransformer(ctx, node, shared_names(node))
    node = apply(node, appends)
    names = _list_names(node, appends.appended)
    if not names:
        return node
    # Only the nodes above the blocks and calls it rewrites are entered (libcst rebuilds every
    # node it enters).
    return transform_above(
        node,
        ListUseTransformer(ctx, names),
        lambda n: (
            _len_of_list(n, names, ctx)
            or (type(n) is cst.IndentedBlock and any(_statement_uses(stmt, names) for stmt in n.body))
        ),
    )
