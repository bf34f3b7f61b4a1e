"""``f.explain()``: every control-flow construct and what laxify made of it, and why."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir import CondOp, ForRangeOp, Function, PyOp, ScanOp, TryOp, WhileOp, WithOp
from laxify.ir.passes.infer_types import predicate_type
from laxify.ir.types import Array, is_static

__all__ = ["Entry", "Explanation", "explain"]


@dataclass(frozen=True)
class Entry:
    line: int
    construct: str
    verdict: str   # "converted", "static" or "python"
    why: str


@dataclass
class Explanation:
    function: str
    entries: list[Entry]

    def __str__(self) -> str:
        if not self.entries:
            return f"{self.function}: no control flow"
        rows = [f"{self.function}:"]
        for e in self.entries:
            rows.append(f"  line {e.line:<4} {e.construct:<6} {e.verdict:<9} {e.why}")
        return "\n".join(rows)

    __repr__ = __str__


_LAX = {CondOp: "lax.cond", WhileOp: "lax.while_loop", ForRangeOp: "lax.scan", ScanOp: "lax.scan"}
_WORD = {CondOp: "if", WhileOp: "while", ForRangeOp: "for", ScanOp: "for"}


def _entries(op, specialised: bool) -> list[Entry]:
    line = op.span.line if op.span else 0
    if isinstance(op, PyOp) and op.attributes.get("updates"):
        return [Entry(line, "update", "converted",
                      f"`{user}` → `{functional}` on a JAX array; in place on a list, dict or NumPy array")
                for user, functional in op.attributes["updates"]]
    entry = _entry(op, specialised)
    return [] if entry is None else [entry]


def _entry(op, specialised: bool) -> Entry | None:
    line = op.span.line if op.span else 0
    if isinstance(op, PyOp):
        reason = op.attributes.get("fallback")
        if reason is None:
            return None
        first = op.code.lstrip().split(None, 1)[0] if op.code.strip() else "statement"
        return Entry(line, first.rstrip(":"), "python",
                     f"kept as plain Python: {reason}; fine on static values, an eager fallback on traced ones")
    kind = type(op)
    if kind is WithOp:
        return Entry(line, "with", "static", "a Python `with`, entered and left while tracing; its body is converted")
    if kind is TryOp:
        return Entry(line, "try", "static", "a Python `try`, run while tracing (its handlers see errors raised "
                     "while tracing); its blocks are converted")
    if kind not in _LAX:
        return None
    word = _WORD[kind]
    if op.attributes.get("static"):
        what = "its condition is" if kind in (CondOp, WhileOp) else "its bounds and carries are"
        return Entry(line, word, "static", f"{what} known while tracing: plain Python")
    if kind is ForRangeOp and op.attributes.get("python_index"):
        return Entry(line, word, "python", f"unrolled Python loop: {op.attributes['python_index']}")
    lax = "lax.switch" if kind is CondOp and op.num_tests else _LAX[kind]
    if kind is ForRangeOp and not all(is_static(v.type) for v in op.operands[:3]):
        lax = "lax.fori_loop/while_loop (traced bounds)"
    if specialised and kind in (CondOp, WhileOp) and isinstance(predicate_type(op), Array):
        return Entry(line, word, "converted", f"{lax}: the condition is traced")
    if specialised and kind in (CondOp, WhileOp) and is_static(predicate_type(op)):
        return Entry(line, word, "static", "the condition is static for these arguments: plain Python")
    return Entry(line, word, "converted",
                 f"{lax} when its condition or carries are traced, plain Python otherwise (decided while tracing)")


def explain(fn: Function, specialised: bool = False) -> Explanation:
    entries = [e for op in fn.walk() for e in _entries(op, specialised)]
    entries.sort(key=lambda e: e.line)
    return Explanation(fn.name, entries)
