"""Where each statement of the original tree is: file line of its first token and its column.

One forward walk that counts lines of generated code (libcst's PositionProvider copies the
tree and costs more than a whole conversion). Converters carry positions from original to
updated nodes (see ``converters.base``), so statements they synthesise inherit the line of
the construct they came from.
"""

from __future__ import annotations

import libcst as cst

__all__ = ["Positions", "statement_positions"]

Positions = dict[cst.CSTNode, tuple[int, int]]


class _Walker:
    def __init__(self, module: cst.Module, first_line: int, indent: int):
        self.module = module
        self.offset = first_line - 1
        self.table: Positions = {}
        self.cursor = 1
        self.col = indent

    def lines(self, node: cst.CSTNode) -> int:
        return self.module.code_for_node(node).count("\n")

    def mark(self, node: cst.CSTNode, line: int) -> None:
        self.table[node] = (line + self.offset, self.col)

    def suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.mark(small, self.cursor)
            self.cursor += 1
            return
        self.cursor += 1  # the header line's newline
        saved = self.col
        self.col += len(suite.indent if suite.indent is not None else self.module.default_indent)
        for stmt in suite.body:
            self.statement(stmt)
        self.cursor += len(suite.footer)
        self.col = saved

    def statement(self, stmt: cst.CSTNode) -> None:
        start = self.cursor
        end = start + self.lines(stmt)
        line = start + len(getattr(stmt, "leading_lines", ()))
        self.mark(stmt, line)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.mark(small, line)
        elif isinstance(stmt, (cst.If, cst.While)):
            self.cursor = line + self.lines(stmt.test)
            self.suite(stmt.body)
            self.orelse(stmt.orelse)
        elif isinstance(stmt, cst.For):
            self.cursor = line + self.lines(stmt.target) + self.lines(stmt.iter)
            self.suite(stmt.body)
            self.orelse(stmt.orelse)
        elif isinstance(stmt, cst.With):
            self.cursor = start
            self.clause(stmt)
        elif isinstance(stmt, cst.Try):
            self.cursor = line
            self.suite(stmt.body)
            for part in (*stmt.handlers, stmt.orelse, stmt.finalbody):
                if part is not None:
                    self.clause(part)
        elif isinstance(stmt, cst.Match):
            self.cursor = line + self.lines(stmt.subject) + 1
            saved = self.col
            self.col += len(stmt.indent if stmt.indent is not None else self.module.default_indent)
            for case in stmt.cases:
                self.clause(case)
            self.col = saved
        self.cursor = end

    def clause(self, node) -> None:
        """A header line (after its leading lines) and its body: except, else, finally, case."""
        leading = len(getattr(node, "leading_lines", ()))
        start = self.cursor + leading
        self.mark(node, start)
        self.cursor = start + self.lines(node) - leading - self.lines(node.body)
        self.suite(node.body)

    def orelse(self, node) -> None:
        if isinstance(node, cst.If):
            self.statement(node)
        elif isinstance(node, cst.Else):
            self.cursor += len(node.leading_lines)
            self.mark(node, self.cursor)
            self.suite(node.body)


def statement_positions(module: cst.Module, fn: cst.FunctionDef, first_line: int, indent: int) -> Positions:
    """Positions of ``fn`` (its ``def`` line) and of every statement in it."""
    w = _Walker(module, first_line, indent)
    # The line of `def` itself: the header's last line, less the lines its parameters and
    # return annotation span.
    header_end = 1 + w.lines(fn) - w.lines(fn.body)
    def_line = header_end - w.lines(fn.params) - (w.lines(fn.returns.annotation) if fn.returns else 0)
    w.mark(fn, def_line)
    w.cursor = header_end
    w.suite(fn.body)
    return w.table
