"""A ``raise`` that a handler of its own ``try`` catches → a flag set where it stood, the rest of
the ``try`` body guarded by the flag, and the handler run where the flag says so:

    try:                                         _lx_caught_1 = 0
        if b == 0:                               try:
            raise ZeroDivisionError("b is 0")        if b == 0:
        r = a / b                          →             _lx_caught_1 = 1
    except ZeroDivisionError:                        if _lx.not_(_lx_caught_1):
        r = -1.0                                         r = a / b
                                                 except ZeroDivisionError:
                                                     r = -1.0
                                                     _lx_caught_1 = -1
                                                 if _lx_caught_1 == 1:
                                                     r = -1.0

The ``if``s are ordinary ones: on a traced condition they become ``lax.cond``s, so the handler
is the branch taken where the data raises, in one program (a ``raise`` under a traced condition
that a handler may catch otherwise runs the function as Python). Which handler catches each
``raise`` is decided here, from the classes the names hold (Python's first matching handler).

Only where every ``raise`` of the ``try`` body is one of these, and nothing else needs the real
exception: each ``raise`` names an exception class (``raise E``, ``raise E(args)`` whose
arguments call nothing), stands in ``if``s only (not in a loop, a ``with`` or another ``try``),
and some handler catches it; no handler binds the exception (``except E as e``); the body
holds no ``return``, ``break``, ``continue``, ``yield`` or ``await``; the ``try`` has no
``finally``. The body stays a ``try`` body with its handlers, so what else in it may raise
for some data (a helper's ``raise``, ``math.sqrt`` of a negative value) is still known to be
where a handler may catch it (it runs as Python there), and what Python raises in it while
it runs as Python is caught as before.
"""

from __future__ import annotations

import builtins

import libcst as cst

from laxify.transpiler.analysis.names import block_access, target_names
from laxify.transpiler.analysis.walk import descendants, preorder
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import as_indented, assign, guard_block, rewrite_blocks, runtime_call

__all__ = ["transform"]

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# Statements after which the rest of the body cannot be guarded by a flag (they leave the
# body, or Python needs the exception object itself).
_LEAVING = (cst.Return, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)
# Where a `raise` of the body may stand: `if` blocks (a loop would need its own jump).
_HOLDERS = (cst.If, cst.Else, cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)


class CaughtRaiseTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context, fn: cst.FunctionDef):
        super().__init__(ctx)
        self.fn = fn
        self.params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
        if type(fn.params.star_arg) is cst.Param:
            self.params.add(fn.params.star_arg.name.value)
        if fn.params.star_kwarg is not None:
            self.params.add(fn.params.star_kwarg.name.value)

    def leave_Try(self, original_node, updated_node):
        plan = self._plan(updated_node)
        if plan is None:
            return updated_node
        raises, handlers = plan
        unset = self._unset_before(original_node, updated_node, raises)
        if unset is None:
            return updated_node
        flag = self.ctx.fresh("caught")
        positions = self.ctx.positions
        lines = {
            id(small): line
            for line in descendants(updated_node.body)
            if type(line) is cst.SimpleStatementLine
            for small in line.body
        }

        def replace(raise_: cst.Raise) -> list:
            new = assign(flag, cst.Integer(str(raises[id(raise_)] + 1)))
            line = lines.get(id(raise_))
            if line is not None and line in positions:
                positions.setdefault(new, positions[line])  # (errors point at the `raise`)
            return [new]

        def rewrite(stmt):
            return rewrite_blocks(stmt, block, positions)

        def block(stmts: list) -> list:
            return guard_block(stmts, flag, (cst.Raise,), replace, rewrite, (), positions)

        body = block(list(as_indented(updated_node.body).body))
        # The handlers stay: what Python itself raises in the body (a helper's `raise` run as
        # Python, an error on Python values while tracing) is theirs, as before; the flag then
        # says a handler ran (no arm below, and no `else`, runs again).
        handled = assign(flag, cst.UnaryOperation(cst.Minus(), cst.Integer("1")))
        kept_handlers = [h.with_changes(body=cst.IndentedBlock([*as_indented(h.body).body, handled])) for h in handlers]
        kept = updated_node.with_changes(body=cst.IndentedBlock(body), handlers=kept_handlers, orelse=None)
        arms = [(k + 1, h.body) for k, h in enumerate(handlers) if k in set(raises.values())]
        chain = updated_node.orelse.body if updated_node.orelse is not None else None
        # A name the body assigns that had no value before the `try` has none where a `raise`
        # skipped its assignment: a value no path reads (each handler that runs assigns it
        # first), zeros in the program (`_lx.Fillable`).
        fills = [assign(name, runtime_call("Fillable", cst.SimpleString(repr(name)))) for name in unset]
        out = [*fills, assign(flag, cst.Integer("0")), kept]
        dispatch = _chain(flag, arms, chain)
        if dispatch is not None:
            out.append(dispatch)
        for stmt in out:
            if original_node in positions:
                positions.setdefault(stmt, positions[original_node])
        return cst.FlattenSentinel(out)

    def _plan(self, node: cst.Try):
        """``({id(raise): handler index}, handlers)`` where the ``try`` can be rewritten (see the
        module's docstring), else ``None``."""
        if not node.handlers or node.finalbody is not None:
            return None
        classes = []
        for handler in node.handlers:
            if handler.name is not None:
                return None  # `except E as e`: the handler reads the exception object
            kinds = self._classes(handler.type) if handler.type is not None else (BaseException,)
            if kinds is None:
                return None
            classes.append(kinds)
        if any(type(n) in (cst.Yield, cst.Await) for n in descendants(node.body)):
            return None
        raises: dict[int, int] = {}
        stack = [(child, True) for child in _statements(node.body)]
        while stack:
            stmt, held = stack.pop()
            kind = type(stmt)
            if kind in _SCOPES:
                continue
            if kind in _LEAVING or kind is cst.Raise and not held:
                return None
            if kind is cst.Raise:
                caught = self._catcher(stmt, classes)
                if caught is None:
                    return None
                raises[id(stmt)] = caught
                continue
            inner = held and kind in _HOLDERS
            stack.extend((child, inner) for child in _children(stmt))
        if not raises:
            return None
        return raises, node.handlers

    def _unset_before(self, original: cst.Try, node: cst.Try, raises: dict) -> list | None:
        """The names the body assigns that nothing assigned before the ``try`` (in the order of
        the source) and that the ``else``, a handler or the code after may read: each must be
        assigned on every path through the body that does not ``raise``, and first by each
        handler that may run (else ``None``: some path may meet it unbound, where Python raises).
        A name only a handler or the ``else`` assigns, read after the ``try``, leaves it as
        written too."""
        caught = set(raises.values())
        handlers = [h for k, h in enumerate(node.handlers) if k in caught]
        blocks = [node.body, *(h.body for h in handlers)]
        if node.orelse is not None:
            blocks.append(node.orelse.body)
        candidates = set().union(*(_assigned(b) for b in blocks))
        earlier = set(self.params)
        for n in preorder(self.fn)[0]:  # (in the order of the source)
            if n is original:
                break
            earlier |= _assigned_by(n)
        inside = {id(n) for n in descendants(original)}
        read = {n.value for n in descendants(self.fn.body) if type(n) is cst.Name and id(n) not in inside}
        for block in blocks[1:]:
            read |= {n.value for n in descendants(block) if type(n) is cst.Name}
        need = sorted((candidates - earlier) & read)
        body = list(node.body.body)
        for name in need:
            if not _definitely_assigns(body, name):
                return None  # a path through the body may leave it unbound: Python's error there
            if not all(_assigns_first(h.body, name) for h in handlers):
                return None
        return need

    def _catcher(self, raise_: cst.Raise, classes: list) -> int | None:
        """The index of the first handler that catches ``raise_``, where its class is known."""
        exc = raise_.exc
        if exc is None:
            return None  # a bare `raise` re-raises what is being handled
        if type(exc) is cst.Call:
            if any(type(n) is cst.Call for arg in exc.args for n in descendants(arg.value)):
                return None  # its arguments call something: Python would run it
            exc = exc.func
        kinds = self._classes(exc)
        if kinds is None or len(kinds) != 1:
            return None
        raised = kinds[0]
        return next((k for k, caught in enumerate(classes) if issubclass(raised, caught)), None)

    def _classes(self, node: cst.BaseExpression) -> tuple | None:
        """The exception classes ``node`` (a name, ``module.Name``, or a tuple of them) holds at
        conversion time, or ``None`` where that is not known."""
        if type(node) is cst.Tuple:
            found = [self._classes(e.value) for e in node.elements]
            return None if any(f is None for f in found) else tuple(c for f in found for c in f)
        value = self._value(node)
        if isinstance(value, type) and issubclass(value, BaseException):
            return (value,)
        return None

    def _value(self, node: cst.BaseExpression):
        if type(node) is cst.Name:
            is_global, value = self.ctx.global_value(node.value)
            if is_global:
                return value
            if node.value in self.ctx.local_names or node.value in self.ctx.namespace:
                return None
            return getattr(builtins, node.value, None)
        if type(node) is cst.Attribute:
            owner = self._value(node.value)
            return getattr(owner, node.attr.value, None) if owner is not None else None
        return None


def _names(target: cst.BaseExpression) -> set:
    return set(target_names(target))


def _assigned_by(node: cst.CSTNode) -> set:
    kind = type(node)
    if kind is cst.Assign:
        return {name for t in node.targets for name in _names(t.target)}
    if kind in (cst.AugAssign, cst.AnnAssign, cst.For):
        return _names(node.target)
    if kind is cst.NamedExpr:
        return _names(node.target)
    if kind is cst.With:
        return {name for item in node.items if item.asname is not None for name in _names(item.asname.name)}
    return set()


def _assigned(suite: cst.BaseSuite) -> set:
    """The names a suite binds (its nested scopes' own left out)."""
    return set(block_access(suite).binds)


def _definitely_assigns(stmts: list, name: str) -> bool:
    """Whether every path through ``stmts`` that does not ``raise`` assigns ``name``."""
    for stmt in stmts:
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Raise:
                    return True
                if type(small) in (cst.Assign, cst.AnnAssign) and name in _assigned_by(small):
                    if type(small) is cst.Assign or small.value is not None:
                        return True
        elif kind is cst.If:
            if _definitely_assigns_if(stmt, name):
                return True
    return False


def _definitely_assigns_if(stmt: cst.If, name: str) -> bool:
    if not _definitely_assigns(list(as_indented(stmt.body).body), name):
        return False
    orelse = stmt.orelse
    if orelse is None:
        return False
    if type(orelse) is cst.If:
        return _definitely_assigns_if(orelse, name)
    return _definitely_assigns(list(as_indented(orelse.body).body), name)


def _assigns_first(suite: cst.BaseSuite, name: str) -> bool:
    """Whether the first top-level statement of ``suite`` that mentions ``name`` is a plain
    ``name = <value not reading it>``."""
    for stmt in suite.body:
        mentions = any(type(n) is cst.Name and n.value == name for n in descendants(stmt))
        if not mentions:
            continue
        if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1 or type(stmt.body[0]) is not cst.Assign:
            return False
        line = stmt.body[0]
        reads = any(type(n) is cst.Name and n.value == name for n in descendants(line.value))
        return not reads and all(type(t.target) is cst.Name and t.target.value == name for t in line.targets)
    return False


def _statements(suite: cst.BaseSuite) -> list:
    return list(suite.body)


def _children(stmt: cst.CSTNode) -> list:
    """The statements (and clauses) directly below ``stmt``, in no particular order."""
    if type(stmt) is cst.SimpleStatementLine:
        return list(stmt.body)
    out = []
    for name in ("body", "orelse", "handlers", "finalbody"):
        part = getattr(stmt, name, None)
        if part is None:
            continue
        for item in part if isinstance(part, (list, tuple)) else (part,):
            if isinstance(item, cst.BaseSuite):
                out.extend(item.body)
            elif isinstance(item, cst.CSTNode):
                out.append(item)
    return out


def _chain(flag: str, arms: list, orelse: cst.BaseSuite | None) -> cst.If | None:
    """``if flag == 1: <handler 1> elif flag == 2: ... elif not flag: <the try's else>`` (a
    handler of the ``try`` itself sets the flag to -1: nothing here runs)."""
    tail = cst.If(test=runtime_call("not_", cst.Name(flag)), body=orelse) if orelse is not None else None
    if not arms:
        return tail
    for number, body in reversed(arms):
        test = cst.Comparison(cst.Name(flag), [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(number)))])
        tail = cst.If(test=test, body=body, orelse=tail)
    return tail


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Try,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, CaughtRaiseTransformer(ctx, node))
