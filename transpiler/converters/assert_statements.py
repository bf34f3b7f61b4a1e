"""``assert test, message`` → ``_lx.assert_(test, lambda: message)`` (a string literal is passed
as it is): Python's assert on Python values; on a traced value a check of the run-time report
(unless ``checks=False``). Under ``python -O`` asserts are left as they are (and compile
away)."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.walk import walk
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import lazy_lambda, runtime_call
from laxify.transpiler.converters.print_calls import formatting

__all__ = ["transform"]


class AssertTransformer(OwnCodeConverter):
    def leave_Assert(self, original_node, updated_node):
        message = updated_node.msg
        if message is not None and any(isinstance(n, (cst.NamedExpr, cst.Yield, cst.Await)) for n in walk(message)):
            return updated_node  # a thunk would change what `:=` binds: left as Python wrote it
        args = [updated_node.test]
        if isinstance(message, cst.SimpleString):
            args.append(message)  # a literal: nothing to evaluate lazily
        elif message is not None:
            args.append(lazy_lambda(formatting(message)))
        return cst.Expr(runtime_call("assert_", *args), semicolon=updated_node.semicolon)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Assert,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    if not __debug__:
        return node  # `python -O`: the asserts compile away, as Python's do
    return apply(node, AssertTransformer(ctx))
