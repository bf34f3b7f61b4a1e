"""``x[i] = v`` → ``x = _lx.setitem(x, i, v)`` and ``x[i] += v`` → ``x = _lx.setitem_op(x, i,
"+", v)``: an update of an item becomes an assignment of the name, which the runtime makes a
functional update (``x.at[i].set(v)``) on a JAX array and Python's own in-place assignment on
anything else. The name is then an ordinary assigned value, which traced branches and loops
carry like any other.

    x[i] = v                 x = _lx.setitem(x, i, v)
    grid[i, j] += 1          grid = _lx.setitem_op(grid, (i, j), "+", 1)
    x[a:b] = 0               x = _lx.setitem(x, _lx.at[a:b], 0)
    state["h"][i] = v        state = _lx.setitem(state, _lx.at["h"][i], v)
    self.buf[i] *= 2         self = _lx.setitem_op(self, _lx.at.buf[i], "*", 2)
    a = x[0] = v             _lx_value_1 = v; a = _lx_value_1; x = _lx.setitem(x, 0, _lx_value_1)

Only targets rooted at a local variable of the function are rewritten (a global or a closure's
variable would become a local of its own). Where the function assigns one name from another
(``y = x``) and reads the other after an update of the first, the call gets
``alias=("x", "y")`` (``alias=("row", "grid", "for")`` for an update of the target of ``for
row in grid``): on a JAX array the update is then a located error, as the functional update
would leave ``y`` (``grid``) unchanged where NumPy changes it.
"""

from __future__ import annotations

import re

import libcst as cst

from laxify.ir.naming import is_runtime_name
from laxify.transpiler.analysis.features import SHARED_OBJECT, SUBSCRIPT_UPDATE
from laxify.transpiler.analysis.names import MUTATING_METHODS, expr_reads, stmt_access, target_names
from laxify.transpiler.analysis.walk import children, code_of, statement_children
from laxify.transpiler.converters.base import Context
from laxify.transpiler.converters.guards import runtime_call

__all__ = ["describe_update", "transform", "updated_parameters"]

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# Where compound statements hold their blocks and clauses.
_CLAUSE_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")
_PLACEHOLDER = re.compile(r"__laxify_user_\d+")
_EMPTY = cst.Module([])  # renders the code of a node
_GENERATED = re.compile(r"_lx\d*_value_\d+")  # the value of `a = x[0] = v` (see ArrayUpdateRewriter.small)
_AT_METHODS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "**": "power"}


def _path(target: cst.BaseExpression) -> tuple[str, list] | None:
    """``(name, steps)`` for an item target rooted at a name: ``state["h"][i]`` gives
    ``("state", [Subscript, Subscript])`` (each step the node of that item or attribute),
    outermost first; None for other targets."""
    if type(target) is not cst.Subscript:
        return None
    steps = []
    node = target
    while type(node) in (cst.Subscript, cst.Attribute):
        if type(node) is cst.Attribute and node.attr.value.startswith("__") and node.attr.value.endswith("__"):
            return None  # `obj.__dict__[k] = v`: Python's own machinery, left as written
        steps.append(node)
        node = node.value
    if type(node) is not cst.Name or is_runtime_name(node.value):
        return None
    steps.reverse()
    return node.value, steps


def _index(steps: list) -> cst.BaseExpression:
    """The index argument: the item as written when it is one expression (``i``, ``(i, j)``),
    else ``_lx.at`` followed by the steps as written (``_lx.at[a:b]``, ``_lx.at["h"][i]``)."""
    if len(steps) == 1:
        elements = steps[0].slice
        if all(type(e.slice) is cst.Index and e.slice.star is None for e in elements):
            if len(elements) == 1:
                return elements[0].slice.value
            return cst.Tuple([cst.Element(e.slice.value) for e in elements])
    path: cst.BaseExpression = cst.Attribute(cst.Name("_lx"), cst.Name("at"))
    for step in steps:
        if type(step) is cst.Subscript:
            path = cst.Subscript(path, step.slice)
        else:
            path = cst.Attribute(path, step.attr)
    return path


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    )


class ArrayUpdateRewriter:
    """Rewrites the item assignments of the function's own statements. Not a libcst
    transformer: it walks statements only and rebuilds just the blocks that hold an update,
    since a visit of every expression node costs several times the rest of this converter."""

    def __init__(
        self, ctx: Context, local: set[str], aliases: dict[int, tuple[str, ...]], also: dict[int, tuple[str, ...]]
    ):
        self.ctx = ctx
        self.local = local
        self.aliases = aliases  # id of an update statement → (its name, the other name, *kind)
        self.also = also  # id of such a statement → the further pairs like its alias

    def others(self, node, whole: bool, steps: int = 0) -> tuple[str, ...]:
        """The further names that see a change made by update ``node`` (``whole``: a method
        called on the object; else an update ``steps`` deep): a name whose object the updated
        one holds (``d = {"p": a}``) sees only a change below the item replaced."""
        found = (o for _, o, *kind in self.also.get(id(node), ()) if kind != ["holds"] or (not whole and steps > 1))
        return tuple(dict.fromkeys(found))

    def place(self, new, old) -> None:
        pos = self.ctx.positions.get(old)
        if pos is not None:
            self.ctx.positions.setdefault(new, pos)

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts) -> list | None:
        """A new statement list, or None where nothing in it changed."""
        out, changed = [], False
        for stmt in stmts:
            new = self.statement(stmt)
            changed |= new is not stmt
            out.append(new)
        return out if changed else None

    def statement(self, stmt):
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            body = self.smalls(stmt.body)
            if body is None:
                return stmt
            new = stmt.with_changes(body=body)
            self.place(new, stmt)
            return new
        if kind in _SCOPES:
            return stmt  # a nested def or class is converted on its own, when called
        changes = {}
        if kind is cst.For:
            it = _live_iter(stmt)
            if it is not stmt.iter:
                changes["iter"] = it
        for name in _CLAUSE_FIELDS:
            value = getattr(stmt, name, None)
            if value is None:
                continue
            if type(value) in (list, tuple):
                parts = [self.part(v) for v in value]
                if any(a is not b for a, b in zip(parts, value)):
                    changes[name] = parts
            elif isinstance(value, (cst.BaseSuite, cst.If, cst.Else, cst.Finally)):
                new = self.part(value)
                if new is not value:
                    changes[name] = new
        if not changes:
            return stmt
        new = stmt.with_changes(**changes)
        self.place(new, stmt)
        return new

    def part(self, node):
        """A suite, an `elif`, or a clause (`else:`, `except:`, `finally:`, `case`)."""
        if type(node) is cst.IndentedBlock:
            body = self.block(node.body)
        elif type(node) is cst.SimpleStatementSuite:
            body = self.smalls(node.body)
        elif type(node) is cst.If:
            return self.statement(node)
        else:
            body = self.part(node.body)
            if body is node.body:
                return node
            new = node.with_changes(body=body)
            self.place(new, node)
            return new
        return node if body is None else node.with_changes(body=body)

    def smalls(self, smalls) -> list | None:
        out, changed = [], False
        for small in smalls:
            new = self.small(small)
            if new is None:
                out.append(small)
                continue
            changed = True
            for stmt in new:
                self.place(stmt, small)
            self.note(small, new)
            out += new
        return out if changed else None

    def small(self, node) -> list | None:
        """The statements that replace one small statement, or None to keep it."""
        kind = type(node)
        whole = _changed_in_place(node) if kind in (cst.Expr, cst.AugAssign) else None
        if whole is not None:
            alias = self.aliases.get(id(node))
            if alias is None or alias[0] != whole:
                return None
            # `b = a` before and `b` read after: in a traced branch or loop body `a` is a copy,
            # so the change must be seen where it happens (runtime/effects.py).
            args = [cst.Name(whole), self.names(alias[:2])]
            also = self.others(node, whole=True)
            if also:
                args.append(self.names(also))
            return [cst.Expr(runtime_call("shared_change", *args)), node]
        if kind is cst.AugAssign:
            if not self.rewritable(node.target):
                return None
            op = node.operator._get_token()[:-1]
            return [self.update(node.target, node.value, op, self.aliases.get(id(node)), node)]
        if kind is not cst.Assign:
            return None
        targets = [t.target for t in node.targets]
        if not any(self.holds_update(t) for t in targets):
            return None
        alias = self.aliases.get(id(node))
        if len(targets) == 1:  # a tuple target is unpacked into fresh names (see assign_to)
            return self.assign_to(targets[0], node.value, alias, node)
        # Several targets: the value once, then each target in order.
        temp = self.ctx.fresh("value")
        out = [cst.Assign([cst.AssignTarget(cst.Name(temp))], node.value)]
        for target in targets:
            out += self.assign_to(target, cst.Name(temp), alias, node)
        return out

    # -- one update --------------------------------------------------------------------------
    def rewritable(self, target: cst.BaseExpression) -> bool:
        found = _path(target)
        return found is not None and found[0] in self.local

    def update(self, target, value: cst.BaseExpression, op: str | None, alias, stmt=None) -> cst.Assign:
        name, steps = _path(target)
        args = [cst.Name(name), _index(steps)]
        if op is not None:
            args.append(cst.SimpleString(f'"{op}"'))
        call = runtime_call("setitem" if op is None else "setitem_op", *args, value)
        if alias is not None and alias[0] == name:
            extra = [_keyword("alias", self.names(alias))]
            also = self.others(stmt, whole=False, steps=len(steps))
            if also:
                extra.append(_keyword("also", self.names(also)))
            call = call.with_changes(args=[*call.args, *extra])
            self.ctx.aliased_updates = True
        return cst.Assign([cst.AssignTarget(cst.Name(name))], call)

    def names(self, names: tuple[str, ...]) -> cst.Tuple:
        """The tuple of strings that gives the runtime these names, in the user's words."""
        return cst.Tuple([cst.Element(cst.SimpleString(f'"{self.user_text(n)}"')) for n in names])

    def note(self, original_node, statements: list) -> None:
        """Record the updates for explain(), while their code is still the user's (the later
        converters rewrite `and`/`or`, calls, ... inside them)."""
        pos = self.ctx.positions.get(original_node)
        if pos is None:
            return
        rows = self.ctx.updates.setdefault(pos, [])
        for stmt in statements:
            row = describe_update(stmt, _EMPTY)
            if row is not None:
                rows.append((self.user_text(row[0]), self.user_text(row[1])))

    def user_text(self, text: str) -> str:
        """``text`` with the user's names back where they were hidden (transpiler/naming.py)."""
        if not self.ctx.hidden:
            return text
        return _PLACEHOLDER.sub(lambda m: self.ctx.hidden.get(m.group(0), m.group(0)), text)

    def holds_update(self, target) -> bool:
        if type(target) in (cst.Tuple, cst.List):
            return any(self.holds_update(e.value) for e in target.elements)
        if type(target) is cst.StarredElement:
            return self.holds_update(target.value)
        return self.rewritable(target)

    def assign_to(self, target, source: cst.BaseExpression, alias, stmt=None) -> list:
        if self.rewritable(target):
            return [self.update(target, source, None, alias, stmt)]
        if not self.holds_update(target):
            return [cst.Assign([cst.AssignTarget(target)], source)]
        # Unpack into fresh names, then assign each element in order, as Python does.
        pending: list = []

        def replace(node):
            if type(node) in (cst.Tuple, cst.List):
                return node.with_changes(elements=[e.with_changes(value=replace(e.value)) for e in node.elements])
            if type(node) is cst.StarredElement:
                return node.with_changes(value=replace(node.value))
            temp = self.ctx.fresh("value")
            pending.append((node, temp))
            return cst.Name(temp)

        out = [cst.Assign([cst.AssignTarget(replace(target))], source)]
        for node, temp in pending:
            out += self.assign_to(node, cst.Name(temp), alias, stmt)
        return out


# -- the names an update may rewrite, and aliasing ---------------------------------------------


def _own_statements(body, loops: tuple, out: list) -> None:
    """Small statements and compound statements (for their headers) of the function's own
    code, in source order, each as ``(node, loops)``: the ids of the loops around it. Nested
    ``def``/``class`` statements are listed, not entered."""
    stack = [(stmt, loops) for stmt in reversed(body)]
    while stack:
        stmt, loops = stack.pop()
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            out.extend((small, loops) for small in stmt.body)
            continue
        out.append((stmt, loops))
        if kind in _SCOPES or isinstance(stmt, cst.BaseSmallStatement):
            continue
        inner = loops + (id(stmt),) if kind in (cst.While, cst.For) else loops
        parts = []
        for child in children(stmt):
            if isinstance(child, cst.BaseSuite):
                parts.extend((s, inner) for s in child.body)
            elif type(child) is cst.If:  # an `elif`
                parts.append((child, loops))
            elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)):
                parts.extend((s, loops) for s in child.body.body)  # a loop's `else` runs after it
        stack.extend(reversed(parts))


def _changed_in_place(small) -> str | None:
    """The name a small statement may change in place as a whole object, not item by item:
    ``a.append(v)`` and the other mutating methods of lists, dicts and sets, and ``a += ...``
    (``list.__iadd__`` extends the list itself)."""
    kind = type(small)
    if kind is cst.Expr:
        call = small.value
        if (
            type(call) is cst.Call
            and type(call.func) is cst.Attribute
            and type(call.func.value) is cst.Name
            and call.func.attr.value in MUTATING_METHODS
            and not is_runtime_name(call.func.value.value)
        ):
            return call.func.value.value
        return None
    if kind is cst.AugAssign and type(small.target) is cst.Name and not is_runtime_name(small.target.value):
        return small.target.value
    return None


def _header(stmt) -> tuple[set[str], set[str]]:
    """Reads and binds of a compound statement's own header."""
    kind = type(stmt)
    if kind in (cst.If, cst.While):
        return set(expr_reads(stmt.test)), set()
    if kind is cst.For:
        return set(expr_reads(stmt.iter)), set(target_names(stmt.target))
    if isinstance(stmt, cst.BaseSmallStatement) or kind in _SCOPES:
        access = stmt_access(stmt)
        return set(access.reads), set(access.binds)
    if kind is cst.With:
        reads: set[str] = set()
        binds: set[str] = set()
        for item in stmt.items:
            reads |= set(expr_reads(item.item))
            if item.asname is not None:
                binds |= set(target_names(item.asname.name))
        return reads, binds
    return set(), set()


def _updated_names(small) -> list[str]:
    """The names whose items ``small`` assigns (``x`` for ``x[i] = v``)."""
    if type(small) is cst.AugAssign:
        targets = [small.target]
    elif type(small) is cst.Assign:
        targets = [t.target for t in small.targets]
    else:
        return []
    names = []
    stack = list(targets)
    while stack:
        t = stack.pop()
        if type(t) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in t.elements)
        elif type(t) is cst.StarredElement:
            stack.append(t.value)
        else:
            found = _path(t)
            if found is not None:
                names.append(found[0])
    return names


def _direct_updates(small) -> list[str]:
    """The names ``small`` updates an item of directly (``x`` for ``x[i] = v``, not for
    ``x["h"][i] = v``, where ``x`` is a container that changes in place)."""
    targets = (
        [small.target]
        if type(small) is cst.AugAssign
        else [t.target for t in small.targets]
        if type(small) is cst.Assign
        else []
    )
    out = []
    while targets:
        t = targets.pop()
        if type(t) in (cst.Tuple, cst.List):  # `arr[i], arr[j] = arr[j], arr[i]`
            targets.extend(e.value for e in t.elements)
            continue
        found = _path(t)
        if found is not None and len(found[1]) == 1:
            out.append(found[0])
    return out


def _lost_parameter_updates(info, params: set[str], found: dict) -> None:
    """Updates of a parameter itself that nothing reads afterwards (no later read, not in a
    loop that reads it again, not returned): in NumPy their only effect is on the caller's
    array, which a functional update cannot change: ``alias=(name, name, "param")``."""
    for p, (node, loops, _, _, _) in enumerate(info):
        if id(node) in found:
            continue
        for name in _direct_updates(node):
            if name not in params:
                continue
            rebound = at_end = False
            for k in range(p + 1, len(info)):
                if name in info[k][2]:
                    break
                if name in info[k][3]:
                    rebound = True
                    break
            else:
                rebound = at_end = True  # the end of the function: nothing read it
            if not rebound:
                continue
            # A loop around the update that reads the parameter again keeps the update useful
            # inside the function. When nothing after the update reads the parameter before the
            # function ends, only a read whose value reaches another name counts: one that only
            # decides further updates of the parameter (`for i in range(len(a)): if a[i] < 0:
            # a[i] = 0` in a helper) makes new items that only the caller would ever see.
            if loops and any(
                name in info[k][2]
                and k != p
                and (set(loops) & set(info[k][1]) or (at_end and id(info[k][0]) in loops))
                and (not at_end or _read_reaches_others(info[k][0], name))
                for k in range(len(info))
            ):
                continue  # a loop around the update reads it again
            found[id(node)] = (name, name, "param")
            break


_METADATA = frozenset({"shape", "ndim", "dtype", "size"})


def _reads_items(expr, name: str) -> bool:
    """``expr`` reads the items of ``name`` (not only ``name.shape``, ``.ndim``, ``.dtype``,
    ``.size`` or ``len(name)``)."""
    stack = [expr]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is cst.Name:
            if item.value == name:
                return True
            continue
        if kind is cst.Attribute and type(item.value) is cst.Name and item.attr.value in _METADATA:
            continue
        if (
            kind is cst.Call
            and type(item.func) is cst.Name
            and item.func.value == "len"
            and len(item.args) == 1
            and type(item.args[0].value) is cst.Name
        ):
            continue
        stack.extend(item.children)
    return False


def _only_updates(suite, name: str) -> bool:
    """Every statement in ``suite`` (nested too) is an item update of ``name`` or a test or
    loop around such updates: nothing else is bound, called, returned or left."""
    stack = list(statement_children(suite))
    while stack:
        item = stack.pop()
        kind = type(item)
        if isinstance(item, cst.BaseSmallStatement):
            if kind is cst.Pass:
                continue
            if not (_direct_updates(item) == [name] and _header(item)[1] <= {name}):
                return False
            continue
        if kind in _SCOPES or kind in (cst.Try, cst.With):
            return False
        stack.extend(statement_children(item))
    return True


def _read_reaches_others(node, name: str) -> bool:
    """A statement of a loop around an update of the parameter ``name`` that reads it: does the
    value it reads reach anything but further updates of ``name``?"""
    kind = type(node)
    if kind in (cst.For, cst.If, cst.While):
        header = node.iter if kind is cst.For else node.test
        return _reads_items(header, name) and not _only_updates(node, name)
    if isinstance(node, cst.BaseSmallStatement):
        return not (_direct_updates(node) == [name] and _header(node)[1] <= {name})
    return True


def _aliases(
    events: list, params: set[str] = frozenset()
) -> tuple[dict[int, tuple[str, ...]], dict[int, tuple[str, ...]]]:
    """Updates of a name another name was assigned from (or to) with ``=``, the other read
    after the update: ``{id(update): (name, other)}``; ``(row, grid, "for")`` for an update of
    the target of ``for row in grid`` with ``grid`` read after it. Second: ``{id(update):
    names}``, the further names that share the object at such an update (``e = d; al = d;
    d[k] = v``: ``(d, al)`` and ``(e,)``)."""
    info = []
    for node, loops in events:
        reads, binds = _header(node)
        pair = None
        if (
            type(node) is cst.Assign
            and len(node.targets) == 1
            and type(node.targets[0].target) is cst.Name
            and type(node.value) is cst.Name
        ):
            pair = (node.targets[0].target.value, node.value.value)
        elif type(node) is cst.For and type(node.target) is cst.Name and type(node.iter) is cst.Name:
            pair = (node.target.value, node.iter.value, "for")  # `for row in grid`: row is in grid
        info.append((node, loops, reads, binds, pair))
    found: dict[int, tuple[str, ...]] = {}
    also: dict[int, tuple[str, ...]] = {}
    pairs = [(k, pair) for k, (_, _, _, _, pair) in enumerate(info) if pair is not None]
    pairs += _holding_pairs(info)
    pairs.sort(key=lambda kp: kp[0])
    for p, (node, loops, _, _, _) in enumerate(info):
        if not pairs:
            break
        whole = _changed_in_place(node)
        for name in (*_updated_names(node), *((whole,) if whole is not None else ())):
            alias = _aliased(info, pairs, p, name)
            if alias is not None:
                found[id(node)] = alias[0]
                if alias[1]:
                    also[id(node)] = alias[1]
                break
    _lost_parameter_updates(info, params, found)
    return found, also


def _holding_pairs(info) -> list:
    """``y = x[...]`` (in NumPy a view of ``x``: ``(y, x, "view")``) and ``y = {"h": x}``,
    ``[x, ...]``, ``(x, ...)`` (``y`` holds the object ``x``: ``(y, x, "holds")``)."""
    out = []
    for k, (node, *_rest) in enumerate(info):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            continue
        name, value = node.targets[0].target.value, node.value
        if type(value) is cst.Subscript:
            root = value
            while type(root) is cst.Subscript:
                root = root.value
            if type(root) is cst.Name and root.value != name:
                out.append((k, (name, root.value, "view")))
        elif type(value) in (cst.List, cst.Tuple, cst.Dict):
            items = [e.value for e in value.elements if isinstance(e, (cst.Element, cst.DictElement))]
            for item in items:
                if type(item) is cst.Name and item.value != name:
                    out.append((k, (name, item.value, "holds")))
    return out


def _aliased(info, pairs, p: int, name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The latest name sharing ``name``'s object at update ``p`` and read after it, as
    ``(name, other, *kind)``, and the others alike (see ``ArrayUpdateRewriter.also``), or None."""
    found: list[tuple[str, ...]] = []
    for q, (a, b, *kind) in reversed(pairs):
        if q >= p or name not in (a, b) or a == b or (kind == ["for"] and name != a):
            continue
        other = b if a == name else a
        if any(name in info[k][3] or other in info[k][3] for k in range(q + 1, p)):
            continue  # one of them was assigned anew in between: no longer the same object
        if _read_after(info, p, other, q):
            if kind == ["view"] and name != a:
                continue  # `t = xs[i]` may be a scalar, a copy: only an update of the view counts
            if kind == ["holds"] and name != a:
                kind = ["held"]  # the array held was updated through its own name
            found.append((name, other, *kind))
    if not found:
        return None
    return found[0], tuple(f for f in found[1:] if f[1] != found[0][1])


def _read_after(info, p: int, name: str, q: int) -> bool:
    """Whether ``name`` is read after statement ``p`` before being assigned anew, or in a loop
    around ``p`` that does not hold ``q`` (the next iteration reads it)."""
    for k in range(p + 1, len(info)):
        _, _, reads, binds, _ = info[k]
        if name in reads:
            return True
        if name in binds:
            break
    loops = set(info[p][1]) - set(info[q][1])
    return bool(loops) and any(name in info[k][2] and loops & set(info[k][1]) for k in range(len(info)))


def _live_iter(loop: cst.For) -> cst.BaseExpression:
    """The iterable of ``for x in a`` (also ``enumerate(a)``, ``zip(a, b)``) with ``a`` given as
    ``_lx.live_rows(a)`` where the body updates items of ``a``: as over a NumPy array, each
    iteration then sees the rows the earlier ones changed."""
    events: list = []
    _own_statements(loop.body.body, (), events)
    updated = {name for small, _ in events for name in _updated_names(small)}
    if not updated:
        return loop.iter

    def live(expr):
        if type(expr) is cst.Name and expr.value in updated:
            return runtime_call("live_rows", expr)
        return expr

    it = loop.iter
    if type(it) is cst.Name:
        return live(it)
    if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value in ("enumerate", "zip"):
        args = [a.with_changes(value=live(a.value)) if a.keyword is None and not a.star else a for a in it.args]
        if any(a is not b for a, b in zip(args, it.args)):
            return it.with_changes(args=args)
    return it


def _local_names(node: cst.FunctionDef, events: list) -> set[str]:
    """The function's own local variables: parameters and names it binds, less those it
    declares ``global`` or ``nonlocal``."""
    p = node.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    declared: set[str] = set()
    for small, _ in events:
        if type(small) in (cst.Global, cst.Nonlocal):
            declared.update(n.name.value for n in small.names)
        else:
            names |= _header(small)[1]
    return names - declared


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    events: list = []
    _own_statements(node.body.body, (), events)
    p = node.params
    params = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    body = ArrayUpdateRewriter(ctx, _local_names(node, events), *_aliases(events, params)).part(node.body)
    if body is node.body:
        return node
    new = node.with_changes(body=body)
    ArrayUpdateRewriter(ctx, set(), {}, {}).place(new, node)
    return new


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (SUBSCRIPT_UPDATE, SHARED_OBJECT)


# -- explain() ---------------------------------------------------------------------------


def describe_update(small: cst.BaseSmallStatement, module: cst.Module) -> tuple[str, str] | None:
    """For a statement this converter wrote, the user's form and the functional form:
    ``("x[i] += v", "x = x.at[i].add(v)")``; None for any other statement."""
    if type(small) is not cst.Assign or type(small.value) is not cst.Call:
        return None
    call = small.value
    func = call.func
    if not (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and is_runtime_name(func.value.value)
        and func.attr.value in ("setitem", "setitem_op")
    ):
        return None
    args = [a.value for a in call.args if a.keyword is None]
    op = None
    if func.attr.value == "setitem_op":
        if len(args) != 4 or type(args[2]) is not cst.SimpleString:
            return None
        op = args[2].value[1:-1]
        del args[2]
    if len(args) != 3:
        return None
    name = args[0].value if type(args[0]) is cst.Name else code_of(module, args[0])
    outer, last = _steps_text(args[1], module)
    value = "..." if type(args[2]) is cst.Name and _GENERATED.fullmatch(args[2].value) else code_of(module, args[2])
    target = f"{name}{outer}"
    user = f"{target}[{last}] {op or ''}= {value}"
    if op is None:
        functional = f"{target}.at[{last}].set({value})"
    elif op in _AT_METHODS:
        functional = f"{target}.at[{last}].{_AT_METHODS[op]}({value})"
    else:
        functional = f"{target}.at[{last}].set({target}[{last}] {op} {value})"
    return user, f"{target} = {functional}"


def _steps_text(index: cst.BaseExpression, module: cst.Module) -> tuple[str, str]:
    """``('["h"]', 'i')`` for ``_lx.at["h"][i]``: the steps before the last item, and the last
    item's text; an index passed as it is gives ``('', 'i')``."""
    steps = []
    node = index
    while type(node) in (cst.Subscript, cst.Attribute):
        steps.append(node)
        node = node.value
    if not (
        steps
        and type(steps[-1]) is cst.Attribute
        and type(steps[-1].value) is cst.Name
        and is_runtime_name(steps[-1].value.value)
        and steps[-1].attr.value == "at"
    ):
        if type(index) is cst.Tuple:
            index = index.with_changes(lpar=[], rpar=[])
        return "", code_of(module, index)
    steps = steps[:-1]
    steps.reverse()
    outer = ""
    for step in steps[:-1]:
        if type(step) is cst.Subscript:
            outer += "[" + _slice_text(step, module) + "]"
        else:
            outer += "." + step.attr.value
    return outer, _slice_text(steps[-1], module)


def _slice_text(step: cst.Subscript, module: cst.Module) -> str:
    text = code_of(module, step)
    return text[text.index("[", len(code_of(module, step.value))) + 1 : -1]


def updated_parameters(node: cst.FunctionDef, params) -> frozenset[str]:
    """The parameters ``node`` (converted) updates items of: ``p = _lx.setitem(p, ...)`` /
    ``_lx.setitem_op``. The caller holds what they refer to, so they are live when the function
    returns: a traced construct that updates one carries it out, and a Python list or dict is
    written back into the caller's object (runtime/effects.py), as Python changes it."""
    params = set(params)
    found: set[str] = set()
    # Statements only (an assignment is a statement): expressions, most of a tree, are not
    # entered; nor are nested functions and classes (their own parameters and names).
    stack = list(statement_children(node))
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            continue
        if kind is cst.Assign:
            if len(item.targets) == 1:
                target, value = item.targets[0].target, item.value
                if (
                    type(target) is cst.Name
                    and target.value in params
                    and type(value) is cst.Call
                    and type(value.func) is cst.Attribute
                    and type(value.func.value) is cst.Name
                    and value.func.attr.value in ("setitem", "setitem_op")
                    and is_runtime_name(value.func.value.value)
                ):
                    found.add(target.value)
            continue
        stack.extend(statement_children(item))
    return frozenset(found)
