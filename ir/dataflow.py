"""Data dependences inside regions: which operands of a loop can decide whether it is traced."""

from __future__ import annotations

from laxify.ir.core import Op, Region
from laxify.ir.ops import ForRangeOp, ScanOp, WhileOp

__all__ = ["region_deps", "loop_trace_deps"]


def region_deps(region: Region) -> dict[int, frozenset[int]]:
    """For each value defined in ``region`` (by id), the indexes of the block args it depends on."""
    deps: dict[int, frozenset[int]] = {id(a): frozenset({k}) for k, a in enumerate(region.args)}
    for op in region.ops:
        _op_deps(op, deps)
    return deps


def _op_deps(op: Op, deps: dict[int, frozenset[int]]) -> None:
    found: frozenset[int] = frozenset()
    for v in op.operands:
        found |= deps.get(id(v), frozenset())
    for r in op.results:
        deps[id(r)] = found


def loop_trace_deps(op: WhileOp | ForRangeOp | ScanOp) -> list[int]:
    """Indexes into ``op.operands`` of the carries and consts whose being traced makes the loop
    traced: those that flow into the condition (``while``) or into any carry (``for``)."""
    body = op.regions[-1]
    body_deps = region_deps(body)
    yields = body.terminator.operands
    if isinstance(op, WhileOp):
        before = op.regions[0]
        wanted = set(region_deps(before).get(id(before.terminator.operands[0]), frozenset()))
        offset = 0
    else:
        wanted = set()
        for y in yields:
            wanted |= body_deps.get(id(y), frozenset())
        wanted.discard(0)  # the index or element itself
        offset = 1
    element = {0} if offset else set()  # a for loop's index or element is not an operand
    changed = True
    while changed:
        changed = False
        for k in list(wanted):
            c = k - offset
            if 0 <= c < op.num_carries:
                extra = body_deps.get(id(yields[c]), frozenset()) - element
                if not extra <= wanted:
                    wanted |= extra
                    changed = True
    return sorted(op.lead + k - offset for k in wanted if k - offset >= 0)
