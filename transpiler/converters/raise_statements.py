"""``raise E(args) [from C]`` → ``_lx.raise_(lambda: _lx.exception_(E, args), lambda: C)``
followed by ``return _lx.raised()``: Python's raise outside traced control flow; inside it, a
check recorded for run time (``runtime/error_channel.py``), after which the function does no
more (the ``return``, which the return converter turns into its flag, stops loops and skips
the code after it). A bare ``raise`` (re-raising in an ``except``) stays as written.

A function that may raise on some paths keeps a flag, ``_lx_raised``, set where it raised,
which its end gives to the ``_lx.call`` that called it (``_lx.leaving``); a statement that
calls a module function that may raise (its source holds a ``raise``, or calls one that does)
is bracketed by ``_lx.expect_raise()`` and ``if _lx.call_raised(): _lx_raised = True; return
_lx.raised()``, so that where the callee raised the caller does no more, as Python's
exception would leave it (see ``runtime/error_channel.py``)."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import weakref

import libcst as cst

from laxify.ir.naming import is_runtime_name
from laxify.ir.user_code import is_library_function

from laxify.transpiler.analysis.walk import children, descendants, preorder, statement_children
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import contains, lazy_lambda, runtime_call
from laxify.transpiler.converters.print_calls import formatting
from laxify.transpiler.converters.return_statements import _is_docstring, _nested_return

__all__ = ["transform"]


def _deferred(exc: cst.BaseExpression) -> cst.BaseExpression:
    """``E(args)`` as ``_lx.exception_(E, args)`` (called with the values of the run that
    raises), its string-building arguments as ``format_`` calls; anything else as it is."""
    if type(exc) is not cst.Call:
        return exc
    args = [a if a.star else a.with_changes(value=formatting(a.value)) for a in exc.args]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    call = runtime_call("exception_", exc.func)
    return call.with_changes(
        args=[
            call.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if args
            else call.args[0],
            *args,
        ],
        lpar=exc.lpar,
        rpar=exc.rpar,
    )


FLAG = "_lx_raised"


# id(code) -> (weak reference to the code, whether it holds a `raise`, the names it calls)
_SEEN: dict[int, tuple] = {}


def _scan(fn: types.FunctionType) -> tuple[bool, tuple[str, ...]] | None:
    """Whether ``fn``'s source holds a ``raise`` and the names it calls (cached per code
    object: read once, not per conversion of each caller); ``None`` without source."""
    code = fn.__code__
    entry = _SEEN.get(id(code))
    if entry is not None and entry[0]() is code:
        return entry[1]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    raises = any(isinstance(n, ast.Raise) and n.exc is not None for n in ast.walk(tree))
    names = tuple(
        sorted({n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)})
    )
    key = id(code)

    def forget(ref, seen=_SEEN):
        if seen.get(key, (None,))[0] is ref:
            seen.pop(key, None)

    _SEEN[key] = (weakref.ref(code, forget), (raises, names))
    return raises, names


def _may_raise(fn, depth: int = 0) -> bool:
    """Whether the Python function ``fn`` (user code) holds a ``raise``, or calls by name a
    module function that does (two calls deep): then its callers are bracketed."""
    if type(fn) is not types.FunctionType or is_library_function(fn) or depth > 2:
        return False
    found = _scan(fn)
    if found is None:
        return False
    raises, names = found
    if raises:
        return True
    for name in names:
        callee = fn.__globals__.get(name)
        if callee is not fn and _may_raise(callee, depth + 1):
            return True
    return False


# The runtime's calls whose lambdas are the lazy operands of a conditional expression, an
# `and`/`or` or a chained comparison (converted before this): their calls are the statement's.
_LAZY = frozenset({"ifexp", "and_", "or_", "compare"})


def _calls(node: cst.CSTNode):
    """The calls in ``node``, not looking into lambdas (but the lazy operands of laxify's
    conditional expressions and `and`/`or`), nested defs and classes."""
    stack = [node]
    while stack:
        child = stack.pop()
        if type(child) in (cst.Lambda, cst.FunctionDef, cst.ClassDef):
            continue
        if type(child) is cst.Call:
            yield child
            func = child.func
            if (
                type(func) is cst.Attribute
                and func.attr.value in _LAZY
                and type(func.value) is cst.Name
                and is_runtime_name(func.value.value)
            ):
                stack.extend(arg.value.body for arg in child.args if type(arg.value) is cst.Lambda)
        stack.extend(children(child))


class _Watch:
    """The statement lines of the function (not of nested functions) that call a module
    function that may raise, and whether a ``raise`` stands anywhere but as the function's
    last top-level statement."""

    def __init__(self, ctx: Context, top: cst.FunctionDef):
        self.ctx, self.top = ctx, top
        self.lines: set[int] = set()
        self.checked: dict[str, bool] = {}
        self.local_raisers = False
        nodes = preorder(top)[0]
        self.raises = any(type(n) is cst.Raise for n in nodes)  # (nested code included)
        # Whether some call may reach a function of the module or one defined inside: only
        # then can a statement line call a function that may raise.
        self.may_call = any(
            type(n) is cst.FunctionDef or (type(n) is cst.Call and self._function(n.func)) for n in nodes[1:]
        )
        body = list(top.body.body)
        # A `raise` as the last statement needs no flag: it raises whenever the function runs
        # that far, which `_lx.raise_` itself tells the caller (error_channel.PathRaised).
        self.nested_raise = self.raises and (
            any(_has_raise(stmt) for stmt in body[:-1])
            or bool(body and isinstance(body[-1], cst.BaseCompoundStatement) and _has_raise(body[-1]))
        )

    def _function(self, func: cst.BaseExpression) -> bool:
        """Whether ``func`` names a Python function of the module (only such a call may be
        watched: see ``_may_raise``)."""
        if type(func) is not cst.Name:
            return False
        found, value = self.ctx.global_value(func.value)
        return found and type(value) is types.FunctionType

    def scan(self) -> None:
        """Every statement of the function, through its statement fields only (expressions
        hold no statement lines); nested functions and classes are not entered."""
        if not self.may_call:
            return
        stack = [(child, 0) for child in statement_children(self.top)]
        while stack:
            node, loops = stack.pop()
            kind = type(node)
            if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
                if not loops:
                    self.line(node)  # (a one-line suite, `if c: y = f(x)`, becomes a block)
            elif kind is cst.FunctionDef:
                if contains(node.body, (cst.Raise,)):
                    self.checked[node.name.value] = self.local_raisers = True  # a nested function that may raise
            elif kind is not cst.ClassDef:
                inner = loops + (kind is cst.For or kind is cst.While)
                stack.extend((child, inner) for child in statement_children(node))

    def line(self, node: cst.SimpleStatementLine) -> None:
        # Only outside loops: a `return` flag in a loop body multiplies the tracing of nested
        # loops and branches (minutes for a validator called in two nested loops).
        for call in _calls(node):
            if type(call.func) is cst.Name and self._may_raise(call.func.value):
                self.lines.add(id(node))
                break

    def _may_raise(self, name: str) -> bool:
        if name not in self.checked:
            found, value = self.ctx.global_value(name)
            self.checked[name] = found and _may_raise(value)
        return self.checked[name]


def _has_raise(stmt) -> bool:
    if type(stmt) is cst.SimpleStatementLine:
        return any(type(s) is cst.Raise and s.exc is not None for s in stmt.body)
    return contains(stmt, (cst.Raise,))


def _flag(value: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(FLAG))], cst.Name(value))])


class RaiseTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context, watched: set[int] = frozenset(), flag: bool = False):
        super().__init__(ctx)
        self.guarded: set[int] = set()  # statement lines inside the body of a `try` with handlers
        self.watched, self.flag = watched, flag

    def visit_Try(self, node) -> bool:
        if node.handlers:
            self.guarded.update(
                id(n) for n in descendants(node.body) if type(n) in (cst.SimpleStatementLine, cst.SimpleStatementSuite)
            )
        return True

    def leave_SimpleStatementLine(self, original_node, updated_node):
        new = self._statements(original_node, updated_node)
        if id(original_node) not in self.watched:
            return new
        return cst.FlattenSentinel(self._bracket(original_node, new, id(original_node) in self.guarded))

    def _bracket(self, original_node, new, in_try: bool) -> list:
        # `_lx.expect_raise()`, the statement, and where a function it called raised, the same
        # as a `raise` here (a `return` statement's value is kept in a name in between).
        position = self.ctx.positions.get(original_node)
        before = cst.SimpleStatementLine(
            [cst.Expr(runtime_call("expect_raise", cst.Name("True")) if in_try else runtime_call("expect_raise"))]
        )
        after: list = []
        last = new.body[-1] if type(new) is cst.SimpleStatementLine else None
        if type(last) is cst.Return and last.value is not None:
            keep = self.ctx.fresh("value")
            new = new.with_changes(body=[*new.body[:-1], cst.Assign([cst.AssignTarget(cst.Name(keep))], last.value)])
            after = [cst.SimpleStatementLine([cst.Return(cst.Name(keep))])]
        check = cst.If(
            test=runtime_call("call_raised"),
            body=cst.IndentedBlock([_flag("True"), cst.SimpleStatementLine([cst.Return(runtime_call("raised"))])]),
        )
        out = [before, new, check, *after]
        self.ctx.raises = True  # its `return _lx.raised()`: the function's value may be never set
        if position is not None:
            for stmt in (before, check, *check.body.body, *after):
                self.ctx.positions[stmt] = position
            for stmt in check.body.body:
                for small in stmt.body:
                    self.ctx.positions[small] = position
        return out

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        new = self._statements(original_node, updated_node)
        if id(original_node) not in self.watched:
            return new
        # `if c: y = f(x)` with a call that may raise: a block of its statements, bracketed.
        position = self.ctx.positions.get(original_node)
        body: list = []
        for small in new.body:
            line = cst.SimpleStatementLine([small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
            if position is not None:
                self.ctx.positions[line] = self.ctx.positions.get(small, position)
            if any(type(c.func) is cst.Name for c in _calls(line)):
                body += self._bracket(line, line, id(original_node) in self.guarded)
            else:
                body.append(line)
        return cst.IndentedBlock(body)

    def _statements(self, original_node, updated_node):
        if not any(type(s) is cst.Raise and s.exc is not None for s in updated_node.body):
            return updated_node
        position = self.ctx.positions.get(original_node)
        body: list = []
        for small in updated_node.body:
            if type(small) is not cst.Raise or small.exc is None:
                body.append(small)  # a bare `raise` re-raises what an `except` caught
                continue
            args = [lazy_lambda(_deferred(small.exc))]
            if small.cause is not None:
                args.append(lazy_lambda(_deferred(small.cause.item)))
            call = runtime_call("raise_", *args)
            if id(original_node) in self.guarded:
                # An `except` of the function may catch it: that cannot wait for run time.
                call = call.with_changes(
                    args=[
                        *call.args,
                        cst.Arg(
                            cst.Name("True"),
                            keyword=cst.Name("in_try"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                        ),
                    ]
                )
            record = cst.Expr(call, semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
            stop = cst.Return(runtime_call("raised"), semicolon=small.semicolon)
            marks = (
                [
                    cst.Assign(
                        [cst.AssignTarget(cst.Name(FLAG))],
                        cst.Name("True"),
                        semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
                    )
                ]
                if self.flag
                else []
            )
            if position is not None:
                # The flag assignments the return converter makes of `stop` keep the user's line.
                self.ctx.positions[record] = self.ctx.positions[stop] = position
                for mark in marks:
                    self.ctx.positions[mark] = position
            body += [record, *marks, stop]
            self.ctx.raises = True
        return updated_node.with_changes(body=body)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Raise, cst.Call)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    watch = _Watch(ctx, node)
    watch.scan()
    if watch.local_raisers:
        watch.scan()  # calls before the nested `def` they call are seen now
    has_raise = watch.raises and contains(node.body, (cst.Raise,))
    if not has_raise and not watch.lines and not ctx.loop_raises:
        return node
    flag = bool(watch.lines) or watch.nested_raise or ctx.loop_raises
    node = apply(node, RaiseTransformer(ctx, watch.lines, flag))
    if flag:
        ctx.raised_flag = True  # the return converter gives it to the caller at the end
        body = list(node.body.body)
        first = 1 if body and _is_docstring(body[0]) else 0
        start = _flag("False")
        position = ctx.positions.get(node)
        if position is not None:
            ctx.positions[start] = position
        node = node.with_changes(body=node.body.with_changes(body=[*body[:first], start, *body[first:]]))
    body = list(node.body.body)
    if flag and not _nested_return(body):
        # No return flag (the calls in loops set only the raised flag): the function's one
        # `return`, at its end, gives the flag to the caller itself.
        last = body[-1] if body else None
        small = last.body[-1] if type(last) is cst.SimpleStatementLine else None
        if type(small) is cst.Return and not _is_raised(small):
            value = runtime_call("leaving", cst.Name(FLAG), small.value or cst.Name("None"))
            new = last.with_changes(body=[*last.body[:-1], small.with_changes(value=value)])
            if last in ctx.positions:
                ctx.positions[new] = ctx.positions[last]
            body[-1] = new
        elif type(small) is not cst.Return:
            end = cst.SimpleStatementLine([cst.Return(runtime_call("leaving", cst.Name(FLAG), cst.Name("None")))])
            position = ctx.positions.get(node)
            if position is not None:
                ctx.positions[end] = position
            body.append(end)
        node = node.with_changes(body=node.body.with_changes(body=body))
    if body and not _nested_return(body):
        # No flag will carry the return value: a `raise` that ends the function returns None
        # itself (a recorded one that always fails: its value is never read).
        last = body[-1]
        if type(last) is cst.SimpleStatementLine and any(_is_raised(s) for s in last.body):
            small = [s.with_changes(value=cst.Name("None")) if _is_raised(s) else s for s in last.body]
            new = last.with_changes(body=small)
            if last in ctx.positions:
                ctx.positions[new] = ctx.positions[last]
            node = node.with_changes(body=node.body.with_changes(body=[*body[:-1], new]))
    return node


def _is_raised(small) -> bool:
    """The ``return _lx.raised()`` this converter writes."""
    value = getattr(small, "value", None)
    return (
        type(small) is cst.Return
        and type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value == "raised"
    )
