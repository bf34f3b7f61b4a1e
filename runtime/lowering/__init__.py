"""Lowering: the IR becomes Python source that calls ``jax.lax`` through the runtime dispatcher
for traced control flow and keeps plain Python for static control flow.

Lowering is a table: one rule per op class, registered with ``@lowers(OpClass)``. Values are
named by the Python variable they hold, so untouched statements are re-emitted verbatim.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from laxify.ir import CondOp, Function, Op, Region, UndefOp, Value, WhileOp
from laxify.ir.naming import DEFAULT_PREFIX
from laxify.runtime.lowering.emitter import Emitter

__all__ = ["lowers", "lower_function", "LoweredSource", "Site", "RULES"]

RULES: dict[type, Callable] = {}

RUNTIME = "_lx"  # the runtime module, a closure cell of the generated function
SITES = "_lx_sites"  # per-function table of source sites for messages


def lowers(op_class: type) -> Callable:
    """Register the lowering rule of an op class."""

    def register(rule: Callable) -> Callable:
        RULES[op_class] = rule
        return rule

    return register


@dataclass(frozen=True)
class Site:
    """A construct in the user's source, for runtime messages: kind, line, column, names, and
    for an ``elif`` chain the user's words for each of its branches."""

    construct: str
    filename: str
    line: int
    col: int
    names: tuple[str, ...] = ()
    branches: tuple[str, ...] = ()  # "`if` branch", "`elif` branch on line 7", "`else` branch"
    branch_lines: tuple[int, ...] = ()  # the line of each branch's condition (the `else`: the `if` line)
    int_checks: bool = False  # a loop whose body holds int arithmetic routed through `python_op`
    end_line: int = 0  # a segment's last line (runtime/segments.py); 0: the construct's own line
    # Whether the function changes a list, dict or set in place (an item assigned or deleted, a
    # method such as `append` called on a name): then which names share one object matters
    # (runtime/effects.py ``Identity``), and a path that decides it is an error.
    changes_in_place: bool = True
    # The function's local names whose object nothing else can reach: a change to their copy
    # that the construct does not carry out is lost to nobody (runtime/effects.py).
    private: tuple[str, ...] = ()
    # A construct kept as Python for its effect on an object from outside the function: why it
    # was kept, and the fix (runtime/effects.py ``kept_effects``).
    kept: tuple[str, str] = ("", "")
    # The names among ``names`` that nothing reads after the construct: a traced loop that may
    # run zero times leaves them unset without a check (Python raises only where one is read).
    unread: tuple[str, ...] = ()
    # An `if` laxify made around the code after a `raise` (its flag set by nothing else): where
    # it is false a check failed, and the values of that code are never observed.
    after_raise: bool = False
    # An `if` laxify made around the code after a statement that may return (or raise): its
    # second branch runs where the function has left, and no later code reads what it gives.
    return_guard: bool = False


class SiteTable(tuple):
    """The sites of one converted function, as its code reads them (``_lx_sites[k]``): a tuple
    that a split run takes as one static value, by identity (runtime/split.py)."""

    __slots__ = ()


@dataclass
class LoweredSource:
    name: str
    emitter: Emitter
    sites: SiteTable  # (made once: the table every function bound to this code reads)
    cells: tuple[str, ...] = ()  # the user's names that closures capture (see ``rules._function``)
    prefix: str = DEFAULT_PREFIX  # of the generated names (see ``laxify.ir.naming``)

    def __post_init__(self):
        if type(self.sites) is not SiteTable:
            self.sites = SiteTable(self.sites)

    @property
    def runtime(self) -> str:
        return self.prefix

    @property
    def sites_name(self) -> str:
        return self.prefix + SITES[len(DEFAULT_PREFIX) :]

    @property
    def boundary_name(self) -> str:
        """The closure cell of the handler at the function's edge (see ``compile._at_edge``)."""
        return self.prefix + "_boundary"

    def text(self, base_depth: int = 0) -> str:
        return self.emitter.render(base_depth)[0]


@dataclass
class Lowerer:
    fn: Function
    filename: str = "<unknown>"
    emitter: Emitter = field(default_factory=Emitter)
    sites: list[Site] = field(default_factory=list)
    uses: Counter = field(default_factory=Counter)
    users: dict = field(default_factory=dict)  # id(value) -> [(op, operand index)]
    tests: set = field(default_factory=set)  # id() of the yields that give a condition
    inline: dict[int, str] = field(default_factory=dict)
    inline_bare: dict[int, str] = field(default_factory=dict)  # the same, never parenthesised
    counter: int = 0
    may_be_undefined: bool = False  # some name may be unbound: returns check their value
    cells: frozenset = frozenset()  # the user's names that closures capture
    prefix: str = DEFAULT_PREFIX  # of the generated names: the runtime handle is the prefix itself

    @property
    def runtime(self) -> str:
        return self.prefix

    def name(self, v: Value) -> str:
        return v.hint if v.hint else f"{self.prefix}_t{v.version}"

    def ref(self, v: Value) -> str:
        """Python text for a value: an inlined expression or the variable's name."""
        return self.inline.get(id(v), self.name(v))

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{self.prefix}_{stem}_{self.counter}"

    def site(
        self,
        op: Op | None,
        construct: str,
        names=(),
        branches=(),
        branch_lines=(),
        kept=("", ""),
        at=None,
        unread=(),
        after_raise: bool = False,
        return_guard: bool = False,
    ) -> str:
        """A new site (``at``: its line and column, where ``op`` is ``None``), as the code reads it."""
        line, col = (op.span.line, op.span.col) if op is not None and op.span else at or (0, 0)
        checks = construct in ("while", "for") and op is not None and _holds_int_ops(op)
        self.sites.append(
            Site(
                construct,
                self.filename,
                line,
                col,
                tuple(names),
                tuple(branches),
                tuple(branch_lines),
                checks,
                changes_in_place=self.fn.attributes.get("changes_in_place", False),
                private=self.fn.attributes.get("private", ()),
                kept=kept,
                unread=tuple(unread),
                after_raise=after_raise,
                return_guard=return_guard,
            )
        )
        return f"{self.prefix}{SITES[len(DEFAULT_PREFIX) :]}[{len(self.sites) - 1}]"

    def at(self, op: Op) -> tuple[int, int]:
        return (op.span.line, op.span.col) if op.span else (self.fn.span.line, 0)

    def line(self, text: str, op: Op) -> None:
        self.emitter.line(text, *self.at(op))

    def region(self, region: Region) -> None:
        for op in region.ops:
            rule = RULES.get(type(op))
            if rule is None:
                raise NotImplementedError(f"no lowering rule for '{op.name}'")
            for comment in op.attributes.get("comments", ()):
                self.line(comment, op)
            rule(self, op)

    def tuple_of(self, values) -> str:
        names = [self.ref(v) for v in values]
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    def targets(self, values) -> str:
        """Assignment target for results; ``_`` where a result is unused by name."""
        return self.tuple_of(values)


def lower_function(fn: Function, filename: str = "<unknown>") -> LoweredSource:
    """Lower a verified, folded IR function to Python source lines."""
    from laxify.runtime.lowering import rules  # noqa: F401  (registers the rules)

    low = Lowerer(fn, filename)
    low.undefined = {id(r) for op in fn.walk() if isinstance(op, UndefOp) for r in op.results}
    low.may_be_undefined = bool(low.undefined)
    low.cells = frozenset(fn.attributes.get("cells", ()))
    low.prefix = fn.attributes.get("prefix", DEFAULT_PREFIX)
    for op in fn.walk():
        for k, v in enumerate(op.operands):
            low.uses[id(v)] += 1
            low.users.setdefault(id(v), []).append((op, k))
        if isinstance(op, WhileOp):
            low.tests.add(id(op.regions[0].terminator))
        elif isinstance(op, CondOp):
            low.tests.update(id(t.terminator) for t in op.tests)
    line, col = fn.span.line, fn.span.col
    returns = fn.attributes.get("returns_code")
    header = f"def {fn.name}({fn.attributes.get('params_code', '')})" + (f" -> {returns}" if returns else "")
    low.emitter.verbatim(header + ":", line, col)
    low.emitter.depth += 1
    start = len(low.emitter.lines)
    for name, at_line, at_col in fn.attributes.get("numpy_params", ()):
        # A parameter whose array the function changes in place: a NumPy array given for it
        # makes the function run as Python (runtime/writeback.py ``numpy_in_place``).
        site = low.site(None, "in-place change", (name,), at=(at_line, at_col))
        low.emitter.line(f"{low.runtime}.numpy_in_place({site}, {name})", line, col)
    low.region(fn.body)
    if len(low.emitter.lines) == start:
        low.emitter.line("pass", line, col)
    low.emitter.depth -= 1
    return LoweredSource(fn.name, low.emitter, low.sites, tuple(sorted(low.cells)), low.prefix)


def _holds_int_ops(op: Op) -> bool:
    """Whether ``op``'s regions (at any depth) hold int arithmetic routed through ``python_op``
    (transpiler/converters/int_arithmetic.py)."""
    for region in op.regions:
        for inner in region.ops:
            if ".python_op(" in (inner.attributes.get("code") or "") or _holds_int_ops(inner):
                return True
    return False
