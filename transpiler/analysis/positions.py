"""Where each statement of the original tree is: file line of its first token and its column.

Python's own parser gives statement positions in a fraction of a millisecond; the libcst
tree and the ``ast`` tree of the same text have the same statements in the same order, so
they are walked side by side (libcst's PositionProvider copies the tree and costs more than
a whole conversion). Converters carry positions from original to updated nodes (see
``converters.base``), so statements they synthesise inherit the line of the construct they
came from.
"""

from __future__ import annotations

import ast

import libcst as cst

from laxify.transpiler.analysis.walk import concrete_kinds

__all__ = ["Positions", "statement_positions"]

Positions = dict[cst.CSTNode, tuple[int, int]]

_SMALL = concrete_kinds(cst.BaseSmallStatement)

_PAIRS = {
    cst.If: ast.If,
    cst.While: ast.While,
    cst.For: ast.For,
    cst.With: ast.With,
    cst.Try: ast.Try,
    cst.TryStar: ast.TryStar,
    cst.Match: ast.Match,
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: ast.ClassDef,
}


class _Pairing:
    def __init__(self, first_line: int, indent: int, lines: list[str] | None = None, verbatim: dict | None = None):
        self.offset = first_line - 1
        self.indent = indent
        self.table: Positions = {}
        self.lines = lines  # the parsed text's lines, for ``verbatim``
        self.verbatim = verbatim

    def mark(self, node: cst.CSTNode, a: ast.AST) -> None:
        self.table[node] = (a.lineno + self.offset, a.col_offset + self.indent)

    def block(self, suite: cst.BaseSuite | None, stmts: list[ast.stmt], owner: cst.CSTNode | None = None) -> None:
        if suite is None:
            return
        k = 0
        for stmt in suite.body:
            if k >= len(stmts):
                return
            if type(stmt) in _SMALL:  # a one-line suite: `if c: a; b`
                col = self.table[owner][1] if owner in self.table else stmts[k].col_offset + self.indent
                self.table[stmt] = (stmts[k].lineno + self.offset, col)
                k += 1
            elif type(stmt) is cst.SimpleStatementLine:
                self.mark(stmt, stmts[k])
                for small in stmt.body:  # `a = 1; b = 2`: each at the line's start
                    self.table[small] = self.table[stmt]
                if self.verbatim is not None and not stmt.leading_lines:
                    self.one_line(stmt, stmts[k : k + len(stmt.body)])
                k += len(stmt.body)
            else:
                self.compound(stmt, stmts[k])
                k += 1

    def one_line(self, stmt: cst.SimpleStatementLine, parts: list[ast.stmt]) -> None:
        """The text of a statement line that is one physical line: the rest of that line."""
        line = parts[0].lineno
        if any(p.lineno != line or p.end_lineno != line for p in parts) or not 0 < line <= len(self.lines):
            return
        text = self.lines[line - 1][parts[0].col_offset :]
        if not text.isascii():  # ast columns count UTF-8 bytes
            return
        self.verbatim[stmt] = text

    def header(self, stmt: cst.CSTNode, a: ast.stmt) -> None:
        """The text of the test of an ``if``/``while`` and of the target and iterable of a
        ``for`` (see ``expression``)."""
        if self.verbatim is None:
            return
        kind = type(stmt)
        if kind is cst.If or kind is cst.While:
            self.expression(stmt.test, a.test)
        elif kind is cst.For:
            self.expression(stmt.target, a.target)
            self.expression(stmt.iter, a.iter)

    def expression(self, node: cst.BaseExpression, a: ast.expr) -> None:
        """The text of an expression on one line, as ``module.code_for_node`` writes it: the
        span ``ast`` gives. Not for parenthesised expressions (libcst's node holds the
        parentheses, ``ast``'s span does not) nor tuples (a trailing comma)."""
        if (
            getattr(node, "lpar", None)
            or type(node) is cst.Tuple
            or a.lineno != a.end_lineno
            or not 0 < a.lineno <= len(self.lines)
        ):
            return
        line = self.lines[a.lineno - 1]
        if line.isascii():  # ast columns count UTF-8 bytes
            self.verbatim[node] = line[a.col_offset : a.end_col_offset]

    def clause(self, node: cst.CSTNode, owner: cst.CSTNode, stmts: list[ast.stmt]) -> None:
        """An `else:`/`finally:` clause: its line is just above its first statement and that
        statement's comments; its body is paired with ``stmts``."""
        first = node.body.body[0] if type(node.body) is cst.IndentedBlock and node.body.body else None
        above = len(getattr(first, "leading_lines", ())) + 1 if first is not None else 0
        self.table[node] = (stmts[0].lineno - above + self.offset, self.table[owner][1])
        self.block(node.body, stmts, node)

    def compound(self, stmt: cst.CSTNode, a: ast.stmt) -> None:
        # An `elif` is an `if` in the `else` of the one before: a loop along the chain, not
        # recursion (a chain of 500 arms nests 500 deep).
        while type(stmt) is cst.If and type(stmt.orelse) is cst.If and isinstance(a, ast.If):
            self.mark(stmt, a)
            self.header(stmt, a)
            self.block(stmt.body, a.body, stmt)
            if not a.orelse:
                return
            stmt, a = stmt.orelse, a.orelse[0]
        if not isinstance(a, _PAIRS.get(type(stmt), ())):
            return  # not the statement we expected: leave the rest unmarked, never misplace
        self.mark(stmt, a)
        self.header(stmt, a)
        if type(stmt) in (cst.FunctionDef, cst.ClassDef):
            return  # kept verbatim: its lines map one to one from its first line
        if type(stmt) is cst.Match:
            for case, ac in zip(stmt.cases, a.cases):
                if ac.body:
                    self.table[case] = (ac.pattern.lineno + self.offset, ac.pattern.col_offset + self.indent)
                self.block(case.body, ac.body)
            return
        self.block(stmt.body, a.body, stmt)
        if type(stmt) in (cst.Try, cst.TryStar):
            for handler, ah in zip(stmt.handlers, a.handlers):
                self.mark(handler, ah)
                self.block(handler.body, ah.body, handler)
            if stmt.orelse is not None and a.orelse:
                self.clause(stmt.orelse, stmt, a.orelse)
            if stmt.finalbody is not None and a.finalbody:
                self.clause(stmt.finalbody, stmt, a.finalbody)
            return
        orelse = getattr(stmt, "orelse", None)
        if type(orelse) is cst.If and a.orelse:
            self.compound(orelse, a.orelse[0])
        elif type(orelse) is cst.Else and a.orelse:
            self.clause(orelse, stmt, a.orelse)


def statement_positions(
    text: str, fn: cst.FunctionDef, first_line: int, indent: int, verbatim: dict | None = None
) -> Positions:
    """Positions of ``fn`` (its ``def`` line) and of every statement in it; ``text`` is the
    source that ``fn`` was parsed from (its first statement is ``fn``). ``verbatim``, when
    given, receives the text of each statement line that is one physical line without
    comment lines above it, as ``module.code_for_node`` would write it (the rest of its line),
    so that statements kept as written need no code generation."""
    # Lines as ``ast`` counts them (`str.splitlines` also splits at form feeds and others).
    lines = [line + "\n" for line in text.split("\n")] if verbatim is not None else None
    pairing = _Pairing(first_line, indent, lines, verbatim)
    tree = ast.parse(text)
    if tree.body:
        pairing.compound(fn, tree.body[0])
        if isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            pairing.block(fn.body, tree.body[0].body)
    return pairing.table
