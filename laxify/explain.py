"""``f.explain()``: one row per construct the user wrote, what laxify made of it, and why.

Constructs laxify synthesised (the flag guards of ``break``/``continue``/``return``) get no
row of their own: they fold into the row of the loop they belong to.
"""

from __future__ import annotations

import dataclasses

import html
import re
from dataclasses import dataclass

from laxify.ir import CondOp, ForRangeOp, Function, PyOp, ScanOp, TryOp, WhileOp, WithOp
from laxify.ir.core import Op, Value
from laxify.ir.naming import DEFAULT_PREFIX
from laxify.ir.passes.infer_types import predicate_type
from laxify.ir.types import Array, Static, is_static

__all__ = ["Entry", "Explanation", "explain"]


@dataclass(frozen=True)
class Entry:
    """One row: the user's ``construct`` at ``line``, what laxify made of it and why."""

    line: int
    construct: str
    decision: str
    reason: str


_COLOURS = {"static Python": "33", "unrolled": "33", "fell back": "31"}  # others: green


@dataclass
class Explanation:
    function: str
    entries: list[Entry]
    specialised: bool = False
    # The split fallback of these arguments' signature, one line per loop (see laxify/split.py).
    split: list[str] = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        return self.text()

    def _split_rows(self) -> list[str]:
        if not self.split:
            return []
        return [
            "  split fallback (these arguments fell back; each loop, taken branch and segment of code runs "
            "compiled where it can):",
            *(f"    {line}" for line in self.split),
        ]

    def text(self, color: bool = False) -> str:
        """The rows as text; ``color`` adds ANSI colours to the decisions (for a terminal)."""
        if not self.entries:
            return "\n".join([f"{self.function}: no control flow", *self._split_rows()])
        head = (
            f"{self.function}:"
            if self.specialised
            else f"{self.function} (not specialised: pass arguments to decide traced vs static):"
        )
        cw = max(len(e.construct) for e in self.entries)
        dw = max(len(e.decision) for e in self.entries)
        rows = [head]
        for e in self.entries:
            decision = f"{e.decision:<{dw}}"
            if color:
                decision = f"\033[{_COLOURS.get(e.decision, '32')}m{decision}\033[0m"
            rows.append(f"  line {e.line:<4} {e.construct:<{cw}}  {decision}  {e.reason}")
        return "\n".join(rows + self._split_rows())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{e.line}</td><td><code>{html.escape(e.construct)}</code></td>"
            f"<td><b>{html.escape(e.decision)}</b></td><td>{html.escape(e.reason)}</td></tr>"
            for e in self.entries
        )
        return (
            "<table class='lx-explain'><caption>" + html.escape(self.function) + "</caption>"
            "<tr><th>line</th><th>construct</th><th>decision</th><th>why</th></tr>"
            f"{rows}</table>"
        )

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


class _Context:
    """What explaining one function needs: its generated-name prefix and who defines what."""

    def __init__(self, fn: Function, specialised: bool):
        self.prefix = fn.attributes.get("prefix", DEFAULT_PREFIX)
        self.specialised = specialised
        self.defining: dict[int, Op] = {}
        for op in fn.walk():
            for r in op.results:
                self.defining[id(r)] = op

    def generated(self, name: str) -> bool:
        return name == self.prefix or name.startswith(self.prefix + "_")

    def flag_kind(self, name: str) -> str | None:
        """``break``/``continue``/``return`` for laxify's flag names, else None."""
        if not self.generated(name):
            return None
        stem = name[len(self.prefix) + 1 :]
        for kind, word in (("break", "break"), ("continue", "continue"), ("do_return", "return"), ("caught", "caught")):
            if stem.startswith(kind):
                return word
        return None

    def user_names(self, values: list[Value], depth: int = 0) -> list[str]:
        """The user's names these values are computed from (through laxify's temporaries)."""
        out: list[str] = []
        for v in values:
            if v.hint and not self.generated(v.hint):
                names = [v.hint]
            else:
                op = self.defining.get(id(v))
                names = self.user_names(op.operands, depth + 1) if op is not None and depth < 8 else []
            out.extend(n for n in names if n not in out)
        return out

    def guard_flag(self, op: CondOp) -> str | None:
        """For a cond laxify synthesised around a flag (``if not <flag>:``), the flag's kind."""
        sel = self.defining.get(id(op.selector))
        if op.num_tests or not isinstance(sel, PyOp) or not sel.operands:
            return None
        if not sel.code.startswith((f"{self.prefix}.not_(", f"{self.prefix}.not_raised(")):
            return None
        kinds = {self.flag_kind(v.hint) for v in sel.operands}
        return next(iter(kinds)) if len(kinds) == 1 and None not in kinds else None

    def is_handler(self, op: CondOp) -> bool:
        """Whether ``op`` runs a ``try``'s handler where a ``raise`` it catches set its flag
        (``transpiler/converters/caught_raises.py``: ``if <flag> == k:``)."""
        sel = self.defining.get(id(op.selector))
        return (
            isinstance(sel, PyOp)
            and bool(sel.operands)
            and all(self.flag_kind(v.hint) == "caught" for v in sel.operands if v.hint)
        )

    def recursion_role(self, op: Op) -> str | None:
        """For the constructs the recursion converter writes (``transpiler/converters/
        recursion.py``): ``"down"`` (the loop down the calls), ``"up"`` (the loop back up),
        ``"choice"`` (the test between them and the body as written), else None."""
        value = op.selector if isinstance(op, CondOp) else op.regions[0].terminator.operands[0]
        found = self.defining.get(id(value))
        if not isinstance(found, PyOp):
            return None
        if isinstance(op, CondOp):
            named = any(
                self.generated(v.hint) and v.hint[len(self.prefix) + 1 :].startswith("recursion")
                for v in found.operands
                if v.hint
            )
            return "choice" if named and " is None" in found.code else None
        if ".recursion_within(" in found.code:
            return "down"
        if any(
            self.generated(v.hint) and v.hint[len(self.prefix) + 1 :].startswith("depth")
            for v in found.operands
            if v.hint
        ):
            return "up"
        return None

    def is_match(self, op: CondOp) -> bool:
        sel = self.defining.get(id(op.selector))
        return isinstance(sel, PyOp) and any(
            self.generated(v.hint) and ("subject" in v.hint or "_arm_" in v.hint) for v in sel.operands
        )


_NOTES = {
    "break": "break → flag, remaining iterations skipped",
    "continue": "continue → flag, rest of the body skipped",
    "return": "return → flag, the rest skipped once it has run",
    "caught": "a `raise` its `try` catches → flag, the rest of the body skipped",
}


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "nothing"


def _python_if(names: list[str], what: str = "Python values") -> str:
    return f"Python if {'it is a' if len(names) == 1 else 'they are'} {what if len(names) != 1 else what[:-1]}"


def _cond_entry(op: CondOp, cx: _Context) -> Entry:
    construct = "match" if cx.is_match(op) else ("if/elif" if op.num_tests else "if")
    lax = "lax.switch" if op.num_tests else "lax.cond"
    names = cx.user_names(op.conditions())
    line = op.span.line if op.span else 0
    depends = f"condition depends on {_names(names)}"
    if op.attributes.get("static"):
        return Entry(line, construct, "static Python", f"{depends}, known while tracing")
    if cx.specialised:
        t = predicate_type(op)
        if isinstance(t, Array):
            return Entry(line, construct, lax, f"{depends} (traced)")
        if is_static(t):
            return Entry(line, construct, "static Python", f"{depends}: Python values for these arguments")
    return Entry(line, construct, lax, f"{depends}; {_python_if(names)}")


def _while_entry(op: WhileOp, cx: _Context) -> Entry:
    line = op.span.line if op.span else 0
    cond = op.regions[0].terminator.operands[0]
    names = cx.user_names([cond])
    depends = f"condition depends on {_names(names)}"
    if not names:
        return Entry(
            line,
            "while",
            "lax.while_loop" if not op.attributes.get("static") else "static Python",
            "runs until a `break`",
        )
    if op.attributes.get("static"):
        return Entry(line, "while", "static Python", f"{depends}, known while tracing")
    if cx.specialised:
        t = predicate_type(op)
        if isinstance(t, Array):
            return Entry(line, "while", "lax.while_loop", f"{depends} (traced)")
        if is_static(t):
            return Entry(line, "while", "static Python", f"{depends}: Python values for these arguments")
    return Entry(line, "while", "lax.while_loop", f"{depends}; {_python_if(names)}")


def _recursion_entry(op: WhileOp, role: str, cx: _Context) -> Entry:
    line = op.span.line if op.span else 0
    decision = "static Python" if op.attributes.get("static") else "lax.while_loop"
    if role == "down":
        return Entry(line, "recursion", decision, "calls itself: a loop down the calls, one iteration per call")
    return Entry(line, "recursion", decision, "calls itself: a loop back up, each call finished with the value below")


def _trip_count(op: ForRangeOp) -> int | None:
    bounds = [v.type for v in op.operands[:3]]
    if all(isinstance(t, Static) and t.has_value and isinstance(t.value, int) for t in bounds):
        start, stop, step = (t.value for t in bounds)
        return len(range(start, stop, step)) if step else None
    return None


def _for_entry(op: ForRangeOp, cx: _Context) -> Entry:
    line = op.span.line if op.span else 0
    reason = op.attributes.get("python_index")
    if reason:
        return Entry(line, "for", "unrolled", f"{reason}: the loop runs as Python")
    count = _trip_count(op)
    bounds = op.operands[:3]
    if not all(is_static(v.type) for v in bounds):
        names = cx.user_names(bounds)
        depends = f"trip count depends on {_names(names)}"
        if any(isinstance(v.type, Array) for v in bounds):
            return Entry(line, "for", "fori_loop", f"{depends} (traced)")
        return Entry(
            line,
            "for",
            "fori_loop",
            f"{depends}; lax.scan if {'it is a Python int' if len(names) == 1 else 'they are Python ints'}",
        )
    index = op.regions[0].args[0] if op.regions[0].args else None
    if cx.specialised and index is not None and isinstance(index.type, Static):
        return Entry(line, "for", "unrolled", "every value it carries is a Python value: the loop runs as Python")
    if op.attributes.get("static"):
        return Entry(line, "for", "unrolled", "bounds and carries are known while tracing: the loop runs as Python")
    what = f"trip count is static: {count}" if count is not None else "trip count is static"
    return Entry(line, "for", "lax.scan", what)


def _scan_entry(op: ScanOp, cx: _Context) -> Entry:
    line = op.span.line if op.span else 0
    xs = op.operands[0]
    what = _names(cx.user_names([xs]))
    if op.attributes.get("static") or isinstance(xs.type, Static):
        return Entry(line, "for", "unrolled", f"iterates over {what}, a Python sequence: the loop runs as Python")
    if isinstance(xs.type, Array) and xs.type.shape:
        return Entry(line, "for", "lax.scan", f"iterates over the leading axis of {what}: {xs.type.shape[0]} steps")
    return Entry(
        line, "for", "lax.scan", f"iterates over the leading axis of {what}; unrolled if it is a Python sequence"
    )


_CALL = re.compile(r"\.call\(\s*([^,()]+)")


def _py_entries(op: PyOp, cx: _Context) -> list[Entry]:
    line = op.span.line if op.span else 0
    if op.attributes.get("updates"):
        return [
            Entry(
                line,
                "update",
                "converted",
                f"`{user}` → `{functional}` on a JAX array; in place on a list, dict or NumPy array",
            )
            for user, functional in op.attributes["updates"]
        ]
    reason = op.attributes.get("fallback")
    if reason is not None:
        first = op.code.lstrip().split(None, 1)[0] if op.code.strip() else "statement"
        traced = _names(cx.user_names([v for v in op.operands if isinstance(v.type, Array)]))
        if cx.specialised and traced != "nothing":
            cost = f"it reads {traced}, traced here: the function runs as plain Python, eagerly"
        elif cx.specialised and all(is_static(v.type) for v in op.operands):
            return [
                Entry(
                    line,
                    first.rstrip(":"),
                    "static Python",
                    f"kept as plain Python ({reason}); it meets only Python values here",
                )
            ]
        else:
            cost = "fine on static values, an eager fallback on traced ones"
        return [Entry(line, first.rstrip(":"), "fell back", f"kept as plain Python: {reason}; {cost}")]
    code = op.code
    if code.startswith(f"{cx.prefix}.print_("):
        traced = [v for v in op.operands if isinstance(v.type, Array)]
        if cx.specialised and not traced and all(is_static(v.type) for v in op.operands):
            return [Entry(line, "print", "static Python", "prints Python values once, while tracing")]
        decision = "jax.debug.print"
        names = _names(cx.user_names(traced or op.operands))
        return [Entry(line, "print", decision, f"prints {names} each time the program runs")]
    match = _CALL.search(code) if f"{cx.prefix}.call(" in code else None
    if match:
        callee = match.group(1).strip()
        if not cx.generated(callee.split(".")[0]):
            return [
                Entry(
                    line,
                    "call",
                    "converted",
                    f"`{callee}` is converted too when it is your Python code; "
                    "library functions are called as they are",
                )
            ]
    return []


def _note(entries_by_op: dict[int, list], loops: list[Op], kind: str) -> None:
    if loops:
        notes = entries_by_op.setdefault(id(loops[-1]), [])
        if _NOTES[kind] not in notes:
            notes.append(_NOTES[kind])


def explain(fn: Function, specialised: bool = False, unspecialised: Function | None = None) -> Explanation:
    """The rows of ``fn``. For a specialised ``fn``, ``unspecialised`` (the same function before
    specialisation) supplies the constructs that static folding removed: their conditions were
    known while tracing."""
    entries = _explain_entries(fn, specialised)
    if unspecialised is not None:
        conds = ("if", "if/elif", "match")
        kind = lambda e: "cond" if e.construct in conds else e.construct  # noqa: E731
        seen = {(e.line, kind(e)): k for k, e in enumerate(entries)}
        for e in _explain_entries(unspecialised, False):
            k = seen.get((e.line, kind(e)))
            if k is not None:  # a chain partly folded keeps the name the user wrote
                entries[k] = Entry(e.line, e.construct, entries[k].decision, entries[k].reason)
                continue
            if e.construct in conds:
                e = Entry(
                    e.line,
                    e.construct,
                    "static Python",
                    f"{e.reason.split(';')[0]}: known for these arguments, only the branch taken is traced",
                )
            else:
                e = Entry(e.line, e.construct, "static Python", "in a branch not taken for these arguments")
            entries.append(e)
        entries.sort(key=lambda e: e.line)
    return Explanation(fn.name, entries, specialised)


def _explain_entries(fn: Function, specialised: bool) -> list[Entry]:
    cx = _Context(fn, specialised)
    rows: list[tuple[Op, Entry]] = []
    notes: dict[int, list[str]] = {}

    def visit(op: Op, loops: list[Op]) -> None:
        entry: Entry | None = None
        role = cx.recursion_role(op) if isinstance(op, (CondOp, WhileOp)) else None
        if role is not None:
            if role != "choice":
                entry = _recursion_entry(op, role, cx)
        elif isinstance(op, CondOp):
            kind = op.attributes.get("return_guard") and "return" or cx.guard_flag(op)
            if kind:
                _note(notes, loops, kind)
            elif cx.is_handler(op):
                found = _cond_entry(op, cx)
                entry = dataclasses.replace(
                    found,
                    construct="except",
                    reason=found.reason.replace(
                        "condition depends on", "the handler, run where a `raise` it catches fired; that depends on", 1
                    ),
                )
            else:
                entry = _cond_entry(op, cx)
        elif isinstance(op, WhileOp):
            entry = _while_entry(op, cx)
        elif isinstance(op, ForRangeOp):
            entry = _for_entry(op, cx)
        elif isinstance(op, ScanOp):
            entry = _scan_entry(op, cx)
        elif isinstance(op, WithOp):
            entry = Entry(
                op.span.line if op.span else 0,
                "with",
                "static Python",
                "a Python `with`, entered and left while tracing; its body is converted",
            )
        elif isinstance(op, TryOp):
            entry = Entry(
                op.span.line if op.span else 0,
                "try",
                "static Python",
                "a Python `try`, run while tracing (its handlers see errors raised while "
                "tracing); its blocks are converted",
            )
        elif isinstance(op, PyOp):
            rows.extend((op, e) for e in _py_entries(op, cx))
        if entry is not None:
            rows.append((op, entry))
        inner = loops + [op] if isinstance(op, (WhileOp, ForRangeOp, ScanOp)) else loops
        if role == "choice":
            return  # (the body as written, for a static depth: the loops' rows say what it does)
        for region in op.regions:
            for child in region.ops:
                visit(child, inner)

    for op in fn.body.ops:
        visit(op, [])
    entries = []
    for op, e in rows:
        extra = notes.get(id(op))
        if extra and e.construct in ("for", "while"):
            e = Entry(e.line, e.construct, e.decision, f"{e.reason}; {'; '.join(extra)}")
        entries.append(e)
    entries.sort(key=lambda e: e.line)
    return entries
