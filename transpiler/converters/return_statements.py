"""``return`` inside control flow → a flag and a value set where it stood; the code after it
is guarded by the flag, loops stop on it, and the function returns the value at its end."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.walk import statement_children
from laxify.transpiler.converters.base import Context
from laxify.transpiler.converters.guards import (
    as_indented,
    assign,
    contains,
    guard_block,
    loop_test,
    not_flag,
    not_raised,
    rewrite_blocks,
    runtime_call,
)

__all__ = ["transform", "FLAG", "VALUE"]

FLAG = "_lx_do_return"
VALUE = "_lx_retval"


def _nested_return(body: list) -> bool:
    """Whether any ``return`` stands anywhere but as the last top-level statement."""
    for k, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            if any(isinstance(s, cst.Return) for s in stmt.body) and k != len(body) - 1:
                return True
        elif contains(stmt, (cst.Return,)):
            return True
    return False


def _always_returns(stmts: list) -> bool:
    """Whether every path through ``stmts`` ends in a ``return`` (structurally); code after a
    statement that always returns is dead and does not count."""
    return any(_statement_returns(stmt) for stmt in stmts)


def _statement_returns(last) -> bool:
    if isinstance(last, cst.Return):  # a small statement of a one-line suite
        return True
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Return) for s in last.body)
    if isinstance(last, cst.While) and isinstance(last.test, cst.Name) and last.test.value == "True":
        return not contains(last.body, (cst.Break,), stop=(cst.While, cst.For))  # left only by return
    if isinstance(last, cst.With):  # its body runs once (the managers stay Python)
        return _always_returns(list(last.body.body))
    if isinstance(last, cst.If):
        # Every arm of an `elif` chain (a loop: a chain of 500 arms nests 500 deep).
        while isinstance(last, cst.If):
            if last.orelse is None or not _always_returns(list(last.body.body)):
                return False
            last = last.orelse
        return _always_returns(list(last.body.body))
    return False


def _raised_return(stmt: cst.Return) -> bool:
    """Whether ``stmt`` is the raise converter's ``return _lx.raised()``."""
    value = stmt.value
    return (
        type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value == "raised"
        and type(value.func.value) is cst.Name
        and value.func.value.value.startswith("_lx")
    )


def _own_statements(stmts: list):
    """The statements, clauses and small statements of ``stmts`` at any depth, not those of the
    ``def``s and classes in them (their returns are their own)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in (cst.FunctionDef, cst.ClassDef):
            stack.extend(statement_children(node))


def _always_raises(body: list) -> bool:
    """Whether every path through ``body``, which always returns, ends in a ``raise`` (the raise
    converter's ``return _lx.raised()``): no other ``return`` up to the statement that always
    returns (what follows it is dead)."""
    live = next(k for k, stmt in enumerate(body) if _statement_returns(stmt))
    return not any(type(node) is cst.Return and not _raised_return(node) for node in _own_statements(body[: live + 1]))


def _only_raises(body: list) -> bool:
    """Whether every ``return`` of ``body`` but a last top-level one stands for a ``raise``, and
    no ``finally`` clears the flag: then the flag is set only where a check failed, and what
    the guarded code computes there is never observed."""
    last = body[-1] if body else None
    for node in _own_statements(body):
        kind = type(node)
        if kind is cst.Return and not _raised_return(node):
            if not (type(last) is cst.SimpleStatementLine and node in last.body):
                return False
        elif kind is cst.Try and node.finalbody is not None:
            return False
    return True


class _Rewriter:
    def __init__(self, ctx: Context, test=not_flag):
        self.ctx = ctx
        self.positions = ctx.positions
        self.nested = 0  # how many if/while/for/with statements enclose the statements rewritten
        self.test = test  # of a guard: `_lx.not_(flag)`, or `_lx.not_raised(flag)` (see _only_raises)

    def replace(self, jump: cst.Return) -> list:
        value = jump.value if jump.value is not None else cst.Name("None")
        out = [assign(VALUE, value), assign(FLAG, cst.Name("True"))]
        if jump in self.positions:
            for stmt in out:
                self.positions[stmt] = self.positions[jump]
        return out

    def rewrite(self, stmt):
        if isinstance(stmt, cst.Try) and stmt.finalbody is not None and contains(stmt.finalbody, (cst.Return,)):
            return self.try_finally(stmt)
        if isinstance(stmt, cst.Try):
            return rewrite_blocks(stmt, self.block, self.positions)
        self.nested += 1
        try:
            return self.compound(stmt)
        finally:
            self.nested -= 1

    def try_finally(self, stmt: cst.Try) -> cst.Try:
        """A ``return`` in ``finally`` replaces the return pending from the ``try`` (or its
        exception): the ``finally`` runs with the flag cleared and restores the pending one
        if it does not return itself. Where the ``try`` is not inside converted control flow
        the ``finally`` ends with a real ``return`` when its own return ran, which also
        drops a pending exception, as Python does."""
        pending = self.ctx.fresh("pending_return")

        def suite(s: cst.BaseSuite) -> cst.IndentedBlock:
            return cst.IndentedBlock(self.block(list(as_indented(s).body)))

        rewritten = stmt.with_changes(
            body=suite(stmt.body),
            handlers=[h.with_changes(body=suite(h.body)) for h in stmt.handlers],
            orelse=stmt.orelse.with_changes(body=suite(stmt.orelse.body)) if stmt.orelse else None,
        )
        final = list(as_indented(stmt.finalbody.body).body)
        body = [assign(pending, cst.Name(FLAG)), assign(FLAG, cst.Name("False")), *self.block(final)]
        body.append(cst.If(test=not_flag(FLAG), body=cst.IndentedBlock([assign(FLAG, cst.Name(pending))])))
        if self.nested == 0:
            body.append(
                cst.If(
                    test=cst.Comparison(cst.Name(FLAG), [cst.ComparisonTarget(cst.Is(), cst.Name("True"))]),
                    body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(cst.Name(VALUE))])]),
                )
            )
        position = self.positions.get(stmt)
        if position is not None:
            for new in body:
                self.positions.setdefault(new, position)
        return rewritten.with_changes(finalbody=stmt.finalbody.with_changes(body=cst.IndentedBlock(body)))

    def compound(self, stmt):
        if isinstance(stmt, (cst.While, cst.For)):
            stmt = stmt.with_changes(body=as_indented(stmt.body))
        if isinstance(stmt, cst.While):
            test = loop_test(FLAG, stmt.test)
            return stmt.with_changes(test=test, body=stmt.body.with_changes(body=self.block(list(stmt.body.body))))
        if isinstance(stmt, cst.For):
            body = self.block(list(stmt.body.body))
            guarded = cst.If(test=self.test(FLAG), body=cst.IndentedBlock(body))
            return stmt.with_changes(body=stmt.body.with_changes(body=[guarded]))
        return rewrite_blocks(stmt, self.block, self.positions)

    def block(self, stmts: list) -> list:
        return guard_block(stmts, FLAG, (cst.Return,), self.replace, self.rewrite, (), self.positions, self.test)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Return,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    body = list(node.body.body)
    if not _nested_return(body):
        return node
    pos = ctx.positions.get(node, (0, 0))
    rewriter = _Rewriter(ctx, not_raised if _only_raises(body) else not_flag)
    docstring = body[:1] if body and _is_docstring(body[0]) else []  # stays the first statement
    new_body = [
        *docstring,
        assign(FLAG, cst.Name("False")),
        assign(VALUE, runtime_call("UndefinedReturn")),
        *rewriter.block(body[len(docstring) :]),
    ]
    always = _always_returns(body)
    if always and _always_raises(body):
        # Every path raised (each recorded for run time): a caller in converted code stops here,
        # as Python's exception stops it; the value is never read.
        final = cst.Return(runtime_call("always_raised", runtime_call("returned", cst.Name(VALUE))))
    elif always and ctx.raises:
        # Every path may have raised (its value recorded for run time, never read): None then.
        final = cst.Return(runtime_call("returned", cst.Name(VALUE)))
    elif always:
        final = cst.Return(cst.Name(VALUE))
    else:
        final = cst.Return(runtime_call("final_return", cst.Name(FLAG), cst.Name(VALUE), cst.Integer(str(pos[0]))))
    if getattr(ctx, "raised_flag", False):
        # Where this function raised, for the `_lx.call` that called it (see the raise converter).
        final = final.with_changes(value=runtime_call("leaving", cst.Name("_lx_raised"), final.value))
    new_body.append(cst.SimpleStatementLine([final]))
    return node.with_changes(body=node.body.with_changes(body=new_body))
