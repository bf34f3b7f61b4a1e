"""A call that may raise, inside a loop of the caller: ``_lx.expect_raise()`` before the
statement and ``_lx_raised = _lx.raised_or(_lx_raised)`` after it (where the callee raised,
one traced boolean: no ``lax.cond``). In the outermost such loop and in every statement after
it, each ``while`` loop also stops on the flag and each ``print`` is left out where it is set
(``unless_raised=``): where the callee raised, the caller does no more that anyone can see. A
``raise`` that every run makes after it is recorded after the callee's check rather than
raised while tracing (``error_channel._after_checks``), and the function's end gives the flag
to its own caller.

Not the raise converter's ``return`` inside the loop: a loop body that may ``return`` carries
the never-set return value, which makes every enclosing loop and branch trace its body again
to settle it (a validator called in three nested loops: 16 s to trace instead of 0.16), and
a guard around the rest of each iteration would make a list appended there change its length
with the data. The iterations after the one that raised run with values nothing observes (the
run's result is discarded, the first recorded error is reported). A guard ``if test: raise
E(...)`` in a loop body becomes ``_lx_raised = _lx.raise_where(test, lambda: E(...),
_lx_raised)`` the same way (no ``lax.cond``) where its test reads no name the loops assign, or
in nested loops (see ``block``). Runs before the raise converter, which starts the function
with ``_lx_raised = False`` and turns the other ``raise`` statements into its ``return``."""

from __future__ import annotations

import types

import libcst as cst

from laxify.transpiler.analysis.walk import children, preorder, statement_children
from laxify.transpiler.converters.base import Context, parenthesized_generator
from laxify.transpiler.converters.guards import contains, loop_test, runtime_call
from laxify.transpiler.converters.guards import lazy_lambda
from laxify.transpiler.converters.raise_statements import FLAG, _calls, _deferred, _may_raise

__all__ = ["transform"]


class _Rewriter:
    def __init__(self, ctx: Context, top: cst.FunctionDef):
        self.ctx = ctx
        self.checked: dict[str, bool] = {}
        self.found = False
        self.assigned: list[frozenset] = [frozenset()]  # names the loops around a statement assign
        # How many `while True:` loops are around: left only by `break`/`return`, which the
        # flag does not stop (a guard there keeps its `return`).
        self.forever = 0
        params = top.params
        self.parameters = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        # Nested functions that hold a `raise`, wherever they are defined (a call may come first).
        stack = list(statement_children(top))
        while stack:
            node = stack.pop()
            if type(node) is cst.FunctionDef:
                if contains(node.body, (cst.Raise,)):
                    self.checked[node.name.value] = True
                continue
            if type(node) is not cst.ClassDef:
                stack.extend(statement_children(node))

    def may_raise(self, name: str) -> bool:
        if name not in self.checked:
            found, value = self.ctx.global_value(name)
            self.checked[name] = found and _may_raise(value)
        return self.checked[name]

    def may_find(self, top: cst.FunctionDef) -> bool:
        """Whether ``top`` holds something ``block`` may rewrite (looked for in all its code,
        loops or not): a ``raise``, or a call that ``watched`` may watch."""
        for node in preorder(top)[0]:
            kind = type(node)
            if kind is cst.Raise:
                return True
            if kind is not cst.Call:
                continue
            func = node.func
            if type(func) is cst.Name:
                name = func.value
                if name in self.parameters or name in self.checked:
                    return True
                found, value = self.ctx.global_value(name)
                if found and type(value) is types.FunctionType:  # (see `_may_raise`)
                    return True
            elif (
                type(func) is cst.Attribute
                and type(func.value) is cst.Name
                and func.value.value in ("self", "cls")
                and func.value.value in self.parameters
            ):
                return True
        return False

    def watched(self, line: cst.SimpleStatementLine) -> bool:
        """Whether the statement calls a function that may raise: a module or nested function
        whose source holds a ``raise``, or one laxify cannot see before the call (a function
        passed as an argument, a method of ``self``/``cls``), for which the bracket costs
        nothing where the function cannot raise (the flag stays a Python ``False``)."""
        for call in _calls(line):
            func = call.func
            if type(func) is cst.Name:
                if func.value in self.parameters or self.may_raise(func.value):
                    return True
            elif (
                type(func) is cst.Attribute
                and type(func.value) is cst.Name
                and func.value.value in ("self", "cls")
                and func.value.value in self.parameters
            ):
                return True
        return False

    def position(self, new, old) -> None:
        pos = self.ctx.positions.get(old)
        if pos is not None:
            self.ctx.positions.setdefault(new, pos)
            if type(new) is cst.SimpleStatementLine:
                for small in new.body:
                    self.ctx.positions.setdefault(small, pos)

    def quieted(self, stmt):
        """``stmt`` with ``_Quiet`` applied, every node of it keeping its position (libcst
        rebuilds each node a transformer visits: the statements inside a loop would otherwise
        take the loop's line in messages and tracebacks)."""
        new = stmt.visit(_Quiet())
        positions = self.ctx.positions
        stack = [(stmt, new)]
        while stack:
            old_node, new_node = stack.pop()
            pos = positions.get(old_node)
            if pos is not None:
                positions.setdefault(new_node, pos)
            if type(old_node) is type(new_node):
                stack.extend(zip(children(old_node), children(new_node)))
        return new

    # -- blocks ----------------------------------------------------------------------------

    def block(self, stmts, loops: int, in_try: bool) -> tuple[list, bool]:
        """The statements rewritten, and whether a call that may raise is bracketed in them.
        Outside loops, the statements after a loop that holds one (and that loop itself) have
        their prints left out and their ``while`` loops stopped where it raised."""
        out: list = []
        any_found = False
        for stmt in stmts:
            if any_found and not loops:
                out.append(self.quieted(stmt))
                continue
            if type(stmt) is cst.SimpleStatementLine:
                if loops and self.watched(stmt):
                    self.found = True
                    out.extend(self.bracket(stmt, in_try))
                    any_found = True
                else:
                    out.append(stmt)
                continue
            if type(stmt) in (cst.FunctionDef, cst.ClassDef):
                out.append(stmt)
                continue
            # A check and a flag, no `lax.cond`, where the test reads no name the loops around
            # it assign (a guard on the inputs: 1.03x the steady state of the loop without
            # it, 0.85x the cond's), or in a loop inside another loop, where the return flag
            # of the `raise` makes each enclosing loop trace its body again (three nested
            # loops: 56 s to trace, 0.28 s so). A test that reads an array the body then
            # updates keeps the cond in one loop: without it XLA copies that array each
            # iteration (1.5x the cond's steady state on CPU).
            raising = _guard(stmt) if loops and not in_try and not self.forever else None
            if raising is not None and loops < 2 and _names(stmt.test) & self.assigned[-1]:
                raising = None
            if raising is not None:
                out.extend(self.guard(stmt, raising))
                any_found = True
                continue
            new, found = self.compound(stmt, loops, in_try)
            if found and not loops and type(stmt) in (cst.For, cst.While):
                self.position(new, stmt)
                new = self.quieted(new)
            out.append(new)
            any_found |= found
        return out, any_found

    def suite(self, suite: cst.BaseSuite, loops: int, in_try: bool) -> tuple[cst.BaseSuite, bool]:
        if type(suite) is cst.SimpleStatementSuite:
            if not loops:
                return suite, False
            lines = []
            for small in suite.body:
                line = cst.SimpleStatementLine([small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                self.position(line, small)
                lines.append(line)
            if not any(self.watched(line) for line in lines):
                return suite, False
            body, found = self.block(lines, loops, in_try)
            return cst.IndentedBlock(body), found
        body, found = self.block(list(suite.body), loops, in_try)
        return (suite.with_changes(body=body) if found else suite), found

    def compound(self, stmt, loops: int, in_try: bool):
        found = False

        def sub(suite, inner=loops, guarded=in_try):
            nonlocal found
            new, hit = self.suite(suite, inner, guarded)
            found |= hit
            return new

        if type(stmt) in (cst.For, cst.While):
            self.assigned.append(self.assigned[-1] | _assigned(stmt))
            forever = _forever(stmt)
            self.forever += forever
            try:
                changes = {"body": sub(stmt.body, loops + 1)}
            finally:
                self.assigned.pop()
                self.forever -= forever
            if stmt.orelse is not None:
                changes["orelse"] = stmt.orelse.with_changes(body=sub(stmt.orelse.body))
        elif type(stmt) is cst.If:
            changes = {"body": sub(stmt.body)}
            if type(stmt.orelse) is cst.If:
                orelse, hit = self.compound(stmt.orelse, loops, in_try)
                found |= hit
                changes["orelse"] = orelse
            elif stmt.orelse is not None:
                changes["orelse"] = stmt.orelse.with_changes(body=sub(stmt.orelse.body))
        elif type(stmt) is cst.Try:
            changes = {
                "body": sub(stmt.body, guarded=in_try or bool(stmt.handlers)),
                "handlers": [h.with_changes(body=sub(h.body)) for h in stmt.handlers],
            }
            if stmt.orelse is not None:
                changes["orelse"] = stmt.orelse.with_changes(body=sub(stmt.orelse.body))
            if stmt.finalbody is not None:
                changes["finalbody"] = stmt.finalbody.with_changes(body=sub(stmt.finalbody.body))
        elif type(stmt) is cst.With:
            changes = {"body": sub(stmt.body)}
        else:
            return stmt, False  # `match` is an `if` chain by now; a `try*` stays as written
        if not found:
            return stmt, False
        new = stmt.with_changes(**changes)
        self.position(new, stmt)
        return new, True

    # -- the statements written ------------------------------------------------------------

    def guard(self, stmt: cst.If, raising: cst.Raise) -> list:
        """``if test: raise E(...)`` in a loop: ``_lx_raised = _lx.raise_where(test, lambda:
        E(...), _lx_raised)``, no ``lax.cond`` (the test is kept in a name on the ``if``'s
        line, so that an error in it points there, and the check at the ``raise``'s line)."""
        self.found = True
        test = self.ctx.fresh("test")
        first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(test))], stmt.test)])
        self.position(first, stmt)
        args = [cst.Name(test), lazy_lambda(_deferred(raising.exc)), cst.Name(FLAG)]
        if raising.cause is not None:
            args.append(lazy_lambda(_deferred(raising.cause.item)))
        check = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(FLAG))], runtime_call("raise_where", *args))]
        )
        body = stmt.body
        line = body.body[0] if type(body) is cst.IndentedBlock else raising
        self.position(check, line if line in self.ctx.positions else stmt)
        self.ctx.raises = True
        return [first, check]

    def bracket(self, line: cst.SimpleStatementLine, in_try: bool) -> list:
        before = cst.SimpleStatementLine(
            [cst.Expr(runtime_call("expect_raise", cst.Name("True")) if in_try else runtime_call("expect_raise"))]
        )
        after: list = []
        last = line.body[-1]
        if type(last) is cst.Return and last.value is not None:
            keep = self.ctx.fresh("value")
            new = line.with_changes(body=[*line.body[:-1], cst.Assign([cst.AssignTarget(cst.Name(keep))], last.value)])
            self.position(new, line)
            after = [cst.SimpleStatementLine([cst.Return(cst.Name(keep))])]
            line, old = new, line
        else:
            old = line
        update = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(FLAG))], runtime_call("raised_or", cst.Name(FLAG)))]
        )
        out = [before, line, update, *after]
        for stmt in (before, update, *after):
            self.position(stmt, old)
        return out


def _names(node) -> frozenset:
    """The names ``node`` reads (not looking into attributes' names)."""
    out, stack = set(), [node]
    while stack:
        child = stack.pop()
        if type(child) is cst.Name:
            out.add(child.value)
        elif type(child) is cst.Attribute:
            stack.append(child.value)
        else:
            stack.extend(children(child))
    return frozenset(out)


def _assigned(loop) -> frozenset:
    """The names a loop's body may assign (assignment targets, ``:=``, ``with ... as``, the
    targets of the ``for`` loops in it), read from the whole body."""
    out: set = set()
    # A `for` loop's own target is its index or element, not an array its body updates.
    stack = [loop.body] + ([loop.orelse] if loop.orelse is not None else [])
    while stack:
        node = stack.pop()
        targets = ()
        if type(node) is cst.Assign:
            targets = [t.target for t in node.targets]
        elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For):
            targets = [node.target]
        elif type(node) is cst.AsName:
            targets = [node.name]
        for target in targets:
            out |= _names(target)
        stack.extend(children(node))
    return frozenset(out)


def _forever(loop) -> bool:
    return type(loop) is cst.While and type(loop.test) is cst.Name and loop.test.value == "True"


def _guard(stmt) -> cst.Raise | None:
    """The ``raise`` of ``if test: raise E(...)`` (no ``elif``/``else``, nothing else in it)."""
    if type(stmt) is not cst.If or stmt.orelse is not None:
        return None
    body = stmt.body
    if type(body) is cst.IndentedBlock:
        if len(body.body) != 1 or type(body.body[0]) is not cst.SimpleStatementLine:
            return None
        body = body.body[0]
    if len(body.body) != 1:
        return None
    small = body.body[0]
    return small if type(small) is cst.Raise and small.exc is not None else None


class _Quiet(cst.CSTTransformer):
    """In and after a loop that calls a function that may raise: each ``print`` is left out
    where it raised, and each ``while`` loop stops there (it would go on with values nothing
    observes, maybe forever)."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_While(self, original_node, updated_node):
        if _forever(updated_node):
            # Left only by its `break`/`return` (the return converter counts on that): not
            # stopped by the flag, as a call laxify cannot follow is not.
            return updated_node
        return updated_node.with_changes(test=loop_test(FLAG, updated_node.test))

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not (type(func) is cst.Name and func.value == "print"):
            return updated_node
        args = [parenthesized_generator(a) for a in updated_node.args]
        flag = cst.Arg(
            cst.Name(FLAG),
            keyword=cst.Name("unless_raised"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated_node.with_changes(args=[*args, flag])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.For, cst.While)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    rewriter = _Rewriter(ctx, node)
    if not rewriter.may_find(node):
        return node
    body, found = rewriter.block(list(node.body.body), 0, False)
    if not found:
        return node
    ctx.loop_raises = True  # the raise converter starts the function with the flag
    new = node.with_changes(body=node.body.with_changes(body=body))
    rewriter.position(new, node)
    return new
