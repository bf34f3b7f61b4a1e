"""Liveness: which names may be read after each statement before being written again.

A backward pass over the statement lists; loops iterate to a fixpoint. The result maps
``id(statement)`` to its live-out set and, for loops, ``("head", id(loop))`` to the names
live at the top of each iteration. In a ``try`` body, what the handlers and ``finally``
read is live everywhere (any statement may raise). Compound statements that are not analysed
precisely (``async with``, ``match``) kill nothing, which is the safe direction.
"""

from __future__ import annotations

import libcst as cst

from laxify.transpiler.analysis.names import expr_reads, stmt_access, target_names

__all__ = ["Liveness"]


class Liveness:
    """``always``: names live everywhere, whatever the statements read (the names closures
    capture: a closure may read them at any later call)."""

    def __init__(
        self, body: cst.BaseSuite, live_at_exit: frozenset[str] = frozenset(), always: frozenset[str] = frozenset()
    ):
        self.live_out: dict[object, frozenset[str]] = {}
        self.always = always
        self.block_in(body.body, live_at_exit | always)

    def block_in(self, stmts, live: frozenset[str]) -> frozenset[str]:
        for stmt in reversed(list(stmts)):
            live = self.stmt_in(stmt, live)
        return live

    def _suite_in(self, suite: cst.BaseSuite | None, live: frozenset[str]) -> frozenset[str]:
        return live if suite is None else self.block_in(suite.body, live)

    def stmt_in(self, stmt, live: frozenset[str]) -> frozenset[str]:
        live = live | self.always
        self.live_out[id(stmt)] = live
        if type(stmt) is cst.SimpleStatementLine:
            for small in reversed(stmt.body):
                live = self._small_in(small, live)
            return live
        if type(stmt) is cst.If:
            # An `elif` chain from its last arm up (a loop: a chain of 500 arms nests 500 deep).
            arms = [stmt]
            while type(arms[-1].orelse) is cst.If:
                arms.append(arms[-1].orelse)
            final = arms[-1].orelse
            live_in = self._suite_in(final.body, live) if type(final) is cst.Else else live
            for arm in reversed(arms):
                self.live_out[id(arm)] = live
                body = self._suite_in(arm.body, live)
                live_in = body | live_in | frozenset(expr_reads(arm.test))
            return live_in
        if type(stmt) in (cst.While, cst.For):
            return self._loop_in(stmt, live)
        if type(stmt) is cst.With and stmt.asynchronous is None:
            # The body runs once, after the items are entered (they bind the `as` targets).
            body = self._suite_in(stmt.body, live)
            for item in reversed(stmt.items):
                if item.asname is not None:
                    body = body - frozenset(target_names(item.asname.name))
                body = body | frozenset(expr_reads(item.item))
            return body
        if type(stmt) is cst.Try:
            return self._try_in(stmt, live)
        access = stmt_access(stmt)
        if type(stmt) in (cst.FunctionDef, cst.ClassDef):
            return (live - {stmt.name.value}) | frozenset(access.reads)
        return live | frozenset(access.reads)

    def _try_in(self, stmt: cst.Try, live: frozenset[str]) -> frozenset[str]:
        """Any statement of the ``try`` body may raise into a handler (or, unmatched, into
        ``finally``): what those read is live all through the body."""
        final = self._suite_in(stmt.finalbody.body if stmt.finalbody else None, live)
        after_body = self._suite_in(stmt.orelse.body if stmt.orelse else None, final)
        raised = final
        for handler in stmt.handlers:
            inside = self._suite_in(handler.body, final)
            if handler.name is not None:
                inside = inside - frozenset(target_names(handler.name.name))
            if handler.type is not None:
                inside = inside | frozenset(expr_reads(handler.type))
            raised = raised | inside
        saved, self.always = self.always, self.always | raised
        try:
            body = self._suite_in(stmt.body, after_body)
        finally:
            self.always = saved
        return body | raised

    def _small_in(self, small, live: frozenset[str]) -> frozenset[str]:
        if type(small) is cst.Return:
            return self.always | (frozenset(expr_reads(small.value)) if small.value is not None else frozenset())
        access = stmt_access(small)
        killed = set(access.writes) - set(access.mutates)
        return (live - killed) | frozenset(access.reads)

    def _loop_in(self, loop, live_after: frozenset[str]) -> frozenset[str]:
        after = live_after
        if loop.orelse is not None:
            after = self._suite_in(loop.orelse.body, live_after)
        if type(loop) is cst.While:
            entry_reads = frozenset(expr_reads(loop.test))
            kills: frozenset[str] = frozenset()
        else:
            entry_reads = frozenset(expr_reads(loop.iter))
            kills = frozenset(target_names(loop.target))
        head = after | entry_reads
        for _ in range(20):
            body_in = self._suite_in(loop.body, head | live_after)
            if type(loop) is cst.For:
                body_in = body_in - kills
            new_head = after | (entry_reads if type(loop) is cst.While else frozenset()) | body_in
            if new_head == head:
                break
            head = new_head
        self.live_out[("head", id(loop))] = head
        self.live_out[id(loop)] = live_after
        return head | entry_reads
