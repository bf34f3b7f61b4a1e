"""``if``/``elif``/``while`` tests that bind a name with ``:=`` → the test evaluated by a
statement of its own before the construct, so that the name is an ordinary assignment that
branches and loops carry (a test becomes a branch or loop function's expression, where ``:=``
would bind nothing the rest of the function sees).

    if (s := f(x)) > 0:          _lx_test_1 = (s := f(x)) > 0
        ...                      if _lx_test_1:
                                     ...

    while (s := f(x)) < 10:      _lx_test_1 = (s := f(x)) < 10
        body                     while _lx_test_1:
                                     body
                                     _lx_test_1 = (s := f(x)) < 10

A ``while`` whose body has a ``continue`` of its own re-evaluates its test at the top of each
iteration instead (``while True:`` with ``if not test: break``), so that no ``continue`` skips
the test. A ``while`` with an ``else:`` clause is left as it is.
"""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply
from laxify.transpiler.converters.guards import LOOPS, as_indented, assign, contains

__all__ = ["transform"]


def _binds(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.NamedExpr) or contains(test, (cst.NamedExpr,))


class WalrusConditionTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context):
        super().__init__(ctx)
        self.elifs: set[int] = set()  # `elif` nodes: their parent `if` lifts their test

    def visit_If(self, node) -> bool:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))
        return True

    def _hoist(self, test: cst.BaseExpression, name: str | None = None) -> tuple[str, cst.SimpleStatementLine]:
        """``name = test`` (a fresh name unless given); the test is copied, never shared."""
        name = name or self.ctx.fresh("test")
        value = test.deep_clone()
        if isinstance(value, cst.NamedExpr) and not value.lpar:  # (`t = (s := f())`: `t = s := f()` is no Python)
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return name, assign(name, value)

    def leave_If(self, original_node, updated_node):
        node = updated_node
        if isinstance(node.orelse, cst.If) and _binds(node.orelse.test):
            # An `elif` whose test binds: its test runs only when the earlier ones fail.
            node = node.with_changes(orelse=cst.Else(cst.IndentedBlock(list(self._lift(node.orelse)))))
        if id(original_node) in self.elifs or not _binds(node.test):
            return node
        return cst.FlattenSentinel(list(self._lift(node)))

    def _lift(self, node: cst.If):
        if not _binds(node.test):
            return [node]
        name, stmt = self._hoist(node.test)
        self._place(stmt, node)
        new = node.with_changes(test=cst.Name(name))
        self._place(new, node)
        return [stmt, new]

    def _place(self, new, old) -> None:
        pos = self.ctx.positions.get(old)
        if pos is not None:
            self.ctx.positions.setdefault(new, pos)

    def leave_While(self, original_node, updated_node):
        node = updated_node
        if not _binds(node.test) or node.orelse is not None:
            return node
        node = node.with_changes(body=as_indented(node.body))
        body = list(node.body.body)
        if contains(node.body, (cst.Continue,), stop=LOOPS):
            name, stmt = self._hoist(node.test)
            check = cst.If(
                test=cst.UnaryOperation(cst.Not(), cst.Name(name)),
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Break()])]),
            )
            for new in (stmt, check):
                self._place(new, original_node)
            loop = node.with_changes(test=cst.Name("True"), body=node.body.with_changes(body=[stmt, check, *body]))
            return loop
        name, before = self._hoist(node.test)
        _, again = self._hoist(node.test, name)
        for new in (before, again):
            self._place(new, original_node)
        loop = node.with_changes(test=cst.Name(name), body=node.body.with_changes(body=[*body, again]))
        self._place(loop, original_node)
        return cst.FlattenSentinel([before, loop])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.NamedExpr,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, WalrusConditionTransformer(ctx))
