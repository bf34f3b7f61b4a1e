"""Exceptions under traced control flow: ``raise`` and Python's own errors on a path the data
may not take, and a ``raise`` of a function that its caller must follow.

A ``raise`` reached while laxify traces a branch or loop body that the data may not take
cannot raise then: it is recorded for run time in the run-time report (``runtime/report.py``)
with the exception's class, its arguments (traced values as the rule's payload, so that an
f-string message is formatted with the values of that run) and the user's line, and the
report raises it after the call. Outside traced control flow a ``raise`` is Python's own.
Python's own errors met while such a path is traced (``record_exception``) and a name a
traced loop that ran zero times left unassigned (``check_at``) are recorded the same way.

A converted function that may raise keeps a ``raised`` flag its caller follows (see
:class:`calling`): on the path where the callee raised, the caller does no more.
"""

from __future__ import annotations

import linecache
import os
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp

import laxify.ir  # noqa: F401 (its folder, for OWN_ROOTS)
from laxify.ir.errors import ConversionError, Location, NeedsPython
from laxify.runtime import report, trace
from laxify.runtime.capture import capture, output_avals
from laxify.runtime.dispatch.printing import Formatted, shows_tracer
from laxify.runtime.dispatch.values import UndefinedReturn

__all__ = [
    "ABOUT_TRACED",
    "Deferred",
    "HandlerNeedsData",
    "NOT_RETURNED",
    "PYTHON_ERRORS",
    "PathRaised",
    "always_raised",
    "call_raised",
    "calling",
    "check_at",
    "exception_",
    "expect_raise",
    "in_traced_region",
    "is_users_error",
    "leaving",
    "on_path",
    "raise_",
    "raise_where",
    "raised",
    "raised_or",
    "record_exception",
    "region_depth",
    "traced_region",
]

# Set on an error that refuses a traced value without saying so in its text (see
# ``laxify.fallback.about_a_traced_value``).
ABOUT_TRACED = "__laxify_about_a_traced_value__"

# Files whose frames are not the user's (laxify's runtime and IR, JAX).
OWN_ROOTS = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (__file__, sys.modules["laxify.ir"].__file__, jax.__file__)
)


# -- where tracing stands ------------------------------------------------------------------


def region_depth() -> int:
    """How many traced regions (branches, loop bodies) hold the code being traced."""
    return trace.current().depth


def in_traced_region() -> bool:
    """Whether a branch or loop body that the data may not take is being traced."""
    return trace.current().depth > 0


class traced_region:
    """``with traced_region():`` around the tracing of a traced ``if``'s branches or a traced
    loop's body: a ``raise`` met inside is recorded for run time, not raised. (Which runs take
    the path is the construct's business: it runs the region in a report frame of its own,
    whose report leaves it with its outputs, chosen as they are.)"""

    __slots__ = ("state",)

    def __enter__(self):
        self.state = state = trace.current()
        state.depth += 1
        state.slots.append(_BARRIER)  # a helper's raise met in here is this region's, not the statement's

    def __exit__(self, *exc):
        self.state.depth -= 1
        _pop_to_barrier(self.state.slots)
        return False


on_path = report.on_path


class calling:
    """``with calling():`` around a call of a converted function from converted code
    (``_lx.call``): a ``raise`` recorded for run time that the callee reaches outside its own
    traced branches and loops (it raises whenever it is called) propagates to the caller as
    :class:`PathRaised`, as Python's exception would, instead of returning a value nothing
    should see (``None`` for a helper that always raises)."""

    __slots__ = ()

    def __enter__(self):
        state = trace.current()
        state.calls.append([state.depth, False])
        state.slots.append(_BARRIER)

    def __exit__(self, kind, *exc):
        state = trace.current()
        raised = state.calls.pop()[1]
        _pop_to_barrier(state.slots)
        slot = statement_slot()
        if slot is None:
            return False  # (the statement that called it does not collect its flag)
        if kind is PathRaised and slot.in_try:
            raise CallHandlerNeedsData(slot.filename, slot.line)  # an `except` of the caller may catch it
        if kind is None and raised is not False:
            # The statement of the caller that made this call (see `expect_raise`) raised where
            # the callee did.
            slot.raised = raised if slot.raised is False else jnp.logical_or(slot.raised, raised)
        return False


# -- a helper's raise under a traced condition stops its caller -----------------------------
#
# A converted function that may raise on some paths (a `raise` under a traced condition, or a
# call of such a function) keeps a flag, `raised`, set where it raised, and gives it to the
# `_lx.call` that called it (`leaving`). Its caller, converted knowing that the function it
# calls may raise, brackets the statement that calls it: `_lx.expect_raise()` before and
# `if _lx.call_raised(): <raised; return>` after, so that on the path where the callee raised
# the caller does no more (its loops end, its later effects do not happen) and raises in turn.

_BARRIER = object()


def _slots() -> list:
    return trace.current().slots


def _pop_to_barrier(slots: list) -> None:
    while slots and slots.pop() is not _BARRIER:
        pass


class _Slot:
    __slots__ = ("raised", "in_try", "filename", "line", "frame")

    def __init__(self, in_try: bool, filename: str, line: int, frame):
        self.raised, self.in_try, self.filename, self.line = False, in_try, filename, line
        self.frame = frame  # the frame of the statement: a slot whose frame has ended is stale


def _on_stack(frame) -> bool:
    here = sys._getframe(2)
    while here is not None:
        if here is frame:
            return True
        here = here.f_back
    return False


def statement_slot():
    """The slot of the statement being traced (``expect_raise``), or ``None`` at a barrier
    (no statement around collects its calls' flags), after dropping the slots left behind by
    statements whose frames have ended (a trace that stopped between `expect_raise` and
    `call_raised`: a fallback, an error): a later statement must not collect into those."""
    slots = _slots()
    while slots and type(slots[-1]) is _Slot and not _on_stack(slots[-1].frame):
        slots.pop()
    return slots[-1] if slots and slots[-1] is not _BARRIER else None


def expect_raise(in_try: bool = False) -> None:
    """Before a statement that calls functions that may raise: collect where they raised.
    ``in_try``: the statement stands in the body of a ``try`` whose ``except`` may catch what
    they raise, whose handler would then run for some data only (see :class:`HandlerNeedsData`)."""
    frame = sys._getframe(1)
    statement_slot()
    _slots().append(_Slot(in_try, frame.f_code.co_filename, frame.f_lineno, frame))


def call_raised():
    """After that statement: where a function it called raised (a Python ``False`` where none
    could, a traced boolean where some did under a traced condition)."""
    slots = _slots()
    if statement_slot() is None:
        return False
    slot = slots.pop()
    slot.frame = None
    if slot.in_try and slot.raised is not False:
        raise CallHandlerNeedsData(slot.filename, slot.line)
    return slot.raised


def collect_flag(fn):
    """``fn`` returning ``(fn(...), raised)``: whether a function it called raised (see
    ``calling``), collected in a slot of its own, apart from the statement around."""

    def run(*args):
        slots = _slots()
        slot = _Slot(False, "", 0, sys._getframe())
        slots.append(slot)
        try:
            out = fn(*args)
        finally:
            while slots and slots.pop() is not slot:
                pass
            slot.frame = None
        return out, slot.raised

    return run


def raised_here() -> None:
    """A ``raise`` every run reaching this point makes, inside :func:`collect_flag`: its flag
    is set (elsewhere no flag collects it)."""
    slots = _slots()
    if slots and type(slots[-1]) is _Slot:
        slots[-1].raised = True


class _NotReturned:
    """What a lazy operand's side gives where it raised (``runtime/dispatch/logic._caught``):
    no value, never observed. ``None`` is a value the user's code may give."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<raised>"


NOT_RETURNED = _NotReturned()


def lazy_cond(pred, branches, slot, cast_all: bool = False, check=None):
    """``lax.cond(pred, *branches)`` of a lazy operand's sides (functions of no arguments),
    each traced once (``runtime/capture.py``) in a traced region and a report frame of its own.
    Where the statement around collects the flags of its calls (``slot``, from
    :func:`statement_slot` before the region), a call of a function that raised in a side sets
    it as it would outside the expression (`y = check(n) if c else n`), so the caller stops as
    Python's exception would stop it. The sides' values are joined as JAX promotes dtypes (all
    of them cast to the joined dtypes with ``cast_all``); a side that gives :data:`NOT_RETURNED` (it
    raised: never observed) gives zeros of the other's type. ``check``, given the sides' values,
    raises where they cannot be one value of the program."""

    def side(fn):
        flagged = collect_flag(fn) if slot is not None else (lambda: (fn(), False))

        def run():
            with traced_region():
                out, raised = flagged()
            return out, jnp.asarray(raised, jnp.bool_)

        return run

    runs = [capture(report.collected(side(b))) for b in branches]
    if check is not None:
        check(*(run.outputs[0][0] for run in runs))
    avals = [None if run.outputs[0][0] is NOT_RETURNED else output_avals(run.outputs[0][0]) for run in runs]
    known = [a for a in avals if a is not None] or [jax.ShapeDtypeStruct((), jnp.float32)]
    first = known[0]
    for other in known[1:]:
        if jax.tree_util.tree_structure(other) != jax.tree_util.tree_structure(first) or any(
            a.shape != b.shape for a, b in zip(jax.tree_util.tree_leaves(first), jax.tree_util.tree_leaves(other))
        ):
            raise TypeError("the sides of a traced conditional give values of different structures or shapes")
    dtypes = [jnp.result_type(*leaves) for leaves in zip(*(jax.tree_util.tree_leaves(a) for a in known))]
    cast = cast_all or any(a.dtype != d for k in known for a, d in zip(jax.tree_util.tree_leaves(k), dtypes))
    treedef = jax.tree_util.tree_structure(first)
    union = report.Union([run.outputs[1] for run in runs])

    def replayed(k: int):
        def run():
            (out, raised), found = runs[k].replay()
            if out is NOT_RETURNED:
                out = jax.tree_util.tree_unflatten(
                    treedef, [jnp.zeros(a.shape, d) for a, d in zip(jax.tree_util.tree_leaves(first), dtypes)]
                )
            elif cast:
                out = jax.tree_util.tree_unflatten(
                    treedef, [jnp.asarray(v, d) for v, d in zip(jax.tree_util.tree_leaves(out), dtypes)]
                )
            return (out, raised), union.of(k, found)

        return run

    (out, raised), found = jax.lax.cond(pred, *(replayed(k) for k in range(len(runs))))
    report.absorb(found)
    if slot is not None:
        slot.raised = raised if slot.raised is False else jnp.logical_or(slot.raised, raised)
    return out


def raised_or(flag):
    """After a statement in a loop that calls functions that may raise: ``flag`` or where one
    of them raised (a Python ``False`` while neither is traced)."""
    raised = call_raised()
    if raised is False:
        return flag
    if flag is False:
        return jnp.asarray(raised, jnp.bool_)
    return jnp.logical_or(flag, raised)


def leaving(raised, value):
    """The end of a converted function that may raise: ``value``, with ``raised`` (where it
    raised) given to the ``_lx.call`` that called it (see :class:`calling`)."""
    if raised is False:
        return value
    state = trace.current()
    if _called_here(state):
        state.calls[-1][1] = raised
    return value


def _called_here(state: trace.TraceState) -> bool:
    """Whether the code being traced is a converted function called from converted code, outside
    its own traced branches and loops (see :class:`calling`)."""
    return bool(state.calls) and state.calls[-1][0] == state.depth


def always_raised(value):
    """The end of a converted function every path of which raised (each ``raise`` recorded for
    run time): called from converted code, it stops its caller as Python's exception would
    (:class:`PathRaised`: the value, never observed, would otherwise meet the caller's
    operators as ``None``); else ``value``."""
    state = trace.current()
    if _called_here(state):
        frame = sys._getframe(1)
        raise PathRaised(state.depth, frame.f_code.co_filename, frame.f_lineno)
    return value


def in_call() -> bool:
    """Whether a converted function called from converted code is running (see :class:`calling`)."""
    return bool(trace.current().calls)


class PathRaised(Exception):
    """Tracing met a ``raise`` (already recorded for run time, or left out where nothing
    reports it) that every run reaching this point of the trace makes: the path being traced
    raises. It goes up through the user's functions, as the exception would, to the traced
    branch or loop body that holds it, which then gives values nothing observes (and sets the
    return flag, so the function does no more), or, at ``depth`` 0 (the function raises on
    every input), to the top of the trace, whose result is never observed (``None``)."""

    def __init__(self, depth: int, filename: str = "<unknown>", line: int = 0):
        super().__init__("a raise recorded for run time")
        self.depth, self.filename, self.line = depth, filename, line


def at_top(error: PathRaised):
    """What the outermost converted function returns when :class:`PathRaised` reaches it: ``None``
    where every run raises (the result is never observed); else it escaped a construct that
    could not hold it, which laxify cannot convert (to_static runs the function eagerly)."""
    if error.depth == 0:
        return None  # (the report says it raised)

    text = linecache.getline(error.filename, error.line)
    raise NeedsPython(  # to_static runs the function eagerly: Python's exact result
        "this `raise`, in a function called on a path the data may not take, could not be "
        "recorded for run time by the construct around the call",
        Location(error.filename, error.line, len(text) - len(text.lstrip()), text.rstrip("\n")),
        "Call the function in a plain `if` on the traced value, or call it unconverted.",
    )


class HandlerNeedsData(ConversionError):
    """A ``raise`` under a traced condition inside a ``try`` whose ``except`` may catch it:
    whether a handler runs depends on the data, which one XLA program cannot decide. The
    function is not one program: ``to_static`` runs it eagerly (with a ``FallbackWarning`` at
    the ``raise``); elsewhere it is this located error."""

    CONSTRUCT = "raise"
    REASON = (
        "it raises under a condition on a traced value inside a `try` whose `except` clauses "
        "may catch the exception: which handler runs would depend on the data"
    )
    FIX = (
        "Compute the handler's value with the condition instead of raising (for example "
        "`r = jnp.where(b == 0, 0.0, a / b)`), or move the `raise` out of the `try`."
    )

    MESSAGE = (
        "This `raise` stands under a condition on a traced value inside a `try` whose `except` "
        "clauses may catch it: which of them runs would depend on the data, and one XLA "
        "program cannot choose a handler at run time."
    )

    def __init__(self, filename: str, line: int):
        text = linecache.getline(filename, line)
        super().__init__(
            self.MESSAGE, Location(filename, line, len(text) - len(text.lstrip()), text.rstrip("\n")), self.FIX
        )
        self.filename, self.line = filename, line


class CallHandlerNeedsData(HandlerNeedsData):
    """A call of a function that raises on a path the data may not take, inside a ``try``
    whose ``except`` may catch it (see :class:`HandlerNeedsData`)."""

    CONSTRUCT = "call"
    REASON = (
        "the function it calls raises on a path the data may not take, inside a `try` whose "
        "`except` clauses may catch the exception: which handler runs would depend on the data"
    )
    FIX = (
        "Compute the handler's value with the condition instead of raising (for example "
        "`r = jnp.where(b == 0, 0.0, a / b)`), or move the call out of the `try`."
    )

    MESSAGE = (
        "This call stands inside a `try` whose `except` clauses may catch what the function "
        "it calls raises on a path the data may not take: which of them runs would depend on the "
        "data, and one XLA program cannot choose a handler at run time."
    )


# -- raise -----------------------------------------------------------------------------------


class Deferred:
    """``Cls(*args, **kwargs)`` not called yet: an exception made from the values of the run
    in which its ``raise`` is reached."""

    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args: tuple, kwargs: dict):
        self.func, self.args, self.kwargs = func, args, kwargs

    def make(self) -> BaseException:
        args = tuple(_text(a) for a in self.args)
        kwargs = {k: _text(v) for k, v in self.kwargs.items()}
        return _instance(self.func(*args, **kwargs))


def _message_parts(value):
    return (value.args, value.kwargs) if isinstance(value, Deferred) else value


def formatted_too_early(construct: str, filename: str, line: int) -> NeedsPython:
    """The located error (an eager fallback for ``to_static``) of a ``raise`` or ``assert``
    whose message holds a string formatted from a traced value while tracing."""
    text = linecache.getline(filename, line)
    return NeedsPython(
        f"the message of this `{construct}` holds a string formatted from a traced value before the "
        f"`{construct}` runs (in an earlier statement or another function), which would show JAX's "
        "placeholder for the value instead of the value",
        Location(filename, line, len(text) - len(text.lstrip()), text.rstrip("\n")),
        f"Format the message in the `{construct}` statement itself (for example "
        f'`{construct} {"ValueError(" if construct == "raise" else "x > 0, "}f"bad value {{x}}"'
        f"{')' if construct == 'raise' else ''}`): laxify formats it with the values of the run.",
    )


def message_needs_the_run(construct: str, filename: str, line: int) -> NeedsPython:
    """The located error (an eager fallback for ``to_static``) of a ``raise`` or ``assert``
    that every run reaching it makes, whose message formats a traced value, where nothing
    reports an error after the run (a plain ``jax.jit(laxify.convert(f))``)."""
    text = linecache.getline(filename, line)
    return NeedsPython(
        f"this `{construct}` fails on every run that reaches it, and its message formats a traced "
        "value, which is only known when the program runs: under a plain `jax.jit` nothing raises it "
        "after the run",
        Location(filename, line, len(text) - len(text.lstrip()), text.rstrip("\n")),
        "Call the function through laxify.to_static, or wrap the jitted function in laxify.checked(...): "
        "the exception is then raised after the call, with the values of the run.",
    )


def exception_(func, *args, **kwargs) -> Deferred:
    """``func(*args, **kwargs)`` in ``raise func(...)``: called when the exception is raised."""
    return Deferred(func, args, kwargs)


def _text(value):
    if isinstance(value, Formatted):
        return value.text()
    return value


def _instance(value) -> BaseException:
    """What ``raise value`` raises: an instance, or a class called without arguments."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return value()
    if isinstance(value, BaseException):
        return value
    return TypeError("exceptions must derive from BaseException")


def _made(value) -> BaseException:
    return value.make() if isinstance(value, Deferred) else _instance(value)


def raised() -> UndefinedReturn:
    """What a function returns from a ``raise`` recorded for run time: never observed (the
    program's result is discarded when the check fails); zeros where a traced branch or loop
    must carry it, as the return value before any ``return`` (the function's last statement
    returns ``None`` for it: see the raise and return converters)."""
    return UndefinedReturn()


def raise_(exception: Callable[[], Any], cause: Callable[[], Any] | None = None, in_try: bool = False) -> None:
    """``raise exception() [from cause()]``. Outside traced control flow: raised now, as Python
    does. Inside it: recorded for run time (see the module's docstring); ``in_try``: the
    ``raise`` stands in the body of a ``try`` whose ``except`` may catch it, whose handler
    would then run for some data only: a located ``ConversionError``."""
    _raise(exception, cause, in_try, sys._getframe(1))


def raise_where(test, exception: Callable[[], Any], flag, cause: Callable[[], Any] | None = None):
    """``if test: raise exception() [from cause()]`` in a loop body, giving ``flag`` or
    ``test`` (where it raised). A traced ``test`` is no ``lax.cond``: the check is recorded
    on the path being traced where ``test`` holds, and the rest of the iteration runs on
    with values nothing observes (the converter stops ``while`` loops and prints on the
    flag). A Python ``test`` is Python's ``if``."""
    frame = sys._getframe(1)
    if not isinstance(test, jax.core.Tracer):
        if not test:
            return flag
        _raise(exception, cause, False, frame)
        return True
    shape = tuple(getattr(test, "shape", ()))
    if shape != ():
        test = jnp.reshape(test, ()) if int(jnp.size(test)) == 1 else bool(test)  # JAX's error for more
    pred = jnp.asarray(test) != 0 if jnp.result_type(test) != jnp.bool_ else jnp.asarray(test)
    with traced_region(), on_path(lambda: pred):
        _raise(exception, cause, False, frame)
    return pred if flag is False else jnp.logical_or(flag, pred)


def _raise(exception, cause, in_try: bool, frame) -> None:
    value = exception()
    if in_try and in_traced_region():
        raise HandlerNeedsData(frame.f_code.co_filename, frame.f_lineno)
    reason = cause() if cause is not None else None
    if shows_tracer(tuple(_message_parts(v) for v in (value, reason))):
        raise formatted_too_early("raise", frame.f_code.co_filename, frame.f_lineno)
    leaves, rebuild = _split((value, reason))
    state = trace.current()
    if not in_traced_region() and not (state.reporting and (leaves or _after_checks(state, in_try))):
        if leaves:  # (its message would show JAX's placeholders for them)
            raise message_needs_the_run("raise", frame.f_code.co_filename, frame.f_lineno)
        error = _made(value)
        if cause is not None:
            error.__cause__ = None if reason is None else _made(reason)
            error.__suppress_context__ = True
        raise error.with_traceback(None)
    filename, line, name = frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name

    def make(values):
        value, reason = rebuild(values)
        exc = _made(value)
        if reason is not None:
            exc.__cause__ = _made(reason)
            exc.__suppress_context__ = True
        return exc

    rule = report.Rule(make, filename, line, name, f"{_escape(_preview(value))} (raise at {filename}:{line})")
    report.record(True, rule, leaves)
    if _called_here(state):
        # Outside the callee's own traced branches: every call raises here; its caller stops too.
        raise PathRaised(state.depth, filename, line)


def _after_checks(state: trace.TraceState, in_try: bool) -> bool:
    """Whether this run recorded a check before a ``raise`` that every run reaching it makes
    (outside traced control flow): a run whose earlier check fails raised there, as Python
    would have, so this one is recorded after it (it fails on every run that gets here)
    rather than raised while tracing. Not where an ``except`` of the function or of a caller
    may catch it: Python's handler runs for it while tracing."""
    if in_try or not state.recorded:
        return False
    return not any(slot is not _BARRIER and slot.in_try for slot in state.slots)


class _Open:
    """A :class:`Deferred` call or a :class:`Formatted` message opened up as a pytree node, so
    that the traced values in its arguments are leaves."""

    __slots__ = ("kind", "head", "args", "kwargs")

    def __init__(self, kind: type, head, args: tuple, kwargs: dict):
        self.kind, self.head, self.args, self.kwargs = kind, head, args, kwargs

    def closed(self):
        return self.kind(self.head, self.args, self.kwargs)


jax.tree_util.register_pytree_node(
    _Open, lambda o: ((o.args, o.kwargs), (o.kind, o.head)), lambda aux, children: _Open(aux[0], aux[1], *children)
)


def _opened(v):
    if isinstance(v, Deferred):
        return _Open(Deferred, v.func, tuple(map(_opened, v.args)), {k: _opened(x) for k, x in v.kwargs.items()})
    if isinstance(v, Formatted):
        return _Open(type(v), v.template, tuple(v.args), dict(v.kwargs))
    return v


def _closed(v):
    if isinstance(v, _Open):
        return v.kind(v.head, tuple(map(_closed, v.args)), {k: _closed(x) for k, x in v.kwargs.items()})
    return v


def check_at(ok, exception: Callable[[], BaseException], filename: str, line: int) -> None:
    """Record for run time: ``exception()`` is raised (at ``filename:line``, in the user's
    function there) where ``ok`` is false on the path being traced."""
    name = "<module>"
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            name = frame.f_code.co_name
            break
        frame = frame.f_back
    text = f"{type(exception()).__qualname__}: {exception()}"
    rule = report.Rule(
        lambda values: exception(), filename, line, name, f"{_escape(text)} (raise at {filename}:{line})"
    )
    failed = jnp.logical_not(ok) if isinstance(ok, jax.core.Tracer) else not ok
    report.record(failed, rule)


# What Python raises by itself in code that runs only on some paths (a static `10 // k`, an
# empty list's `pop`, a missing key): recorded for run time where met in a traced branch.
# JAX's own errors (a traced value where Python needs a concrete one, ...) and laxify's are
# not the user's: they go on as they are.
PYTHON_ERRORS = (ArithmeticError, LookupError, ValueError, AssertionError)


def is_users_error(error: BaseException) -> bool:
    """Whether ``error``, raised while tracing a path the data may not take, is one Python
    would raise there (so it belongs to that path, at run time): the builtin kinds of
    :data:`PYTHON_ERRORS`, or an exception class of the user's."""
    if isinstance(error, PathRaised):
        return True  # recorded already: the branch raises
    kind = type(error)
    module = getattr(kind, "__module__", "") or ""
    if module.startswith(("jax", "laxify", "jaxlib")) or isinstance(error, UnboundLocalError):
        return False
    if isinstance(error, PYTHON_ERRORS):
        return True
    return isinstance(error, Exception) and module not in ("builtins",) and not module.startswith(("numpy", "libcst"))


def record_exception(error: BaseException) -> None:
    """Record ``error`` (raised by Python while tracing the path being traced) for run time:
    raised again, at the user's line where it arose, if the program takes this path."""
    if isinstance(error, PathRaised):
        return  # recorded where it was raised
    filename, line, name = "<unknown>", 0, "<module>"
    entry = error.__traceback__
    while entry is not None:
        code = entry.tb_frame.f_code
        if not code.co_filename.startswith(OWN_ROOTS):
            filename, line, name = code.co_filename, entry.tb_lineno, code.co_name
        entry = entry.tb_next

    def again():
        try:
            return type(error)(*error.args)
        except Exception:  # a class whose arguments are not its `args`
            return error.with_traceback(None)

    text = _escape(f"{type(error).__qualname__}: {error}")
    report.record(
        True, report.Rule(lambda values: again(), filename, line, name, f"{text} (raise at {filename}:{line})")
    )


def _split(tree):
    """The traced leaves of ``tree`` (Formatted messages and Deferred calls opened up), and a
    function that rebuilds ``tree`` from their concrete values."""
    flat, treedef = jax.tree_util.tree_flatten(tuple(map(_opened, tree)), is_leaf=lambda x: x is None)
    traced = [k for k, leaf in enumerate(flat) if isinstance(leaf, jax.core.Tracer)]
    from laxify.runtime.numbers import python_type  # (numbers imports this module)

    # A traced value that is a Python number in eager code is one in the message (`{i!r}` of a
    # loop index is `3`, as eagerly, not `Array(3, dtype=int32)`).
    kinds = [python_type(flat[k]) for k in traced]

    def rebuild(values):
        leaves = list(flat)
        for k, kind, v in zip(traced, kinds, values):
            leaves[k] = kind(v) if kind is not None and getattr(v, "shape", None) == () else v
        return tuple(map(_closed, jax.tree_util.tree_unflatten(treedef, leaves)))

    return [flat[k] for k in traced], rebuild


def _preview(value) -> str:
    """The exception's class and, where no traced value is in it, its message: what a plain
    ``checkify`` user sees of it."""
    func = value.func if isinstance(value, Deferred) else value if isinstance(value, type) else type(value)
    return getattr(func, "__qualname__", None) or type(func).__qualname__


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
