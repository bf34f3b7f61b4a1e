"""``for`` over ``enumerate``/``zip``/``reversed`` → ``_lx.iterable(enumerate)(...)``: laxify's
version of the builtin, which gives a sequence that ``lax.scan`` runs over when the inputs are
arrays (and the builtin's result, iterated as Python, otherwise).

    for i, (a, b) in enumerate(zip(xs, ys)):
        →   for i, (a, b) in _lx.iterable(enumerate)(_lx.iterable(zip)(xs, ys)):

Only the ``for`` statement's own iterable is rewritten (with the same calls nested in its
arguments), and not where the name is a parameter or a local of the function. The name itself
is still looked up where the loop stands: ``_lx.iterable`` gives laxify's version only when it
is the builtin, and otherwise the object it is (a module global or a closure variable that
shadows the builtin, perhaps bound after the conversion), called exactly as written.
"""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.features import ITERABLE_CALL, is_range_call

from laxify.transpiler.analysis.names import block_access
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import assign

__all__ = ["transform", "BUILTINS"]

# The builtins a `for` statement's iterable is directed to the runtime for.
BUILTINS = frozenset({"enumerate", "zip", "reversed"})


def _local_names(node: cst.FunctionDef) -> set[str]:
    """Names the function binds itself: parameters and every name its body writes."""
    p = node.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names | set(block_access(node.body).writes)


class IterablesTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context, local_names: set[str]):
        super().__init__(ctx)
        self.builtins = BUILTINS - local_names
        self.local_names = local_names

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def rewrite(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """``expr`` with its call of a builtin iterable (and such calls in its arguments)
        directed to the runtime."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
            return expr
        if expr.func.value not in self.builtins:
            return expr
        args = [
            a.with_changes(value=self.rewrite(a.value)) if a.keyword is None and not a.star else a for a in expr.args
        ]
        func = cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name("iterable")), [cst.Arg(expr.func)])
        return expr.with_changes(func=func, args=args)

    def _reversed_range(self, it: cst.BaseExpression) -> list | None:
        """The arguments of ``reversed(range(...))`` (one to three, positional), where both names
        are the builtins; else None."""
        if not (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "reversed"
            and "reversed" in self.builtins
            and len(it.args) == 1
            and it.args[0].keyword is None
            and not it.args[0].star
        ):
            return None
        inner = it.args[0].value
        if not (
            is_range_call(inner)
            and "range" not in self.local_names
            and not self.ctx.global_value("range")[0]
            and not self.ctx.global_value("reversed")[0]
        ):
            return None
        return [a.value for a in inner.args]

    def leave_For(self, original_node: cst.For, updated_node: cst.For):
        if updated_node.asynchronous is not None:
            return updated_node
        args = self._reversed_range(updated_node.iter)
        if args is not None:
            # `for i in reversed(range(a, b, s))` is `for i in range(*bounds)` with the bounds of the
            # reversed range (computed in the program where they are traced): a loop of its own.
            name = self.ctx.fresh("bounds")
            bounds = assign(
                name, cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name("reversed_range")), [cst.Arg(a) for a in args])
            )
            parts = [
                cst.Arg(cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))]))
                for k in range(3)
            ]
            loop = updated_node.with_changes(iter=cst.Call(cst.Name("range"), parts))
            pos = self.ctx.positions.get(original_node)
            if pos is not None:
                for new in (bounds, loop):
                    self.ctx.positions.setdefault(new, pos)
            return cst.FlattenSentinel([bounds, loop])
        new_iter = self.rewrite(updated_node.iter)
        if new_iter is updated_node.iter:
            return updated_node
        return updated_node.with_changes(iter=new_iter)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (ITERABLE_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, IterablesTransformer(ctx, _local_names(node)))
