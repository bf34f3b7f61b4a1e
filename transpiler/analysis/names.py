"""Which local names a statement or expression reads and writes.

One hand-written pass over the libcst tree (no metadata providers: they copy the tree and
cost more than the whole conversion). Names inside nested functions, lambdas and
comprehensions that are bound there are not reads of the enclosing function; their free
names are.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import libcst as cst

from laxify.ir.naming import is_runtime_name

from laxify.transpiler.analysis.walk import children, concrete_kinds

__all__ = ["Access", "expr_reads", "stmt_access", "target_names", "block_access"]

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass
class Access:
    """Names read and written by a piece of code, in first-seen order."""

    reads: dict[str, None] = field(default_factory=dict)
    writes: dict[str, None] = field(default_factory=dict)
    # Names whose value is mutated in place (``x[0] = v``, ``x.a = v``): read and written.
    mutates: dict[str, None] = field(default_factory=dict)
    # Names bound by the code (assigned, imported, deleted, defined): local variables.
    binds: dict[str, None] = field(default_factory=dict)

    def read(self, names) -> None:
        for n in names:
            self.reads.setdefault(n)

    def write(self, names) -> None:
        for n in names:
            self.writes.setdefault(n)
            self.binds.setdefault(n)

    def mutate(self, name: str) -> None:
        """``name``'s object changes in place: a new value, yet no binding of the name."""
        self.writes.setdefault(name)
        self.mutates.setdefault(name)

    def merge(self, other: "Access") -> None:
        self.read(other.reads)
        for n in other.writes:
            self.writes.setdefault(n)
        for n in other.mutates:
            self.mutates.setdefault(n)
        for n in other.binds:
            self.binds.setdefault(n)


def _param_names(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            names.append(star.name.value)
    return names


def _param_defaults(params: cst.Parameters) -> list[cst.BaseExpression]:
    out = []
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        if p.default is not None:
            out.append(p.default)
    return out


def expr_reads(node: cst.CSTNode, out: dict[str, None] | None = None) -> dict[str, None]:
    """Free names read by an expression (in order)."""
    if out is None:
        out = {}
    _reads(node, out)
    return out


def _reads(node: cst.CSTNode, out: dict[str, None]) -> None:
    # An explicit stack, not recursion: an `and` chain of 5,000 operands nests 5,000 deep.
    # Dispatch on the exact type: libcst's node classes are ABCs, and isinstance against an
    # ABC costs more than the whole rest of this walk.
    stack = [node]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            out.setdefault(node.value)
        elif kind is cst.Attribute or kind is cst.Arg or kind is cst.NamedExpr:
            stack.append(node.value)
        elif kind is cst.Lambda:
            for d in _param_defaults(node.params):
                _reads(d, out)
            bound = set(_param_names(node.params))
            inner: dict[str, None] = {}
            _reads(node.body, inner)
            for n in inner:
                if n not in bound:
                    out.setdefault(n)
        elif kind in _COMPREHENSIONS:
            _comprehension_reads(node, out)
        else:
            kids = list(children(node))
            kids.reverse()
            stack.extend(kids)


def _comprehension_reads(node, out: dict[str, None]) -> None:
    bound: set[str] = set()
    inner: dict[str, None] = {}
    clause = node.for_in
    first = True
    while clause is not None:
        if first:
            _reads(clause.iter, out)  # the first iterable is evaluated in the enclosing scope
            first = False
        else:
            _reads(clause.iter, inner)
        bound.update(target_names(clause.target))
        for cond in clause.ifs:
            _reads(cond.test, inner)
        clause = clause.inner_for_in
    if type(node) is cst.DictComp:
        _reads(node.key, inner)
        _reads(node.value, inner)
    else:
        _reads(node.elt, inner)
    for n in inner:
        if n not in bound:
            out.setdefault(n)


def target_names(target: cst.CSTNode) -> list[str]:
    """Names bound by an assignment target (``a``, ``a, (b, *c)``); empty for ``x[i]``/``x.a``."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        names: list[str] = []
        for el in target.elements:
            names.extend(target_names(el.value))
        return names
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    return []


def _target_access(target: cst.CSTNode, acc: Access) -> None:
    if type(target) is cst.Name:
        acc.write([target.value])
    elif type(target) in (cst.Tuple, cst.List):
        for el in target.elements:
            _target_access(el.value, acc)
    elif type(target) is cst.StarredElement:
        _target_access(target.value, acc)
    elif type(target) in (cst.Subscript, cst.Attribute):
        # In-place mutation of a container: the base is read and gets a new value.
        acc.read(expr_reads(target))
        base = target
        while type(base) in (cst.Subscript, cst.Attribute):
            base = base.value
        if type(base) is cst.Name:
            acc.mutate(base.value)


def _del_access(target: cst.CSTNode, acc: Access) -> None:
    """``del y`` needs ``y`` bound (Python raises UnboundLocalError otherwise) and unbinds it:
    a read and a write. ``del xs[i]`` / ``del obj.a`` change ``xs`` / ``obj`` in place."""
    if type(target) is cst.Name:
        acc.read([target.value])
        acc.write([target.value])
    elif type(target) in (cst.Tuple, cst.List):
        for el in target.elements:
            _del_access(el.value, acc)
    else:
        _target_access(target, acc)


def _small_access(node: cst.BaseSmallStatement, acc: Access) -> None:
    # Exact types: libcst's node classes are ABCs, and isinstance against them is slow.
    kind = type(node)
    if kind is cst.Assign:
        acc.read(expr_reads(node.value))
        for t in node.targets:
            _target_access(t.target, acc)
    elif kind is cst.AugAssign:
        acc.read(expr_reads(node.target))
        acc.read(expr_reads(node.value))
        _target_access(node.target, acc)
    elif kind is cst.AnnAssign:
        if node.value is not None:
            acc.read(expr_reads(node.value))
            _target_access(node.target, acc)
    elif kind is cst.Import or kind is cst.ImportFrom:
        if type(node.names) is cst.ImportStar:
            return
        for alias in node.names:
            if alias.asname is not None:
                acc.write(target_names(alias.asname.name))
            else:
                dotted = alias.name
                while type(dotted) is cst.Attribute:
                    dotted = dotted.value
                acc.write([dotted.value])
    elif kind is cst.Del:
        _del_access(node.target, acc)
    elif kind is cst.Global or kind is cst.Nonlocal:
        return
    else:  # Expr, Return, Assert, Raise, Pass, Break, Continue
        acc.read(expr_reads(node))
    walrus = _mutating_calls(node, acc)
    if not walrus:
        return
    before = set(acc.writes)
    acc.write(walrus)
    # A name bound by `:=` and read later in the same statement is not a read from before it;
    # one read before the binding (`(t := t * 0.5)`) is.
    early = _reads_before_binding(node)
    for name in set(acc.writes) - before:
        if name not in early:
            acc.reads.pop(name, None)


def _reads_before_binding(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads before a ``:=`` in it binds them, in evaluation order (left to
    right, a walrus's value before its target; nested scopes left out)."""
    out: set[str] = set()
    bound: set[str] = set()
    stack: list = [node]
    while stack:
        item = stack.pop()
        if type(item) is tuple:
            bound.update(item)
            continue
        kind = type(item)
        if kind is cst.Name:
            if item.value not in bound:
                out.add(item.value)
        elif kind is cst.NamedExpr:
            stack.append(tuple(target_names(item.target)))
            stack.append(item.value)
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(item.value)
        elif kind is cst.Assign:  # the value, then the targets (which read no names of their own)
            stack.append(item.value)
        elif kind not in _SCOPES:
            kids = list(children(item))
            kids.reverse()
            stack.extend(kids)
    return out


_SCOPES = (cst.Lambda, cst.FunctionDef, cst.ClassDef)

# Methods that change a list, dict or set in place: ``xs.append(v)`` gives ``xs`` a new value,
# which traced control flow must carry out of the branch or iteration that called it.
MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "sort",
        "reverse",
        "update",
        "setdefault",
        "popitem",
        "add",
        "discard",
    }
)
# Those that return a value (used inside expressions); the others return None, so on a list,
# dict or set they are a statement of their own (`optimizer.update(...)`, whose value is used,
# is not a dict's: see features.IN_PLACE_CHANGE).
VALUE_METHODS = frozenset({"pop", "popitem", "setdefault", "__setitem__", "__delitem__"})


def _own_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node`` and the nodes below it, pre-order, not looking into nested scopes (whose own
    node is included); iterative, as expressions may nest thousands of levels deep."""
    out = []
    stack = [node]
    while stack:
        node = stack.pop()
        out.append(node)
        if type(node) not in _SCOPES:
            kids = list(children(node))
            if kids:
                kids.reverse()
                stack.extend(kids)
    return out


def _mutating_calls(node: cst.CSTNode, acc: Access) -> list[str]:
    """Mark the names whose objects the calls in ``node`` change in place; return the names
    bound by ``:=`` in it (one walk for both)."""
    walrus: list[str] = []
    used: set[int] = set()  # calls whose value the code uses (see below)
    for node in _own_nodes(node):
        kind = type(node)
        if kind in _VALUE_HOLDERS:
            value = getattr(node, "value", None)
            if value is not None:
                used.add(id(value))
            if kind is cst.BinaryOperation:
                used.update((id(node.left), id(node.right)))
        if kind is cst.NamedExpr:
            walrus.extend(target_names(node.target))
        elif kind is cst.Call:
            func = node.func
            if (
                type(func) is cst.Attribute
                and type(func.value) is cst.Name
                and func.attr.value == "call"
                and is_runtime_name(func.value.value)
                and node.args
            ):
                func = node.args[0].value  # `xs.pop(i)` routed through the runtime: `_lx.call(xs.pop, i)`
            if (
                type(func) is cst.Attribute
                and type(func.value) is cst.Name
                and func.attr.value in MUTATING_METHODS
                and not is_runtime_name(func.value.value)
                and (id(node) not in used or func.attr.value in VALUE_METHODS)
            ):
                acc.mutate(func.value.value)
    return walrus


# Where a call's value is used: assigned, returned, passed on, computed with. A method of a
# list, dict or set that returns None is a statement of its own, so such a call is a module's
# function or another object's method (`s = jnp.append(s, v)`, `lax.sort(s)[0]`), not a change
# of its receiver in place.
_VALUE_HOLDERS = frozenset(
    {
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.Return,
        cst.Arg,
        cst.Element,
        cst.Subscript,
        cst.Attribute,
        cst.BinaryOperation,
    }
)


def _walrus_writes(node: cst.CSTNode, acc: Access) -> None:
    for node in _own_nodes(node):
        if type(node) is cst.NamedExpr:
            acc.write(target_names(node.target))


def _function_access(node: cst.FunctionDef | cst.ClassDef, acc: Access) -> None:
    for dec in node.decorators:
        acc.read(expr_reads(dec.decorator))
    local = Access()
    if type(node) is cst.FunctionDef:
        for d in _param_defaults(node.params):
            acc.read(expr_reads(d))
        bound = set(_param_names(node.params))
    else:
        for arg in node.bases:
            acc.read(expr_reads(arg))
        bound = set()
    local.merge(block_access(node.body))
    bound |= set(local.writes)
    acc.read(n for n in local.reads if n not in bound)
    acc.write([node.name.value])


_SMALL = concrete_kinds(cst.BaseSmallStatement)
_SUITES = concrete_kinds(cst.BaseSuite)
_STATEMENTS = concrete_kinds(cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)
_EXPRESSIONS = concrete_kinds(cst.BaseExpression)


@functools.lru_cache(maxsize=4096)
def stmt_access(stmt: cst.CSTNode) -> Access:
    """Reads and writes of one statement, compound statements included (memoised per node:
    the result is shared, so callers must not change it)."""
    acc = Access()
    if type(stmt) is cst.SimpleStatementLine:
        for small in stmt.body:
            _small_access(small, acc)
    elif type(stmt) in _SMALL:
        _small_access(stmt, acc)
    elif type(stmt) in (cst.FunctionDef, cst.ClassDef):
        _function_access(stmt, acc)
    elif type(stmt) is cst.If:
        # An `elif` chain arm by arm (in a loop: a chain of 500 arms nests 500 deep).
        node = stmt
        while type(node) is cst.If:
            acc.read(expr_reads(node.test))
            _walrus_writes(node.test, acc)
            acc.merge(block_access(node.body))
            node = node.orelse
        if node is not None:
            acc.merge(stmt_access(node))
    elif type(stmt) is cst.While:
        acc.read(expr_reads(stmt.test))
        _walrus_writes(stmt.test, acc)
        acc.merge(block_access(stmt.body))
        if stmt.orelse is not None:
            acc.merge(stmt_access(stmt.orelse))
    elif type(stmt) is cst.Else:
        acc.merge(block_access(stmt.body))
    elif type(stmt) is cst.For:
        acc.read(expr_reads(stmt.iter))
        _target_access(stmt.target, acc)
        acc.merge(block_access(stmt.body))
        if stmt.orelse is not None:
            acc.merge(stmt_access(stmt.orelse))
    else:
        _generic_access(stmt, acc)
    return acc


def _generic_access(node: cst.CSTNode, acc: Access) -> None:
    """With, Try, Match and other compound statements: every child, conservatively."""
    for child in children(node):
        if type(child) in _STATEMENTS:
            acc.merge(block_access(child) if type(child) in _SUITES else stmt_access(child))
        elif type(child) is cst.WithItem:
            acc.read(expr_reads(child.item))
            if child.asname is not None:
                _target_access(child.asname.name, acc)
        elif type(child) is cst.ExceptHandler:
            if child.type is not None:
                acc.read(expr_reads(child.type))
            body = block_access(child.body)
            # `except E as e`: Python unbinds `e` when the handler ends; it is the handler's own.
            bound = set(target_names(child.name.name)) if child.name is not None else set()
            acc.read(n for n in body.reads if n not in bound)
            acc.write(n for n in body.writes if n not in bound)
        elif type(child) in (cst.Else, cst.Finally):
            acc.merge(block_access(child.body))
        elif type(child) is cst.MatchCase:
            acc.merge(block_access(child.body))
            _generic_access(child.pattern, acc)
            if child.guard is not None:
                acc.read(expr_reads(child.guard))
        elif type(child) in (cst.MatchAs, cst.MatchStar):
            if child.name is not None:
                acc.write(target_names(child.name))
            if type(child) is cst.MatchAs and child.pattern is not None:
                _generic_access(child.pattern, acc)
        elif type(child) in _EXPRESSIONS:
            acc.read(expr_reads(child))
        else:
            _generic_access(child, acc)


def block_access(block: cst.CSTNode) -> Access:
    """Union of the accesses of every statement in a suite (or a list of statements)."""
    acc = Access()
    body = block.body if type(block) in _SUITES else block
    for stmt in body:
        acc.merge(stmt_access(stmt))
    return acc
