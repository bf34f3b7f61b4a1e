"""The run-time report: what one program says when it runs, and the one place that turns it
into the user's exception.

While converted code is traced, a check that only the data decides (a ``raise`` under a
traced condition, an int32 overflow of a Python int, a checked ``assert``, a read of a name
a traced loop that ran zero times left unassigned, Python's own error on a path the data
may not take) is *recorded*: a :class:`Rule` (what to raise, where: static) and a predicate
(traced) with the values its message formats. Records go into the innermost :class:`Frame`.
Each traced construct (a branch, a loop body, a lazy operand) runs in a frame of its own,
whose content leaves the construct as one more output or carry, and is absorbed by the
frame around it: only the first check that fails counts, as only Python's first exception
does. A program's outermost frame becomes its :class:`Report`, a pytree returned with its
outputs: ``code`` is 0 where nothing failed, else the number of the rule that failed first,
and ``payloads`` hold each rule's values; the rules are its static structure. After a call
:func:`throw` raises the rule's exception at the user's line.

Where no program collects the report (``jax.jit(laxify.convert(f))``), or between a check
and its frame stands a transformation that converted code does not see (a ``jax.vmap`` or
``lax.scan`` of the user's around converted code), the check goes to
``jax.experimental.checkify`` instead (``checkify.debug_check``): ``laxify.checked`` (and a
``to_static`` program that holds such a check, see ``laxify/call``) functionalizes it, and
:func:`throw_checkify` turns checkify's error into the same exception, through the same rule.
"""

from __future__ import annotations

import itertools
import linecache
import re
import sys
import threading
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify
from jax.extend.core import get_opaque_trace_state

from laxify.runtime import trace

__all__ = [
    "Frame",
    "Report",
    "Rule",
    "Union",
    "EMPTY",
    "absorb",
    "collected",
    "discarded",
    "emit_checkify",
    "frame",
    "initial",
    "merged",
    "on_path",
    "raise_at",
    "record",
    "reported",
    "throw",
    "throw_checkify",
]


class Rule:
    """One check: ``make(values)`` builds the exception from the concrete values of the run
    (``values``: the payload's leaves), raised at ``filename:line`` in ``function``.
    ``text``: checkify's message for it where only checkify carries it (a ``str.format``
    template over the payload's leaves)."""

    __slots__ = ("make", "filename", "line", "function", "text", "__weakref__")

    def __init__(self, make: Callable[[list], BaseException], filename: str, line: int, function: str, text: str):
        self.make, self.filename, self.line, self.function, self.text = make, filename, line, function, text

    def exception(self, values: list) -> BaseException:
        return self.make(values)

    def __repr__(self) -> str:
        return f"<check at {self.filename}:{self.line}: {self.text}>"


class Report:
    """What a traced region (a branch, a loop body, a program) recorded: ``rules`` (static),
    ``code`` (0: no check failed; ``k``: ``rules[k - 1]`` failed first) and ``payloads`` (per
    rule, the values its exception formats). A pytree: ``rules`` is its structure."""

    __slots__ = ("rules", "code", "payloads")

    def __init__(self, rules: tuple, code, payloads: tuple):
        self.rules, self.code, self.payloads = rules, code, payloads

    def __bool__(self) -> bool:
        return bool(self.rules)


class Union:
    """The reports of the paths of one construct (the branches of a ``cond``), whose outputs
    must have one structure: each path's report becomes one with every path's rules, its own
    at its place (:meth:`of`), zeros for the payloads of the others."""

    __slots__ = ("rules", "offsets", "avals")

    def __init__(self, reports: list):
        self.rules = tuple(rule for r in reports for rule in r.rules)
        self.offsets, offset = [], 0
        for r in reports:
            self.offsets.append(offset)
            offset += len(r.rules)
        self.avals = [payload for r in reports for payload in r.payloads]

    def of(self, k: int, found: Report) -> Report:
        """Path ``k``'s report ``found`` (traced there) in the union's structure."""
        if not self.rules:
            return _EMPTY
        payloads = [jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), avals) for avals in self.avals]
        offset = self.offsets[k]
        payloads[offset : offset + len(found.rules)] = found.payloads
        if not found.rules:
            code = jnp.int32(0)
        else:
            code = found.code if offset == 0 else _pick(found.code == 0, 0, found.code + offset)
        return Report(self.rules, _traced_code(code), tuple(payloads))


_EMPTY = EMPTY = Report((), 0, ())

# The rules are the report's structure; a report with none has no leaves (a program without
# checks returns nothing more than its outputs).
jax.tree_util.register_pytree_node(
    Report,
    lambda r: ((r.code, r.payloads) if r.rules else (), r.rules),
    lambda rules, children: Report(rules, *children) if rules else _EMPTY,
)


def _traced_code(code):
    return jnp.asarray(code, jnp.int32)


def _pick(condition, a, b):
    """``jnp.where(condition, a, b)`` of a boolean scalar and two values of one type (a Python
    int is a code: int32) as one ``select``, not a nested ``jit`` in the program: a report is
    merged at every construct and every loop iteration."""
    a = jnp.asarray(a, jnp.int32) if type(a) is int else a
    b = jnp.asarray(b, jnp.int32) if type(b) is int else b
    if jnp.shape(a) != jnp.shape(b) or jnp.result_type(a) != jnp.result_type(b) or jnp.shape(condition) != ():
        return jnp.where(condition, a, b)
    a, b = jnp.asarray(a), jnp.asarray(b)
    condition = jnp.asarray(condition, jnp.bool_)
    if a.shape:
        condition = lax.broadcast_in_dim(condition, a.shape, ())
    return lax.select(condition, a, b)


def _both(a, b):
    """``jnp.logical_and(a, b)``, as one ``and`` where both are boolean values of one shape."""
    a, b = jnp.asarray(a, jnp.bool_), jnp.asarray(b, jnp.bool_)
    return lax.bitwise_and(a, b) if a.shape == b.shape else jnp.logical_and(a, b)


class Frame:
    """What the region being traced has recorded so far (see the module's docstring)."""

    __slots__ = ("rules", "code", "payloads", "paths", "jax_trace", "sink")

    def __init__(self, sink: bool = False):
        self.sink = sink  # no report leaves it: what it records goes to checkify at once
        self.rules: list[Rule] = []
        self.code: Any = 0
        self.payloads: list[tuple] = []
        self.paths: list = []  # conditions under which the code being traced runs (`on_path`)
        self.jax_trace = get_opaque_trace_state()

    def here(self) -> bool:
        """Whether the code being traced is in this frame's JAX trace (no transformation of
        someone else's between them: a value made here may leave with the frame's outputs)."""
        return get_opaque_trace_state() == self.jax_trace

    def taken(self):
        """Whether the program is on the path being traced within this frame (``True``, or a
        traced boolean: the conjunction of the ``on_path`` conditions)."""
        taken = True
        for condition in self.paths:
            here = jnp.asarray(condition(), jnp.bool_)
            taken = here if taken is True else _both(taken, here)
        return taken

    def record(self, failed, rule: Rule, values: list) -> None:
        """``rule`` fails where ``failed`` (a Python or traced boolean) holds on this path."""
        if not isinstance(failed, jax.core.Tracer):
            failed = bool(failed)
        if failed is False or (type(self.code) is int and self.code):
            return  # never fails, or fails after a check that always fails first
        taken = self.taken()
        if taken is not True:
            failed = _both(failed, taken)
        if self.sink:
            _to_checkify(jnp.logical_not(failed), rule, values)
            return
        trace.current().recorded += 1
        self.rules.append(rule)
        self.payloads.append(tuple(values))
        self.code = self._first(failed, len(self.rules))

    def absorb(self, report: Report) -> None:
        """The report of a region inside this one (a construct's output): its first failure
        counts here where nothing here failed before it."""
        if not report.rules or (type(self.code) is int and self.code):
            return
        if self.sink:
            taken = self.taken()
            emit_checkify(
                report if taken is True else Report(report.rules, _pick(taken, report.code, 0), report.payloads)
            )
            return
        trace.current().recorded += 1
        offset = len(self.rules)
        self.rules.extend(report.rules)
        self.payloads.extend(report.payloads)
        code = report.code if offset == 0 else _pick(report.code == 0, 0, report.code + offset)
        taken = self.taken()
        if taken is not True:
            code = _pick(taken, code, 0)
        self.code = code if type(self.code) is int else _pick(self.code == 0, code, self.code)

    def _first(self, failed, number: int):
        """The code after a check numbered ``number`` that fails where ``failed`` holds."""
        if type(self.code) is int:  # (0: no check failed before on any run)
            return number if failed is True else _pick(failed, number, 0)
        return _pick(_both(failed, self.code == 0), number, self.code)

    def report(self) -> Report:
        if not self.rules:
            return _EMPTY
        return Report(tuple(self.rules), _traced_code(self.code), tuple(self.payloads))


def initial(found: Report) -> Report:
    """The report a loop carries into its first iteration for a body that records ``found``'s
    rules (its payloads' types): nothing failed yet."""
    if not found.rules:
        return _EMPTY
    return Report(
        found.rules,
        jnp.int32(0),
        tuple(jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), p) for p in found.payloads),
    )


def merged(carried: Report, found: Report) -> Report:
    """The report a loop carries after an iteration that recorded ``found``: the first failure
    of every iteration so far, with its payload."""
    if not found.rules:
        return carried
    first = _both(carried.code == 0, found.code != 0)
    payloads = jax.tree_util.tree_map(lambda new, old: _pick(first, new, old), found.payloads, carried.payloads)
    return Report(found.rules, _pick(first, found.code, carried.code), payloads)


class frame:
    """``with frame() as f:`` around the tracing of a region whose report leaves it as an
    output (``f.report()``)."""

    __slots__ = ("made", "state")

    def __enter__(self) -> Frame:
        self.state = trace.current()
        self.made = Frame()
        self.state.frames.append(self.made)
        return self.made

    def __exit__(self, *exc):
        frames = self.state.frames
        while frames and frames.pop() is not self.made:
            pass
        return False


def discarded(fn: Callable) -> Callable:
    """``fn`` run in a frame of its own whose report is thrown away: a probe of what a
    function gives (``jax.eval_shape``), whose trace is not the program's."""

    def run(*args, **kwargs):
        with frame():
            return fn(*args, **kwargs)

    return run


def collected(fn: Callable) -> Callable:
    """``fn`` returning ``(fn(...), report)``: what it records, in a frame of its own."""

    def run(*args, **kwargs):
        with frame() as made:
            out = fn(*args, **kwargs)
        return out, made.report()

    return run


def _innermost() -> Frame | None:
    """The frame that collects what the code being traced records: the innermost, where it
    belongs to this JAX trace (or is a sink); ``None`` where none does (checkify's channel)."""
    frames = trace.current().frames
    if frames and (frames[-1].sink or frames[-1].here()):
        return frames[-1]
    return None


def record(failed, rule: Rule, values: list = ()) -> None:
    """Record ``rule``, failing where ``failed`` holds, in the innermost frame; where no frame
    of this JAX trace collects it, in checkify's channel."""
    if trace.current().exporting:
        _unchecked(rule)
        return
    found = _innermost()
    if found is not None:
        found.record(failed, rule, list(values))
        return
    _to_checkify(jnp.logical_not(failed), rule, list(values))


def absorb(report: Report) -> None:
    """A construct's report, into the frame around it (or checkify's channel, see :func:`record`)."""
    if not report.rules:
        return
    found = _innermost()
    if found is not None:
        found.absorb(report)
        return
    emit_checkify(report)


class on_path:
    """``with on_path(taken):`` around code that is traced on every run but whose value is
    used only where ``taken()`` holds (a side of a traced conditional expression, the right
    operand of a traced ``and``/``or``, chosen by ``jnp.where``; the rest of a loop body after
    a ``raise`` that does not stop it): a check recorded there fails only where ``taken()``
    holds, as Python evaluates it only there."""

    __slots__ = ("taken", "frame", "made")

    def __init__(self, taken: Callable[[], Any]):
        self.taken = taken

    def __enter__(self):
        self.frame = _innermost()
        self.made = self.frame is None
        if self.made:  # (checkify's channel: a sink of this JAX trace holds the condition)
            self.frame = Frame(sink=True)
            trace.current().frames.append(self.frame)
        self.frame.paths.append(self.taken)

    def __exit__(self, *exc):
        self.frame.paths.pop()
        if self.made:
            frames = trace.current().frames
            while frames and frames.pop() is not self.frame:
                pass
        return False


_warned: set[tuple[str, int]] = set()


def _unchecked(rule: Rule) -> None:
    """A check left out of a program traced for ``export``: said once at its line."""
    key = (rule.filename, rule.line)
    if key in _warned:
        return
    _warned.add(key)
    from laxify.ir.errors import UncheckedWarning

    warnings.warn_explicit(
        "This exception, raised under a traced condition, is not checked by the exported program (a "
        "serialized program cannot hold laxify's run-time checks): on an input that raises here, the "
        "loaded function returns a value.",
        UncheckedWarning,
        rule.filename,
        rule.line,
    )


def emit_checkify(report: Report) -> None:
    """``report``'s checks as ``checkify.debug_check`` calls (one per rule: the code names the
    rule that failed first, so at most one of them fails)."""
    for number, (rule, values) in enumerate(zip(report.rules, report.payloads), start=1):
        _to_checkify(report.code != number, rule, list(values))


# -- checkify's channel ------------------------------------------------------------------------
#
# A check that only checkify can carry names its rule by a number in its message: the rules of
# such checks are kept here (the oldest go first), until checkify's error comes back.

_RULES: dict[int, Rule] = {}
_LIMIT = 4096
_counter = itertools.count(1)
_lock = threading.Lock()
_OURS = re.compile(r" \(check #(\d+)\)$")


def _to_checkify(ok, rule: Rule, values: list) -> None:
    state = trace.current()
    if state.exporting or not (state.reporting or _asserts_checked(state)):
        # Nothing reports it (plain `jax.jit(laxify.convert(f))`; a serialized program): no
        # check, whose effect alone would send every call through JAX's slow dispatch path.
        return
    with _lock:
        number = next(_counter)
        _RULES[number] = rule
        while len(_RULES) > _LIMIT:
            del _RULES[next(iter(_RULES))]
    state.checkify = True
    state.recorded += 1
    checkify.debug_check(ok, f"{rule.text} (check #{number})", *values)


def _asserts_checked(state) -> bool:
    """Whether the run sends asserts to checkify (``laxify.convert(f, checks=True)``: its
    caller functionalizes the checks itself, with ``checkify``)."""
    return bool(state.asserts) and state.asserts[-1].checkify


def reported() -> bool:
    """Whether a check recorded now reaches something that reports it: a frame of this JAX
    trace, checkify's channel under ``laxify.checked`` (or ``convert(f, checks=True)``), or the
    warning of a program traced for ``export``. Not under a plain ``jax.jit(laxify.convert(f))``."""
    state = trace.current()
    return state.exporting or _innermost() is not None or state.reporting or _asserts_checked(state)


def throw_checkify(error) -> None:
    """Raise the first failed check of ``error`` (a ``checkify.Error``): a rule's as the user's
    exception, a check of the user's own as checkify raises it. Nothing when none failed."""
    found = error.get_exception()
    if found is None:
        return
    note = None
    mapping = getattr(found, "error_mapping", None)  # under vmap: per mapped index
    if mapping:
        index, found = next(iter(mapping.items()))
        note = f"(raised for the element at mapped index {', '.join(map(str, index))})"
    template = getattr(found, "fmt_string", None)
    match = _OURS.search(template) if isinstance(template, str) else None
    rule = _RULES.get(int(match.group(1))) if match else None
    if rule is None:
        error.throw()
        return
    _raise(rule, list(found.args), note)


def throw(report: Report, code: int) -> None:
    """Raise the exception of the rule numbered ``code`` (nonzero) of ``report`` (concrete)."""
    rule = report.rules[code - 1]
    _raise(rule, [*jax.tree_util.tree_leaves(report.payloads[code - 1])], None)


def _raise(rule: Rule, values: list, note: str | None) -> None:
    exc = rule.exception(values)
    if note is not None and hasattr(exc, "add_note"):
        exc.add_note(note)
    raise_at(exc, rule.filename, rule.line, rule.function)


def raise_at(exc: BaseException, filename: str, line: int, name: str) -> None:
    """Raise ``exc`` from a frame at the user's line (its file, line and function name), so
    that the traceback ends there, as it would have in Python."""
    text = linecache.getline(filename, line)
    stripped = text.strip()
    indent = len(text) - len(text.lstrip())
    # The statement spans the user's own statement, so a traceback marks all of it or nothing.
    width = max(len(stripped) - len("raise "), 1)
    holder = ("_" * width)[:width]
    if line > 1 and indent:
        code_text = "\n" * (line - 2) + "if 1:\n" + " " * indent + f"raise {holder}\n"
    else:
        code_text = "\n" * (line - 1) + f"raise {holder}\n"
    code = compile(code_text, filename, "exec")
    code = code.replace(co_name=name, **({"co_qualname": name} if sys.version_info >= (3, 11) else {}))
    # What laxify was handling when the run's check failed is not the user's context.
    exc.__suppress_context__ = True
    try:
        exec(code, {holder: exc})
    finally:
        del exc
