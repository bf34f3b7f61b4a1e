"""Which local lists, dicts and sets of a function nothing else can reach.

A traced ``if`` or loop gives its branches copies of the objects it carries; a change made in
place to such a copy reaches the original object only if the construct carries the name out
and writes it back (runtime/effects.py). Every name a construct changes in place is carried for
that reason (to_ir ``_changed_objects``), since another name, an object or the caller may
refer to the same object (``e = ident(d)``, ``box.d = d``, a parameter). A name is *private*
when none can: then a change nothing reads after the construct needs no carrying, and may
differ between the paths (``lst.pop()`` in the code after a ``return``).

    lst = [x[0], 0.5]        private: a display of values, read by item, changed by method
    lst.pop(); lst[0]; len(lst)

    d = {"p": a}             not private: `a` may be a list that `d` holds
    e = lst                  not private (either name): two names of one object
    f(lst); return lst       not private: the object leaves through the call or the result

Conservative: any use not listed as safe makes the name not private.
"""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import DISPLAYS
from laxify.transpiler.analysis.names import MUTATING_METHODS
from laxify.transpiler.analysis.walk import children

__all__ = ["private_objects"]

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
# Methods whose call on a list, dict or set lets no reference to the object itself out.
_SAFE_METHODS = MUTATING_METHODS | {"copy", "index", "count", "get", "keys", "values", "items"}
# Values whose elements cannot be a list, dict or set another name holds.
_SHARING_ELEMENTS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.StarredElement,
    cst.Await,
    cst.Yield,
    cst.NamedExpr,
    cst.IfExp,
    cst.BooleanOperation,
) + DISPLAYS


def private_objects(fn: cst.FunctionDef) -> frozenset[str]:
    """The local names of ``fn`` whose object no other name, object or caller can reach (see
    the module's docstring)."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.add(star.name.value)
    bound: set[str] = set()
    shared: set[str] = set(params)  # names whose object something else may reach
    unfresh: set[str] = set()  # names bound to an object that existed before
    items_of: dict[str, set[str]] = {}  # name -> the names whose items it was bound from
    changed: set[str] = set()  # names changed in place
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None]] = [(fn.body, None, None)]
    while stack:
        node, parent, grand = stack.pop()
        kind = type(node)
        if kind in _SCOPES:
            shared.update(_names_in(node))  # a closure captures them
            continue
        if kind is cst.Global or kind is cst.Nonlocal:
            shared.update(n.name.value for n in node.names)
        elif kind is cst.Assign:
            _binding(node, bound, shared, unfresh, items_of)
            for target in node.targets:
                _update_target(target.target, shared, changed)
        elif kind is cst.AnnAssign or kind is cst.AugAssign:
            target = node.target
            if type(target) is cst.Name:
                bound.add(target.value)
                if kind is cst.AnnAssign and node.value is not None and not _fresh(node.value):
                    unfresh.add(target.value)
                if kind is cst.AugAssign:
                    changed.add(target.value)
            else:
                _update_target(target, shared, changed)
        elif kind is cst.Del:
            _update_target(node.target, shared, changed)
        elif kind is cst.For or kind is cst.CompFor:
            for name in _target_names(node.target):
                bound.add(name)
                unfresh.add(name)  # an item of the iterable
                root = _root(node.iter)
                if root is not None:
                    items_of.setdefault(name, set()).add(root)
        elif kind is cst.Name and parent is not None:
            if not _safe_use(node, parent, grand):
                shared.add(node.value)
        elif kind is cst.Call:
            if (
                type(node.func) is cst.Name
                and node.func.value == "len"
                and len(node.args) == 1
                and type(node.args[0].value) is cst.Name
            ):
                continue  # `len(lst)`
            _method_call(node, shared, changed)
        for child in children(node):
            stack.append((child, node, parent))
    # A name bound from an item of another (`row = grid[0]`, `for row in grid`), changed in place
    # or shared: the item it changes may be one another name holds.
    grown = True
    while grown:
        grown = False
        for name, roots in items_of.items():
            if name in changed or name in shared:
                for root in roots - shared:
                    shared.add(root)
                    grown = True
    return frozenset(bound - shared - unfresh)


def _binding(node: cst.Assign, bound: set, shared: set, unfresh: set, items_of: dict) -> None:
    names = [t.target.value for t in node.targets if type(t.target) is cst.Name]
    for target in node.targets:
        if type(target.target) is not cst.Name:
            for name in _target_names(target.target):
                bound.add(name)
                unfresh.add(name)  # unpacked from a value: its items may be held elsewhere
    for name in names:
        bound.add(name)
        if len(node.targets) > 1:
            shared.add(name)  # `a = b = []`: two names of one object
        elif not _fresh(node.value):
            unfresh.add(name)
        root = _root(node.value)
        if root is not None and type(node.value) is not cst.Name:
            items_of.setdefault(name, set()).add(root)  # `y = xs[0]`, `y = xs.pop()`


def _fresh(value: cst.BaseExpression) -> bool:
    """A new list, dict or set whose items no other name holds (a display of values that are
    not themselves names, attributes, calls or containers), or a value that is none of these."""
    kind = type(value)
    if kind in (cst.List, cst.Set):
        return not any(type(e.value) in _SHARING_ELEMENTS or type(e) is cst.StarredElement for e in value.elements)
    if kind is cst.Dict:
        return not any(type(e) is not cst.DictElement or type(e.value) in _SHARING_ELEMENTS for e in value.elements)
    if kind in (cst.ListComp, cst.SetComp):
        return type(value.elt) not in _SHARING_ELEMENTS
    if kind is cst.DictComp:
        return type(value.value) not in _SHARING_ELEMENTS
    return False  # (a call, a name, ...: it may return an object held elsewhere)


def _safe_use(name: cst.Name, parent: cst.CSTNode, grand: cst.CSTNode | None) -> bool:
    """Whether this occurrence of ``name`` lets no reference to its object out: the object
    indexed (`lst[i]`, also as a target), a safe method called on it (`len(lst)` is skipped by
    the walk), a membership or identity test, or the name as a binding target (checked by its
    statement)."""
    kind = type(parent)
    if kind is cst.Subscript:
        return parent.value is name
    if kind is cst.Attribute:  # called at once: `f = lst.append` would let the object out
        return (
            parent.value is name
            and parent.attr.value in _SAFE_METHODS
            and type(grand) is cst.Call
            and grand.func is parent
        )
    if kind is cst.AssignTarget or kind is cst.AugAssign or kind is cst.AnnAssign:
        return parent.target is name
    if kind is cst.Comparison or kind is cst.ComparisonTarget:
        return True  # `v in lst`, `lst is None`
    if kind in (cst.For, cst.CompFor):
        return parent.iter is name or parent.target is name  # its items (see the loop target)
    if kind in (cst.Global, cst.Nonlocal, cst.NameItem, cst.Param):
        return True
    return False


def _method_call(call: cst.Call, shared: set, changed: set) -> None:
    func = call.func
    if type(func) is cst.Attribute and func.attr.value in MUTATING_METHODS:
        root = func.value
        if type(root) is cst.Name:
            changed.add(root.value)
        elif _root(root) is not None:
            shared.add(_root(root))  # `grid[0].append(v)`: a change below the top


def _update_target(target: cst.BaseExpression, shared: set, changed: set) -> None:
    """``lst[i] = v`` (or ``del``, ``+=``): changes ``lst``; deeper (``grid[i][j] = v``), an item."""
    kinds = (cst.Subscript, cst.Attribute)
    if type(target) in (cst.Tuple, cst.List):
        for element in target.elements:
            _update_target(element.value, shared, changed)
        return
    if type(target) not in kinds:
        return
    depth, node = 0, target
    while type(node) in kinds:
        depth += 1
        node = node.value
    if type(node) is cst.Name:
        changed.add(node.value)
        if depth > 1 or type(target) is cst.Attribute:
            shared.add(node.value)


def _root(value: cst.BaseExpression) -> str | None:
    """The name an item read is rooted at: ``xs`` for ``xs[0]``, ``xs[i][j]``, ``xs.pop()``."""
    node = value
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        node = node.func.value
    while type(node) in (cst.Subscript, cst.Attribute):
        node = node.value
    return node.value if type(node) is cst.Name else None


def _target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    if type(target) is cst.StarredElement:
        return _target_names(target.value)
    return []


def _names_in(node: cst.CSTNode) -> set[str]:
    found, stack = set(), [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            found.add(n.value)
        stack.extend(children(n))
    return found
