"""Python ints that a traced loop holds as int32 arrays: their ``+``, ``-``, ``*`` and ``**``
checked for overflow at run time.

In eager Python a loop's counter, accumulator or range index that starts as a Python int stays
one (``range`` gives Python ints, ``__index__`` of a traced bound included), and it never
overflows. In the program it is an int32 array, which wraps at 2**31. Such values are *marked*
while a traced loop's body is traced: a carry whose value before the loop is a Python int (or
a marked value of an enclosing loop), a traced range's index, and the result of an operation
below on two such values (a Python int known while tracing counts as one). The converter
(``transpiler/converters/int_arithmetic.py``) routes ``+``, ``-``, ``*`` and ``**`` of names and
int literals in loop bodies through :func:`int_op`; on two marked values whose result is an
int32 array, it records an overflow test: into an int32 code the loop carries, checked once
after the loop (:class:`Overflows`), which ``to_static`` returns as an output of its program
(:class:`CodedJit`), or else in the run-time error channel (``error_channel``). Either way
the user gets :class:`Int32OverflowError` at the user's line, which ``to_static`` turns into
an eager run of the function (Python's exact integer) with a ``FallbackWarning``.

Not checked (the cost rule, see docs/semantics.md "Numbers"): a sum or difference with a
Python int smaller than 2**16 in magnitude (``i += 1``: a counter needs more than 2**31 / |c|
iterations to get there), values the user made as arrays (``jnp.int32(...)``, items of array
arguments: they wrap, as in JAX and NumPy), and int64 results (under ``jax_enable_x64``).
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
import weakref
from dataclasses import replace

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

from laxify.runtime import error_channel
from laxify.runtime.checks import ConcreteJit, functionalized
from laxify.runtime.dispatch.printing import hold, release, unhold

__all__ = ["CodedJit", "Int32OverflowError", "Overflows", "collects", "int_op", "is_python_int", "mark_python_int", "mark_results", "marking"]

# Sums and differences with a Python int below this magnitude are not checked.
SMALL_CONSTANT = 2 ** 16

_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "**": operator.pow, "//": operator.floordiv,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "//=": operator.ifloordiv,
    "neg": lambda a, _: -a, "abs": lambda a, _: abs(a),
}

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1

_state = threading.local()


class Int32OverflowError(OverflowError):
    """A value that is a Python int in eager code passed int32's range in the program."""

    def __init__(self, name: str | None = None, filename: str = "<unknown>", line: int = 0):
        what = f"`{name}`" if name else "this integer"
        super().__init__(
            f"{what} is a Python int in eager code but an int32 array in the compiled loop, and its "
            f"value passed int32's range (-2**31 to 2**31 - 1) here, which Python's unbounded int never "
            f"does. Enable 64-bit integers before any JAX call (jax.config.update(\"jax_enable_x64\", "
            f"True); pass int64 bounds), or compute it as a float.")
        self.name, self.filename, self.line = name, filename, line

    def __reduce__(self):
        return type(self), (self.name, self.filename, self.line)


# Traced values that stand for Python ints in eager code: a loop body's carries that started as
# Python ints and its range or enumerate index (while the body is traced), what `+ - *` make
# of those, a loop's results, `int(x)` of a traced value. Weakly held: an entry goes with its
# tracer (a body's tracers with its trace), and an id is never taken for another object's.
_python_ints: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def mark_python_int(value):
    """``value``, noted as a Python int in eager code: its ``+``, ``-``, ``*``, ``**`` with other
    such values are checked (see :func:`int_op`)."""
    if isinstance(value, jax.core.Tracer) and getattr(value, "shape", None) == () and \
            jnp.issubdtype(value.dtype, jnp.integer):
        _python_ints[id(value)] = value
    return value


def mark_results(init, out) -> tuple:
    """``out``, a traced loop's carries after it, with those whose value before the loop
    (``init``) is a Python int noted as Python ints (:func:`mark_python_int`): the body may have
    made the carry a strong int32 (``r = r * (i + 1)`` with a range's index), which its weak
    type would not tell after the loop."""
    for before, after in zip(init, out):
        if type(after) is not int and is_python_int(before):
            mark_python_int(after)
    return out


def is_python_int(value) -> bool:
    """Whether ``value`` is a Python int in eager code: a Python ``int`` (not a ``bool``), or a
    traced value marked as standing for one (:func:`mark_python_int`)."""
    kind = type(value)
    if kind is int:
        return True
    if kind is bool:
        return False
    if _python_ints and _python_ints.get(id(value)) is value:
        return True
    # A loop's carry that started as a Python int is weakly typed (and stays so through `i + 1`,
    # which the converter leaves as it is); arrays the user made are not (`jnp.int32(0)`).
    return (isinstance(value, jax.core.Tracer) and getattr(value, "weak_type", False)
            and value.shape == () and value.dtype == jnp.int32)


def marking(fn, init, lead: int = 0, index=False):
    """``fn``, a traced loop's body called with ``(*carries)`` (``(x, *carries)`` with ``lead``
    1), marking the carries whose value before the loop (``init``) is a Python int (and ``x``
    where it is a range's ``index``; ``index(x)`` where ``index`` is a function, such as the
    first item of an ``enumerate``'s element) each time it runs."""
    flags = tuple(k for k, v in enumerate(init) if is_python_int(v))
    if not flags and not index:
        return fn

    def run(*args):
        if index and args:
            mark_python_int(index(args[0]) if callable(index) else args[0])
        for k in flags:
            if lead + k < len(args):
                mark_python_int(args[lead + k])
        return fn(*args)

    return run


# -- one check per loop, after it -------------------------------------------------------------
#
# A check inside a traced `while` body makes checkify carry its error state through the loop,
# and the program then dispatches slowly (measured: 150 to 220 µs a cached call against 4).
# So an operation directly in a loop's body (not in a traced branch there) records its overflow
# into an int32 the loop carries (0: none; else the code of the first operation that
# overflowed), and the code is checked once after the loop, or handed to the enclosing loop's.

_CODES: dict[tuple, int] = {}  # (filename, line, name, function) → code
_WHERE: dict[int, tuple] = {}  # code → (filename, line, name, function)
_lock = threading.Lock()


def _code(filename: str, line: int, name: str | None, function: str) -> int:
    key = (filename, line, name, function)
    with _lock:
        code = _CODES.get(key)
        if code is None:
            code = _CODES[key] = len(_CODES) + 1
            _WHERE[code] = key
    return code


_NAME = "(int32 overflow)"  # the code's carry, as messages about the loop's carries name it


class _Frame:
    """One run of a loop body that carries an overflow code: ``acc`` (the traced code), the
    error channel's region depth of the body, and the loop's ``sites`` (codes it may hold)."""

    __slots__ = ("acc", "depth", "sites")

    def __init__(self, acc, depth: int, sites: set):
        self.acc, self.depth, self.sites = acc, depth, sites


def _frames() -> list:
    frames = getattr(_state, "frames", None)
    if frames is None:
        frames = _state.frames = []
    return frames


def _here():
    """The innermost loop body's frame, where the code being traced is directly in it."""
    frames = getattr(_state, "frames", None)
    if frames and frames[-1].depth == error_channel.region_depth():
        return frames[-1]
    return None


class Overflows:
    """What a traced loop adds for the overflow checks of its body (``site.int_checks``: the
    conversion routed int arithmetic there): one more carry, the overflow code, checked after
    the loop (:meth:`finish`). Without such arithmetic: nothing."""

    __slots__ = ("on", "sites")

    def __init__(self, site):
        # (A loop traced again with its carries narrowed carries the code already.)
        self.on = bool(getattr(site, "int_checks", False)) and not (site.names and site.names[-1] == _NAME)
        self.sites: set[int] = set()

    def init(self, init: tuple) -> tuple:
        return (*init, jnp.zeros((), jnp.int32)) if self.on else init

    def site(self, site):
        return replace(site, names=(*site.names, _NAME)) if self.on else site

    def cond(self, fn):
        if not self.on:
            return fn
        return lambda *args: fn(*args[:-1])

    def body(self, fn):
        if not self.on:
            return fn

        def run(*args):
            frame = _Frame(args[-1], error_channel.region_depth(), self.sites)
            frames = _frames()
            frames.append(frame)
            try:
                outs = tuple(fn(*args[:-1]))
            finally:
                frames.pop()
            return (*outs, frame.acc)

        return run

    def finish(self, out: tuple) -> tuple:
        """``out`` without the overflow code, whose check is recorded here (or handed to the
        enclosing loop's body, when the loop stands directly in it)."""
        if not self.on:
            return out
        code, out = out[-1], tuple(out[:-1])
        if not self.sites or not isinstance(code, jax.core.Tracer):
            return out
        outer = _here()
        if outer is not None:
            outer.acc = jnp.where(outer.acc == 0, code, outer.acc)
            outer.sites.update(self.sites)
            return out
        found = _collector()
        if found is not None and error_channel.region_depth() == 0 and found.holds(code):
            found.codes.append(code)  # an output of the program (see `coded`)
            return out
        if "Batch" in type(code).__name__:
            # The loop runs inside a `vmap` the function applies itself to converted code:
            # checkify refuses a batched `while` in a program that holds a check. Not checked
            # (docs/semantics.md, "Numbers").
            return out
        for k in sorted(self.sites):
            filename, line, name, _ = _WHERE[k]
            error_channel.check_at(code != k, lambda n=name, f=filename, ln=line: Int32OverflowError(n, f, ln),
                                   filename, line)
        return out


# -- the code as an output of the program -------------------------------------------------------
#
# A program functionalized by checkify dispatches slowly as soon as it holds a `while` loop
# (checkify's rule for `while` adds an effect to every such loop, check or not: measured 86 µs
# a cached call against 4). `to_static` therefore returns the overflow code of the loops at the
# top of the function as one more output of the program (`CodedJit`), read after the call; a
# program that holds other run-time checks, and `laxify.checked`, get it through `check_at`.


class _Collector(error_channel.TraceOutputs):
    __slots__ = ("codes",)

    def __init__(self, marker):
        super().__init__(marker)
        self.codes: list = []


def _collector():
    stack = getattr(_state, "collectors", None)
    return stack[-1] if stack else None


class collecting:
    """``with collecting(marker) as found:`` around a trace (``marker``: a value of that trace):
    the overflow codes of the loops at its top go into ``found.codes``."""

    __slots__ = ("found",)

    def __init__(self, marker):
        self.found = _Collector(marker)

    def __enter__(self) -> _Collector:
        stack = getattr(_state, "collectors", None)
        if stack is None:
            stack = _state.collectors = []
        stack.append(self.found)
        return self.found

    def __exit__(self, *exc):
        _state.collectors.pop()
        return False


def _marker(args, kwargs):
    for leaf in jax.tree_util.tree_leaves((args, kwargs)):
        if isinstance(leaf, jax.core.Tracer):
            return leaf
    return jnp.zeros((), jnp.int32)  # (a value of the trace under way)


# The code of a run that raised (a `raise` recorded for run time: see error_channel.raise_flags).
RAISED = -1


def coded(fn):
    """``fn`` returning ``(result, code)``: :data:`RAISED` where the function's ``raised`` flag
    is set, else the first nonzero overflow code of its int arithmetic (0: none). Its
    ``raise`` checks are not made (``error_channel.raise_flags(flag_only=True)``): the flag
    says whether one failed."""

    def run(*args, **kwargs):
        marker = _marker(args, kwargs)
        with error_channel.functionalizing(), error_channel.raise_flags(marker, flag_only=True) as flags, \
                collecting(marker) as found:
            out = fn(*args, **kwargs)
        code = jnp.zeros((), jnp.int32)
        for c in found.codes:
            code = jnp.where(code == 0, c, code)
        if flags.flag is not False:
            code = jnp.where(flags.flag, jnp.int32(RAISED), code)
        return out, code

    return run


def collects(fn, found_codes: list, flags: list | None = None):
    """``fn`` noting in ``found_codes`` whether its trace gave overflow codes (then its program
    must be made again with :func:`coded`), and in ``flags`` whether it gave the top ``raised``
    flag (``error_channel.raise_flags``)."""

    def run(*args, **kwargs):
        marker = _marker(args, kwargs)
        with error_channel.raise_flags(marker) as raised, collecting(marker) as found:
            out = fn(*args, **kwargs)
        if found.codes:
            found_codes.append(True)
        if flags is not None and raised.flag is not False:
            flags.append(True)
        return out

    return run


def raise_code(code: int) -> None:
    """Raise the :class:`Int32OverflowError` of ``code`` at the user's line."""
    filename, line, name, function = _WHERE[code]
    error_channel.raise_at(Int32OverflowError(name, filename, line), filename, line, function)


class CodedJit(ConcreteJit):
    """``jax.jit`` of a function whose int arithmetic's overflow codes and whose ``raised``
    flag are one output of its program (:func:`coded`): a call whose code is set raises after
    it, :class:`Int32OverflowError` (``to_static`` then runs the function eagerly) or, for
    :data:`RAISED`, the user's exception, which the checkified program (made on the first such
    call) builds by running again (see :class:`ConcreteJit`)."""

    eager_on_overflow = True  # (only ``to_static`` makes one)

    def __init__(self, fn, **jit_options):
        super().__init__(fn, **jit_options)
        self.coded = self.program = jax.jit(coded(fn), **jit_options)
        self._fn, self._jit_options = fn, jit_options
        self._checked = None  # the checkified program, made on the first call that raised

    def concrete(self, *args, **kwargs):
        """A call on concrete arguments (no tracer among them: the caller knows)."""
        # The program's prints wait for its code: on an overflow the function runs eagerly,
        # and only that run's prints are Python's.
        outer, kept = hold()
        try:
            out, code = self.coded(*args, **kwargs)
            code = int(np.asarray(code))
        finally:
            unhold(outer)
        if code == RAISED:
            if self._checked is None:
                self._checked = jax.jit(functionalized(self._fn), **self._jit_options)
            self._raise_failed(self._checked, args, kwargs, kept)
        if code:
            raise_code(code)
        if kept:
            release(kept)
        return out


def int_op(op: str, a, b, name: str | None = None):
    """``a <op> b`` (``op`` one of ``+ - * **`` or the augmented ``+= -= *=``), with Python's
    own meaning; where both stand for Python ints (see :func:`is_python_int`) and the result
    is an int32 array, an overflow test goes to the run-time error channel."""
    result = _OPS[op](a, b)
    if type(result) is int or not isinstance(result, jax.core.Tracer):
        return result
    if not (is_python_int(a) and is_python_int(b)):
        return result
    if getattr(result, "shape", None) != () or result.dtype != jnp.int32:
        return result  # int64 (x64): not checked; a float: no overflow to speak of
    mark_python_int(result)
    kind = op.rstrip("=")
    if kind in ("+", "-") and any(type(v) is int and abs(v) < SMALL_CONSTANT for v in (a, b)):
        return result  # a counter's step: not checked (see the module's docstring)
    if kind == "**" and not (type(b) is int and 2 <= b <= 30):
        return result
    ok = _fits(kind, a, b, result)
    caller = sys._getframe(1)
    filename, line = caller.f_code.co_filename, caller.f_lineno
    frame = _here()
    if frame is not None:  # directly in a loop body that carries the code: checked after the loop
        code = _code(filename, line, name, caller.f_code.co_name)
        frame.acc = jnp.where(jnp.logical_and(frame.acc == 0, jnp.logical_not(ok)), jnp.int32(code), frame.acc)
        frame.sites.add(code)
        return result
    found = _collector()
    if found is not None and error_channel.region_depth() == 0 and found.holds(result):
        # At the top of the function (a loop's result, `return r * r`): an output of the program.
        code = _code(filename, line, name, caller.f_code.co_name)
        found.codes.append(jnp.where(ok, jnp.int32(0), jnp.int32(code)))
        return result
    error_channel.check_at(ok, lambda: Int32OverflowError(name, filename, line), filename, line)
    return result


def _fits(kind: str, a, b, r):
    """Whether the int32 result ``r`` of ``a <kind> b`` is the exact integer."""
    a = jnp.asarray(a, jnp.int32)
    if kind in ("neg", "abs"):  # -(-2**31) and abs(-2**31) wrap to -2**31
        return a != _INT32_MIN
    if kind == "//":  # -2**31 // -1 wraps to -2**31
        return jnp.logical_not(jnp.logical_and(a == _INT32_MIN, jnp.asarray(b, jnp.int32) == -1))
    if kind == "**":
        base = _root(b)
        return jnp.logical_and(a <= base, a >= -base)
    b = jnp.asarray(b, jnp.int32)
    if kind == "+":  # overflow: both operands' sign differs from the result's
        return jnp.bitwise_and(a ^ r, b ^ r) >= 0
    if kind == "-":  # overflow: the operands' signs differ and the result's is not a's
        return jnp.bitwise_and(a ^ b, a ^ r) >= 0
    # `*`: the wrapped product divided by a is b exactly when it did not wrap (a wrapped one is
    # off by a multiple of 2**32, at least 2 after the division); -1 * INT32_MIN wraps to itself.
    safe = jnp.where(a == 0, jnp.int32(1), a)
    exact = jnp.logical_or(a == 0, lax.div(r, safe) == b)
    edge = jnp.logical_or(jnp.logical_and(a == -1, b == _INT32_MIN), jnp.logical_and(b == -1, a == _INT32_MIN))
    return jnp.logical_and(exact, jnp.logical_not(edge))


def _root(e: int) -> int:
    """The largest ``x`` with ``x ** e`` within int32 (and ``(-x) ** e`` too)."""
    if e <= 1:
        return _INT32_MAX
    x = int(round(_INT32_MAX ** (1.0 / e)))
    while x ** e > _INT32_MAX:
        x -= 1
    while (x + 1) ** e <= _INT32_MAX:
        x += 1
    return x
