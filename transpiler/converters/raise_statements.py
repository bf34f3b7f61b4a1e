"""``raise E(args) [from C]`` → ``_lx.raise_(lambda: _lx.exception_(E, args), lambda: C)``
followed by ``return _lx.raised()``: Python's raise outside traced control flow; inside it, a
check recorded for run time (``runtime/error_channel.py``), after which the function does no
more (the ``return``, which the return converter turns into its flag, stops loops and skips
the code after it). A bare ``raise`` (re-raising in an ``except``) stays as written."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.walk import descendants
from laxify.transpiler.converters.base import Context, OwnCodeConverter
from laxify.transpiler.converters.guards import lazy_lambda, runtime_call
from laxify.transpiler.converters.print_calls import formatting
from laxify.transpiler.converters.return_statements import _nested_return

__all__ = ["transform"]


def _deferred(exc: cst.BaseExpression) -> cst.BaseExpression:
    """``E(args)`` as ``_lx.exception_(E, args)`` (called with the values of the run that
    raises), its string-building arguments as ``format_`` calls; anything else as it is."""
    if not isinstance(exc, cst.Call):
        return exc
    args = [a if a.star else a.with_changes(value=formatting(a.value)) for a in exc.args]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    call = runtime_call("exception_", exc.func)
    return call.with_changes(args=[call.args[0].with_changes(comma=cst.Comma(
        whitespace_after=cst.SimpleWhitespace(" "))) if args else call.args[0], *args],
        lpar=exc.lpar, rpar=exc.rpar)


class RaiseTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context):
        super().__init__(ctx)
        self.guarded: set[int] = set()  # statement lines inside the body of a `try` with handlers

    def visit_Try(self, node) -> bool:
        if node.handlers:
            self.guarded.update(id(n) for n in descendants(node.body)
                                if isinstance(n, (cst.SimpleStatementLine, cst.SimpleStatementSuite)))
        return True

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return self._statements(original_node, updated_node)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        return self._statements(original_node, updated_node)

    def _statements(self, original_node, updated_node):
        if not any(isinstance(s, cst.Raise) and s.exc is not None for s in updated_node.body):
            return updated_node
        position = self.ctx.positions.get(original_node)
        body: list = []
        for small in updated_node.body:
            if not isinstance(small, cst.Raise) or small.exc is None:
                body.append(small)  # a bare `raise` re-raises what an `except` caught
                continue
            args = [lazy_lambda(_deferred(small.exc))]
            if small.cause is not None:
                args.append(lazy_lambda(_deferred(small.cause.item)))
            call = runtime_call("raise_", *args)
            if id(original_node) in self.guarded:
                # An `except` of the function may catch it: that cannot wait for run time.
                call = call.with_changes(args=[*call.args, cst.Arg(
                    cst.Name("True"), keyword=cst.Name("in_try"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
            record = cst.Expr(call, semicolon=cst.Semicolon(
                whitespace_after=cst.SimpleWhitespace(" ")))
            stop = cst.Return(runtime_call("raised"), semicolon=small.semicolon)
            if position is not None:
                # The flag assignments the return converter makes of `stop` keep the user's line.
                self.ctx.positions[record] = self.ctx.positions[stop] = position
            body += [record, stop]
            self.ctx.raises = True
        return updated_node.with_changes(body=body)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Raise,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    node = node.visit(RaiseTransformer(ctx))
    body = list(node.body.body)
    if body and not _nested_return(body):
        # No flag will carry the return value: a `raise` that ends the function returns None
        # itself (a recorded one that always fails: its value is never read).
        last = body[-1]
        if isinstance(last, cst.SimpleStatementLine) and any(_is_raised(s) for s in last.body):
            small = [s.with_changes(value=cst.Name("None")) if _is_raised(s) else s for s in last.body]
            new = last.with_changes(body=small)
            if last in ctx.positions:
                ctx.positions[new] = ctx.positions[last]
            node = node.with_changes(body=node.body.with_changes(body=[*body[:-1], new]))
    return node


def _is_raised(small) -> bool:
    """The ``return _lx.raised()`` this converter writes."""
    value = getattr(small, "value", None)
    return (isinstance(small, cst.Return) and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "raised")
