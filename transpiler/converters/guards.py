"""Shared by the jump converters: replace a jump with flag assignments and guard the code
that follows it, so that control reaches the end of each block (AutoGraph's approach)."""

from __future__ import annotations

from typing import Callable

import libcst as cst

from laxify.transpiler.converters.base import OwnCodeConverter

from laxify.transpiler.analysis.walk import SMALL_STATEMENTS, children, concrete_kinds, statement_children

__all__ = [
    "LoopJumpConverter",
    "as_indented",
    "assign",
    "loop_test",
    "contains",
    "guard_block",
    "lazy_lambda",
    "not_flag",
    "rewrite_blocks",
    "runtime_call",
]


def contains(node: cst.CSTNode, kinds: tuple, stop: tuple = ()) -> bool:
    """Whether ``node`` contains a node of ``kinds``, not looking into nested defs or ``stop``
    (a nested ``def``, ``class`` or ``lambda`` contains nothing of the enclosing function's).
    ``kinds`` and ``stop``: concrete node classes (compared by exact type)."""
    if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
        return False
    # Statements are found among statements only (expressions, most of a tree, hold none).
    below = statement_children if all(k in SMALL_STATEMENTS for k in kinds) else children
    # An explicit stack, not recursion: `elif` chains and `and` chains nest thousands deep.
    stack = list(below(node))
    while stack:
        child = stack.pop()
        if type(child) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(child) in kinds:
            return True
        if type(child) in stop:
            # A loop's `else:` runs after the loop: a `break` there belongs to the enclosing loop.
            orelse = getattr(child, "orelse", None)
            if type(child) in LOOPS and orelse is not None:
                stack.extend(below(orelse))
            continue
        stack.extend(below(child))
    return False


def runtime_call(name: str, *args: cst.BaseExpression) -> cst.Call:
    """``_lx.<name>(args...)``: a call of the runtime dispatcher. A tuple written without
    parentheses (``return 0.0, x``) gets them: as an argument it would be two."""
    return cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name(name)), [cst.Arg(_one_argument(a)) for a in args])


def _one_argument(expr: cst.BaseExpression) -> cst.BaseExpression:
    if type(expr) is cst.Tuple and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def lazy_lambda(expr: cst.BaseExpression) -> cst.Lambda:
    return cst.Lambda(cst.Parameters(), expr)


def loop_test(flag: str, test: cst.BaseExpression) -> cst.Call:
    """``_lx.and_(_lx.not_(flag), lambda: test, condition=True)``: a loop's test once a jump
    can end it (only its truth value is used, so Python operands decide as in Python)."""
    call = runtime_call("and_", not_flag(flag), lazy_lambda(test))
    keyword = cst.Arg(
        cst.Name("True"),
        keyword=cst.Name("condition"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    return call.with_changes(args=[*call.args, keyword])


def not_flag(flag: str) -> cst.Call:
    return runtime_call("not_", cst.Name(flag))


def not_raised(flag: str) -> cst.Call:
    """The test of a guard whose flag only a ``raise`` sets (``_lx.not_raised``): the code it
    guards runs where nothing failed, and where a check failed its values are never observed."""
    return runtime_call("not_raised", cst.Name(flag))


def assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _guard(flag: str, stmts: list, test: Callable[[str], cst.BaseExpression] = not_flag) -> cst.If:
    return cst.If(test=test(flag), body=cst.IndentedBlock(stmts))


Replace = Callable[[cst.BaseSmallStatement], list[cst.BaseStatement]]
Rewrite = Callable[[cst.BaseCompoundStatement], cst.BaseCompoundStatement]


_COMPOUND = concrete_kinds(cst.BaseCompoundStatement)


def guard_block(
    stmts,
    flag: str,
    jump: tuple,
    replace: Replace,
    rewrite: Rewrite,
    stop: tuple,
    positions: dict | None = None,
    test: Callable[[str], cst.BaseExpression] = not_flag,
) -> list:
    """Rewrite one statement list: each jump becomes ``replace(jump)``; after any statement
    that may jump, the rest of the list runs under ``if test(flag)`` (``not flag``).
    ``rewrite`` handles a compound statement that contains a jump (recursing into its
    blocks). ``jump`` and ``stop``: concrete node classes."""
    out: list = []
    for k, stmt in enumerate(stmts):
        if type(stmt) is cst.SimpleStatementLine and any(type(s) in jump for s in stmt.body):
            before: list = []
            for small in stmt.body:
                if type(small) in jump:
                    break
                before.append(small)
            if before:
                before[-1] = before[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                line = stmt.with_changes(body=before)
                if positions is not None and stmt in positions:
                    positions.setdefault(line, positions[stmt])
                out.append(line)
            first_jump = next(s for s in stmt.body if type(s) in jump)
            out.extend(replace(first_jump))
            return out  # the rest of the block is unreachable
        if type(stmt) in _COMPOUND and contains(stmt, jump, stop):
            new = rewrite(stmt)
            if positions is not None and stmt in positions:
                positions.setdefault(new, positions[stmt])
            out.append(new)
            rest = list(stmts[k + 1 :])
            if rest:
                guard = _guard(flag, guard_block(rest, flag, jump, replace, rewrite, stop, positions, test), test)
                if positions is not None and stmt in positions:
                    # The guard belongs to the statement that may jump: errors point there.
                    positions.setdefault(guard, positions[stmt])
                out.append(guard)
            return out
        out.append(stmt)
    return out


def as_indented(suite: cst.BaseSuite) -> cst.IndentedBlock:
    """``while c: a; break`` → the same statements as an indented block (one line)."""
    if type(suite) is cst.SimpleStatementSuite:
        return cst.IndentedBlock([cst.SimpleStatementLine(list(suite.body))])
    return suite


def rewrite_blocks(
    stmt: cst.BaseCompoundStatement, fn: Callable[[list], list], positions: dict | None = None
) -> cst.BaseCompoundStatement:
    """Apply ``fn`` to every statement list directly inside ``stmt`` (if/elif/else, with, try)."""

    def suite(s: cst.BaseSuite) -> cst.BaseSuite:
        if type(s) is cst.SimpleStatementSuite:
            lines = [cst.SimpleStatementLine([x]) for x in s.body]
            if positions is not None:
                for line, x in zip(lines, s.body):
                    if x in positions:
                        positions.setdefault(line, positions[x])
            return cst.IndentedBlock(fn(lines))
        return s.with_changes(body=fn(list(s.body)))

    if type(stmt) is cst.If and type(stmt.orelse) is cst.If:
        return _rewrite_elif_chain(stmt, suite, positions)
    changes: dict = {"body": suite(stmt.body)}
    orelse = getattr(stmt, "orelse", None)
    if type(orelse) is cst.Else:
        changes["orelse"] = orelse.with_changes(body=suite(orelse.body))
    if type(stmt) is cst.Try:
        changes["handlers"] = [h.with_changes(body=suite(h.body)) for h in stmt.handlers]
        if stmt.finalbody is not None:
            changes["finalbody"] = stmt.finalbody.with_changes(body=suite(stmt.finalbody.body))
    return stmt.with_changes(**changes)


def _rewrite_elif_chain(stmt: cst.If, suite, positions: dict | None) -> cst.If:
    """``rewrite_blocks`` of an ``if``/``elif`` chain: the arms' blocks in order, then the chain
    rebuilt from its last arm up (a loop: a chain of 500 arms nests 500 deep)."""
    arms = [stmt]
    while type(arms[-1].orelse) is cst.If:
        arms.append(arms[-1].orelse)
    bodies = [suite(arm.body) for arm in arms]
    final = arms[-1].orelse
    rebuilt = final.with_changes(body=suite(final.body)) if type(final) is cst.Else else final
    for arm, body in zip(reversed(arms), reversed(bodies)):
        new = arm.with_changes(body=body, orelse=rebuilt)
        if positions is not None and arm in positions:
            positions.setdefault(new, positions[arm])
        rebuilt = new
    return rebuilt


LOOPS = (cst.While, cst.For)


class LoopJumpConverter(OwnCodeConverter):
    """Rewrites one kind of loop jump (``jump``: ``cst.Break`` or ``cst.Continue``) in the loop
    that owns it. Inner loops are left first, so a jump found in a loop body is its own."""

    jump: type = cst.Break
    stem: str = "jump"

    def leave_While(self, original_node, updated_node):
        return self._loop(updated_node)

    def leave_For(self, original_node, updated_node):
        return self._loop(updated_node)

    def _loop(self, loop):
        if not contains(loop.body, (self.jump,), stop=LOOPS):
            return loop
        loop = loop.with_changes(body=as_indented(loop.body))
        flag = self.ctx.fresh(self.stem)

        def replace(_jump):
            return [assign(flag, cst.Name("True"))]

        def rewrite(stmt):
            return rewrite_blocks(stmt, block, self.ctx.positions)

        def block(stmts):
            return guard_block(stmts, flag, (self.jump,), replace, rewrite, LOOPS, self.ctx.positions)

        return self.rebuild(loop, flag, block(list(loop.body.body)))

    def rebuild(self, loop, flag: str, body: list):
        """The loop (or statements) that replace ``loop``, given its guarded ``body``."""
        raise NotImplementedError
