"""SSA construction: the canonical libcst tree of one function becomes an ``ir.Function``.

Straight-line statements become ``py`` ops kept verbatim (their comments with them);
``if``/``elif``/``else`` become ``cond``, ``while`` becomes ``while``, ``for i in range(...)``
becomes ``for_range`` and any other ``for`` becomes ``scan``. Every value a control-flow op
needs is an explicit operand; names it defines are results. Which names a branch or loop
must yield comes from liveness, so temporaries local to one branch stay local.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Mapping
from dataclasses import dataclass

import libcst as cst

from laxify.transpiler.analysis.walk import children, code_of, statement_children, walk

from laxify.ir import (
    CondOp,
    ForRangeOp,
    Function,
    Op,
    PyOp,
    Region,
    ReturnOp,
    ScanOp,
    Span,
    TryOp,
    UndefOp,
    Value,
    WhileOp,
    WithOp,
    YieldOp,
)
from laxify.ir.naming import DEFAULT_PREFIX, is_return_flag
from laxify.transpiler.analysis.features import DISPLAYS
from laxify.transpiler.analysis.liveness import Liveness
from laxify.transpiler.converters.array_updates import updated_parameters
from laxify.transpiler.converters.list_appends import grown_lists as _grown_lists, shared_names
from laxify.transpiler.analysis.positions import Positions
from laxify.transpiler.analysis.names import block_access, expr_reads, stmt_access, target_names
from laxify.transpiler.analysis.staticness import literal_value, static_rule, stmt_static_rule
from laxify.transpiler.source import FunctionSource

__all__ = ["build_ir", "Fallback", "ITEM_NAME"]

ITEM_NAME = "_lx_item"  # the element of a ``for`` whose target is not a plain name


@dataclass(frozen=True)
class Fallback:
    """A compound statement kept whole as Python, and why. ``filename``/``fix``: where the
    statement is and what to do, when not in the converted function's own file (code laxify
    runs as plain Python, such as a generator function it calls) or not the usual fix."""

    span: Span
    construct: str
    reason: str
    end_line: int
    filename: str | None = None
    fix: str | None = None


@dataclass
class _Scope:
    env: dict[str, Value]
    ops: list[Op]


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.While, cst.For)


def _jump_reason(node: cst.CSTNode, in_loop: bool) -> str | None:
    """Why a compound statement must stay Python, looking inside it (not into nested defs).
    Pre-order with an explicit stack: an `elif` chain of 500 arms nests 500 deep. Statements
    only: the function is no generator or coroutine (see ``source.get_source``), so its own
    expressions hold no `yield`/`await`."""
    stack = [(child, in_loop) for child in reversed(list(statement_children(node)))]
    while stack:
        child, in_loop = stack.pop()
        kind = type(child)  # exact types: isinstance against libcst's ABCs is slow
        if kind in _SCOPES:
            continue
        if kind is cst.Return:
            return "it contains a `return` statement"
        if (kind is cst.Break or kind is cst.Continue) and not in_loop:
            return f"it contains a `{'break' if kind is cst.Break else 'continue'}` statement"
        if kind is cst.Global or kind is cst.Nonlocal:
            return "it contains a `global`/`nonlocal` statement"
        inner_loop = in_loop or kind in _LOOPS
        stack.extend((grandchild, inner_loop) for grandchild in reversed(list(statement_children(child))))
    return None


def _declared(node: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """The names ``node``'s own code declares ``global`` and ``nonlocal``."""
    found: tuple[set[str], set[str]] = (set(), set())
    stack = list(statement_children(node.body))  # not recursion: `elif` chains nest one level per arm
    while stack:
        child = stack.pop()
        kind = type(child)
        if kind in _SCOPES:
            continue
        if kind is cst.Global or kind is cst.Nonlocal:
            found[kind is cst.Nonlocal].update(item.name.value for item in child.names)
        stack.extend(statement_children(child))
    return found


class _Builder:
    def __init__(self, src: FunctionSource, positions: Positions, freevars: frozenset[str]):
        self.src = src
        self.module = src.module
        self.positions = positions
        self.freevars = freevars
        self.counters: dict[str, int] = {}
        self.fallbacks: list[Fallback] = []
        self.scope = _Scope({}, [])
        self.top_scope = self.scope
        self.here = Span(src.first_line, src.indent)  # the enclosing construct's position
        self.local_names: set[str] = set()
        self.declared: set[str] = set()  # names the function declares `global` or `nonlocal`
        self.globals_: set[str] = set()
        self.bound: set[str] = set()  # the function's local variables (parameters, assigned names)
        self.item_name = ITEM_NAME
        self.cells: frozenset[str] = frozenset()  # names the function's closures capture
        self.stand_ins: set[int] = set()  # id() of the values that stand for a name with no value yet
        self.updates: dict[tuple[int, int], list] = {}  # rewritten item updates (Context.updates)
        self.plain: dict[tuple[int, int], list[cst.SimpleStatementLine]] = {}  # (Context.plain)
        self.shared_lists: frozenset[str] = frozenset()  # lists other names may refer to (list_appends)
        self.previous: cst.BaseStatement | None = None  # the statement before the one being built
        self.in_place = False  # whether the function may change objects in place (see _changed_objects)
        self.private: frozenset[str] = frozenset()  # names whose object nothing else reaches

    # -- helpers -------------------------------------------------------------------
    def value(self, hint: str) -> Value:
        version = self.counters.get(hint, 0)
        self.counters[hint] = version + 1
        return Value(hint, version)

    def span_of(self, node: cst.CSTNode) -> Span:
        """Where ``node`` is in the user's file; synthesised nodes get their construct's place."""
        found = self.positions.get(node)
        return Span(*found) if found is not None else self.here

    def code(self, node: cst.CSTNode) -> str:
        text = self.src.verbatim.get(node)  # a one-line statement as the user wrote it
        return text if text is not None else code_of(self.module, node)

    def emit(self, op: Op) -> Op:
        self.scope.ops.append(op)
        return op

    def lookup(self, name: str) -> Value:
        found = self.scope.env.get(name)
        if found is None:
            found = self.emit(UndefOp(results=[self.value(name)], span=self.here)).results[0]
            self.stand_ins.add(id(found))
        return found

    @contextmanager
    def region(self, region: Region, names: list[str]):
        saved = self.scope
        env = dict(saved.env)
        for name, arg in zip(names, region.args):
            if arg.hint:
                env[name] = arg
        self.scope = _Scope(env, region.ops)
        try:
            yield
        finally:
            self.scope = saved

    def unset_locals(self, reads, span: Span) -> None:
        """A local variable read inside a branch or loop body before any assignment of it on
        the way there: a stand-in with no value. Without it the generated function would read
        the enclosing function's variable, which has no value yet (NameError: cannot access
        free variable), while tracing a branch that may never run; with it, a use raises
        UnboundLocalError at the user's line, as elsewhere."""
        if self.at_top:
            return
        for n in reads:
            if n not in self.scope.env and n in self.bound and n not in self.declared:
                self.scope.env[n] = self.emit(UndefOp(results=[self.value(n)], span=span)).results[0]

    def expr(self, node: cst.BaseExpression, span: Span, code: str | None = None) -> Value:
        reads = expr_reads(node)
        self.unset_locals(reads, span)
        operands = [self.scope.env[n] for n in reads if n in self.scope.env]
        rule, deps = static_rule(node)
        if any(d in self.freevars for d in deps):
            rule, deps = "never", ()
        attrs: dict = {"code": code if code is not None else self.code(node), "kind": "expr", "static": rule}
        self.set_deps(attrs, rule, deps, operands)
        try:
            attrs["value"] = literal_value(node)
        except (ValueError, SyntaxError):
            pass
        result = self.value("")
        self.emit(PyOp(operands=operands, results=[result], attributes=attrs, span=span))
        return result

    def constant(self, value: int, span: Span) -> Value:
        result = self.value("")
        attrs = {"code": repr(value), "kind": "expr", "static": "always", "value": value}
        self.emit(PyOp(results=[result], attributes=attrs, span=span))
        return result

    # -- statements ------------------------------------------------------------------
    def block(self, suite: cst.BaseSuite, live: Liveness) -> None:
        previous = None
        for stmt in suite.body:
            if type(suite) is cst.SimpleStatementSuite:
                self.simple(stmt, self.span_of(stmt))
                continue
            self.previous = previous  # read by `if_`: the statement a return guard follows
            if self.statement(stmt, live) == "returned":
                break
            previous = stmt

    def statement(self, stmt: cst.BaseStatement, live: Liveness) -> str | None:
        span = self.span_of(stmt)
        saved, self.here = self.here, span
        first = len(self.scope.ops)
        try:
            if type(stmt) is cst.SimpleStatementLine:
                if len(stmt.body) == 1 and type(stmt.body[0]) is cst.Return and self.at_top:
                    self.return_(stmt.body[0], span)
                    return "returned"
                self.simple(stmt, span)
                return None
            reason = self.unsupported(stmt)
            if reason is not None:
                self.keep(stmt, span, reason, self.shared_fix(stmt))
            elif type(stmt) is cst.If:
                self.if_(stmt, span, live)
            elif type(stmt) is cst.While:
                self.while_(stmt, span, live)
            elif type(stmt) is cst.For:
                self.for_(stmt, span, live)
            elif type(stmt) is cst.With:
                self.with_(stmt, span, live)
            elif type(stmt) is cst.Try:
                self.try_(stmt, span, live)
            elif type(stmt) in (cst.FunctionDef, cst.ClassDef):
                self.keep(stmt, span, None)
            elif type(stmt) is cst.Match:
                # (converters/match_statements.py: its cases' bodies follow it, converted)
                self.keep(stmt, span, "its sequence, mapping or class patterns are matched as Python")
            else:
                self.keep(stmt, span, f"`{_construct(stmt)}` statements are not converted")
            return None
        finally:
            self.here = saved
            self.keep_comments(stmt, first)

    def keep_comments(self, stmt: cst.BaseStatement, first: int) -> None:
        """Comment lines above a statement that became an op other than verbatim Python go with
        that op (lowering writes them back above it)."""
        comments = tuple(line.comment.value for line in getattr(stmt, "leading_lines", ()) if line.comment is not None)
        header = getattr(getattr(stmt, "body", None), "header", None)
        if type(stmt) in (cst.If, cst.While, cst.For, cst.With, cst.Try) and header is not None and header.comment:
            comments += (header.comment.value,)  # `while x > 1:  # comment`
        if not comments:
            return
        for op in self.scope.ops[first:]:
            if not isinstance(op, (PyOp, UndefOp)):
                op.attributes["comments"] = comments
                return

    def unsupported(self, stmt: cst.BaseStatement) -> str | None:
        if type(stmt) is cst.With:
            return _with_reason(stmt)
        if type(stmt) is cst.Try:
            return _jump_reason(stmt, in_loop=False)
        if type(stmt) is cst.TryStar:
            return "`except*` clauses (exception groups) are not converted"
        if type(stmt) not in (cst.If, cst.While, cst.For):
            return None
        if type(stmt) in (cst.While, cst.For) and stmt.orelse is not None:
            return f"`{'while' if type(stmt) is cst.While else 'for'} ... else` is not converted"
        if type(stmt) is cst.For and stmt.asynchronous is not None:
            return "`async for` is not converted"
        access = stmt_access(stmt)
        outside = [n for n in access.mutates if n not in self.bound and n not in self.declared]
        if outside:
            # Branches and iterations run as functions of their own while tracing (all of them,
            # for a traced condition): an object from outside cannot be changed exactly as written.
            return f"it changes `{outside[0]}`, an object from outside the function, in place"
        grown = [n for n in _grown_lists(stmt) if n in self.shared_lists] if type(stmt) in (cst.While, cst.For) else []
        if grown:
            # An append loop makes a new (stacked) value of its list, which another name for the
            # list (or the caller, for a parameter) would not see: Python's loop, in place.
            return (
                f"it appends to `{grown[0]}`, a list that another name (or the function's "
                f"caller) refers to too, so the loop must change that very list"
            )
        shared = [n for n in access.writes if n in self.declared]
        if shared:
            # Its branches or iterations would run as functions of their own while tracing (all
            # of them, for a traced condition), so the write cannot happen exactly as written.
            return (
                f"it assigns `{shared[0]}`, which the function declares "
                f"`{'global' if shared[0] in self.globals_ else 'nonlocal'}`"
            )
        return _jump_reason(stmt, in_loop=False)

    def shared_fix(self, stmt: cst.BaseStatement) -> str | None:
        """The fix for a construct kept because it assigns a global or nonlocal name, or changes
        an object from outside the function."""
        if type(stmt) not in (cst.If, cst.While, cst.For):
            return None
        access = stmt_access(stmt)
        shared = [n for n in access.writes if n in self.declared]
        if not shared:
            outside = [n for n in access.mutates if n not in self.bound and n not in self.declared]
            if not outside:
                return None
            return (
                f"One XLA program cannot change a Python object while it runs: build the values "
                f"in a local list or array, return them, and change `{outside[0]}` where the "
                f"function is called (or keep such state in an array that you pass in and return)."
            )
        name = shared[0]
        return (
            f"One XLA program cannot assign a Python variable while it runs: return the new "
            f"value of `{name}` from the function and assign it where the function is called "
            f"(or keep it in an array that you pass in and return), or mark the argument the "
            f"condition depends on static (static_argnums/static_argnames)."
        )

    def keep(self, stmt: cst.BaseStatement, span: Span, reason: str | None, fix: str | None = None) -> None:
        """A compound statement kept whole as Python."""
        access = stmt_access(stmt)
        attrs: dict = {"code": self.code(stmt).rstrip("\n"), "kind": "stmt", "static": "never"}
        if reason is not None:
            attrs["fallback"] = reason
            if type(stmt) is cst.For:
                # Kept for its effect on an object from outside (or a global or nonlocal name):
                # over a traced array it would run while tracing and make its change once per
                # compilation (an `if` or `while` on a traced value cannot run while tracing), so
                # the function runs as Python there (runtime/effects.py ``kept_effects``).
                outside = [n for n in access.mutates if n not in self.bound and n not in self.declared]
                touched = outside or [n for n in access.writes if n in self.declared]
                if touched:
                    attrs["effects"] = (touched[0], tuple(expr_reads(stmt.iter)), fix or "")
            height = attrs["code"].count("\n") + 1 - len(getattr(stmt, "leading_lines", ()))
            self.fallbacks.append(Fallback(span, _construct(stmt), reason, span.line + height - 1, fix=fix))
        # A name the statement assigns on some of its paths only keeps its value on the others:
        # the statement reads it (so that the value before it stays alive to be kept).
        self.emit_stmt(access, attrs, span, keeps=access.writes)

    def simple(self, stmt, span: Span) -> None:
        line_node = stmt if type(stmt) is cst.SimpleStatementLine else cst.SimpleStatementLine([stmt])
        access = stmt_access(stmt)
        rule, deps = stmt_static_rule(line_node, writes=bool(access.writes))
        if any(d in self.freevars for d in deps):
            rule, deps = "never", ()
        attrs: dict = {"code": self.code(_unannotated(stmt, self.cells)).rstrip("\n"), "kind": "stmt", "static": rule}
        self.unset_locals(access.reads, span)
        self.set_deps(attrs, rule, deps, [self.scope.env[n] for n in access.reads if n in self.scope.env])
        small = line_node.body[0] if len(line_node.body) == 1 else None
        if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
            try:
                attrs["value"] = literal_value(small.value)
            except (ValueError, SyntaxError):
                pass
        if self.updates and any(type(small) is cst.Assign for small in line_node.body):
            # For explain(): the user's form and the functional one (listed once per update,
            # also where a statement laxify made shares the line).
            updates = self.updates.pop((span.line, span.col), None)
            if updates:
                attrs["updates"] = tuple(updates)
        if self.plain and type(stmt) is cst.SimpleStatementLine and ".python_op(" in attrs["code"]:
            before = self.plain.get((span.line, span.col))
            if before:
                # Lowered instead of `code` where every value the line reads is static.
                attrs["plain"] = self.code(before.pop(0)).rstrip("\n")
        self.emit_stmt(access, attrs, span)
        for small in line_node.body:
            if type(small) is cst.Del:
                # After `del y` the name has no value: a later use raises UnboundLocalError at
                # that use, and a traced branch that deletes it says so by name.
                for name in target_names(small.target):
                    self.scope.env[name] = self.emit(UndefOp(results=[self.value(name)], span=span)).results[0]

    def set_deps(self, attrs: dict, rule: str, deps, operands: list[Value]) -> None:
        """Record the names a static rule depends on, when they are not simply every operand."""
        if rule != "operands":
            return
        wanted = tuple(d for d in deps if d in self.scope.env)
        if set(wanted) != {v.hint for v in operands}:
            attrs["deps"] = wanted

    def emit_stmt(self, access, attrs: dict, span: Span, keeps=()) -> None:
        results = [self.value(n) for n in access.writes]
        reads = {**access.reads, **dict.fromkeys(keeps)}
        self.emit(
            PyOp(
                operands=[self.scope.env[n] for n in reads if n in self.scope.env],
                results=results,
                attributes=attrs,
                span=span,
            )
        )
        self.scope.env.update(zip(access.writes, results))

    def bind(self, names, values) -> None:
        self.scope.env.update(zip(names, values))

    @property
    def at_top(self) -> bool:
        return self.scope is self.top_scope

    def return_(self, node: cst.Return, span: Span) -> None:
        operands = [] if node.value is None else [self.expr(node.value, span)]
        self.emit(ReturnOp(operands=operands, span=span))

    def if_(self, stmt: cst.If, span: Span, live: Liveness) -> None:
        """``if``/``else`` is a two-way ``cond``; an ``if``/``elif``/.../``else`` chain is one
        ``cond`` too, the conditions of its ``elif`` arms in test regions (one op however
        long the chain, where nested ``cond``s would nest one level per arm)."""
        arms = [stmt]
        while type(arms[-1].orelse) is cst.If:
            arms.append(arms[-1].orelse)
        final = arms[-1].orelse
        guarded = self.previous
        live_out = live.live_out[id(stmt)]
        inner = block_access(stmt.body)
        if stmt.orelse is not None:
            inner.merge(stmt_access(stmt.orelse))
        outputs = [n for n in stmt_access(stmt).writes if n in live_out and self.carried_cell(n, stmt)]
        inputs = [n for n in {**inner.reads, **inner.writes} if n in self.scope.env]
        # A name whose object a branch changes in place, itself or through another name (`al =
        # lst; al[0] = v`): the branch changes the copy it is given, which the cond carries out
        # (and writes back into the object), whether or not the name is read after: another
        # name may hold the object (`e = ident(lst)`, `box.l = lst`: no analysis sees them all).
        in_place = (
            [
                n
                for n in _changed_objects(stmt, direct=True)
                if n in self.scope.env and n not in self.private and self.carried_cell(n, stmt)
            ]
            if self.in_place
            else []
        )
        for name in in_place:
            if name not in outputs:
                outputs.append(name)
            if name not in inputs:
                inputs.append(name)
        pred = self.expr(stmt.test, span)
        tests, branches = [], []
        for k, arm in enumerate(arms):
            arm_span = span if k == 0 else self.span_of(arm)
            if k:
                test = Region(args=[self.value(n) for n in inputs])
                with self.region(test, inputs):
                    test.ops.append(YieldOp(operands=[self.expr(arm.test, arm_span)]))
                tests.append(test)
            branches.append(self.branch(arm.body, inputs, outputs, live, arm_span))
        body = final.body if type(final) is cst.Else else None
        branches.append(self.branch(body, inputs, outputs, live, arm_span))
        attrs: dict = {}
        if in_place:
            attrs["in_place"] = tuple(in_place)  # passed to the branches (lowering)
        if guarded is not None and _is_return_guard(stmt):
            # `if not <returned>:` after a statement that may return: the rest of the function.
            attrs["return_guard"] = _construct(guarded)
        if _guard_test(stmt) == "not_raised":  # (the return converter's, where only a `raise` returns)
            attrs["after_raise"] = True
        if tests:
            attrs["num_tests"] = len(tests)
            comments = [_arm_comments(arm) for arm in arms[1:]]
            comments.append(_arm_comments(final) if final is not None else ())
            if any(comments):
                attrs["arm_comments"] = ((),) + tuple(comments)
        results = [self.value(n) for n in outputs]
        self.emit(
            CondOp(
                operands=[pred, *(self.scope.env[n] for n in inputs)],
                results=results,
                regions=tests + branches,
                attributes=attrs,
                span=span,
            )
        )
        self.bind(outputs, results)

    def branch(self, suite, inputs: list[str], outputs: list[str], live: Liveness, span: Span) -> Region:
        """One branch of an ``if``: the suite (None: no ``else``), yielding ``outputs``."""
        region = Region(args=[self.value(n) for n in inputs])
        saved, self.here = self.here, span
        with self.region(region, inputs):
            if suite is not None:
                self.block(suite, live)
            region.ops.append(YieldOp(operands=[self.lookup(n) for n in outputs]))
        self.here = saved
        return region

    def with_(self, stmt: cst.With, span: Span, live: Liveness) -> None:
        """A ``with`` stays a Python ``with``; its body is converted like any other block (it
        runs once, inline, so the names it assigns are simply the user's variables after it)."""
        live_out = live.live_out[id(stmt)]
        access = stmt_access(stmt)
        targets = [n for item in stmt.items if item.asname is not None for n in target_names(item.asname.name)]
        # Inline: a name a closure captures is assigned where it is, so it has its value after
        # the statement (no carry, so no restriction on cells).
        outputs = [n for n in access.writes if n in live_out]
        inputs = [n for n in {**access.reads, **access.writes} if n in self.scope.env]
        region = Region(args=[self.value(n) for n in inputs + targets])
        with self.region(region, inputs + targets):
            self.block(stmt.body, live)
            region.ops.append(YieldOp(operands=[self.lookup(n) for n in outputs]))
        results = [self.value(n) for n in outputs]
        # The statement's first line(s) as written, up to its colon (comments stay with it).
        whole = self.module.code_for_node(stmt.with_changes(leading_lines=()))
        header = whole[: len(whole) - len(self.code(stmt.body))]
        self.emit(
            WithOp(
                operands=[self.scope.env[n] for n in inputs],
                results=results,
                regions=[region],
                attributes={"code": header, "num_targets": len(targets)},
                span=span,
            )
        )
        self.bind(outputs, results)

    def try_(self, stmt: cst.Try, span: Span, live: Liveness) -> None:
        """A ``try`` stays a Python ``try``; each of its blocks is converted like any other
        block and runs inline. A handler starts from wherever the body raised, so every name
        the statement assigns is an input (a stand-in with no value where it has none yet) and
        the blocks after the body see their names with unknown types."""
        live_out = live.live_out[id(stmt)]
        access = stmt_access(stmt)
        outputs = [n for n in access.writes if n in live_out]  # inline: cells too (see with_)
        later = set()  # what the blocks after the body read: they may start from any point of it
        for part in (*stmt.handlers, stmt.orelse, stmt.finalbody):
            if part is not None:
                later |= set(block_access(part.body).reads)
        inputs = [
            n
            for n in {**access.reads, **access.writes}
            if n in self.scope.env or (n in access.writes and (n in live_out or n in later))
        ]
        operands = [self.lookup(n) for n in inputs]  # a stand-in for a name with no value yet
        unset = {n for n, v in zip(inputs, operands) if id(v) in self.stand_ins}
        blocks = [(stmt, stmt.body, [])]
        for handler in stmt.handlers:
            blocks.append((handler, handler.body, target_names(handler.name.name) if handler.name else []))
        blocks += [(part, part.body, []) for part in (stmt.orelse, stmt.finalbody) if part is not None]
        regions, headers, places, targets = [], [], [], []
        for part, suite, bound in blocks:
            region = Region(args=[self.value(n) for n in inputs + bound])
            if part is stmt:  # the body starts from the values before the statement
                self.stand_ins.update(id(a) for n, a in zip(inputs, region.args) if n in unset)
            with self.region(region, inputs + bound):
                self.block(suite, live)
                region.ops.append(YieldOp(operands=[self.lookup(n) for n in outputs]))
            regions.append(region)
            whole = self.code(part.with_changes(leading_lines=()))
            headers.append(whole[: whole.find(self.code(suite))])
            where = span if part is stmt else self.span_of(part)
            places.append((where.line, where.col))
            targets.append(len(bound))
        results = [self.value(n) for n in outputs]
        self.emit(
            TryOp(
                operands=operands,
                results=results,
                regions=regions,
                attributes={"headers": tuple(headers), "targets": tuple(targets), "places": tuple(places)},
                span=span,
            )
        )
        self.bind(outputs, results)

    def carried_cell(self, name: str, stmt: cst.If | None) -> bool:
        """Whether a construct carries ``name`` out, as far as closures are concerned: a name a
        closure captures is live everywhere (the closure may run later), but only one with a
        value before the construct (or set by every branch of ``stmt``) can be carried."""
        if name not in self.cells:
            return True
        value = self.scope.env.get(name)
        if value is not None and id(value) not in self.stand_ins:
            return True
        if stmt is None:
            return False
        branches = [stmt.body]
        node = stmt
        while type(node.orelse) is cst.If:
            node = node.orelse
            branches.append(node.body)
        if node.orelse is None:
            return False
        branches.append(node.orelse.body)
        return all(name in block_access(b).binds for b in branches)

    def loop_names(self, stmt, live: Liveness, exclude=()) -> tuple[list[str], list[str]]:
        head = live.live_out[("head", id(stmt))]
        live_out = live.live_out[id(stmt)]
        body = block_access(stmt.body)
        carries = [
            n for n in body.writes if (n in head or n in live_out) and n not in exclude and self.carried_cell(n, None)
        ]
        if self.in_place:  # (see `if_`)
            carries += [
                n
                for n in _changed_objects(stmt, direct=False)
                if n in self.scope.env and n not in carries and n not in exclude and self.carried_cell(n, None)
            ]
        reads = dict(body.reads)
        if type(stmt) is cst.While:
            reads.update(expr_reads(stmt.test))
        consts = [n for n in reads if n in self.scope.env and n not in carries and n not in exclude]
        return carries, consts

    def while_(self, stmt: cst.While, span: Span, live: Liveness) -> None:
        carries, consts = self.loop_names(stmt, live)
        names = carries + consts
        operands = [self.lookup(n) for n in carries] + [self.scope.env[n] for n in consts]
        before = Region(args=[self.value(n) for n in names])
        with self.region(before, names):
            pred = self.expr(stmt.test, span)
            before.ops.append(YieldOp(operands=[pred]))
        body = Region(args=[self.value(n) for n in names])
        self.loop_body(stmt, body, names, carries, live)
        results = [self.value(n) for n in carries]
        self.emit(
            WhileOp(
                operands=operands,
                results=results,
                regions=[before, body],
                attributes={"num_carries": len(carries)},
                span=span,
            )
        )
        self.bind(carries, results)

    def loop_body(
        self, stmt, body: Region, names: list[str], carries: list[str], live: Liveness, prologue=None
    ) -> None:
        with self.region(body, names):
            if prologue is not None:
                prologue()
            self.block(stmt.body, live)
            body.ops.append(YieldOp(operands=[self.lookup(n) for n in carries]))

    def for_(self, stmt: cst.For, span: Span, live: Liveness) -> None:
        target = stmt.target
        targets = target_names(target)
        live_out = live.live_out[id(stmt)]
        carries, consts = self.loop_names(stmt, live, exclude=targets)
        # A loop target used after the loop is carried: it then holds the last element (a target
        # a closure captures only where it has a value before the loop, as for other cells).
        carries += [n for n in targets if n in live_out and self.carried_cell(n, None)]
        range_args = self.range_call(stmt)
        if range_args is not None:
            lead = [self.expr(a.value, span) for a in range_args]
            if len(lead) == 1:
                lead = [self.constant(0, span), lead[0]]
            if len(lead) == 2:
                lead.append(self.constant(1, span))
            op_class = ForRangeOp
        else:
            lead = [self.expr(stmt.iter, span)]
            op_class = ScanOp
        item_hint = target.value if type(target) is cst.Name else self.item_name
        item = self.value(item_hint)
        carry_args = [self.value("" if n in targets else n) for n in carries]
        const_args = [self.value(n) for n in consts]
        body = Region(args=[item, *carry_args, *const_args])
        operands = lead + [self.lookup(n) for n in carries] + [self.scope.env[n] for n in consts]

        def bind_target() -> None:
            env = self.scope.env
            for n in targets:
                env.pop(n, None)
            if type(target) is cst.Name:
                env[target.value] = item
            else:
                unpack = cst.Assign([cst.AssignTarget(target)], cst.Name(self.item_name))
                attrs = {"code": self.code(unpack), "kind": "stmt", "static": "operands"}
                self.emit_stmt(stmt_access(unpack), attrs, span)

        self.loop_body(stmt, body, [item_hint, *carries, *consts], carries, live, prologue=bind_target)
        results = [self.value(n) for n in carries]
        attrs: dict = {"num_carries": len(carries)}
        if op_class is ForRangeOp:
            # As written: a `range` that is not the builtin at run time gets these arguments.
            attrs["range_args"] = len(range_args)
            reason = _index_needs_python(stmt.body, target.value)
            if reason:
                attrs["python_index"] = reason
        self.emit(op_class(operands=operands, results=results, regions=[body], attributes=attrs, span=span))
        self.bind(carries, results)

    def range_call(self, stmt: cst.For):
        it = stmt.iter
        if not (type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "range"):
            return None
        if "range" in self.local_names or type(stmt.target) is not cst.Name:
            return None
        args = it.args
        if not 1 <= len(args) <= 3 or any(a.keyword is not None or a.star for a in args):
            return None
        return list(args)


_SHAPE_CALLS = frozenset(
    {
        "reshape",
        "zeros",
        "ones",
        "full",
        "empty",
        "arange",
        "eye",
        "range",
        "broadcast_to",
        "tile",
        "repeat",
        "int",
        "split",
        "identity",
    }
)


def _index_needs_python(body: cst.CSTNode, index: str) -> str | None:
    """Why a loop index must stay a Python int (slice bounds, shapes, ``range(i)``), or None."""
    for node in walk(body):
        if type(node) is cst.Slice:
            for part in (node.lower, node.upper, node.step):
                if part is not None and index in expr_reads(part):
                    return f"the index `{index}` is a slice bound"
        if type(node) is cst.Call:
            func = node.func
            name = func.attr.value if type(func) is cst.Attribute else getattr(func, "value", None)
            if name in _SHAPE_CALLS and any(index in expr_reads(a.value) for a in node.args):
                return f"the index `{index}` is passed to `{name}(...)`, which needs a Python int"
    return None


_UPDATES = frozenset({"setitem", "setitem_op"})


def _unannotated(stmt, cells: frozenset):
    """``stmt`` with ``name: T = v`` written ``name = v`` where a closure captures ``name``:
    the branch or loop function the statement may land in declares it ``nonlocal``, which
    Python refuses for an annotated name. A local variable's annotation is never evaluated,
    so the two are the same statement."""
    if not cells:
        return stmt
    smalls = stmt.body if type(stmt) is cst.SimpleStatementLine else [stmt]
    if not any(_captured_annotation(small, cells) for small in smalls):
        return stmt
    plain = [
        cst.Assign([cst.AssignTarget(small.target)], small.value, semicolon=small.semicolon)
        if _captured_annotation(small, cells)
        else small
        for small in smalls
    ]
    return stmt.with_changes(body=plain) if type(stmt) is cst.SimpleStatementLine else plain[0]


def _captured_annotation(small, cells: frozenset) -> bool:
    return (
        type(small) is cst.AnnAssign
        and small.value is not None
        and type(small.target) is cst.Name
        and small.target.value in cells
    )


def _changed_objects(stmt: cst.CSTNode, direct: bool) -> list[str]:
    """The names whose object ``stmt`` changes in place through another name: the ``other`` of
    each ``alias=(name, other)`` of the item updates in it and the names of its ``also=``
    (``converters/array_updates.py``); with ``direct``, the names it changes in place itself
    too (``stmt_access``'s ``mutates``: a mutating method, ``del a[k]``; and an item update,
    ``a = _lx.setitem(a, ...)``, and ``a += [v]``). The user's nested functions (and laxify's
    lazy operands) left out."""
    found: list[str] = list(stmt_access(stmt).mutates) if direct else []
    stack = [stmt]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.Lambda or kind is cst.ClassDef:
            continue  # (`stmt` is an `if` or a loop)
        if direct and kind is cst.AugAssign and type(node.target) is cst.Name and type(node.value) in DISPLAYS:
            found.append(node.target.value)
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _UPDATES:
            first = node.args[0].value if node.args else None
            if direct and type(first) is cst.Name:
                found.append(first.value)
            for arg in node.args:
                if arg.keyword is None or type(arg.value) is not cst.Tuple:
                    continue
                items = [e.value for e in arg.value.elements]
                if not all(type(i) is cst.SimpleString for i in items):
                    continue
                words = [i.evaluated_value for i in items]
                if arg.keyword.value == "alias" and len(words) == 2 and words[1] != words[0]:
                    found.append(words[1])
                elif arg.keyword.value == "also":
                    found += words
        stack.extend(children(node))
    return list(dict.fromkeys(found))


def _with_reason(stmt: cst.With) -> str | None:
    """Why a ``with`` statement must stay Python whole (its body not converted), or None."""
    if stmt.asynchronous is not None:
        return "`async with` is not converted"
    for item in stmt.items:
        if item.asname is not None and not _plain_target(item.asname.name):
            return "its `as` target is not a plain name"
    return _jump_reason(stmt, in_loop=False)


def _plain_target(target: cst.CSTNode) -> bool:
    if type(target) is cst.Name:
        return True
    if type(target) in (cst.Tuple, cst.List):
        return all(_plain_target(el.value) for el in target.elements)
    return type(target) is cst.StarredElement and _plain_target(target.value)


def _arm_comments(arm: cst.If | cst.Else) -> tuple[str, ...]:
    """Comment lines above an ``elif``/``else`` line and at its end (``elif c:  # note``)."""
    comments = tuple(line.comment.value for line in arm.leading_lines if line.comment is not None)
    header = getattr(arm.body, "header", None)
    if header is not None and header.comment is not None:
        comments += (header.comment.value,)
    return comments


def _is_return_guard(stmt: cst.If) -> bool:
    """Whether ``stmt`` is the return converter's ``if not <flag>:`` around the code after a
    statement that may return."""
    test = stmt.test
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        flag = test.expression
    elif _guard_test(stmt) is not None:
        flag = test.args[0].value  # the return converter's `_lx.not_(flag)` or `_lx.not_raised(flag)`
    else:
        return False
    return type(flag) is cst.Name and is_return_flag(flag.value)


def _guard_test(stmt: cst.If) -> str | None:
    """The runtime function of a guard's test ``_lx.not_(flag)`` / ``_lx.not_raised(flag)``."""
    test = stmt.test
    if (
        type(test) is cst.Call
        and type(test.func) is cst.Attribute
        and test.func.attr.value in ("not_", "not_raised")
        and len(test.args) == 1
    ):
        return test.func.attr.value
    return None


def _construct(stmt: cst.CSTNode) -> str:
    return {
        cst.If: "if",
        cst.While: "while",
        cst.For: "for",
        cst.Try: "try",
        cst.TryStar: "try",
        cst.With: "with",
        cst.Match: "match",
        cst.FunctionDef: "def",
        cst.ClassDef: "class",
    }.get(type(stmt), "statement")


def function_params(node: cst.FunctionDef) -> list[str]:
    """Parameter names in the order Python binds them."""
    p = node.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    if type(p.star_arg) is cst.Param:
        names.append(p.star_arg.name.value)
    names += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return names


def build_ir(
    src: FunctionSource,
    positions: Positions,
    freevars: frozenset[str] = frozenset(),
    cells: frozenset[str] = frozenset(),
    prefix: str = DEFAULT_PREFIX,
    updates: Mapping[tuple[int, int], list] | None = None,
    plain: Mapping[tuple[int, int], list[cst.SimpleStatementLine]] | None = None,
    in_place: bool = False,
    private: frozenset[str] = frozenset(),
    changed_params: Mapping[str, tuple[int, int] | None] | None = None,
) -> tuple[Function, list[Fallback]]:
    """Build the IR of ``src.node`` (already canonicalised by the converters); ``updates``:
    the item updates the converters rewrote, by position (see ``Context.updates``); ``plain``:
    the lines before their int arithmetic was routed (see ``Context.plain``); ``in_place``:
    whether the function may change a list, dict or set in place (``Context.changes_objects``,
    ``Context.aliased_updates``); ``private``: the names whose object nothing else can reach
    (``Context.private``); ``changed_params``: the parameters whose array it may change in
    place, and the position of the first such change (transpiler/analysis/in_place.py)."""
    node = src.node
    b = _Builder(src, positions, freevars)
    b.in_place, b.private = in_place, private
    b.updates = dict(updates or {})
    b.plain = {pos: list(lines) for pos, lines in (plain or {}).items()}
    b.cells = cells
    b.item_name = prefix + ITEM_NAME[len(DEFAULT_PREFIX) :]
    params = function_params(node)
    body_access = block_access(node.body)
    b.local_names = set(params) | set(body_access.writes)
    b.bound = set(params) | set(body_access.binds)
    b.globals_, nonlocals = _declared(node)
    b.declared = b.globals_ | nonlocals
    fn = Function(node.name.value, span=b.span_of(node))
    b.here = fn.span
    for name in params:
        v = b.value(name)
        fn.params.append(v)
        b.scope.env[name] = v
    b.scope.ops = fn.body.ops
    fn.attributes["params_code"] = b.code(node.params)
    if in_place:
        fn.attributes["changes_in_place"] = True  # (Site.changes_in_place; absent: false)
    if private:
        fn.attributes["private"] = tuple(sorted(private))  # (Site.private, for runtime/effects.py)
    if changed_params:
        # Parameters whose array the function may change in place, and where: a NumPy array
        # given for one makes the function run as Python (runtime/writeback.py).
        fn.attributes["numpy_params"] = tuple(
            (name, *(where or (fn.span.line, fn.span.col))) for name, where in changed_params.items()
        )
    if prefix != DEFAULT_PREFIX:
        fn.attributes["prefix"] = prefix
    if node.returns is not None:
        fn.attributes["returns_code"] = b.code(node.returns.annotation)
    # A name a closure captures may be read whenever the closure is called: always live.
    # A parameter whose items the function updates is read by the caller after the call
    # (`dce` keeps what constructs carry out for it).
    b.shared_lists = shared_names(node)
    updated = updated_parameters(node, params)
    if updated:
        fn.attributes["caller_reads"] = tuple(sorted(updated))
    b.block(node.body, Liveness(node.body, updated, always=cells))
    if cells:
        fn.attributes["cells"] = tuple(sorted(cells))
    return fn, b.fallbacks
