"""Random well-formed Python functions over int32/float32 scalars and small vectors.

``programs()`` is a Hypothesis strategy of :class:`Program`: the source text of a module
(``import``s, a few module-level helpers, and ``f(x, y, a, k)``) plus input tuples for ``f``.
Statements are built from small pieces (one method per construct) that each return source
lines; the choices are Hypothesis draws, so a failing program shrinks to a minimal one.

Every generated program is well-formed eagerly and is one static program by construction:

* it terminates: ``while`` loops are bounded by a counter compared with a literal (or with
  ``k``, an input kept in ``0..5``), the counter incremented first in the body;
* values stay small and exact in float32 (inputs and literals are multiples of 0.5; only
  ``+``, ``-``, ``*`` by small integers, ``floor``, ``abs``, ``min``/``max`` and ``clip``), so
  eager and compiled runs take the same branches and agree exactly;
* every variable has one kind (float scalar, int scalar, float vector of the input length)
  and is assigned before the body, so traced branches and loop carries have one structure;
* Python lists only change length outside loops, or by the same amount in every branch of
  an ``if``; a list appended to in a loop is a static-trip-count loop that appends exactly
  once per iteration and is never left early (the documented non-static classes, see
  docs/semantics.md, "Fuzzing").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

from hypothesis import strategies as st

FLOAT, INT, VEC = "float", "int", "vec"
FLOAT_LIMIT, INT_LIMIT = 64.0, 1000
MAX_DEPTH = 3

# Constructs of the classes of known laxify bugs the lead is fixing (see campaign --help):
PRELUDE = "# jax and jnp (jax.numpy) are in this module's namespace\n"

# The name of f's int-overflow witness (stmt_int_overflow), and the placeholders for it while
# the body is drawn (kept only when the program has the feature).
BIG, BIG_INIT, BIG_RETURN = "big", "\0big-init", "\0big-return"

# Features a campaign may leave out (LAXIFY_FUZZ_AVOID): earlier known bugs, and `raise`, whose
# open failure classes (docs/semantics.md, "Exceptions") a campaign about something else avoids.
KNOWN_FEATURES = ("loop_else_jump", "and_or_value", "closure_in_loop", "return_in_loop", "raise", "python_stmt")


@dataclass(frozen=True)
class Expr:
    """A source expression of one kind, with an upper bound of its absolute value."""

    src: str
    kind: str
    bound: float = math.inf


@dataclass(frozen=True)
class Var:
    """A name in scope: its kind, its bound, and whether statements may assign it."""

    name: str
    kind: str
    bound: float
    writable: bool = True
    accumulator: bool = False


@dataclass(frozen=True)
class Loop:
    """An enclosing loop: whether it appends to a list (so it must not be left early)."""

    appends: bool = False


@dataclass(frozen=True)
class Scope:
    """What a statement may read, write and jump to at its position."""

    vars: tuple[Var, ...]
    funcs: tuple[tuple[str, tuple[str, ...], str], ...]  # (name, parameter kinds, result kind)
    loops: tuple[Loop, ...] = ()
    returns: tuple[str, ...] = (FLOAT,)
    main: bool = True
    depth: int = 0
    in_append_loop: bool = False  # somewhere inside a loop that appends (no `return`)
    jumps: bool = True  # False inside branches that must reach their end (balanced lists)
    top_level: bool = True  # straight-line code of f's body: lists may change length
    lists: tuple[tuple[str, int], ...] = ()  # fixed-length float lists and their lengths
    has_dict: bool = False
    has_tuple: bool = False
    in_loop_body: bool = False
    in_loop_else: bool = False  # jumps here leave the enclosing loop from its `else:`
    base: str = "x"  # a float vector of the input length (f's `x`, a helper's first parameter)
    args: bool = True  # f's arguments `y`, `a`, `k` are in scope

    @property
    def small_int(self) -> str:
        """A traced int in 0..5 (a loop bound)."""
        return "k" if self.args else f"(jnp.int32(jnp.abs({self.base}[0])) % 4)"

    def of(self, kind: str, *, writable: bool = False, accumulator: bool | None = None):
        return [v for v in self.vars if v.kind == kind and (v.writable or not writable)
                and (accumulator is None or v.accumulator == accumulator)]

    def add(self, var: Var) -> "Scope":
        return replace(self, vars=tuple(v for v in self.vars if v.name != var.name) + (var,))

    def nested(self, **changes) -> "Scope":
        return replace(self, depth=self.depth + 1, top_level=False, **changes)


@dataclass(frozen=True)
class Program:
    """A generated module: its source, the constructs it uses, and inputs for ``f``."""

    source: str
    features: frozenset[str]
    inputs: tuple[tuple, ...]  # (x, y, a, k) as Python lists/numbers

    def describe(self) -> str:
        lines = [self.source.rstrip(), "", "inputs (x: float32[n], y: int32[n], a: float32, k: int32):"]
        lines += [f"  {inp}" for inp in self.inputs]
        return "\n".join(lines)


@dataclass(frozen=True)
class Config:
    """Which constructs to generate and how big programs get."""

    max_statements: int = 10
    avoid: frozenset[str] = frozenset()  # KNOWN_FEATURES not to generate
    focus: frozenset[str] = frozenset()  # generated more often ("raise", "objects": LAXIFY_FUZZ_FOCUS)


def bounded(e: Expr, limit: float | None = None) -> Expr:
    """``e`` clipped to the kind's limit when its bound may exceed it."""
    if e.kind == INT:
        lim = INT_LIMIT if limit is None else limit
        return e if e.bound <= lim else Expr(f"jnp.clip({e.src}, {-int(lim)}, {int(lim)})", INT, lim)
    lim = FLOAT_LIMIT if limit is None else limit
    return e if e.bound <= lim else Expr(f"jnp.clip({e.src}, {-lim}, {lim})", e.kind, lim)


def literal(value: float, kind: str) -> Expr:
    return Expr(repr(float(value)) if kind == FLOAT else str(int(value)), kind, abs(value))


class Builder:
    """Draws one program; each ``stmt_*`` method builds one construct as source lines."""

    def __init__(self, draw: Callable, config: Config):
        self.draw = draw
        self.config = config
        self.features: set[str] = set()
        self.counter = 0
        self.budget = config.max_statements

    # -- helpers ---------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def int_in(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def allowed(self, feature: str) -> bool:
        return feature not in self.config.avoid

    # -- expressions -----------------------------------------------------------------

    def expr(self, kind: str, sc: Scope, depth: int = 0) -> Expr:
        """An expression of ``kind`` (leaves first, so that shrinking simplifies)."""
        return {FLOAT: self.float_expr, INT: self.int_expr, VEC: self.vec_expr}[kind](sc, depth)

    def float_leaf(self, sc: Scope) -> Expr:
        options: list[Callable[[], Expr]] = [
            lambda: literal(self.int_in(-5, 5) / 2, FLOAT),
            lambda: Expr(f"{sc.base}[{self.pick([0, 1, 2, -1])}]", FLOAT, 4.0),
        ]
        if sc.args:
            options.append(lambda: Expr("a", FLOAT, 4.0))
        for v in sc.of(FLOAT):
            options.append(lambda v=v: Expr(v.name, FLOAT, v.bound))
        for name, length in sc.lists:
            options.append(lambda name=name, length=length:
                           Expr(f"{name}[{self.pick([0, -1, length - 1])}]", FLOAT, FLOAT_LIMIT))
        if sc.has_dict:
            options.append(lambda: Expr('d["p"]', FLOAT, FLOAT_LIMIT))
        if sc.has_tuple:
            options.append(lambda: Expr("t[0]", FLOAT, FLOAT_LIMIT))
        return options[self.pick(range(len(options)))]()

    def float_expr(self, sc: Scope, depth: int) -> Expr:
        if depth >= 2 or self.int_in(0, 2) == 0:
            return self.float_leaf(sc)
        d = depth + 1
        choice = self.int_in(0, 14)
        if choice == 0:
            l, r = self.float_expr(sc, d), self.float_expr(sc, d)
            op = self.pick("+-")
            return Expr(f"({l.src} {op} {r.src})", FLOAT, l.bound + r.bound)
        if choice == 1:
            e, m = self.float_expr(sc, d), self.pick([2, -1, 3])
            return Expr(f"({e.src} * {m}.0)", FLOAT, e.bound * abs(m))
        if choice == 2:
            e = self.float_expr(sc, d)
            return Expr(f"jnp.floor({e.src} / 2.0)", FLOAT, e.bound / 2 + 1)
        if choice == 3:
            e = self.float_expr(sc, d)
            return Expr(f"jnp.abs({e.src})", FLOAT, e.bound)
        if choice == 4:
            l, r = self.float_expr(sc, d), self.float_expr(sc, d)
            fn = self.pick(["jnp.maximum", "jnp.minimum"])
            return Expr(f"{fn}({l.src}, {r.src})", FLOAT, max(l.bound, r.bound))
        if choice == 5:
            i = self.int_expr(sc, d)
            return Expr(f"jnp.float32({i.src})", FLOAT, i.bound)
        if choice == 6:
            c = self.cond(sc, d)
            l, r = self.float_expr(sc, d), self.float_expr(sc, d)
            return Expr(f"({l.src} if {c} else {r.src})", FLOAT, max(l.bound, r.bound))
        if choice == 7 and self.allowed("and_or_value"):
            self.features.add("and_or_value")
            l, r = self.float_expr(sc, d), self.float_expr(sc, d)
            return Expr(f"({l.src} {self.pick(['or', 'and'])} {r.src})", FLOAT, max(l.bound, r.bound))
        if choice == 8:
            v = self.vec_expr(sc, d)
            fn = self.pick(["jnp.sum", "jnp.max", "jnp.min"])
            return Expr(f"{fn}({v.src})", FLOAT, v.bound * (5 if fn == "jnp.sum" else 1))
        if choice == 9:
            i = self.int_expr(sc, d)
            return Expr(f"{sc.base}[{i.src} % 3]", FLOAT, 4.0)
        if choice == 10:
            called = self.call(FLOAT, sc, d)
            if called is not None:
                return called
        if choice == 11:
            l, r = bounded(self.float_expr(sc, d)), bounded(self.float_expr(sc, d))
            return Expr(f"jnp.floor({l.src} * {r.src})", FLOAT, l.bound * r.bound)
        if choice == 12:
            e = self.float_expr(sc, d)
            return Expr(f"(-{e.src})", FLOAT, e.bound)
        if choice == 13:  # Python's max/min on traced values (runtime/builtin_rules.py)
            parts = [self.float_expr(sc, d) for _ in range(self.int_in(2, 3))]
            fn = self.pick(["max", "min"])
            return Expr(f"{fn}({', '.join(p.src for p in parts)})", FLOAT, max(p.bound for p in parts))
        if choice == 14:
            v = self.vec_expr(sc, d)
            return Expr(f"{self.pick(['max', 'min'])}({v.src})", FLOAT, v.bound)
        return self.float_leaf(sc)

    def int_leaf(self, sc: Scope) -> Expr:
        options: list[Callable[[], Expr]] = [
            lambda: literal(self.int_in(-3, 5), INT),
            lambda: Expr(f"len({sc.base})", INT, 5),
        ]
        if sc.args:
            options.append(lambda: Expr("k", INT, 5))
            options.append(lambda: Expr(f"y[{self.pick([0, 1, 2, -1])}]", INT, 5))
        for v in sc.of(INT):
            options.append(lambda v=v: Expr(v.name, INT, v.bound))
        if sc.has_dict:
            options.append(lambda: Expr('d["q"]', INT, INT_LIMIT))
        if sc.has_tuple:
            options.append(lambda: Expr("t[1]", INT, INT_LIMIT))
        return options[self.pick(range(len(options)))]()

    def int_expr(self, sc: Scope, depth: int) -> Expr:
        if depth >= 2 or self.int_in(0, 2) == 0:
            return self.int_leaf(sc)
        d = depth + 1
        choice = self.int_in(0, 12)
        if choice == 0:
            l, r = self.int_expr(sc, d), self.int_expr(sc, d)
            op = self.pick("+-")
            return Expr(f"({l.src} {op} {r.src})", INT, l.bound + r.bound)
        if choice == 1:
            e, m = self.int_expr(sc, d), self.pick([2, -1, 3])
            return Expr(f"({e.src} * {m})", INT, e.bound * abs(m))
        if choice == 2:
            e, m = self.int_expr(sc, d), self.int_in(2, 5)
            return Expr(f"({e.src} % {m})", INT, m)
        if choice == 3:
            e, m = self.int_expr(sc, d), self.int_in(2, 4)
            return Expr(f"({e.src} // {m})", INT, e.bound)
        if choice == 4:
            e = bounded(self.float_expr(sc, d))
            return Expr(f"jnp.int32({e.src})", INT, e.bound)
        if choice == 5:
            c = self.cond(sc, d)
            l, r = self.int_expr(sc, d), self.int_expr(sc, d)
            return Expr(f"({l.src} if {c} else {r.src})", INT, max(l.bound, r.bound))
        if choice == 6:
            v = self.vec_expr(sc, d)
            return Expr(f"jnp.{self.pick(['argmax', 'argmin'])}({v.src})", INT, 5)
        if choice == 7 and self.allowed("and_or_value"):
            self.features.add("and_or_value")
            l, r = self.int_expr(sc, d), self.int_expr(sc, d)
            return Expr(f"({l.src} {self.pick(['or', 'and'])} {r.src})", INT, max(l.bound, r.bound))
        if choice == 8:
            called = self.call(INT, sc, d)
            if called is not None:
                return called
        if choice == 9:
            l, r = self.int_expr(sc, d), self.int_expr(sc, d)
            fn = self.pick(["jnp.maximum", "jnp.minimum"])
            return Expr(f"{fn}({l.src}, {r.src})", INT, max(l.bound, r.bound))
        if choice == 10:
            l, r = self.int_expr(sc, d), self.int_expr(sc, d)
            return Expr(f"{self.pick(['max', 'min'])}({l.src}, {r.src})", INT, max(l.bound, r.bound))
        if choice == 11:
            return Expr(f"int({self.cond(sc, d)})", INT, 1)
        return self.int_leaf(sc)

    def vec_expr(self, sc: Scope, depth: int) -> Expr:
        leaves = [Expr(sc.base, VEC, 4.0)] + [Expr(v.name, VEC, v.bound) for v in sc.of(VEC)]
        if depth >= 2 or self.int_in(0, 2) == 0:
            return leaves[self.pick(range(len(leaves)))]
        d = depth + 1
        choice = self.int_in(0, 9)
        if choice == 0:
            l, r = self.vec_expr(sc, d), self.vec_expr(sc, d)
            return Expr(f"({l.src} {self.pick('+-')} {r.src})", VEC, l.bound + r.bound)
        if choice == 1:
            l, r = self.vec_expr(sc, d), self.float_expr(sc, d)
            return Expr(f"({l.src} + {r.src})", VEC, l.bound + r.bound)
        if choice == 2:
            e, m = self.vec_expr(sc, d), self.pick([2, -1, 3])
            return Expr(f"({e.src} * {m}.0)", VEC, e.bound * abs(m))
        if choice == 3:
            c, l, r = self.float_expr(sc, d), self.vec_expr(sc, d), self.vec_expr(sc, d)
            return Expr(f"jnp.where({sc.base} > {c.src}, {l.src}, {r.src})", VEC, max(l.bound, r.bound))
        if choice == 4:
            e = self.vec_expr(sc, d)
            return Expr(f"{e.src}[::-1]", VEC, e.bound)
        if choice == 5:
            e = self.vec_expr(sc, d)
            return Expr(f"jnp.roll({e.src}, {self.pick([1, -1])})", VEC, e.bound)
        if choice == 6 and sc.args:
            return Expr("(y * 1.0)", VEC, 5.0)
        if choice == 7:
            e, i, v = self.vec_expr(sc, d), self.int_expr(sc, d), bounded(self.float_expr(sc, d))
            return Expr(f"{e.src}.at[{i.src} % 3].set({v.src})", VEC, max(e.bound, v.bound))
        if choice == 8:
            e = self.vec_expr(sc, d)
            return Expr(f"jnp.cumsum({e.src})", VEC, e.bound * 5)
        return leaves[0]

    def call(self, kind: str, sc: Scope, depth: int) -> Expr | None:
        """A call of a helper or nested function returning ``kind``, if one is in scope."""
        funcs = [fn for fn in sc.funcs if fn[2] == kind]
        if not funcs:
            return None
        name, params, _ = funcs[self.pick(range(len(funcs)))]
        args = ", ".join(bounded(self.expr(p, sc, depth + 1)).src for p in params)
        return Expr(f"{name}({args})", kind)

    def cond(self, sc: Scope, depth: int = 0) -> str:
        """A boolean condition: traced (on arrays), static (shapes), or on Python ints."""
        d = depth + 1
        choice = self.int_in(0, 11) if depth < 2 else self.int_in(0, 3)
        if choice == 0:
            l, r = self.float_expr(sc, d), self.float_expr(sc, d)
            return f"{l.src} {self.pick(['<', '>', '<=', '>=', '==', '!='])} {r.src}"
        if choice == 1:
            i = self.int_expr(sc, d)
            return f"{i.src} % {self.int_in(2, 3)} == {self.int_in(0, 1)}"
        if choice == 2:
            i, j = self.int_expr(sc, d), self.int_expr(sc, d)
            return f"{i.src} {self.pick(['<', '>', '==', '!='])} {j.src}"
        if choice == 3:
            b = sc.base
            return self.pick([f"{b}.ndim == 1", f"{b}.shape[0] > 9", f"len({b}) >= 3", f"{b}.size < 2"])
        if choice == 4:
            lo = self.int_in(-4, 1)
            e = self.float_expr(sc, d)
            return f"{lo}.0 < {e.src} <= {lo + self.int_in(1, 5)}.0"
        if choice == 5:
            return f"not ({self.cond(sc, d)})"
        if choice in (6, 7):
            return f"({self.cond(sc, d)}) {self.pick(['and', 'or'])} ({self.cond(sc, d)})"
        if choice == 8:
            v, e = self.vec_expr(sc, d), self.float_expr(sc, d)
            return f"jnp.{self.pick(['any', 'all'])}({v.src} > {e.src})"
        if choice == 9:
            i = self.int_expr(sc, d)
            return f"0 <= {i.src} < {self.int_in(1, 4)}"
        if choice == 10:  # Python's any/all/bool/in on traced values
            a, b = self.cond(sc, d), self.cond(sc, d)
            return self.pick([f"{self.pick(['any', 'all'])}([{a}, {b}])", f"bool({a})",
                              f"{self.float_expr(sc, d).src} {self.pick(['in', 'not in'])} "
                              f"[{self.float_expr(sc, d).src}, {self.float_expr(sc, d).src}]"])
        return "True" if self.flag() else "False"

    # -- statements ------------------------------------------------------------------

    def block(self, sc: Scope, ind: int, max_len: int = 3) -> list[str]:
        """A non-empty statement list; it ends after a jump (later lines would be dead)."""
        lines: list[str] = []
        n = self.int_in(1, max_len)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            new_lines, sc, jumped = self.stmt(sc, ind)
            lines += new_lines
            if jumped:
                break
        return lines or ["    " * ind + "pass"]

    def stmt(self, sc: Scope, ind: int) -> tuple[list[str], Scope, bool]:
        """One statement: (its lines, the scope after it, whether it always jumps)."""
        simple = [self.stmt_assign, self.stmt_aug, self.stmt_tuple_assign, self.stmt_print,
                  self.stmt_container, self.stmt_python]
        compound = [self.stmt_if, self.stmt_for_range, self.stmt_for_array, self.stmt_while,
                    self.stmt_match, self.stmt_append_loop, self.stmt_nested_def,
                    self.stmt_balanced_list]
        jumps = [self.stmt_break, self.stmt_continue, self.stmt_return, self.stmt_raise]
        options = simple + (compound if sc.depth < MAX_DEPTH else []) + jumps
        if "raise" in self.config.focus:  # a campaign on the error channel: raises, validators
            options += [self.stmt_raise] * 4
        chosen = options[self.int_in(0, len(options) - 1)]
        result = chosen(sc, ind)
        if result is None:
            return self.stmt_assign(sc, ind)
        return result

    def pad(self, ind: int) -> str:
        return "    " * ind

    def stmt_assign(self, sc: Scope, ind: int):
        targets = sc.of(FLOAT, writable=True) + sc.of(INT, writable=True) + sc.of(VEC, writable=True)
        if not targets:
            return [], sc, False
        v = targets[self.pick(range(len(targets)))]
        e = bounded(self.expr(v.kind, sc), FLOAT_LIMIT if v.kind != INT else INT_LIMIT)
        return [f"{self.pad(ind)}{v.name} = {e.src}"], sc, False

    def stmt_aug(self, sc: Scope, ind: int):
        accs = sc.of(FLOAT, writable=True, accumulator=True) + sc.of(INT, writable=True, accumulator=True)
        others = sc.of(FLOAT, writable=True, accumulator=False) + sc.of(INT, writable=True, accumulator=False)
        if accs and self.flag():
            v = accs[self.pick(range(len(accs)))]
            e = bounded(self.expr(v.kind, sc), 8.0 if v.kind == FLOAT else 8)
            return [f"{self.pad(ind)}{v.name} {self.pick(['+=', '-='])} {e.src}"], sc, False
        if not others:
            return None
        v = others[self.pick(range(len(others)))]
        op = self.pick(["*= -1.0", "*= -1.0"] if v.kind == FLOAT else ["*= -1", "//= 2", "%= 5"])
        return [f"{self.pad(ind)}{v.name} {op}"], sc, False

    def stmt_tuple_assign(self, sc: Scope, ind: int):
        targets = sc.of(FLOAT, writable=True) + sc.of(INT, writable=True)
        if len(targets) < 2:
            return None
        i = self.pick(range(len(targets)))
        j = self.pick([n for n in range(len(targets)) if n != i])
        p, q = targets[i], targets[j]
        if p.kind == q.kind and not (p.accumulator or q.accumulator) and self.flag():
            return [f"{self.pad(ind)}{p.name}, {q.name} = {q.name}, {p.name}"], sc, False
        if sc.has_tuple and p.kind == FLOAT and q.kind == INT and not (p.accumulator or q.accumulator) \
                and self.flag():
            return [f"{self.pad(ind)}{p.name}, {q.name} = t"], sc, False
        l, r = bounded(self.expr(p.kind, sc)), bounded(self.expr(q.kind, sc))
        return [f"{self.pad(ind)}{p.name}, {q.name} = {l.src}, {r.src}"], sc, False

    def stmt_print(self, sc: Scope, ind: int):
        if not sc.main or not self.allowed("overflow_print") and "int_overflow" in self.features:
            return None
        self.features.add("print")
        if "int_overflow" in self.features:
            self.features.add("overflow_print")
        arg = self.pick(["x[0]", "a", "k", "x"])
        e = self.expr(self.pick([FLOAT, INT, VEC]), sc)
        return [f'{self.pad(ind)}print("p{self.fresh("")}", {arg}, {e.src})'], sc, False

    def stmt_container(self, sc: Scope, ind: int):
        """Writes into the fixed list, the dict or the tuple carry (structure unchanged)."""
        options = []
        for name, length in sc.lists:
            options.append(f"{name}[{self.pick([0, -1])}] = {bounded(self.float_expr(sc, 0)).src}")
        if sc.has_dict:
            key, kind = self.pick([("p", FLOAT), ("q", INT)])
            options.append(f'd["{key}"] = {bounded(self.expr(kind, sc)).src}')
        if sc.has_tuple:
            options.append(f"t = ({bounded(self.float_expr(sc, 0)).src}, {bounded(self.int_expr(sc, 0)).src})")
        if not options:
            return None
        return [self.pad(ind) + options[self.pick(range(len(options)))]], sc, False

    def stmt_if(self, sc: Scope, ind: int):
        inner = sc.nested()
        lines = [f"{self.pad(ind)}if {self.cond(sc)}:"] + self.block(inner, ind + 1)
        for _ in range(self.int_in(0, 2)):
            lines += [f"{self.pad(ind)}elif {self.cond(sc)}:"] + self.block(inner, ind + 1)
        if self.flag():
            lines += [f"{self.pad(ind)}else:"] + self.block(inner, ind + 1)
        return lines, sc, False

    def loop_scope(self, sc: Scope, appends: bool = False) -> Scope:
        return sc.nested(loops=sc.loops + (Loop(appends),), in_loop_body=True, in_loop_else=False,
                         in_append_loop=sc.in_append_loop or appends)

    def loop_else(self, sc: Scope, ind: int) -> list[str]:
        """An optional ``else:`` clause; its jumps belong to the enclosing loop."""
        if not self.flag():
            return []
        inner = sc.nested(in_loop_else=True)
        return [f"{self.pad(ind)}else:"] + self.block(inner, ind + 1, 2)

    def stmt_for_range(self, sc: Scope, ind: int):
        i = self.fresh("i")
        traced = self.flag()
        if traced:
            k = sc.small_int
            bounds = self.pick([k, f"1, {k} + 1", f"{k}, 0, -1", f"0, {k}, 2"] + (["y[0] % 4"] if sc.args else []))
        else:
            n = self.int_in(0, 4)
            bounds = self.pick([f"{n}", f"1, {n}", f"{n}, 0, -1", f"0, {n + 1}, 2"])
        pre: list[str] = []
        after = sc
        if self.flag():  # the target is assigned before and read after the loop
            pre = [f"{self.pad(ind)}{i} = 0"]
            after = sc.add(Var(i, INT, 5, writable=False))
        body = self.loop_scope(sc).add(Var(i, INT, 5, writable=False))
        lines = pre + [f"{self.pad(ind)}for {i} in range({bounds}):"] + self.block(body, ind + 1)
        return lines + self.loop_else(sc, ind), after, False

    def stmt_for_array(self, sc: Scope, ind: int):
        v = self.fresh("e")
        form = self.int_in(0, 4)
        body = self.loop_scope(sc)
        if form == 3 and not sc.args:
            form = 0
        if form == 0:
            head, body = f"for {v} in {sc.base}:", body.add(Var(v, FLOAT, 4.0, writable=False))
        elif form == 1:
            vecs = sc.of(VEC)
            src = vecs[self.pick(range(len(vecs)))].name if vecs else sc.base
            head, body = f"for {v} in {src}:", body.add(Var(v, FLOAT, FLOAT_LIMIT, writable=False))
        elif form == 2:
            j = self.fresh("j")
            head = f"for {j}, {v} in enumerate({sc.base}):"
            body = body.add(Var(j, INT, 5, writable=False)).add(Var(v, FLOAT, 4.0, writable=False))
        elif form == 3:
            w = self.fresh("w")
            head = f"for {v}, {w} in zip(x, y):"
            body = body.add(Var(v, FLOAT, 4.0, writable=False)).add(Var(w, INT, 5, writable=False))
        else:
            head = f"for {v} in (1.0, -0.5, 2.0):"
            body = body.add(Var(v, FLOAT, 2.0, writable=False))
        lines = [f"{self.pad(ind)}{head}"] + self.block(body, ind + 1)
        return lines + self.loop_else(sc, ind), sc, False

    def stmt_while(self, sc: Scope, ind: int):
        w = self.fresh("n")
        limit = self.int_in(0, 5)
        form = self.int_in(0, 3)
        body = self.loop_scope(sc).add(Var(w, INT, 10, writable=False))
        after = sc.add(Var(w, INT, 10, writable=False))
        p = self.pad(ind)
        if form == 0:  # a Python counter meeting a traced exit in the condition
            c = self.cond(sc)
            test = f"{w} < {limit} and ({c})" if self.flag() else f"({c}) and {w} < {limit}"
            lines = [f"{p}{w} = 0", f"{p}while {test}:", f"{p}    {w} += 1"]
            lines += self.block(body, ind + 1) + self.loop_else(sc, ind)
        elif form == 1:  # `while True` left by `break`
            lines = [f"{p}{w} = 0", f"{p}while True:", f"{p}    {w} += 1",
                     f"{p}    if {w} > {limit}:", f"{p}        break"]
            lines += self.block(body, ind + 1)
        elif form == 2:  # a traced bound
            lines = [f"{p}{w} = 0", f"{p}while {w} < {sc.small_int}:", f"{p}    {w} += 1"]
            lines += self.block(body, ind + 1) + self.loop_else(sc, ind)
        else:  # a traced start
            lines = [f"{p}{w} = {sc.small_int}", f"{p}while {w} < 6:", f"{p}    {w} = {w} + 1"]
            lines += self.block(body, ind + 1) + self.loop_else(sc, ind)
        return lines, after, False

    def stmt_match(self, sc: Scope, ind: int):
        subject = self.int_expr(sc, 1)
        inner = sc.nested()
        lines = [f"{self.pad(ind)}match {subject.src}:"]
        values = self.draw(st.lists(st.integers(-1, 3), min_size=1, max_size=3, unique=True))
        for value in values:
            pattern = f"{value} | {value + 5}" if self.flag() else str(value)
            lines += [f"{self.pad(ind + 1)}case {pattern}:"] + self.block(inner, ind + 2, 2)
        if self.flag():
            lines += [f"{self.pad(ind + 1)}case _:"] + self.block(inner, ind + 2, 2)
        return lines, sc, False

    def stmt_append_loop(self, sc: Scope, ind: int):
        """``acc = []``; a static-trip-count loop appending once per iteration; a use of acc."""
        acc = self.fresh("acc")
        i = self.fresh("i")
        p = self.pad(ind)
        if self.flag():
            head = f"for {i} in range({self.int_in(1, 4)}):"
            body = self.loop_scope(sc, appends=True).add(Var(i, INT, 5, writable=False))
        else:
            head = f"for {i} in {sc.base}:"
            body = self.loop_scope(sc, appends=True).add(Var(i, FLOAT, 4.0, writable=False))
        item = self.pick([FLOAT, VEC])
        lines = [f"{p}{acc} = []", f"{p}{head}",
                 f"{p}    {acc}.append({bounded(self.expr(item, body)).src})"]
        readers = body.of(FLOAT, writable=True, accumulator=False)
        if readers and self.flag():
            # Read the list inside the loop that builds it, only items it already has there:
            # the item just appended, the first one, and (range loops) the one of this iteration.
            t = readers[self.pick(range(len(readers)))]
            index = self.pick(["-1", "0"] + ([i] if head.startswith(f"for {i} in range") else []))
            self.features.add("list_read_in_loop")
            lines.append(f"{p}    {t.name} = jnp.clip({t.name} + jnp.sum({acc}[{index}]), "
                         f"-{FLOAT_LIMIT}, {FLOAT_LIMIT})")
        lines += self.block(body, ind + 1, 2)
        targets = sc.of(FLOAT, writable=True, accumulator=False)
        ints = sc.of(INT, writable=True, accumulator=False)
        if ints and self.flag():
            t = ints[self.pick(range(len(ints)))]
            lines.append(f"{p}{t.name} = len({acc}) + {bounded(self.int_expr(sc, 1), 100).src}")
        elif targets:
            t = targets[self.pick(range(len(targets)))]
            use = self.pick([f"jnp.sum(jnp.stack({acc}))", f"jnp.sum({acc}[-1])", f"jnp.max({acc}[0])"])
            lines.append(f"{p}{t.name} = jnp.clip({use}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
        return lines, sc, False

    def stmt_python(self, sc: Scope, ind: int):
        """A statement that must stay Python (the split fallback runs it): a string built from a
        traced value, or a list grown to a traced length; its length goes into an int name, so
        the result depends on it. ``to_static`` falls back (FallbackWarning) and splits around
        it; the oracle compares with eager Python."""
        ints = sc.of(INT, writable=True, accumulator=False)
        if not sc.main or not ints or not self.allowed("python_stmt"):
            return None
        self.features.add("python_stmt")
        t = ints[self.pick(range(len(ints)))]
        p = self.pad(ind)
        if self.flag():
            e = bounded(self.expr(FLOAT, sc))
            return [f"{p}{t.name} = len(str(int(jnp.nan_to_num({e.src})))) + {t.name} % 5"], sc, False
        grown, w = self.fresh("grown"), self.fresh("w")
        item = bounded(self.expr(FLOAT, sc))
        return [f"{p}{grown} = []", f"{p}{w} = 0", f"{p}while {w} < {sc.small_int}:",
                f"{p}    {grown}.append({item.src})", f"{p}    {w} += 1",
                f"{p}{t.name} = len({grown}) + {t.name} % 5"], sc, False

    def stmt_nested_def(self, sc: Scope, ind: int):
        """A nested function or lambda (a closure over the current names), called later."""
        name = self.fresh("g")
        if sc.in_loop_body:
            if not self.allowed("closure_in_loop"):
                return None
            self.features.add("closure_in_loop")
        p = self.pad(ind)
        inner = replace(sc, vars=sc.vars + (Var("z", FLOAT, FLOAT_LIMIT, writable=False),),
                        loops=(), returns=(FLOAT,), main=False, depth=MAX_DEPTH - 1,
                        in_append_loop=False, jumps=True, top_level=False, lists=(),
                        in_loop_body=False)
        if self.flag():
            lines = [f"{p}{name} = lambda z: {self.float_expr(inner, 0).src}"]
        else:
            inner = replace(inner, vars=tuple(Var(v.name, v.kind, v.bound, writable=False)
                                              for v in inner.vars))
            lines = [f"{p}def {name}(z):"]
            if self.flag():
                lines += [f"{p}    if {self.cond(inner, 1)}:",
                          f"{p}        return {self.float_expr(inner, 1).src}"]
            lines.append(f"{p}    return {self.float_expr(inner, 0).src}")
        return lines, replace(sc, funcs=sc.funcs + ((name, (FLOAT,), FLOAT),)), False

    def stmt_balanced_list(self, sc: Scope, ind: int):
        """List append/pop at f's top level, or in every branch of an ``if`` there."""
        if not (sc.top_level and sc.lists):
            return None
        name, length = sc.lists[0]
        p = self.pad(ind)
        grow = length < 2 or (length < 5 and self.flag())
        op = (lambda s: f"{name}.append({bounded(self.float_expr(s, 0)).src})") if grow \
            else (lambda s: f"{name}.pop()")
        after = replace(sc, lists=((name, length + (1 if grow else -1)),))
        self.features.add("list_mut")
        if self.flag():
            return [p + op(sc)], after, False
        inner = sc.nested(jumps=False)
        lines = [f"{p}if {self.cond(sc)}:"] + self.block(inner, ind + 1, 2) + [f"{p}    {op(sc)}",
                 f"{p}else:"] + self.block(inner, ind + 1, 2) + [f"{p}    {op(sc)}"]
        return lines, after, False

    def loop_jump_allowed(self, sc: Scope) -> bool:
        if not sc.loops or not sc.jumps:
            return False
        if sc.in_loop_else:
            if not self.allowed("loop_else_jump"):
                return False
            self.features.add("loop_else_jump")
        return True

    def stmt_break(self, sc: Scope, ind: int):
        if sc.loops and sc.loops[-1].appends or not self.loop_jump_allowed(sc):
            return None
        return [f"{self.pad(ind)}break"], sc, True

    def stmt_continue(self, sc: Scope, ind: int):
        if not self.loop_jump_allowed(sc):
            return None
        return [f"{self.pad(ind)}continue"], sc, True

    def stmt_return(self, sc: Scope, ind: int):
        if sc.in_append_loop or not sc.jumps:
            return None
        if sc.loops:
            self.features.add("return_in_loop")
        return [f"{self.pad(ind)}return {self.return_value(sc)}"], sc, True

    def stmt_raise(self, sc: Scope, ind: int):
        """``raise`` of a builtin or the module's own exception class, with a literal message or
        one that formats values of the run; under whatever condition encloses it (traced or
        static), in ``f``, a helper or a loop."""
        if sc.in_append_loop or not sc.jumps or not self.allowed("raise"):
            return None  # like a `return`: it may leave an appending loop early
        self.features.add("raise")
        kind = self.pick(["ValueError", "KeyError", "FuzzError"])
        tag = self.fresh("r")
        targets = sc.of(FLOAT, writable=True)
        if targets and not self.int_in(0, 2) and (not sc.in_loop_body or self.allowed("closure_in_loop")):
            # A validator: a function that raises for some values of its argument (a traced
            # condition in the callee), called here (in a branch, a loop body, ...); its caller
            # must stop where it raised. Not a jump: the block goes on.
            name, p = self.fresh("check"), self.pad(ind)
            target = targets[self.pick(range(len(targets)))]
            bound = self.pick(["-1.0", "0.0", "1.5"])
            lines = [f"{p}def {name}(v):", f"{p}    if v < {bound}:",
                     f"{p}        raise {kind}(f\"fuzz {tag}: {{v}}\")", f"{p}    return v + 0.5"]
            call = f"{name}({bounded(self.expr(FLOAT, sc), FLOAT_LIMIT - 1.0).src})"
            # Where the call stands: a statement, a side of a conditional expression, an
            # `and`/`or` operand, a one-line `if`; its caller must stop where it raised in each.
            where = self.int_in(0, 5)
            if where == 3:
                other = bounded(self.expr(FLOAT, sc), FLOAT_LIMIT - 1.0).src
                lines.append(f"{p}{target.name} = ({call} if {self.cond(sc)} else {other})")
            elif where == 4:
                op = self.pick(["and", "or"])
                lines.append(f"{p}{target.name} = jnp.where({self.cond(sc)} {op} {call} > 0.0, 1.0, -1.0)")
            elif where == 5:
                lines.append(f"{p}if {self.cond(sc)}: {target.name} = {call}")
            else:
                lines.append(f"{p}{target.name} = {call}")
            return lines, sc, False
        if self.flag():
            e = self.expr(self.pick([FLOAT, INT]), sc)
            # Python before 3.12 cannot reuse the f-string's quote inside its fields (`d["p"]`).
            quote = "'" if '"' in e.src else '"'
            message = f'f{quote}fuzz {tag}: {{{e.src}}}{quote}'
        else:
            message = f'"fuzz {tag}"'
        return [f"{self.pad(ind)}raise {kind}({message})"], sc, True

    def return_value(self, sc: Scope) -> str:
        value = ", ".join(self.expr(kind, sc).src for kind in sc.returns)
        # f's returns end with the int-overflow witness when the program makes one (see
        # stmt_int_overflow: the placeholder becomes `, big` or nothing once the body is built)
        return value + BIG_RETURN if sc.main else value

    # -- functions -------------------------------------------------------------------

    def helper(self, index: int, funcs) -> tuple[list[str], tuple]:
        """A module-level helper with its own control flow."""
        name = f"helper{index}"
        params = (VEC,) + tuple(self.pick([FLOAT, INT]) for _ in range(self.int_in(0, 1)))
        result = self.pick([FLOAT, INT])
        pnames = [f"q{n}" for n in range(len(params))]
        vars_ = tuple(Var(pn, kind, INT_LIMIT if kind == INT else FLOAT_LIMIT, writable=False)
                      for pn, kind in zip(pnames, params))[1:]
        vars_ += (Var("hs", FLOAT, FLOAT_LIMIT), Var("hc", INT, INT_LIMIT))
        sc = Scope(vars=vars_, funcs=funcs, returns=(result,), main=False, top_level=False,
                   base="q0", args=False)
        first = [p for p in pnames if params[pnames.index(p)] == FLOAT]
        lines = [f"def {name}({', '.join(pnames)}):",
                 f"    hs = {'jnp.clip(' + first[0] + ', -64.0, 64.0)' if first else '0.5'}",
                 "    hc = 0"]
        self.budget = max(2, self.config.max_statements // 3)
        lines += self.block(sc, 1, 3)
        lines.append(f"    return {self.expr(result, sc).src}")
        return lines, (name, params, result)

    def build(self, inputs) -> Program:
        funcs: tuple = ()
        # `jax` and `jnp` are put into the module's namespace by the oracle, not imported:
        # see oracle.load (an `import` line trips a laxify bug, /tmp/fuzz_findings.md F1).
        module = [PRELUDE]
        for index in range(self.int_in(0, 2)):
            lines, sig = self.helper(index, funcs)
            funcs += (sig,)
            module += lines + ["", ""]
        returns = tuple(self.pick([FLOAT, INT, VEC]) for _ in range(self.int_in(1, 3)))
        init = {
            FLOAT: ["0.0", "a", "x[1]", "jnp.float32(1.5)"],
            INT: ["0", "k", "y[0]", "jnp.int32(2)"],
            VEC: ["x", "jnp.zeros_like(x)", "(x * 2.0)"],
        }
        body = ["def f(x, y, a, k):"]
        vars_: list[Var] = []
        for name, kind, acc in [("s0", FLOAT, False), ("s1", FLOAT, False), ("u0", FLOAT, True),
                                ("c0", INT, False), ("m0", INT, True), ("v0", VEC, False)]:
            if name in ("s1", "u0", "m0") and not self.flag():
                continue
            body.append(f"    {name} = {self.pick(init[kind])}")
            vars_.append(Var(name, kind, math.inf if acc else
                             (FLOAT_LIMIT if kind != INT else INT_LIMIT), accumulator=acc))
        sc = Scope(vars=tuple(vars_), funcs=funcs, returns=returns)
        if self.flag():
            body.append("    lst = [x[0], 0.5]")
            sc = replace(sc, lists=(("lst", 2),))
        if self.flag():
            body.append('    d = {"p": a, "q": k}')
            sc = replace(sc, has_dict=True)
        if self.flag():
            body.append("    t = (a, 0)")
            sc = replace(sc, has_tuple=True)
        body.append(BIG_INIT)
        self.budget = self.config.max_statements
        while self.budget > 0:
            lines, sc, jumped = self.stmt(sc, 1)
            self.budget -= 1
            body += lines
            if jumped or self.int_in(0, 3) == 0:
                break
        if not jumped:
            body.append(f"    return {self.return_value(sc)}")
        big = "int_overflow" in self.features
        body = [line.replace(BIG_RETURN, f", {BIG}" if big else "") for line in body
                if line != BIG_INIT or big]
        body = [f"    {BIG} = 0" if line == BIG_INIT else line for line in body]
        if "raise" in self.features:
            module[1:1] = ["class FuzzError(Exception):", "    pass", "", ""]
        source = "\n".join(module + body) + "\n"
        return Program(source, frozenset(self.features), inputs)


def _inputs(n: int):
    half = st.integers(-8, 8).map(lambda i: i / 2)
    return st.tuples(st.lists(half, min_size=n, max_size=n), st.lists(st.integers(-5, 5), min_size=n, max_size=n),
                     half, st.integers(0, 5))


@st.composite
def programs(draw, config: Config = Config()) -> Program:
    """A random well-formed program with three input tuples of one length (3 to 5)."""
    n = draw(st.integers(3, 5))
    inputs = tuple(draw(st.lists(_inputs(n), min_size=3, max_size=3)))
    return Builder(draw, config).build(inputs)


# -- Python's object semantics ------------------------------------------------------------
# Aliases of the list and dict (`b = lst`, updated through one name under a traced `if` or
# loop, read through both), helpers changing a list argument in place under their own traced
# `if`, effects inside conditional expressions and `and`/`or` operands (under conditions
# Python decides: a traced one is a documented fallback), identity tests on bool flags
# (`while done is False`, `flag is True`, `~flag`), and list operators after an append loop
# (`acc * 2`, `acc + acc`, slicing). Each has its feature name, so that a campaign can leave
# it out (LAXIFY_FUZZ_AVOID); one statement in six is drawn from these.

OBJECT_FEATURES = ("alias", "mutating_helper", "effect_in_expression", "flag_identity", "list_operators")
KNOWN_FEATURES = KNOWN_FEATURES + OBJECT_FEATURES
_STATIC_CONDS = ("len({b}) >= 3", "{b}.shape[0] > 9", "{b}.ndim == 1", "len({b}) < 4")


def _object_target(self: Builder, sc: Scope, kind: str):
    found = sc.of(kind, writable=True, accumulator=False)
    return found[self.pick(range(len(found)))] if found else None


def _guarded_block(self: Builder, sc: Scope, ind: int, inner: list[str]) -> list[str]:
    """``inner`` (lines at ``ind + 1``) under a traced ``if`` or in a traced ``for``."""
    p = self.pad(ind)
    if self.flag():
        return [f"{p}if {self.cond(sc)}:"] + inner
    i = self.fresh("i")
    return [f"{p}for {i} in range({sc.small_int}):"] + inner


def _alias_lines(self: Builder, b: str, name: str, p: str) -> list[str]:
    """``b`` made another name of ``name``'s object: ``b = name``, by unpacking, or through a
    call of an identity helper (no assignment ``b = name`` shows it)."""
    form = self.int_in(0, 2)
    if form == 0:
        return [f"{p}{b} = {name}"]
    if form == 1:
        return [f"{p}{b}, _ = {name}, 0"]
    helper = self.fresh("same")
    return [f"{p}def {helper}(v):", f"{p}    return v", f"{p}{b} = {helper}({name})"]


def stmt_alias(self: Builder, sc: Scope, ind: int):
    """``b = lst`` (or ``e = d``, or through unpacking or a call) in ``f``'s straight-line code,
    an update through one name under a traced construct, and a read through both names after
    it (under a traced ``if``, sometimes in the branch too)."""
    target = _object_target(self, sc, FLOAT)
    if (target is None or not sc.top_level or getattr(self, "returned", False) or not (sc.lists or sc.has_dict)
            or not self.allowed("alias")):
        return None  # (inside a branch or a loop body the list is an object it does not carry)
    self.features.add("alias")
    b, p = self.fresh("al"), self.pad(ind)
    value = bounded(self.float_expr(sc, 1), 8.0).src
    if sc.lists and (not sc.has_dict or self.flag()):
        name, length = sc.lists[0]
        i, j = self.int_in(-length, length - 1), self.int_in(-length, length - 1)
        through, other = (b, name) if self.flag() else (name, b)
        update = f"{through}[{i}] = jnp.clip({through}[{i}] + {value}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})"
        read = f"{other}[{i}] + {b}[{j}] + {name}[{j}]"
        lines = _alias_lines(self, b, name, p)
    else:
        through, other = (b, "d") if self.flag() else ("d", b)
        update = f'{through}["p"] = jnp.clip({through}["p"] * 2.0 + {value}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})'
        read = f'{through}["p"] + {other}["p"]'
        lines = _alias_lines(self, b, "d", p)
    inner = [f"{p}    {update}"]
    block = _guarded_block(self, sc, ind, inner)
    if block[0].lstrip().startswith("if ") and self.flag():
        # Read through the other name in the branch too (a loop body reading it from outside
        # while changing its own copy is a documented fallback).
        block.append(f"{p}    {target.name} = jnp.clip({read}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    lines += block
    lines.append(f"{p}{target.name} = jnp.clip({read}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    return lines, sc, False


def stmt_mutating_helper(self: Builder, sc: Scope, ind: int):
    """A nested helper that swaps or updates items of its list argument under its own traced
    ``if`` (or a static pass of them), called on the list in ``f``'s straight-line code."""
    if not (sc.top_level and sc.lists) or getattr(self, "returned", False) or not self.allowed("mutating_helper"):
        return None  # (after a `return` under a traced condition, the rest is a traced branch)
    self.features.add("mutating_helper")
    name, length = sc.lists[0]
    h, p = self.fresh("mh"), self.pad(ind)
    inner = replace(sc, vars=(Var("v", FLOAT, 8.0, writable=False),), lists=(), has_dict=False,
                    has_tuple=False, funcs=(), base="q", args=False)
    form = self.int_in(0, 2)
    lines = [f"{p}def {h}(L, v, q):"]
    if form == 0:  # one swap under a traced condition
        lines += [f"{p}    if L[0] > L[-1] + v:", f"{p}        L[0], L[-1] = L[-1], L[0]"]
    elif form == 1:  # a bubble pass: static trip count, traced ifs
        lines += [f"{p}    for i in range(len(L) - 1):", f"{p}        if L[i] > L[i + 1]:",
                  f"{p}            L[i], L[i + 1] = L[i + 1], L[i]"]
    else:  # an update of one item, under a traced condition of the helper's own
        lines += [f"{p}    if {self.cond(inner, 1)}:",
                  f"{p}        L[{self.int_in(-length, length - 1)}] = jnp.clip(L[0] + v, -{FLOAT_LIMIT}, {FLOAT_LIMIT})"]
    lines.append(f"{p}{h}({name}, {bounded(self.float_expr(sc, 1), 8.0).src}, {sc.base})")
    return lines, sc, False


def stmt_effect_in_expression(self: Builder, sc: Scope, ind: int):
    """A list changed by an operand of a conditional expression or of ``and``/``or`` whose
    condition Python decides (a shape test): the effect happens once, on Python's path."""
    target, count = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if target is None or count is None or not self.allowed("effect_in_expression"):
        return None
    self.features.add("effect_in_expression")
    log, p = self.fresh("log"), self.pad(ind)
    cond = lambda: self.pick(_STATIC_CONDS).format(b=sc.base)  # noqa: E731
    value = bounded(self.float_expr(sc, 1), 8.0).src
    lines = [f"{p}{log} = [{value}, 0.5]"]
    if self.flag():
        lines.append(f"{p}{target.name} = {log}.pop() if {cond()} else {bounded(self.float_expr(sc, 1)).src}")
    lines.append(f"{p}{count.name} = len({log}) + int(({cond()}) {self.pick(['and', 'or'])} "
                 f"{log}.append({value}) is None)")
    if self.flag():
        lines.append(f"{p}{target.name} = jnp.clip({log}[-1] + {log}[0], -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    return lines, sc, False


def stmt_flag_identity(self: Builder, sc: Scope, ind: int):
    """``done = False; while done is False ...`` with the flag set under a traced ``if``, and
    ``is``/``is not``/``~``/``-`` on the flag after it."""
    count = _object_target(self, sc, INT)
    if count is None or not self.allowed("flag_identity"):
        return None
    self.features.add("flag_identity")
    flag, n, p = self.fresh("done"), self.fresh("n"), self.pad(ind)
    body = self.loop_scope(sc).add(Var(n, INT, 10, writable=False))
    start, stop = self.pick([("False", "True"), ("True", "False")])
    test = self.pick([f"{flag} is {start}", f"{flag} is not {stop}"])
    lines = [f"{p}{flag} = {start}", f"{p}{n} = 0", f"{p}while {test} and {n} < {self.int_in(1, 5)}:",
             f"{p}    {n} += 1", f"{p}    if {self.cond(body)}:", f"{p}        {flag} = {stop}"]
    use = self.pick([f"(1 if {flag} is True else 2)", f"(~{flag})", f"(-{flag})",
                     f"int({flag} is not False)", f"(3 if {flag} is {start} else {n})"])
    lines.append(f"{p}{count.name} = {n} + {use}")
    return lines, sc, False


def stmt_list_operators(self: Builder, sc: Scope, ind: int):
    """An append loop (static trip count), then list operators on the list it built."""
    target, count = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if target is None or count is None or not self.allowed("list_operators"):
        return None
    self.features.add("list_operators")
    acc, p = self.fresh("acc"), self.pad(ind)
    i = self.fresh("i")
    if self.flag():
        head, item = f"for {i} in range({self.int_in(1, 3)}):", Var(i, INT, 5, writable=False)
    else:
        head, item = f"for {i} in {sc.base}:", Var(i, FLOAT, 4.0, writable=False)
    body = self.loop_scope(sc, appends=True).add(item)
    lines = [f"{p}{acc} = []", f"{p}{head}", f"{p}    {acc}.append({bounded(self.float_expr(body, 1), 8.0).src})"]
    made = self.pick([f"{acc} * 2", f"{acc} + {acc}", f"{acc}[::-1]", f"{acc} + [a]" if sc.args else f"{acc} * 3",
                      f"[a] + {acc}" if sc.args else f"{acc}[:1]", f"{acc}[1:] + {acc}[:1]"])
    r = self.fresh("r")
    lines.append(f"{p}{r} = {made}")
    if self.flag():
        lines.append(f"{p}{acc}.extend({r})")
    lines.append(f"{p}{count.name} = len({r}) + len({acc})")
    lines.append(f"{p}{target.name} = jnp.clip(jnp.sum(jnp.stack({r} + {acc})), -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    return lines, sc, False


_OBJECT_STMTS = (stmt_alias, stmt_mutating_helper, stmt_effect_in_expression, stmt_flag_identity,
                 stmt_list_operators)
_plain_stmt = Builder.stmt


def _stmt_with_objects(self: Builder, sc: Scope, ind: int):
    """One statement: one in six of the object-semantics forms above (where one fits; one in
    two with ``LAXIFY_FUZZ_FOCUS=objects``, half of them aliases)."""
    focus = "objects" in self.config.focus
    if self.int_in(0, 1 if focus else 5) == 0:
        result = (stmt_alias if focus and self.flag() else self.pick(_OBJECT_STMTS))(self, sc, ind)
        if result is not None:
            return result
    return _plain_stmt(self, sc, ind)


Builder.stmt = _stmt_with_objects
_plain_return = Builder.stmt_return


def _noting_return(self: Builder, sc: Scope, ind: int):
    """``stmt_return``, noting that one was made: a ``return`` that does not end ``f`` is under
    some condition, and what follows it runs as a branch of that condition."""
    result = _plain_return(self, sc, ind)
    if result is not None:
        self.returned = True
    return result


Builder.stmt_return = _noting_return


# -- Builtins, math, strings, traced filters, growing lists, recursion -------------------------
# Builtins and `math` on traced values convert (max/min/abs/int/float/bool/any/all, sorted of
# ints: floats fall back, docs/semantics.md "Builtins"; math.floor/ceil/fabs/isnan/isinf (math.trunc
# of a JAX array raises in eager Python: not generated),
# math.sqrt of a square, exact in float32; `math` is bound in the module's namespace by the
# oracle, like jax and jnp). The others must stay Python: a string built from a traced value, a
# comprehension with a traced filter, a list appended to under a traced condition, recursion of
# traced depth. Like `python_stmt` (and only in `f`'s body) they are in FALLBACK_FEATURES: the
# oracle expects eager's value from to_static (its fallback warning allowed) and does not run
# jit(convert). One statement in six is drawn from these.

BUILTIN_FEATURES = ("builtin_call", "math_call", "str_build", "traced_filter", "grown_list", "traced_recursion")
KNOWN_FEATURES = KNOWN_FEATURES + BUILTIN_FEATURES
FALLBACK_FEATURES = frozenset({"python_stmt", "str_build", "traced_filter", "grown_list", "traced_recursion"})


def _small_float(self: Builder, sc: Scope, limit: float = 8.0) -> Expr:
    return bounded(self.float_expr(sc, 1), limit)


def stmt_builtin_call(self: Builder, sc: Scope, ind: int):
    """A float or int name set from Python builtins on traced values."""
    fl, it = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if (fl is None and it is None) or not self.allowed("builtin_call"):
        return None
    self.features.add("builtin_call")
    p = self.pad(ind)
    if fl is not None and (it is None or self.flag()):
        e1, e2, e3 = (_small_float(self, sc) for _ in range(3))
        i1 = bounded(self.int_expr(sc, 1), 8)
        value = self.pick([f"max({e1.src}, {e2.src})", f"min({e1.src}, {e2.src}, {e3.src})",
                           f"abs({e1.src})", f"float({i1.src})", f"max([{e1.src}, {e2.src}, {e3.src}])",
                           f"min({sc.base})", f"max({sc.base}) + {e1.src}", f"sum([{e1.src}, {e2.src}])"])
        return [f"{p}{fl.name} = {value}"], sc, False
    e1 = _small_float(self, sc)
    i1, i2, i3 = (bounded(self.int_expr(sc, 1), 8) for _ in range(3))
    value = self.pick([f"int(jnp.nan_to_num({e1.src}))", f"int(bool({self.cond(sc, 1)}))",
                       f"int({self.pick(['any', 'all'])}([{self.cond(sc, 1)}, {self.cond(sc, 1)}]))",
                       f"int({self.pick(['any', 'all'])}({sc.base} > {e1.src}))",
                       f"sorted([{i1.src}, {i2.src}, {i3.src}]){self.pick(['[0]', '[1]', '[-1]'])}",
                       f"sorted([{i1.src}, {i2.src}], reverse=True)[0]", f"abs({i1.src})",
                       f"max({i1.src}, {i2.src}) - min({i2.src}, {i3.src})"])
    return [f"{p}{it.name} = {value} + {it.name} % 5"], sc, False


def stmt_math_call(self: Builder, sc: Scope, ind: int):
    """A float or int name set from `math` functions of a traced value. The float is a Python
    float in eager code: but for `math.fabs` (the value itself), one that float64 computed, so
    in a loop body it is a Python float the loop changes, which runs the loop as Python where
    it is carried (feature `float_loop`)."""
    fl, it = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if (fl is None and it is None) or not self.allowed("math_call"):
        return None
    self.features.add("math_call")
    p = self.pad(ind)
    e = _small_float(self, sc)
    if fl is not None and (it is None or self.flag()):
        value = self.pick([f"math.fabs({e.src})", f"math.sqrt({e.src} * {e.src})",
                           f"math.floor({e.src}) + 0.5", f"math.fabs({e.src}) - math.ceil({e.src})"])
        if sc.in_loop_body and value != f"math.fabs({e.src})":
            self.features.add("float_loop")
        return [f"{p}{fl.name} = {value}"], sc, False
    value = self.pick([f"math.floor({e.src})", f"math.ceil({e.src})",
                       f"int(math.isnan({e.src}))", f"int(math.isinf({e.src} * 2.0))",
                       f"math.floor(math.sqrt({e.src} * {e.src}))"])
    return [f"{p}{it.name} = {value} + {it.name} % 5"], sc, False


def stmt_str_build(self: Builder, sc: Scope, ind: int):
    """A string built from a traced value (once, or digit by digit in a loop); its length is
    read into an int name."""
    it = _object_target(self, sc, INT)
    if it is None or not sc.main or not self.allowed("str_build"):
        return None
    self.features.add("str_build")
    p, s = self.pad(ind), self.fresh("txt")
    e = _small_float(self, sc)
    if self.flag():
        lines = [f"{p}{s} = str(int(jnp.nan_to_num({e.src})))"]
    else:
        w = self.fresh("w")
        lines = [f"{p}{s} = ''", f"{p}{w} = jnp.abs(jnp.int32(jnp.nan_to_num({e.src})))",
                 f"{p}while {w} > 0:", f"{p}    {s} = str({w} % 2) + {s}", f"{p}    {w} = {w} // 2"]
    lines.append(f"{p}{it.name} = len({s}) + {it.name} % 5")
    return lines, sc, False


def stmt_traced_filter(self: Builder, sc: Scope, ind: int):
    """A comprehension filtered by a traced condition, then its length or its sum."""
    fl, it = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if (fl is None and it is None) or not sc.main or not self.allowed("traced_filter"):
        return None
    self.features.add("traced_filter")
    p, kept, v = self.pad(ind), self.fresh("kept"), self.fresh("fv")
    if sc.args and self.flag():
        bound = bounded(self.int_expr(sc, 1), 8).src
        lines = [f"{p}{kept} = [{v} for {v} in y if {v} {self.pick(['>', '<=', '!='])} {bound}]"]
    else:
        bound = _small_float(self, sc).src
        lines = [f"{p}{kept} = [{v} * 2.0 for {v} in {sc.base} if {v} {self.pick(['>', '<', '>='])} {bound}]"]
    if it is not None and (fl is None or self.flag()):
        lines.append(f"{p}{it.name} = len({kept}) + {it.name} % 5")
    else:
        lines.append(f"{p}{fl.name} = jnp.clip(sum({kept}, 0.0), -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    return lines, sc, False


def stmt_grown_list(self: Builder, sc: Scope, ind: int):
    """A list appended to under a traced condition in a loop (static or traced trip count),
    then its length or its sum."""
    fl, it = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if (fl is None and it is None) or not sc.main or not self.allowed("grown_list"):
        return None
    self.features.add("grown_list")
    p, g, i = self.pad(ind), self.fresh("g"), self.fresh("i")
    trips = sc.small_int if self.flag() else str(self.int_in(1, 4))
    body = self.loop_scope(sc).add(Var(i, INT, 5, writable=False))
    lines = [f"{p}{g} = []", f"{p}for {i} in range({trips}):", f"{p}    if {self.cond(body, 1)}:",
             f"{p}        {g}.append({_small_float(self, body).src})"]
    if it is not None and (fl is None or self.flag()):
        lines.append(f"{p}{it.name} = len({g}) + {it.name} % 5")
    else:
        lines.append(f"{p}{fl.name} = jnp.clip(sum({g}, 0.5), -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    return lines, sc, False


def stmt_traced_recursion(self: Builder, sc: Scope, ind: int):
    """A nested recursive helper whose depth is a traced int in 0..5, called at once."""
    fl = _object_target(self, sc, FLOAT)
    if fl is None or not sc.main or sc.in_loop_body or not self.allowed("traced_recursion"):
        return None
    self.features.add("traced_recursion")
    p, h = self.pad(ind), self.fresh("rec")
    inner = replace(sc, vars=tuple(Var(v.name, v.kind, v.bound, writable=False) for v in sc.vars)
                    + (Var("z", FLOAT, FLOAT_LIMIT, writable=False),), loops=(), main=False,
                    depth=MAX_DEPTH - 1, in_append_loop=False, top_level=False, lists=(), in_loop_body=False)
    step = _small_float(self, inner)
    lines = [f"{p}def {h}(n, z):", f"{p}    if n <= 0:", f"{p}        return z",
             f"{p}    return jnp.clip({h}(n - 1, z) + {step.src}, -{FLOAT_LIMIT}, {FLOAT_LIMIT})",
             f"{p}{fl.name} = {h}({sc.small_int}, {_small_float(self, sc).src})"]
    return lines, sc, False


def stmt_generator_reduction(self: Builder, sc: Scope, ind: int):
    """`sum`/`any`/`all` of a generator over a range (static or traced count, maybe filtered):
    a loop written before the statement; or over the vector, unfiltered: Python's items."""
    fl, it = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if (fl is None and it is None) or not self.allowed("generator_reduction"):
        return None
    self.features.add("generator_reduction")
    p, v = self.pad(ind), self.fresh("gv")
    if self.flag():
        source = f"range({self.pick([str(self.int_in(0, 4)), sc.small_int, f'1, {sc.small_int} + 2'])})"
        inner = sc.add(Var(v, INT, 6, writable=False))
        test = f" if {self.cond(inner, 1)}" if self.flag() else ""
    else:
        # (over the vector Python computes the items while tracing: a filter on a traced value
        # would be the truth of a traced array, which only a loop of the program can take)
        source = sc.base
        inner = sc.add(Var(v, FLOAT, 4.0, writable=False))
        test = ""
    if it is not None and (fl is None or self.flag()):
        fn = self.pick(["any", "all"])
        lines = [f"{p}{it.name} = {it.name} % 5 + int({fn}({self.cond(inner, 1)} for {v} in {source}{test}))"]
    else:
        # (over a traced range, a Python float start would be a sum of Python floats, which a
        # loop of the program does not hold: the start is an array there)
        item, start = _small_float(self, inner).src, "0.5" if source == sc.base else "jnp.float32(0.5)"
        lines = [f"{p}{fl.name} = jnp.clip(sum(({item} for {v} in {source}{test}), {start}), "
                 f"-{FLOAT_LIMIT}, {FLOAT_LIMIT})"]
    return lines, sc, False


_BUILTIN_STMTS = (stmt_builtin_call, stmt_math_call, stmt_str_build, stmt_traced_filter, stmt_grown_list,
                  stmt_traced_recursion, stmt_generator_reduction)
_stmt_before_builtins = Builder.stmt


def _stmt_with_builtins(self: Builder, sc: Scope, ind: int):
    """One statement: one in six of the builtin/Python forms above (where one fits)."""
    if self.int_in(0, 5) == 0:
        result = self.pick(_BUILTIN_STMTS)(self, sc, ind)
        if result is not None:
            return result
    return _stmt_before_builtins(self, sc, ind)


Builder.stmt = _stmt_with_builtins


# -- Effects under traced conditions, and Python ints past int32 --------------------------------
# `traced_effect`: a list changed by an operand of a conditional expression or of `and`/`or` whose
# condition is traced (`v = log.pop() if jnp.sum(x) > 0.5 else 0.0`, `ok = (x[0] > 1.0) and
# log.append(v) is None`), in f's body, its branches and loop bodies (the list made there, or
# before a loop whose body changes it). Python changes the list on its path only, once per
# evaluation; laxify traces both operands, so it runs the line as Python (docs/semantics.md,
# "Python objects": to_static splits with a FallbackWarning, jit(convert) is a located
# ConversionError that names the list). The oracle expects exactly that (oracle.FALLBACK_RULES).
#
# `int_overflow`: Python ints that a traced loop carries, multiplied or added (`r = r * (i + 1)`,
# `p, q = q, p + q`, `s = s + i * i`, `r = r * 2`) for a traced trip count sized so that some
# inputs pass int32 and others do not (k = 5 or y[0] = 5 do). Eager Python computes exact ints
# (a traced `range` gives Python ints); the largest is kept in `big`, which f returns, so the
# oracle sees on which inputs int32 was passed: to_static must give eager's exact int (its
# FallbackWarning allowed there only), laxify.checked(jax.jit(convert)) a located OverflowError.

# `overflow_print`: a program with both `print` and `int_overflow` (where int32 is passed,
# to_static's eager run must be the only one whose prints are seen).
EFFECT_OVERFLOW_FEATURES = ("traced_effect", "int_overflow", "overflow_print")
KNOWN_FEATURES = KNOWN_FEATURES + EFFECT_OVERFLOW_FEATURES
FALLBACK_RULES = {
    # feature: (what a to_static warning or a jit(convert) ConversionError must say)
    "traced_effect": "is changed in place",
}
# Growth forms: (setup lines, body lines, the carried int, bound factors): with the first
# factor the int passes int32 for a bound of 5 and not for 4, with the second from 4 on, with
# the third from 3 on. {r}, {q}, {i} are fresh names.
_GROWTH = (
    (["{r} = 1"], ["{r} = {r} * ({i} + 1)"], "{r}", (3, 4, 5)),               # (3n)!: 12! fits, 15! not
    (["{q}, {r} = 0, 1"], ["{q}, {r} = {r}, {q} + {r}"], "{r}", (10, 12, 16)),  # fib(10n + 1)
    (["{r} = 0"], ["{r} = {r} + {i} * {i}"], "{r}", (400, 500, 700)),           # sum of squares below 400n
    (["{r} = 1"], ["{r} = {r} * 2"], "{r}", (7, 8, 11)),                        # 2 ** (7n): 2**28 fits
    (["{r} = 1"], ["{r} <<= 1"], "{r}", (7, 8, 11)),                            # the same by shifts
    (["{r} = 0"], ["{r} = {r} + pow(2, {i})"], "{r}", (7, 8, 11)),              # 2 ** (7n) - 1
    (["{r} = 0"], ["{r} = {r} | (1 << {i})"], "{r}", (7, 8, 11)),               # a mask of 7n bits
    (["{r} = 0"], ["{r} = {r} + 3 ** {i}"], "{r}", (5, 6, 7)),                  # (3 ** (5n) - 1) / 2
)


def _traced_cond(self: Builder, sc: Scope) -> str:
    """A condition on a traced value (never one Python decides)."""
    b, lit = sc.base, self.int_in(-4, 4) / 2 + 0.25
    options = [f"jnp.sum({b}) > {lit}", f"{b}[{self.pick([0, 1, -1])}] > {lit}",
               f"{bounded(self.float_expr(sc, 1)).src} < {b}[0] + {lit}"]
    if sc.args:
        options += [f"a > {lit}", f"k % 2 == {self.int_in(0, 1)}"]
    return self.pick(options)


def stmt_traced_effect(self: Builder, sc: Scope, ind: int):
    """A list changed by an operand of a conditional expression or ``and``/``or`` under a traced
    condition, read after (its length, its items)."""
    target, count = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if target is None or count is None or not sc.main or not self.allowed("traced_effect"):
        return None
    self.features.add("traced_effect")
    log, p = self.fresh("log"), self.pad(ind)
    v1, v2 = _small_float(self, sc).src, literal(self.int_in(-4, 4) / 2, FLOAT).src
    lines = [f"{p}{log} = [{v1}, {v2}]"]
    if self.flag():  # the list made here, changed here (pop: it has two items)
        inner, q = sc, p
        if self.flag():
            other = bounded(self.float_expr(sc, 1)).src
            value = self.pick([f"{log}.pop() if {_traced_cond(self, sc)} else {other}",
                               f"{other} if {_traced_cond(self, sc)} else {log}.pop()"])
            lines.append(f"{p}{target.name} = {value}")
    else:  # made before a loop whose body changes it under a traced condition (append only)
        i = self.fresh("i")
        inner = self.loop_scope(sc).add(Var(i, INT, 5, writable=False))
        trips = self.pick([str(self.int_in(1, 3)), sc.small_int])
        lines.append(f"{p}for {i} in range({trips}):")
        q = p + "    "
        if self.flag():
            value = bounded(self.float_expr(inner, 1), 8.0).src
            lines.append(f"{q}{target.name} = ({log}.append({value}) or {v2}) if "
                         f"{_traced_cond(self, inner)} else {target.name}")
    value = _small_float(self, inner).src
    lines.append(f"{q}{count.name} = len({log}) + int(({_traced_cond(self, inner)}) "
                 f"{self.pick(['and', 'or'])} {log}.append({value}) is None)")
    if self.flag():
        lines.append(f"{p}{target.name} = jnp.clip({log}[-1] + {log}[0] * 2.0, -{FLOAT_LIMIT}, {FLOAT_LIMIT})")
    else:
        lines.append(f"{p}{count.name} = len({log}) + {count.name} % 5")
    return lines, sc, False


def stmt_int_overflow(self: Builder, sc: Scope, ind: int):
    """A Python int carried by a traced ``for ... in range`` or ``while`` (traced bound) that
    grows by a product or a sum of Python ints; past int32 on some inputs."""
    if not sc.main or not self.allowed("int_overflow") or not self.allowed("overflow_print") and "print" in self.features:
        return None
    self.features.add("int_overflow")
    if "print" in self.features:
        self.features.add("overflow_print")
    setup, step, carried, factors = self.pick(_GROWTH)
    factor = self.pick(factors)
    names = {"r": self.fresh("ov"), "q": self.fresh("ow"), "i": self.fresh("oi")}
    p = self.pad(ind)
    n = self.pick(["k"] + (["y[0]", "y[-1]"] if sc.args else []))
    lines = [p + line.format(**names) for line in setup]
    if self.flag():
        lines.append(f"{p}for {names['i']} in range({n} * {factor}):")
    else:  # a while with a traced bound; the counter counts from 0 as range's index does
        lines += [f"{p}{names['i']} = -1", f"{p}while {names['i']} + 1 < {n} * {factor}:",
                  f"{p}    {names['i']} += 1"]
    lines += [f"{p}    " + line.format(**names) for line in step]
    big = carried.format(**names)
    lines.append(f"{p}{BIG} = max({BIG}, {big})")
    if self.flag():  # arithmetic on the loop's result after it: checked there too
        lines.append(f"{p}{BIG} = max({BIG}, {big} * {self.pick([big, '3', '1000'])})")
    ints = sc.of(INT, writable=True, accumulator=False)
    if ints and self.flag():
        t = ints[self.pick(range(len(ints)))]
        lines.append(f"{p}{t.name} = {big} % {self.pick([7, 97, 997])}")
    return lines, sc, False


def stmt_int_overflow_other(self: Builder, sc: Scope, ind: int):
    """Python ints made traced by something other than a loop's carry, past int32 on some
    inputs: an ``enumerate`` index scaled up in a loop over ``x``, the int a traced ``if`` or
    conditional expression gives, and ``int()`` of a traced value; squared or summed after."""
    if not sc.main or not self.allowed("int_overflow") or not self.allowed("overflow_print") and "print" in self.features:
        return None
    self.features.add("int_overflow")
    if "print" in self.features:
        self.features.add("overflow_print")
    r, i, w, p = self.fresh("ov"), self.fresh("oi"), self.fresh("ow"), self.pad(ind)
    form = self.pick(["enumerate", "if", "ifexp", "int"])
    if form == "enumerate":  # x has 3 or more items: from its fourth on, the sum passes int32
        lines = [f"{p}{r} = 0", f"{p}for {i}, {w} in enumerate({sc.base}):",
                 f"{p}    {r} = {r} + {i} * 700000000"]
    elif form == "if":
        lines = [f"{p}{r} = 1", f"{p}if {_traced_cond(self, sc)}:", f"{p}    {r} = 50000",
                 f"{p}{r} = {r} * {r}"]
    elif form == "ifexp":
        lines = [f"{p}{r} = 50000 if {_traced_cond(self, sc)} else 3", f"{p}{r} = {r} * {r} + {r}"]
    else:  # int() of a traced float: 0 to 80000
        lines = [f"{p}{r} = int(jnp.abs({sc.base}[0]) * 20000.0)", f"{p}{r} = {r} * {r}"]
    lines.append(f"{p}{BIG} = max({BIG}, {r})")
    return lines, sc, False


_EFFECT_OVERFLOW_STMTS = (stmt_traced_effect, stmt_int_overflow, stmt_int_overflow_other)
_OBJECT_STMTS = _OBJECT_STMTS + _EFFECT_OVERFLOW_STMTS


# `python_numbers`: Python numbers a traced construct makes traced, used as Python would
# (runtime/numbers.py): `2 ** -i` of a range's index (a float), two bools a traced loop sets
# added (an int), `isinstance(i, int)` of an index, an int compared with a float literal
# exactly. No fallback: each stays one program, but for `2 ** -i` summed into a Python float by
# a loop with a traced trip count (feature `float_loop`: the loop runs as Python, float64).
# `zero_division`: `12 // (i - 2)` in a `try` whose `except ZeroDivisionError` runs for some
# inputs only (i reaches 2): the statement runs as Python (a FallbackWarning; jit(convert)
# refuses it with the located error).
NUMBER_FEATURES = ("python_numbers", "zero_division")
KNOWN_FEATURES = KNOWN_FEATURES + NUMBER_FEATURES
FALLBACK_FEATURES = FALLBACK_FEATURES | {"zero_division", "float_loop"}


def stmt_python_numbers(self: Builder, sc: Scope, ind: int):
    """A Python number made traced by a loop, then used where its Python type matters."""
    floats, ints = _object_target(self, sc, FLOAT), _object_target(self, sc, INT)
    if floats is None or ints is None or not self.allowed("python_numbers"):
        return None
    self.features.add("python_numbers")
    r, i, p = self.fresh("pn"), self.fresh("pi"), self.pad(ind)
    trips = self.pick([str(self.int_in(1, 5)), sc.small_int])
    form = self.pick(["negative_power", "bools", "isinstance", "compare", "print", "midpoint"])
    if form in ("negative_power", "midpoint") and not trips.isdigit():
        # (a Python float that a traced loop changes: the loop runs as Python, a FallbackWarning)
        self.features.add("float_loop")
    if form == "negative_power":
        lines = [f"{p}{r} = 0.0", f"{p}for {i} in range({trips}):",
                 f"{p}    {r} = {r} + {self.pick(['2', '4', '10'])} ** (-{i})",
                 f"{p}{floats.name} = {floats.name} + {r}"]
    elif form == "midpoint":  # a decay halved: `/ 2` of a computed float keeps it Python's
        lines = [f"{p}{r} = 0.3", f"{p}for {i} in range({trips}):",
                 f"{p}    {r} = ({r} * 0.999 + 0.001 + {r}) / 2",
                 f"{p}{floats.name} = {floats.name} + {r}"]
    elif form == "bools":
        a, b = r, self.fresh("pb")
        lines = [f"{p}{a} = False", f"{p}{b} = False", f"{p}for {i} in range({trips}):",
                 f"{p}    if {_traced_cond(self, sc)}:", f"{p}        {a} = True",
                 f"{p}    if {_traced_cond(self, sc)}:", f"{p}        {b} = True",
                 f"{p}{ints.name} = {ints.name} + ({a} + {b}) * 2 - ({a} - {b})"]
    elif form == "isinstance":
        lines = [f"{p}{r} = 0", f"{p}for {i} in range({trips}):",
                 f"{p}    {r} = {r} + (3 if isinstance({i}, int) else 1)",
                 f"{p}{ints.name} = {ints.name} + {r}"]
    elif form == "compare":
        lines = [f"{p}{r} = 0", f"{p}for {i} in range({trips}):",
                 f"{p}    if {i} == {self.pick(['2.0', '2.5', '3.0'])}:", f"{p}        {r} = {r} + 7",
                 f"{p}{ints.name} = {ints.name} + {r}"]
    else:  # a list of the Python ints a traced loop counted, printed as Python prints it
        if not sc.main or not self.allowed("overflow_print") and "int_overflow" in self.features:
            return None
        self.features.add("print")
        if "int_overflow" in self.features:
            self.features.add("overflow_print")
        lines = [f"{p}{r} = [0, 0]", f"{p}for {i} in range({trips}):",
                 f"{p}    if {_traced_cond(self, sc)}:", f"{p}        {r}[0] += 1",
                 f"{p}    else:", f"{p}        {r}[1] += 2",
                 f"{p}print({r})", f"{p}{ints.name} = {ints.name} + {r}[0] - {r}[1]"]
    return lines, sc, False


def stmt_zero_division(self: Builder, sc: Scope, ind: int):
    """``ZeroDivisionError`` of a range's index caught by the function's own handler."""
    ints = _object_target(self, sc, INT)
    if ints is None or not sc.main or not sc.args or not self.allowed("zero_division"):
        return None
    self.features.add("zero_division")
    r, i, p = self.fresh("zd"), self.fresh("zi"), self.pad(ind)
    op = self.pick(["//", "%"])
    lines = [f"{p}{r} = 0", f"{p}for {i} in range(k):", f"{p}    try:",
             f"{p}        {r} = {r} + 12 {op} ({i} - 2)", f"{p}    except ZeroDivisionError:",
             f"{p}        {r} = {r} + 100", f"{p}{ints.name} = {ints.name} + {r}"]
    return lines, sc, False


_OBJECT_STMTS = _OBJECT_STMTS + (stmt_python_numbers, stmt_zero_division)
