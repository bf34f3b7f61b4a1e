"""``try``/``with`` → the same statements, whose handlers, ``finally`` blocks and context
managers let an error that only tracing raises (``_lx.internal_errors``) go on to laxify."""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import as_indented, runtime_call

__all__ = ["transform"]


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("_lx"), cst.Name(name))


class TryTransformer(OwnCodeConverter):
    def leave_Try(self, original_node, updated_node):
        changes: dict = {}
        if updated_node.handlers:
            # First: the user's `except Exception:` (or bare `except:`) would catch it.
            reraise = cst.SimpleStatementLine([cst.Raise()])
            passing = cst.ExceptHandler(body=cst.IndentedBlock([reraise]), type=_runtime("internal_errors"))
            self._place(passing, updated_node.handlers[0])
            self._place(reraise, updated_node.handlers[0])
            changes["handlers"] = [passing, *updated_node.handlers]
        if updated_node.finalbody is not None:
            changes["finalbody"] = self._finally(updated_node.finalbody)
        return updated_node.with_changes(**changes)

    def leave_TryStar(self, original_node, updated_node):
        # Its handlers are left as they are: a first `except* internal_errors: raise` would
        # re-raise the error wrapped in an exception group, which laxify would not know.
        if updated_node.finalbody is None:
            return updated_node
        return updated_node.with_changes(finalbody=self._finally(updated_node.finalbody))

    def _finally(self, final: cst.Finally) -> cst.Finally:
        """``finally: <block>`` → ``finally: with _lx.finally_block(): <block>``: a ``return``
        there does not drop an error of laxify's."""
        block = cst.With(items=[cst.WithItem(runtime_call("finally_block"))], body=as_indented(final.body))
        new = final.with_changes(body=cst.IndentedBlock([block]))
        self._place(block, final)
        self._place(new, final)
        return new

    def _place(self, new: cst.CSTNode, old: cst.CSTNode) -> None:
        """``new`` stands where ``old`` does in the user's file."""
        position = self.ctx.positions.get(old)
        if position is not None:
            self.ctx.positions.setdefault(new, position)

    def leave_With(self, original_node, updated_node):
        if updated_node.asynchronous is not None:
            return updated_node
        items = [item.with_changes(item=runtime_call("unsuppressing", item.item)) for item in updated_node.items]
        return updated_node.with_changes(items=items)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Try, cst.TryStar, cst.With)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, TryTransformer(ctx))
