"""Data dependences inside regions: which operands of a loop can decide whether it is traced."""

from __future__ import annotations

from laxify.ir.core import Op, Region
from laxify.ir.ops import CondOp, ForRangeOp, ScanOp, TryOp, WhileOp, WithOp

__all__ = ["region_deps", "loop_trace_deps", "region_args", "leading_args"]


def leading_args(op: Op) -> int:
    """How many of a loop's region arguments come before its carries: a ``for`` loop's body
    starts with its index or element, a ``while`` loop's with the first carry."""
    return 1 if isinstance(op, (ScanOp, ForRangeOp)) else 0


def region_args(op: Op, k: int) -> list | None:
    """The region arguments through which operand ``k`` of ``op`` enters its regions, or None
    where the operand is used otherwise (a loop bound, a condition, a plain statement)."""
    if isinstance(op, (WhileOp, ForRangeOp, ScanOp)):
        if k < op.lead:
            return None
        return [r.args[leading_args(op) + k - op.lead] for r in op.regions]
    if isinstance(op, CondOp):
        return None if k == 0 else [r.args[k - 1] for r in op.regions]
    if isinstance(op, (TryOp, WithOp)):
        return [r.args[k] for r in op.regions]
    return None


def _used(region: Region) -> set[int]:
    """The ids of the values that the ops of ``region`` read (see ``_read_operands``)."""
    return {id(op.operands[k]) for op in region.ops for k in _read_operands(op)}


def _read_operands(op: Op) -> list[int]:
    """Indexes of the operands that ``op`` reads. An operand that only enters the op's regions
    as an argument that nothing there reads (the value of a name a branch may assign, handed in
    for the branches that do not) is not read: what the op gives does not depend on it."""
    if not op.regions:
        return list(range(len(op.operands)))
    used: set[int] = set()
    for region in op.regions:
        used |= _used(region)
    read = []
    for k in range(len(op.operands)):
        args = region_args(op, k)
        if args is None or any(id(a) in used for a in args):
            read.append(k)
    return read


def region_deps(region: Region) -> dict[int, frozenset[int]]:
    """For each value defined in ``region`` (by id), the indexes of the block args it depends on."""
    deps: dict[int, frozenset[int]] = {id(a): frozenset({k}) for k, a in enumerate(region.args)}
    for op in region.ops:
        _op_deps(op, deps)
    return deps


def _op_deps(op: Op, deps: dict[int, frozenset[int]]) -> None:
    found: frozenset[int] = frozenset()
    for k in _read_operands(op):
        found |= deps.get(id(op.operands[k]), frozenset())
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
