"""Dead-code and dead-carry elimination.

Removes pure ops whose results nobody uses (``undef`` markers, analysable expressions),
``cond``, ``with`` and ``try`` results nobody uses (with the values their regions yield for them), and loop
carries whose result is unused and whose value only feeds itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from laxify.ir.core import Function, Op, Region
from laxify.ir.ops import CondOp, ForRangeOp, PyOp, ScanOp, TryOp, UndefOp, WhileOp, WithOp

__all__ = ["DeadCodeElimination"]


def _use_counts(region: Region) -> Counter:
    counts: Counter = Counter()
    for op in region.walk():
        for v in op.operands:
            counts[id(v)] += 1
    return counts


def _removable(op: Op) -> bool:
    if isinstance(op, UndefOp):
        return True
    return isinstance(op, PyOp) and op.kind == "expr" and op.attributes.get("static", "never") != "never"


@dataclass(frozen=True)
class _Uses:
    counts: Counter
    captured: frozenset  # names closures capture: their values are never dead

    def live(self, value) -> bool:
        return bool(self.counts[id(value)]) or value.hint in self.captured


@dataclass(frozen=True)
class DeadCodeElimination:
    name = "dce"

    def apply(self, fn: Function) -> None:
        # Names closures capture are read whenever a closure is called: never dead.
        # So are parameters whose items the function updates: the caller reads them.
        captured = frozenset(fn.attributes.get("cells", ())) | frozenset(fn.attributes.get("caller_reads", ()))
        changed = True
        while changed:
            uses = _Uses(_use_counts(fn.body), captured)
            changed = self._region(fn.body, uses)

    def _region(self, region: Region, uses: _Uses) -> bool:
        changed = False
        kept: list[Op] = []
        for op in region.ops:
            inner_uses = uses
            if isinstance(op, TryOp):
                # A handler or `finally` may start from any point of the blocks before it, which
                # the dataflow does not show: what the statement's names hold there is never dead.
                names = frozenset(a.hint for r in op.regions for a in r.args if a.hint)
                inner_uses = _Uses(uses.counts, uses.captured | names)
            for inner in op.regions:
                changed |= self._region(inner, inner_uses)
            if op.results and _removable(op) and not any(uses.counts[id(r)] for r in op.results):
                changed = True
                continue
            if isinstance(op, (CondOp, WithOp, TryOp)):
                changed |= self._dead_outputs(op, uses)
            elif isinstance(op, (WhileOp, ForRangeOp, ScanOp)):
                changed |= self._dead_carries(op, uses)
            kept.append(op)
        region.ops = kept
        return changed

    def _dead_outputs(self, op: CondOp, uses: _Uses) -> bool:
        in_place = op.attributes.get("in_place", ())  # written back into their objects (to_ir)
        dead = [k for k, r in enumerate(op.results) if not uses.live(r) and r.hint not in in_place]
        # A cond's test regions yield its conditions, not its results.
        regions = op.branches if isinstance(op, CondOp) else op.regions
        for k in reversed(dead):
            del op.results[k]
            for region in regions:
                del region.terminator.operands[k]
        return bool(dead)

    def _dead_carries(self, op, uses: _Uses) -> bool:
        body = op.regions[-1]
        lead = 0 if isinstance(op, WhileOp) else 1
        yields = body.terminator.operands
        dead = []
        for k, res in enumerate(op.results):
            if uses.live(res):
                continue
            args = [r.args[lead + k] for r in op.regions[:-1]] + [body.args[lead + k]]
            own_use = 1 if yields[k] is body.args[lead + k] else 0
            if sum(uses.counts[id(a)] for a in args) > own_use:
                continue
            # Its yielded value must not be needed by anything else either.
            if yields[k] is not body.args[lead + k] and uses.counts[id(yields[k])] > 1:
                continue
            dead.append(k)
        for k in reversed(dead):
            del op.results[k]
            del yields[k]
            del op.operands[op.lead + k]
            for region in op.regions:
                off = lead if region is body else 0
                del region.args[off + k]
            op.attributes["num_carries"] -= 1
        return bool(dead)
