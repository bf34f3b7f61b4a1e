"""The run-time error channel: what one XLA program reports when it runs.

A ``raise`` reached while laxify traces a branch or loop body that the data may not take
cannot raise then: it is recorded as a ``checkify.debug_check`` that fails exactly when the
program takes that path, with the exception's class, its arguments (traced values as the
check's payload, so that an f-string message is formatted with the values of that run) and
the user's line. After the call, ``report`` turns the first failed check back into the
user's exception, raised at the user's line. Outside traced control flow a ``raise`` is
Python's own.

``debug_check`` is a no-op unless the program is functionalized by ``checkify``: ``to_static``
does that itself for a program that holds such a check (and only then: a function without
one pays nothing), and ``laxify.checked`` does it for ``jax.jit(laxify.convert(f))``, ``vmap``,
``grad`` and ``scan`` around converted code. Python's own errors met while such a path is
traced (``record_exception``) and a name a traced loop that ran zero times left unassigned
(``check_at``) go through the same channel.
"""

from __future__ import annotations

import itertools
import linecache
import os
import re
import sys
import threading
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.experimental import checkify

import laxify.ir  # noqa: F401 (its folder, for _OWN_ROOTS)
from laxify.ir.errors import ConversionError, FallbackWarning, Location
from laxify.ir.naming import is_raise_flag
from laxify.runtime.dispatch.printing import Formatted
from laxify.runtime.dispatch.values import UndefinedReturn

__all__ = [
    "ABOUT_TRACED", "Deferred", "TraceOutputs", "HandlerNeedsData", "NeedsChecks", "PYTHON_ERRORS", "PathRaised", "call_raised", "calling", "check_at", "exception_", "expect_raise", "leaving",
    "functionalizing",
    "in_traced_region", "is_functionalizing", "is_users_error", "on_path", "raise_", "raise_where", "raised", "raised_or", "record_exception", "recorded", "report",
    "lose_flag", "raise_flags", "raised_in", "traced_region", "unflagged", "without_checks",
]

_state = threading.local()

# Set on an error that refuses a traced value without saying so in its text (see
# ``laxify.fallback.about_a_traced_value``).
ABOUT_TRACED = "__laxify_about_a_traced_value__"

# Files whose frames are not the user's (laxify's runtime and IR, JAX).
_OWN_ROOTS = tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in (
    __file__, sys.modules["laxify.ir"].__file__, jax.__file__))


# -- where tracing stands ------------------------------------------------------------------

def region_depth() -> int:
    """How many traced regions (branches, loop bodies) hold the code being traced."""
    return getattr(_state, "depth", 0)


def in_traced_region() -> bool:
    """Whether a branch or loop body that the data may not take is being traced."""
    return getattr(_state, "depth", 0) > 0


class traced_region:
    """``with traced_region():`` around the tracing of a traced ``if``'s branches or a traced
    loop's body: a ``raise`` met inside is recorded for run time, not raised. ``taken``, a
    function of no arguments, gives (while tracing inside) whether the program is on this
    path: under ``vmap`` a batched ``cond`` runs every branch and a batched ``while`` runs its
    body for finished elements too, so a recorded ``raise`` fails only where the path is taken.
    It is called only where a ``raise`` is recorded (nothing is added to other programs)."""

    __slots__ = ("taken",)

    def __init__(self, taken: Callable[[], Any] | None = None):
        self.taken = taken

    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1
        paths = getattr(_state, "paths", None)
        if paths is None:
            paths = _state.paths = []
        paths.append(self.taken)
        _slots().append(_BARRIER)  # a helper's raise met in here is this region's, not the statement's

    def __exit__(self, *exc):
        _state.depth -= 1
        _state.paths.pop()
        _pop_to_barrier()
        return False


class on_path:
    """``with on_path(taken):`` around an operand that is evaluated on every run but whose
    value is used only where ``taken()`` holds (a side of a traced conditional expression, the
    right operand of a traced ``and``/``or``, chosen by ``jnp.where``): a check recorded while it
    is evaluated (an index past a list's count) fails only there, as Python evaluates it only
    there. A ``raise`` is not affected (such operands hold no statements, and no calls)."""

    __slots__ = ("taken",)

    def __init__(self, taken: Callable[[], Any]):
        self.taken = taken

    def __enter__(self):
        paths = getattr(_state, "paths", None)
        if paths is None:
            paths = _state.paths = []
        paths.append(self.taken)

    def __exit__(self, *exc):
        _state.paths.pop()
        return False


def _on_path():
    """Whether the program is on the path being traced: the conjunction of the enclosing
    regions' conditions (``True`` where none has one)."""
    taken = True
    for condition in getattr(_state, "paths", ()):
        if condition is not None:
            here = jnp.asarray(condition(), jnp.bool_)
            taken = here if taken is True else jnp.logical_and(taken, here)
    return taken


class calling:
    """``with calling():`` around a call of a converted function from converted code
    (``_lx.call``): a ``raise`` recorded for run time that the callee reaches outside its own
    traced branches and loops (it raises whenever it is called) propagates to the caller as
    :class:`PathRaised`, as Python's exception would, instead of returning a value nothing
    should see (``None`` for a helper that always raises)."""

    __slots__ = ()

    def __enter__(self):
        frames = getattr(_state, "frames", None)
        if frames is None:
            frames = _state.frames = []
        frames.append([getattr(_state, "depth", 0), False])
        _slots().append(_BARRIER)

    def __exit__(self, kind, *exc):
        raised = _state.frames.pop()[1]
        _pop_to_barrier()
        slot = statement_slot()
        if slot is None:
            if raised is not False:
                lose_flag()  # the statement that called it did not collect its flag
            return False
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
    slots = getattr(_state, "slots", None)
    if slots is None:
        slots = _state.slots = []
    return slots


def _pop_to_barrier() -> None:
    slots = _state.slots
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
    is set (elsewhere no flag collects it: see ``lose_flag``)."""
    slots = _slots()
    if slots and type(slots[-1]) is _Slot:
        slots[-1].raised = True
    else:
        lose_flag()


def lazy_cond(pred, branches, slot, regions=None):
    """``lax.cond(pred, *branches)`` of a lazy operand's sides (functions of no arguments),
    which run in traced regions: where the statement around collects the flags of its calls
    (``slot``, from :func:`statement_slot` before the region), a call of a function that raised
    in a side sets it as it would outside the expression (`y = check(n) if c else n`), so the
    caller stops as Python's exception would stop it. ``regions``: a context manager factory per
    side, entered around it (``traced_region`` on the side's path)."""
    regions = regions or [None] * len(branches)

    def in_region(fn, region):
        if region is None:
            return fn

        def run():
            with region():
                return fn()

        return run

    if slot is None:
        return jax.lax.cond(pred, *(in_region(b, r) for b, r in zip(branches, regions)))

    def flagged(fn):
        collecting = collect_flag(fn)  # (inside the region: a call's flag stops at its slot)

        def run():
            out, raised = collecting()
            return out, jnp.asarray(raised, jnp.bool_)

        return run

    out, raised = jax.lax.cond(pred, *(in_region(flagged(b), r) for b, r in zip(branches, regions)))
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
    frames = getattr(_state, "frames", None)
    if raised is False:
        return value
    if frames:
        if frames[-1][0] == getattr(_state, "depth", 0):
            frames[-1][1] = raised
        else:
            lose_flag()
    elif getattr(_state, "depth", 0) == 0 and (found := _top_flags()) is not None:
        found.add(raised)  # the outermost function's: whether the program raised
    else:
        lose_flag()
    return value


def in_call() -> bool:
    """Whether a converted function called from converted code is running (see :class:`calling`)."""
    return bool(getattr(_state, "frames", None))


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
        found = _top_flags()
        if found is not None:
            found.add(True)  # every run that gets here raised
        return None
    from laxify.ir.errors import NeedsPython

    text = linecache.getline(error.filename, error.line)
    raise NeedsPython(  # to_static runs the function eagerly: Python's exact result
        "this `raise`, in a function called on a path the data may not take, could not be "
        "recorded for run time by the construct around the call (an `and`/`or` operand)",
        Location(error.filename, error.line, len(text) - len(text.lstrip()), text.rstrip("\n")),
        "Call the function in a plain `if` on the traced value (not in an `and`/`or` operand), or "
        "call it unconverted.")


class functionalizing:
    """``with functionalizing():`` around a trace whose recorded checks will be reported (a
    trace that ``checkify`` functionalizes, or ``to_static``'s first trace, which makes the
    program again with checkify when it records one). There, a ``raise`` outside traced
    control flow whose exception holds traced values is recorded too (it always fails), so
    that its message has the values of the run; elsewhere it raises while tracing."""

    __slots__ = ()

    def __enter__(self):
        _state.functionalizing = getattr(_state, "functionalizing", 0) + 1
        marks = getattr(_state, "marks", None)
        if marks is None:
            marks = _state.marks = []
        # A trace that stopped between `expect_raise` and `call_raised` left its slot behind:
        # not this trace's (a call of it, not bracketed, must not find that slot).
        _slots().append(_BARRIER)
        # The checks this trace records come after `recorded()`, its slots after these.
        marks.append((recorded(), len(_state.slots)))

    def __exit__(self, *exc):
        _state.functionalizing -= 1
        _state.marks.pop()
        _pop_to_barrier()
        return False


def is_functionalizing() -> bool:
    """Whether the trace under way will have its run-time checks reported (see
    :class:`functionalizing`)."""
    return getattr(_state, "functionalizing", 0) > 0


class TraceOutputs:
    """What a trace gathers to be outputs of its program (``marker``: a value of that trace):
    only its own values can be (not those of a transformation inside it, such as a ``vmap``
    around converted code, whose values cannot leave it)."""

    __slots__ = ("trace",)

    def __init__(self, marker):
        self.trace = getattr(marker, "_trace", None)

    def holds(self, value) -> bool:
        return self.trace is not None and getattr(value, "_trace", None) is self.trace


class raise_flags(TraceOutputs):
    """``with raise_flags(marker) as found:`` around a trace (``marker``: a value of it): the
    ``raised`` flag of the outermost converted function (``leaving`` at the top, or ``True``
    where a ``raise`` is met on every path) goes into ``found.flag``. ``flag_only``: the trace's
    ``raise`` checks are counted but not made (no checkify): a program whose every check is a
    flagged ``raise`` (``unflagged()`` unchanged) reports *whether* it raised by that flag
    alone, one boolean output; the exception itself is built by the checkified program, run
    again only on a call that raised (``int_overflow.CodedJit``). Checkify's rule for ``while``
    gives every loop of a program an effect that sends each call down JAX's slow dispatch path
    (collatz(27) with a guard: 60 us a cached call against 7), which the flag avoids."""

    __slots__ = ("flag", "flag_only")

    def __init__(self, marker, flag_only: bool = False):
        super().__init__(marker)
        self.flag = False
        self.flag_only = flag_only

    def __enter__(self) -> "raise_flags":
        stack = getattr(_state, "flags", None)
        if stack is None:
            stack = _state.flags = []
        stack.append(self)
        if self.flag_only:
            _state.flag_only = getattr(_state, "flag_only", 0) + 1
        return self

    def __exit__(self, *exc):
        _state.flags.pop()
        if self.flag_only:
            _state.flag_only -= 1
        return False

    def add(self, raised) -> None:
        if raised is False:
            return
        if raised is True:
            self.flag = True
        elif self.holds(raised):
            raised = jnp.asarray(raised, jnp.bool_)
            self.flag = raised if self.flag is False else jnp.logical_or(self.flag, raised)
        else:
            lose_flag()  # a value of a transformation inside the trace (a vmap): it cannot leave it


def _top_flags() -> raise_flags | None:
    stack = getattr(_state, "flags", None)
    return stack[-1] if stack else None


class without_checks:
    """``with without_checks():`` around a trace whose program cannot hold checks (``export``:
    checkify's error effect has no serialized form): a ``raise`` under a traced condition
    still ends its path, but is not checked; said once per line with a ``FallbackWarning``."""

    __slots__ = ()

    def __enter__(self):
        _state.unchecked = getattr(_state, "unchecked", 0) + 1

    def __exit__(self, *exc):
        _state.unchecked -= 1
        return False


_warned: set[tuple[str, int]] = set()


def _emit(pred, message: str, leaves, filename: str, line: int, flagged: bool = False) -> None:
    """``debug_check(pred, message, *leaves)`` where the trace is functionalized (see
    :class:`functionalizing`), unless checks are left out (see :class:`without_checks`).
    ``flagged``: a ``raise`` of the user's, which also sets the function's ``raised`` flag (see
    :class:`raise_flags`); any other check makes the trace need checkify to be reported."""
    if getattr(_state, "unchecked", 0):
        if (filename, line) not in _warned:
            _warned.add((filename, line))
            warnings.warn_explicit(
                "This exception, raised under a traced condition, is not checked by the exported "
                "program (a serialized program cannot hold laxify's run-time checks): on an input "
                "that raises here, the loaded function returns a value.", FallbackWarning, filename, line)
        return
    if not is_functionalizing():
        # Nothing will report it (plain `jax.jit(laxify.convert(f))`): no check, whose effect
        # alone would make every call of the program take JAX's slow dispatch path.
        return
    if not flagged:
        _state.unflagged = getattr(_state, "unflagged", 0) + 1
    if not getattr(_state, "flag_only", 0):
        checkify.debug_check(pred, message, *leaves)
    _note_recorded()


def recorded() -> int:
    """How many run-time checks have been recorded in this thread (a trace that recorded one
    needs its program functionalized)."""
    return getattr(_state, "recorded", 0)


def unflagged() -> int:
    """How many of those the functions' ``raised`` flags may not show (checks other than the
    user's ``raise``, and flags that did not reach the top: see :class:`raise_flags`)."""
    return getattr(_state, "unflagged", 0)


def raised_in(names) -> None:
    """A branch or loop body whose every run raised (``PathRaised``), whose carried ``names``
    get set where it ran: without a ``raised`` flag among them, the flag is lost."""
    if not any(map(is_raise_flag, names)):
        lose_flag()


def lose_flag() -> None:
    """A ``raise`` recorded for run time whose ``raised`` flag did not reach the function's
    top (a helper's flag that no caller's statement collected, a branch that raised on every
    path without a flag to set): only checkify reports that trace's checks."""
    _state.unflagged = getattr(_state, "unflagged", 0) + 1


class HandlerNeedsData(ConversionError):
    """A ``raise`` under a traced condition inside a ``try`` whose ``except`` may catch it:
    whether a handler runs depends on the data, which one XLA program cannot decide. The
    function is not one program: ``to_static`` runs it eagerly (with a ``FallbackWarning`` at
    the ``raise``); elsewhere it is this located error."""

    CONSTRUCT = "raise"
    REASON = ("it raises under a condition on a traced value inside a `try` whose `except` clauses "
              "may catch the exception: which handler runs would depend on the data")
    FIX = ("Compute the handler's value with the condition instead of raising (for example "
           "`r = jnp.where(b == 0, 0.0, a / b)`), or move the `raise` out of the `try`.")

    MESSAGE = ("This `raise` stands under a condition on a traced value inside a `try` whose `except` "
               "clauses may catch it: which of them runs would depend on the data, and one XLA "
               "program cannot choose a handler at run time.")

    def __init__(self, filename: str, line: int):
        text = linecache.getline(filename, line)
        super().__init__(
            self.MESSAGE, Location(filename, line, len(text) - len(text.lstrip()), text.rstrip("\n")), self.FIX)
        self.filename, self.line = filename, line


class CallHandlerNeedsData(HandlerNeedsData):
    """A call of a function that raises on a path the data may not take, inside a ``try``
    whose ``except`` may catch it (see :class:`HandlerNeedsData`)."""

    CONSTRUCT = "call"
    REASON = ("the function it calls raises on a path the data may not take, inside a `try` whose "
              "`except` clauses may catch the exception: which handler runs would depend on the data")
    FIX = ("Compute the handler's value with the condition instead of raising (for example "
           "`r = jnp.where(b == 0, 0.0, a / b)`), or move the call out of the `try`.")

    MESSAGE = ("This call stands inside a `try` whose `except` clauses may catch what the function "
               "it calls raises on a path the data may not take: which of them runs would depend on the "
               "data, and one XLA program cannot choose a handler at run time.")


class NeedsChecks(Exception):
    """Raised out of a trace that recorded a run-time check for a program that is not
    functionalized: the caller traces it again with ``checkify``."""


def _note_recorded() -> None:
    _state.recorded = getattr(_state, "recorded", 0) + 1


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


def exception_(func, *args, **kwargs) -> Deferred:
    """``func(*args, **kwargs)`` in ``raise func(...)``: called when the exception is raised."""
    return Deferred(func, args, kwargs)


def _text(value):
    if isinstance(value, Formatted):
        return value.template.format(*value.args, **value.kwargs)
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
    with traced_region(lambda: pred):
        _raise(exception, cause, False, frame)
    return pred if flag is False else jnp.logical_or(flag, pred)


def _raise(exception, cause, in_try: bool, frame) -> None:
    value = exception()
    if in_try and in_traced_region():
        raise HandlerNeedsData(frame.f_code.co_filename, frame.f_lineno)
    reason = cause() if cause is not None else None
    leaves, rebuild = _split((value, reason))
    if not in_traced_region() and not (getattr(_state, "functionalizing", 0) and (leaves or _after_checks(in_try))):
        error = _made(value)
        if cause is not None:
            error.__cause__ = None if reason is None else _made(reason)
            error.__suppress_context__ = True
        raise error.with_traceback(None)
    filename, line, name = frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name
    key = _register(_Recipe(rebuild, filename, line, name))
    text = _escape(_preview(value))
    _emit(jnp.logical_not(_on_path()), f"{text} (raise #{key} at {filename}:{line})", leaves, filename, line,
          flagged=True)
    frames, depth = getattr(_state, "frames", None), getattr(_state, "depth", 0)
    if frames and frames[-1][0] == depth:
        # Outside the callee's own traced branches: every call raises here; its caller stops too.
        raise PathRaised(depth, filename, line)


def _after_checks(in_try: bool) -> bool:
    """Whether this trace recorded a check before a ``raise`` that every run reaching it makes
    (outside traced control flow): a run whose earlier check fails raised there, as Python
    would have, so this one is recorded after it (it fails on every run that gets here)
    rather than raised while tracing. Not where an ``except`` of the function or of a caller
    may catch it: Python's handler runs for it while tracing."""
    marks = getattr(_state, "marks", None)
    if in_try or not marks or recorded() <= marks[-1][0]:
        return False
    return not any(slot is not _BARRIER and slot.in_try for slot in _slots()[marks[-1][1]:])


class _Open:
    """A :class:`Deferred` call or a :class:`Formatted` message opened up as a pytree node, so
    that the traced values in its arguments are leaves."""

    __slots__ = ("kind", "head", "args", "kwargs")

    def __init__(self, kind: type, head, args: tuple, kwargs: dict):
        self.kind, self.head, self.args, self.kwargs = kind, head, args, kwargs

    def closed(self):
        return self.kind(self.head, self.args, self.kwargs)


jax.tree_util.register_pytree_node(
    _Open, lambda o: ((o.args, o.kwargs), (o.kind, o.head)),
    lambda aux, children: _Open(aux[0], aux[1], *children))


def _opened(v):
    if isinstance(v, Deferred):
        return _Open(Deferred, v.func, tuple(map(_opened, v.args)), {k: _opened(x) for k, x in v.kwargs.items()})
    if isinstance(v, Formatted):
        return _Open(Formatted, v.template, tuple(v.args), dict(v.kwargs))
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
    key = _register(_Recipe(lambda values: (exception(), None), filename, line, name))
    text = _escape(f"{type(exception()).__qualname__}: {exception()}")
    failed = jnp.logical_and(jnp.logical_not(ok), _on_path())
    _emit(jnp.logical_not(failed), f"{text} (raise #{key} at {filename}:{line})", [], filename, line)


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
    return isinstance(error, Exception) and module not in ("builtins",) and not module.startswith(
        ("numpy", "libcst"))


def record_exception(error: BaseException) -> None:
    """Record ``error`` (raised by Python while tracing the path being traced) for run time:
    raised again, at the user's line where it arose, if the program takes this path."""
    if isinstance(error, PathRaised):
        return  # recorded where it was raised
    filename, line, name = "<unknown>", 0, "<module>"
    entry = error.__traceback__
    while entry is not None:
        code = entry.tb_frame.f_code
        if not code.co_filename.startswith(_OWN_ROOTS):
            filename, line, name = code.co_filename, entry.tb_lineno, code.co_name
        entry = entry.tb_next

    def again():
        try:
            return type(error)(*error.args)
        except Exception:  # a class whose arguments are not its `args`
            return error.with_traceback(None)

    key = _register(_Recipe(lambda values: (again(), None), filename, line, name))
    text = _escape(f"{type(error).__qualname__}: {error}")
    _emit(jnp.logical_not(_on_path()), f"{text} (raise #{key} at {filename}:{line})", [], filename, line)


def _split(tree):
    """The traced leaves of ``tree`` (Formatted messages and Deferred calls opened up), and a
    function that rebuilds ``tree`` from their concrete values."""
    flat, treedef = jax.tree_util.tree_flatten(tuple(map(_opened, tree)), is_leaf=lambda x: x is None)
    traced = [k for k, leaf in enumerate(flat) if isinstance(leaf, jax.core.Tracer)]

    def rebuild(values):
        leaves = list(flat)
        for k, v in zip(traced, values):
            leaves[k] = v
        return tuple(map(_closed, jax.tree_util.tree_unflatten(treedef, leaves)))

    return [flat[k] for k in traced], rebuild


def _preview(value) -> str:
    """The exception's class and, where no traced value is in it, its message: what a plain
    ``checkify`` user sees of it."""
    func = value.func if isinstance(value, Deferred) else value if isinstance(value, type) else type(value)
    return getattr(func, "__qualname__", None) or type(func).__qualname__


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class _Recipe:
    __slots__ = ("rebuild", "filename", "line", "name")

    def __init__(self, rebuild, filename: str, line: int, name: str):
        self.rebuild, self.filename, self.line, self.name = rebuild, filename, line, name


# Recorded raises by number (the number travels in the check's message). Bounded: the oldest
# go first; a program traced that long ago reports its raise as checkify's own error.
_RECIPES: dict[int, _Recipe] = {}
_LIMIT = 4096
_counter = itertools.count(1)
_lock = threading.Lock()


def _register(recipe: _Recipe) -> int:
    with _lock:
        key = next(_counter)
        _RECIPES[key] = recipe
        while len(_RECIPES) > _LIMIT:
            del _RECIPES[next(iter(_RECIPES))]
    return key


# -- after the call ----------------------------------------------------------------------------

_OURS = re.compile(r" \(raise #(\d+) at .+:\d+\)$")


def report(error) -> None:
    """Raise the first failed check of ``error`` (a ``checkify.Error``) as the user's exception:
    a recorded ``raise`` as what it raises, a checked ``assert`` as ``AssertionError``, any
    other check as checkify raises it. Nothing when no check failed."""
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
    recipe = _RECIPES.get(int(match.group(1))) if match else None
    if recipe is None:
        from laxify.runtime import checks

        checks.raise_failed(error)
        return
    value, reason = recipe.rebuild(list(found.args))
    exc = _made(value)
    if reason is not None:
        exc.__cause__ = _made(reason)
        exc.__suppress_context__ = True
    if note is not None and hasattr(exc, "add_note"):
        exc.add_note(note)
    raise_at(exc, recipe.filename, recipe.line, recipe.name)


def raise_at(exc: BaseException, filename: str, line: int, name: str) -> None:
    """Raise ``exc`` from a frame at the user's ``raise`` line (its file, line and function
    name), so that the traceback ends there, as it would have in Python."""
    text = linecache.getline(filename, line)
    stripped = text.strip()
    indent = len(text) - len(text.lstrip())
    # The statement spans the user's own statement, so a traceback marks all of it or nothing.
    width = max(len(stripped) - len("raise "), 1) if stripped.startswith("raise") else 12
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
