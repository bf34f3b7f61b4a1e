"""Python numbers in the program: a value that is a Python ``int``, ``float`` or ``bool`` in
eager code and a traced scalar in the program keeps Python's meaning.

Such a value is a *Python number* of the trace (:func:`python_type`): a Python scalar, a traced
scalar *marked* with the Python type it stands for (a range's or an enumerate's index, a traced
loop's carry that started as a Python number, the result of an operation below, ``int(x)``),
or a weakly typed traced scalar (what JAX makes of a Python scalar: a carry that started as
one and was only ever combined with Python numbers). The marks live in the trace state
(``runtime/trace.py``), weakly held: a mark goes with its tracer.

The converter (``transpiler/converters/int_arithmetic.py``) routes the operators of names that
may hold Python numbers through :func:`python_op`. Where both operands are Python numbers and
one is traced, the operation follows :data:`RULES`, one entry per operator: the result has
Python's type (``bool + bool`` is an int, ``int ** -k`` a float, ``/`` a float), and where
Python would raise (``ZeroDivisionError``, ``ValueError: negative shift count``) or give what
the program cannot hold (an int past int32, a complex number, an int power past a float's
exact range), a check is recorded in the run-time report (``runtime/report.py``): Python's own
exception at the user's line, or :class:`NumberNotHeld`, which ``to_static`` answers with an
eager run of the function (Python's exact value) and a ``FallbackWarning``. Inside the body of
a ``try`` whose ``except`` may catch the error (``in_try``), the handler would run for some data
only: :class:`OperationNeedsHandler`, the statement runs as Python. Anything else (an array
operand) is the operator itself: JAX's meaning, as in eager code.

Not checked (the cost rule, see docs/semantics.md "Numbers"): a sum or difference with a
Python int smaller than 2**16 in magnitude (a counter's step: it needs more than 2**15
iterations to get there), and int64 results (under ``jax_enable_x64``).
"""

from __future__ import annotations

import math
import operator
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from laxify.runtime import error_channel, trace

__all__ = [
    "OPERATORS",
    "Int32OverflowError",
    "NumberNotHeld",
    "OperationNeedsHandler",
    "RULES",
    "at_users_line",
    "divide",
    "is_python_int",
    "item",
    "mark",
    "mark_joined",
    "mark_results",
    "marked_type",
    "marking",
    "python_op",
    "python_type",
    "users_site",
]

# Sums and differences with a Python int below this magnitude are not checked.
SMALL_CONSTANT = 2**16

# Python's binary operators and their augmented forms, by their text (one table for the
# runtime: `runtime/updates.py` reads it too).
OPERATORS = _OPS = {
    "@": operator.matmul,
    "@=": operator.imatmul,
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "neg": lambda a, _: -a,
    "abs": lambda a, _: abs(a),
}

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class NumberNotHeld(ArithmeticError):
    """A value that is a Python number in eager code is one the program cannot hold on this
    input (an int past int32, a complex number, an int power past a float's exact range):
    ``to_static`` runs the function eagerly for Python's value (``laxify/call/decision.py``)."""

    def __init__(self, what: str, name: str | None = None, filename: str = "<unknown>", line: int = 0):
        subject = f"`{name}`" if name else "this number"
        super().__init__(f"{subject} is a Python number in eager code, and on this input {what}. {self.FIX}")
        self.what, self.name, self.filename, self.line = what, name, filename, line

    FIX = "Compute it with arrays of an explicit dtype (jnp.float32, jnp.int32), or keep the arguments static."

    def __reduce__(self):
        return type(self), (self.what, self.name, self.filename, self.line)


class Int32OverflowError(NumberNotHeld, OverflowError):
    """A value that is a Python int in eager code passed int32's range in the program."""

    FIX = (
        'Enable 64-bit integers before any JAX call (jax.config.update("jax_enable_x64", True); '
        "pass int64 bounds), or compute it as a float."
    )

    def __init__(self, name: str | None = None, filename: str = "<unknown>", line: int = 0):
        what = f"`{name}`" if name else "this integer"
        OverflowError.__init__(
            self,
            f"{what} is a Python int in eager code but an int32 array in the compiled program, and its "
            f"value passed int32's range (-2**31 to 2**31 - 1) here, which Python's unbounded int never "
            f"does. {self.FIX}",
        )
        self.what = "its value passed int32's range"
        self.name, self.filename, self.line = name, filename, line

    def __reduce__(self):
        return type(self), (self.name, self.filename, self.line)


class OperationNeedsHandler(error_channel.HandlerNeedsData):
    """An operation on traced Python numbers that raises Python's error for some data (a
    divisor that may be zero) inside a ``try`` whose ``except`` may catch it."""

    CONSTRUCT = "operation"
    REASON = (
        "it raises Python's error for some data (a divisor that may be zero, a negative shift) "
        "inside a `try` whose `except` clauses may catch it: which handler runs would depend on the data"
    )
    FIX = (
        "Compute the handler's value with the condition instead (for example "
        "`r = jnp.where(b == 0, 0, a // jnp.where(b == 0, 1, b))`), or move the operation out of the `try`."
    )
    MESSAGE = (
        "This operation on Python numbers raises Python's error for some data (a divisor that may "
        "be zero) inside a `try` whose `except` clauses may catch it: which of them runs would "
        "depend on the data, and one XLA program cannot choose a handler at run time."
    )


# -- what a value is ---------------------------------------------------------------------------

_KINDS = (bool, int, float)
# What may stand for a Python number in the program: a traced scalar, or the type of one that a
# captured run gave (runtime/capture.py: a branch's output before the `lax.cond` is built).
_HELD = (jax.core.Tracer, jax.ShapeDtypeStruct)


def python_type(value):
    """``int``, ``float`` or ``bool`` where ``value`` is that Python type in eager code (see the
    module's docstring), else ``None``."""
    kind = type(value)
    if kind in _KINDS:
        return kind
    if not isinstance(value, _HELD) or getattr(value, "shape", None) != ():
        return None
    known = entry(value)
    if known is not None:
        return known[0]
    if getattr(value, "weak_type", False) and kind is not jax.ShapeDtypeStruct:
        return _kind_of(value.dtype)
    return None


def marked_type(value):
    """The Python type ``value`` (a traced scalar) was marked as standing for (a loop's index or
    carry, an operation's result: not a guess from its weak type), else ``None``."""
    if getattr(value, "shape", None) != ():
        return None
    known = entry(value)
    return known[0] if known is not None else None


def nonnegative(value) -> bool:
    """Whether ``value`` (a Python number) is known never to be negative: a Python int ``>= 0``,
    a range's index whose every value is, a marked value noted so."""
    if type(value) in (int, bool):
        return value >= 0
    known = entry(value)
    return known is not None and known[1] is True


# The sign a mark notes (its third field): `True`, never negative; `NEGATED`, the negation of
# a value (`-k`: a power `2 ** -k` is meant as a float's); `False`, unknown.
NEGATED = -1


def negated(value) -> bool:
    """Whether ``value`` is a negation (``-k``), or a Python int below 0."""
    if type(value) in (int, bool):
        return value < 0
    known = entry(value)
    return known is not None and known[1] is NEGATED


def _kind_of(dtype):
    if dtype == jnp.bool_:
        return bool
    if jnp.issubdtype(dtype, jnp.integer):
        return int
    if jnp.issubdtype(dtype, jnp.floating):
        return float
    return None


def mark(value, kind=None, nonneg: bool = False, computed: bool = True):
    """``value``, noted as standing for a Python ``kind`` (by default, the one its dtype gives):
    its operations with other Python numbers follow :data:`RULES`. ``computed``: the value of an
    operation (not a loop's carry as its body receives it, nor an ``if``'s join of those)."""
    if isinstance(value, jax.core.Tracer) and getattr(value, "shape", None) == ():
        kind = kind or _kind_of(value.dtype)
        if kind is not None:
            _remember(value, weakref.ref(value), kind, nonneg, computed)
    return value


def _remember(value, ref, kind, nonneg, computed) -> None:
    """The one writer of the marks: ``ref()`` gives ``value`` while the mark holds."""
    trace.current().python_values[id(value)] = (ref, kind, nonneg, computed)


def entry(value):
    """What ``value`` (a traced scalar) is marked as, ``(kind, nonneg, computed)``, else None:
    kept by a captured run for the types of its outputs (:func:`note`)."""
    known = trace.current().python_values.get(id(value))
    return known[1:] if known is not None and known[0]() is value else None


def note(struct, found) -> None:
    """Mark ``struct``, the ``jax.ShapeDtypeStruct`` of a captured output, as its traced value
    was (``found``: :func:`entry`'s), for the construct that reads the captured outputs."""
    _remember(struct, lambda: struct, *found)


def computed_float(value) -> bool:
    """Whether ``value`` is a Python float in eager code that the program computed (in float32
    without x64: see ``runtime/dispatch/loops.py``), not one it received unchanged: marked so
    by an operation's rule (a weak type alone does not tell: a weakly typed array argument,
    ``jnp.array(2.0)``, gives weakly typed arrays too)."""
    known = entry(value)
    return known is not None and known[0] is float and known[2]


def of_python_floats(result, args, kwargs):
    """``result`` of a converted function called with a traced Python float among ``args``
    (``x = step(x)`` in a loop that carries ``x = 0.3``): a weakly typed float scalar that no
    rule marked is marked a computed Python float, as it is in eager code where the helper's
    operations, left as written, combine the float with Python numbers only (the loop's check
    then sees it: runtime/dispatch/loops.py). A helper that makes it an array with a JAX
    function of weakly typed values only (``jnp.cos(x)``) is taken for the same (its loop runs
    as Python, with eager's value)."""
    if not (
        isinstance(result, jax.core.Tracer)
        and getattr(result, "shape", None) == ()
        and getattr(result, "weak_type", False)
        and _kind_of(result.dtype) is float
        and entry(result) is None
    ):
        return result
    if any(marked_type(a) is float for a in args) or any(marked_type(a) is float for a in kwargs.values()):
        mark(result, float)
    return result


def is_python_int(value) -> bool:
    """Whether ``value`` is a Python int in eager code (not a ``bool``)."""
    return python_type(value) is int


def mark_results(init, out, kinds=None) -> tuple:
    """``out``, a traced loop's carries after it, with those whose value before the loop
    (``init``) is a Python number marked as the Python type their dtype gives (the body may
    have made a carry strongly typed, ``r = r * (i + 1)`` with a range's index, which its weak
    type would not tell after the loop); ``kinds``: the Python types the body gave each carry
    (None for an array: `s = s + x[i]` makes Python's `0.0` an array), where known."""
    for k, (before, after) in enumerate(zip(init, out)):
        if type(after) in _KINDS or python_type(before) is None:
            continue
        if kinds is not None and k < len(kinds) and kinds[k] is None:
            continue
        mark(after, computed=False)  # (a float the loop computed: the loop itself checked it)
    return out


def mark_joined(out, paths) -> None:
    """Mark the outputs of a traced ``if`` (``out``) that every path (``paths``: each branch's
    outputs) gives as the same Python type (``flag = True`` on one path, ``False`` on the
    other: a Python bool after the ``if``, whose ``flag + flag`` is an int)."""
    for j, value in enumerate(out):
        if not isinstance(value, jax.core.Tracer) or getattr(value, "shape", None) != ():
            continue
        kinds = {_path_kind(path[j]) if j < len(path) else None for path in paths}
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        if kind in _KINDS and _kind_of(value.dtype) is kind:
            mark(value, kind, computed=any(computed_float(path[j]) for path in paths if j < len(path)))
        elif None in kinds and getattr(value, "weak_type", False):
            # An array on some path (`peak = abs(v)` on one side, Python's `0.0` on the other):
            # an array after the `if` in eager code, whatever weak type the join kept.
            _remember(value, weakref.ref(value), None, False, False)


def _path_kind(value):
    """What one path of an ``if`` gives for an output: a Python type, ``None`` for an array,
    ``"unknown"`` for a weakly typed value a captured branch gave unmarked (a Python number's
    operation the conversion left as written, or an operation of a weakly typed argument)."""
    if type(value) is jax.ShapeDtypeStruct and entry(value) is None:
        return "unknown" if value.weak_type else None
    return python_type(value)


def marking(fn, init, lead: int = 0, index=False, nonneg: bool = False, values=None):
    """``fn``, a traced loop's body called with ``(*carries)`` (``(x, *carries)`` with ``lead``
    1), marking the carries whose value before the loop (``init``) is a Python number (and
    ``x`` where it is a range's ``index``; ``index(x)`` where ``index`` is a function, such as
    the first item of an ``enumerate``'s element; ``nonneg``: the index is never negative)
    each time it runs; ``values``: the index's values, a static range's (:func:`index_table`)."""
    flags = tuple(k for k, v in enumerate(init) if python_type(v) is not None)
    # (the Python numbers in a carried list or tuple: `a = [0.0]`)
    items = tuple(k for k, v in enumerate(init) if type(v) in (list, tuple) and any(type(e) in _KINDS for e in v))
    if not flags and not items and not index:
        return fn

    def run(*args):
        if index and args:
            mark(index(args[0]) if callable(index) else args[0], int, nonneg)
            if values is not None and not callable(index):
                index_table(args[0], values)
        for k in flags:
            if lead + k < len(args):
                mark(args[lead + k], computed=False)
        for k in items:
            if lead + k < len(args) and type(args[lead + k]) is type(init[k]) and len(args[lead + k]) == len(init[k]):
                for before, now in zip(init[k], args[lead + k]):
                    if type(before) in _KINDS:
                        mark(now, type(before), computed=False)
        return fn(*args)

    return run


# -- operations --------------------------------------------------------------------------------


def python_op(op: str, a, b=0, name: str | None = None, in_try: bool = False):
    """``a <op> b`` with Python's meaning where both are Python numbers and one is traced (see
    the module's docstring); the operator itself otherwise. ``name``: the variable the result
    goes to (for messages); ``in_try``: the operation stands in the body of a ``try`` (or a
    ``with``) whose handler may catch what it raises."""
    traced = isinstance(a, jax.core.Tracer) or isinstance(b, jax.core.Tracer)
    if not traced:
        return _OPS[op](a, b)
    ta, tb = python_type(a), python_type(b)
    kind = _plain(op)
    if ta is None or tb is None:
        if kind == "**" and ta is not float:
            _array_exponent(a, b, in_try)
        elif kind == "/":
            return divide(a, b, op == "/=")  # (an array's division: `_lx.divide`'s)
        return _OPS[op](a, b)
    caller = sys._getframe(1)
    site = _Site(name, caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name, in_try)
    result = RULES[kind](a, b, ta, tb, site, kind)
    if kind in _TABLED:
        result = _tabled(kind, a, b, result)
    return result


# -- a scanned range's index: Python's values, computed before the program ----------------------
#
# A static range the program scans (`for t in range(1, 11)` carrying arrays) has a traced index,
# but its values are known: a Python number computed from it and from Python numbers only
# (`1 - 0.999 ** t`, `0.5 ** (step // 100)`) has its value at each iteration known too. Its
# table of values goes with its mark, each computed by Python itself (float64, Python's errors
# and types); a float's value in the program is its table's item at the iteration, rounded once
# to the program's float (what eager code rounds it to where it meets an array), not a chain of
# float32 operations (where `1 - 0.999 ** t` loses digits).

_TABLED = frozenset({"+", "-", "*", "/", "//", "%", "**", "neg", "abs"})
TABLE_LIMIT = 4096  # (the longest range whose values are kept: a constant of that many items)


def index_table(index, values) -> None:
    """Note ``values`` (a tuple of Python ints) as the values of ``index``, a scanned range's
    traced index."""
    if 0 < len(values) <= TABLE_LIMIT:
        ref = weakref.ref(index)
        program = np.asarray(values, dtype=np.int64)
        trace.current().tables[id(index)] = (ref, values, ref, values[0], _step(values), program)


def _step(values) -> int:
    return values[1] - values[0] if len(values) > 1 else 1


def _table(value):
    """What ``value`` is at each iteration of a scanned range: ``(values, index, start, step,
    program)``, Python's values and the program's (a NumPy array), or None."""
    known = trace.current().tables.get(id(value))
    if known is None or known[0]() is not value or known[2]() is None:
        return None
    return known[1], known[2](), known[3], known[4], known[5]


# The program's operation at each iteration, as NumPy computes it in the program's dtype.
_NUMPY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.mod,
    "**": np.power,
    "neg": lambda a, _: np.negative(a),
    "abs": lambda a, _: np.abs(a),
}


def _tabled(kind, a, b, result):
    """``result`` of ``a <kind> b`` where one operand has a table (and the other is a Python
    number or has the same range's table): its own table, Python's operation at each iteration.
    A float whose value the program's own operation would not give at some iteration (rounded
    to its dtype) reads it from the table at the iteration instead."""
    ka, kb = _table(a), _table(b)
    if ka is None and kb is None:
        return result
    known = ka or kb
    if ka is not None and kb is not None and ka[1] is not kb[1]:
        return result  # (two ranges' indices)
    if (ka is None and type(a) not in _KINDS) or (kb is None and type(b) not in _KINDS):
        return result
    if not isinstance(result, jax.core.Tracer):
        return result
    n = len(known[0])
    left = ka[0] if ka is not None else (a,) * n
    right = kb[0] if kb is not None else (b,) * n
    fn = _OPS[kind]
    try:
        values = tuple(fn(x, y) for x, y in zip(left, right))
    except (ArithmeticError, ValueError, TypeError, OverflowError):
        return result  # (the rule's checks say it at the iteration that raises)
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or kinds.pop() not in (int, float):
        return result  # (an int at some iterations and a float at others: the rule's value)
    _, index, start, step, _ = known
    dtype = np.dtype(result.dtype)
    if type(values[0]) is float:
        exact = np.asarray(values, dtype=np.float64).astype(dtype)
        with np.errstate(all="ignore"):
            sides = [k[4] if k is not None else np.full(n, v) for k, v in ((ka, a), (kb, b))]
            program = _NUMPY[kind](*(np.asarray(side).astype(dtype) for side in sides))
        if not np.array_equal(program, exact):
            # (the program's float operations would not give Python's value: read it)
            position = jnp.asarray(index)
            if (start, step) != (0, 1):
                position = (position - start) // step
            table = jnp.asarray(exact)
            read = lax.dynamic_index_in_dim(table, position.astype(jnp.int32), 0, keepdims=False)
            known = entry(result)
            result = mark(read, float, computed=True if known is None else known[2])
            program = exact
    elif any(not (_INT32_MIN <= v <= _INT32_MAX) for v in values):
        return result  # (the rule checked the overflow)
    else:
        program = np.asarray(values, dtype=np.int64)
    trace.current().tables[id(result)] = (weakref.ref(result), values, weakref.ref(index), start, step, program)
    return result


def _array_exponent(a, b, in_try: bool) -> None:
    """``2 ** bits`` with an int array ``bits`` of one item: JAX raises ``TypeError`` eagerly
    where it is negative (it knows the exponent), and gives 0 in a program; the program checks
    it and raises JAX's error at run time."""
    if not (isinstance(b, jax.core.Tracer) and b.shape == () and jnp.issubdtype(b.dtype, jnp.integer)):
        return
    if not (type(a) in (int, bool) or jnp.issubdtype(jnp.result_type(a), jnp.integer)):
        return
    frame = _users_frame()
    site = _Site(None, frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, in_try)

    def example():
        raise TypeError("Integers cannot be raised to negative powers (an int array exponent below 0)")

    site.python_error(b < 0, example)


def _plain(op: str) -> str:
    """``+`` of ``+=``: the operator an augmented assignment applies."""
    return op[:-1] if op.endswith("=") and op not in ("==", "!=", "<=", ">=") else op


def _users_frame():
    """The frame of the user's code that called into laxify's runtime."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(error_channel.OWN_ROOTS):
        frame = frame.f_back
    return frame


def users_site():
    """Where the user's code called into the runtime, for a check of Python's: the builtin call
    being traced (its file, line, and whether a handler may catch what it raises), else the
    first frame outside laxify's own files."""
    where = trace.current().where
    if where is not None:
        filename, line, in_try = where
        return _Site(None, filename, line, None, in_try)
    return _frame_site()


def _frame_site():
    """The site of the first frame outside laxify's own files (no handler known)."""
    frame = _users_frame()
    return _Site(None, frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, False)


def at_users_line(op: str, a, b):
    """``a <op> b`` as :func:`python_op`, for laxify's runtime doing the user's operation (a
    builtin ``pow``, an item's ``acc[0] += v``): its checks are at the user's line that called."""
    if not (isinstance(a, jax.core.Tracer) or isinstance(b, jax.core.Tracer)):
        return _OPS[op](a, b)
    ta, tb = python_type(a), python_type(b)
    if ta is None or tb is None:
        return _OPS[op](a, b)
    return RULES[_plain(op)](a, b, ta, tb, _frame_site(), _plain(op))


class _Site:
    __slots__ = ("name", "filename", "line", "function", "in_try")

    def __init__(self, name, filename, line, function, in_try):
        self.name, self.filename, self.line, self.function, self.in_try = name, filename, line, function, in_try

    def python_error(self, failed, example) -> None:
        """Python's error where ``failed``: the exception ``example()`` raises (Python's own
        operation on numbers that fail the same way: its type and message, this Python's)."""
        try:
            example()
        except Exception as e:
            error = e
        else:  # (never: the example fails)
            error = ArithmeticError("invalid operation")
        if not isinstance(failed, jax.core.Tracer):
            if failed:
                raise error.with_traceback(None)
            return
        if self.in_try:
            raise OperationNeedsHandler(self.filename, self.line)
        kind, args = type(error), error.args
        error_channel.check_at(jnp.logical_not(failed), lambda: kind(*args), self.filename, self.line)

    def not_held(self, failed, what: str, overflow: bool = False) -> None:
        """:class:`NumberNotHeld` where ``failed``: the program cannot hold Python's value."""
        if isinstance(failed, bool) and not failed:
            return
        name, filename, line = self.name, self.filename, self.line
        if overflow:
            make = lambda: Int32OverflowError(name, filename, line)  # noqa: E731
        else:
            make = lambda: NumberNotHeld(what, name, filename, line)  # noqa: E731
        error_channel.check_at(jnp.logical_not(failed), make, filename, line)


def _x64() -> bool:
    return jnp.zeros((), int).dtype == jnp.int64


def _int(v):
    """An int operand: a bool as the int it is (``True + True`` is 2)."""
    if type(v) is bool:
        return int(v)
    if isinstance(v, jax.core.Tracer) and v.dtype == jnp.bool_:
        return v.astype(jnp.int32)
    return v


def _float(v):
    if type(v) in _KINDS:
        return float(v)
    return v.astype(jnp.result_type(float)) if not jnp.issubdtype(v.dtype, jnp.floating) else v


def _big(v) -> bool:
    """A Python int the int dtype cannot hold (JAX refuses it as an operand)."""
    return type(v) is int and not _x64() and not (_INT32_MIN <= v <= _INT32_MAX)


def _wrapped(v: int) -> int:
    return (v - _INT32_MIN) % 2**32 + _INT32_MIN


def _arith(a, b, ta, tb, site, kind):
    """``+``, ``-``, ``*``."""
    fn = _OPS[kind]
    if float in (ta, tb):
        result = fn(_int(a) if ta is bool else a, _int(b) if tb is bool else b)
        return mark(result, float, computed=not _exact_scale(kind, a, b))
    a, b = _int(a), _int(b)
    if _big(a) or _big(b):
        return _big_operand(a, b, kind, site)
    result = fn(a, b)
    if not isinstance(result, jax.core.Tracer):
        return result
    mark(result, int)
    if result.dtype != jnp.int32:
        return result  # int64 (x64): not checked
    if kind in ("+", "-") and any(type(v) is int and abs(v) < SMALL_CONSTANT for v in (a, b)):
        return result  # a counter's step: not checked (see the module's docstring)
    site.not_held(jnp.logical_not(_fits(kind, a, b, result)), "", overflow=True)
    return result


def _big_operand(a, b, kind, site):
    """``n * 3000000000``, ``n + 2**40``: an int literal int32 cannot hold, with a traced int.
    The result is exact where it fits int32 (computed modulo 2**32), else the check fails."""
    big, small = (a, b) if _big(a) else (b, a)
    if _big(small):
        return _OPS[kind](a, b)  # (both Python ints: never here)
    small = jnp.asarray(small, jnp.int32)
    if kind == "*":
        failed = small != 0
        result = jnp.zeros((), jnp.int32)
    else:
        # a + B fits where a is in [MIN - B, MAX - B] (and B - a, a - B likewise)
        if kind == "+" or big is b:
            lo, hi = (_INT32_MIN - big, _INT32_MAX - big) if kind == "+" else (_INT32_MIN + big, _INT32_MAX + big)
        else:  # B - a
            lo, hi = big - _INT32_MAX, big - _INT32_MIN
        lo, hi = max(lo, _INT32_MIN), min(hi, _INT32_MAX)
        if lo > hi:
            failed = jnp.bool_(True) | (small == small)
            result = jnp.zeros((), jnp.int32)
        else:
            failed = (small < lo) | (small > hi)
            wrapped = jnp.int32(_wrapped(big))
            result = _OPS[kind](*((small, wrapped) if big is b else (wrapped, small)))
    site.not_held(failed, "", overflow=True)
    return mark(result, int)


def _true_divide(a, b, ta, tb, site, kind):
    if isinstance(b, jax.core.Tracer) or b == 0:
        site.python_error(b == 0, lambda: ta(1) / tb(0))
    af, bf = _float(a), _float(b)
    safe = jnp.where(bf == 0, 1.0, bf) if isinstance(bf, jax.core.Tracer) else bf
    return mark(divide(af, safe), float, computed=not _exact_scale("/", a, b))


def divide(a, b, in_place: bool = False):
    """``a / b`` (``a /= b`` with ``in_place``), correctly rounded as eager JAX rounds it where
    ``a`` is a traced scalar and ``b`` a number the program would hold as a constant. XLA
    compiles a division by a constant as a multiplication by the constant's reciprocal, rounded
    first: ``n / 100`` of ``n = 100`` is 1.0000000223, so ``1 - n / 100`` is 2.2e-8, not 0.0,
    and ``(1 - n / 100) ** -1`` is 4.5e7, not ``inf``. Behind an optimization barrier the
    divisor is a value XLA does not fold, and the division stays one. A divisor whose
    reciprocal is exact (a power of two), zero, and an array operand of any shape but ``()``
    are left as written (XLA multiplies an array by the reciprocal of any scalar divisor: not
    covered, docs/semantics.md)."""
    if isinstance(a, jax.core.Tracer) and getattr(a, "shape", None) == () and _inexact_reciprocal(b):
        b = lax.optimization_barrier(jnp.asarray(b))
    return operator.itruediv(a, b) if in_place else a / b


def _inexact_reciprocal(b) -> bool:
    """Whether ``b`` is a constant of the program (a Python number, a concrete scalar array)
    whose reciprocal a float does not hold exactly."""
    kind = type(b)
    if kind is int:
        if abs(b) > _INT32_MAX:
            return False  # (JAX converts it to the dividend's float as it is)
    elif kind is not float:
        if isinstance(b, jax.core.Tracer) or not isinstance(b, (np.generic, np.ndarray, jax.Array)):
            return False
        if b.shape != () or not (jnp.issubdtype(b.dtype, jnp.floating) or jnp.issubdtype(b.dtype, jnp.integer)):
            return False
    value = float(b)
    return value != 0 and math.isfinite(value) and not _power_of_two(value)


def _power_of_two(value: float) -> bool:
    """Whether ``value`` (finite, not 0) is ± a power of two: its reciprocal, and a scale by
    it, are exact in any float."""
    return abs(math.frexp(value)[0]) == 0.5


def _exact_scale(kind, a, b) -> bool:
    """Whether ``a * b`` or ``a / b`` scales a float that is Python's exactly (not computed by
    float32 operations) by a power of two (``damp * 0.5``, ``h / 2``): exact in float32 as in
    float64, while the value stays within float32's range."""
    constants = (a, b) if kind == "*" else (b,)
    for c in constants:
        other = b if c is a else a
        if (
            type(c) in (int, float)
            and c != 0
            and math.isfinite(c)
            and _power_of_two(c)
            and isinstance(other, jax.core.Tracer)
            and python_type(other) is float
            and not computed_float(other)
        ):
            return True
    return False


def _floor_divide(a, b, ta, tb, site, kind):
    """``//`` and ``%``: Python's floor semantics (JAX's too), ``ZeroDivisionError`` by zero."""
    fn = _OPS[kind]
    if isinstance(b, jax.core.Tracer) or b == 0:
        site.python_error(b == 0, lambda: fn(ta(1), tb(0)))
    if float in (ta, tb):
        bf = _float(b)
        safe = jnp.where(bf == 0, 1.0, bf) if isinstance(bf, jax.core.Tracer) else bf
        return mark(fn(_float(a), safe), float)
    a, b = _int(a), _int(b)
    if _big(a) or _big(b):
        return site.not_held(True, "", overflow=True) or fn(jnp.int32(0), jnp.int32(1))
    safe = jnp.where(b == 0, 1, b) if isinstance(b, jax.core.Tracer) else b
    result = mark(fn(a, safe), int)
    if kind == "//" and result.dtype == jnp.int32:  # -2**31 // -1 wraps to -2**31
        site.not_held(jnp.logical_and(jnp.asarray(a) == _INT32_MIN, jnp.asarray(b) == -1), "", overflow=True)
    return result


def _power(a, b, ta, tb, site, kind):
    """``**``: an int power where the exponent is a non-negative int (checked for overflow), a
    float power where Python's is (``2 ** -k``, a float operand), the error Python raises for
    ``0 ** -k``, and a complex result (a negative base, a fractional exponent) not held."""
    if float not in (ta, tb) and type(b) in (int, bool) and b >= 0:
        return _int_power(_int(a), int(b), site)
    if float not in (ta, tb) and nonnegative(b):
        return _traced_int_power(_int(a), _int(b), site)
    if float not in (ta, tb) and not negated(b):
        # An int power whose exponent's sign laxify cannot tell (`pow(2, i)` of a carried
        # counter): Python's int where it is not negative; a float in Python below 0, which
        # the program, holding an int, does not hold.
        b = _int(b)
        site.not_held(b < 0, "an int raised to a negative power is a float in Python, an int elsewhere")
        return _traced_int_power(_int(a), jnp.maximum(b, 0), site)
    af, bf = _float(a), _float(b)
    site.python_error(jnp.logical_and(af == 0, bf < 0), lambda: 0.0**-1.0)
    if tb is float:
        fractional = jnp.logical_and(af < 0, bf != jnp.floor(bf))
        site.not_held(fractional, "a negative number raised to a fractional power is a complex number")
    result = mark(jnp.power(af, bf), float)
    if float not in (ta, tb):
        # An int ** int whose exponent may be negative: a float, exact where Python's int is
        # (where the exponent is not negative) only within the float's integers.
        exact = 2.0 ** (jnp.finfo(result.dtype).nmant + 1)
        site.not_held(
            jnp.logical_and(bf >= 0, jnp.abs(result) > exact),
            f"an int power that is an int in Python passed the float's exact integers (2**{int(math.log2(exact))})",
        )
    return result


def _int_power(a, e: int, site):
    result = mark(a**e if isinstance(a, jax.core.Tracer) else jnp.asarray(a) ** e, int)
    if result.dtype == jnp.int32 and e >= 2:
        root = _root(e)
        site.not_held(jnp.logical_not(jnp.logical_and(a <= root, a >= -root)), "", overflow=True)
    return result


def _traced_int_power(a, e, site):
    a = jnp.asarray(a)
    if not jnp.issubdtype(a.dtype, jnp.integer):
        a = a.astype(jnp.int32)
    result = mark(jnp.power(a, e.astype(a.dtype)), int)
    if result.dtype == jnp.int32:
        size = jnp.power(jnp.abs(a).astype(jnp.float32), e.astype(jnp.float32))
        site.not_held(jnp.logical_and(jnp.abs(a) > 1, size >= 2.0**31), "", overflow=True)
    return result


def _shift(a, b, ta, tb, site, kind):
    """``<<`` and ``>>`` of ints: ``ValueError`` for a negative count, ``<<`` checked for
    overflow, ``>>`` by the width or more gives Python's 0 or -1."""
    if float in (ta, tb):
        return _OPS[kind](a, b)  # Python's TypeError, as eager
    a, b = jnp.asarray(_int(a)), jnp.asarray(_int(b))
    a = a if jnp.issubdtype(a.dtype, jnp.integer) else a.astype(jnp.int32)
    b = b.astype(a.dtype)
    site.python_error(b < 0, lambda: 1 << -1)
    bits = jnp.iinfo(a.dtype).bits
    count = jnp.clip(b, 0, bits - 1)
    if kind == ">>":
        return mark(jnp.where(b >= bits, jnp.where(a < 0, -1, 0).astype(a.dtype), a >> count), int)
    result = jnp.where(b >= bits, jnp.zeros((), a.dtype), a << count)
    if a.dtype == jnp.int32:
        lost = jnp.logical_or(jnp.logical_and(b >= bits, a != 0), (result >> count) != a)
        site.not_held(jnp.logical_and(b >= 0, lost), "", overflow=True)
    return mark(result, int)


def _bitwise(a, b, ta, tb, site, kind):
    """``&``, ``|``, ``^``: of two bools a bool, else of ints an int."""
    if float in (ta, tb):
        return _OPS[kind](a, b)  # Python's TypeError, as eager
    if ta is bool and tb is bool:
        return mark(_OPS[kind](a, b), bool)
    return mark(_OPS[kind](_int(a), _int(b)), int)


def _unary(a, b, ta, tb, site, kind):
    """``-x`` and ``abs(x)``: of a bool an int; of an int checked at -2**31 (the one int32
    whose negation wraps)."""
    a = _int(a)
    result = _OPS[kind](a, 0)
    if ta is float:  # (exact: computed where `a` was)
        return mark(result, float, computed=not isinstance(a, jax.core.Tracer) or computed_float(a))
    if not isinstance(result, jax.core.Tracer):
        return mark(result, int)
    if result.dtype == jnp.int32 and not nonnegative(a):
        site.not_held(a == _INT32_MIN, "", overflow=True)
    return mark(result, int, nonneg=True if kind == "abs" else NEGATED if not negated(a) else False)


def _compare(a, b, ta, tb, site, kind):
    """A comparison of an int with a float: exact, as Python's (not in float32, where
    16777217 == 16777216.0)."""
    fn = _OPS[kind]
    if {ta, tb} != {int, float} or not (type(a) is float or type(b) is float):
        return fn(_int(a) if ta is bool else a, _int(b) if tb is bool else b)
    if type(a) is float:  # `2.5 < i` is `i > 2.5`
        return _compare(b, a, tb, ta, site, _MIRROR[kind])
    if math.isnan(b) or math.isinf(b):
        return fn(jnp.asarray(a, jnp.float32), b)
    floor = math.floor(b)
    if not _x64() and not (_INT32_MIN <= floor <= _INT32_MAX):
        above = b > 0  # every int32 is below it
        return jnp.full((), kind in ("<", "<=", "!=") if above else kind in (">", ">=", "!="))
    if b == floor:
        return fn(a, int(floor))
    if kind in ("==", "!="):
        return jnp.full((), kind == "!=")
    # i < 2.5 is i <= 2; i > 2.5 is i > 2
    return a <= floor if kind in ("<", "<=") else a > floor


_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

# The one table: an operator → its rule over two Python numbers, one of them traced.
RULES = {
    "+": _arith,
    "-": _arith,
    "*": _arith,
    "/": _true_divide,
    "//": _floor_divide,
    "%": _floor_divide,
    "**": _power,
    "<<": _shift,
    ">>": _shift,
    "&": _bitwise,
    "|": _bitwise,
    "^": _bitwise,
    "neg": _unary,
    "abs": _unary,
    **dict.fromkeys(("==", "!=", "<", "<=", ">", ">="), _compare),
}


def _fits(kind: str, a, b, r):
    """Whether the int32 result ``r`` of ``a <kind> b`` is the exact integer."""
    a = jnp.asarray(a, jnp.int32)
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
    while x**e > _INT32_MAX:
        x -= 1
    while (x + 1) ** e <= _INT32_MAX:
        x += 1
    return x


# -- a Python int as an index -----------------------------------------------------------------


def one_item(obj, index):
    """``obj[index]`` where the item is not used in place (bound to a name, returned, compared
    with ``is``): :func:`item`, but an item one array cannot hold is the very item Python picks,
    which only a concrete index gives."""
    return item(obj, index, in_place=False)


def item(obj, index, in_place: bool = True):
    """``obj[index]``; where ``obj`` is a Python list or tuple and ``index`` a traced int, the
    item the program picks, with Python's ``IndexError`` checked at run time (a negative index
    counts from the end, as Python's does): of numbers or arrays of one shape, the items as one
    array, indexed; of functions, or of arrays of different shapes, where the item is used in
    place (``in_place``: called, given to a call, an operand: converters/int_arithmetic.py), a
    :class:`Picked`, whose uses become the branches of a ``lax.switch`` (``runtime/calls.py``);
    elsewhere the item itself, which only a concrete index picks."""
    if type(obj) not in (list, tuple) or not isinstance(index, jax.core.Tracer):
        return obj[index]
    if getattr(index, "shape", None) != () or not jnp.issubdtype(index.dtype, jnp.integer) or not obj:
        return obj[index]
    kinds = {type(v) for v in obj}
    stacked = kind = None
    if kinds <= set(_KINDS):
        kind = kinds.pop() if len(kinds) == 1 else (float if float in kinds else int)
        stacked = jnp.asarray(obj if kind is not bool else [bool(v) for v in obj])
    elif all(isinstance(v, (jax.Array, np.ndarray)) or type(v) in _KINDS for v in obj):
        if len({jnp.shape(v) for v in obj}) == 1:
            try:
                stacked = jnp.stack([jnp.asarray(v) for v in obj])
            except TypeError:
                return obj[index]
            if stacked.shape == (len(obj),):
                found = {python_type(v) for v in obj}
                kind = found.pop() if len(found) == 1 else None
        # (else arrays of different shapes: each use of the item is a branch of its own)
    elif not all(callable(v) for v in obj):
        return obj[index]  # (JAX's error: a traced index of a list of other things)
    if stacked is None and not in_place:
        return obj[index]  # (bound to a name, returned, `is`: the very item, which the index picks)
    n = len(obj)
    frame = _users_frame()
    what = "list" if type(obj) is list else "tuple"
    inside = jnp.logical_and(index >= -n, index < n)
    error_channel.check_at(
        inside, lambda: IndexError(f"{what} index out of range"), frame.f_code.co_filename, frame.f_lineno
    )
    picked = jnp.where(index < 0, index + n, index)
    if stacked is None:
        return Picked(tuple(obj), picked, what, frame.f_code.co_filename, frame.f_lineno)
    value = stacked[picked]
    return mark(value, kind) if kind is not None else value


def _refused(self, *args, **kwargs):
    raise jax.errors.TracerIntegerConversionError(self.index)


def _picked_operator(op):
    def apply(self, *others):
        from laxify.runtime.calls import call  # (imports this module)

        return call(op, self, *others)

    return apply


def _picked_reflected(op):
    def apply(self, other):
        from laxify.runtime.calls import call  # (imports this module)

        return call(op, other, self)

    return apply


class Picked:
    """``items[i]`` of a list or tuple at a traced ``i`` (from 0, checked) whose items one array
    cannot hold: functions, or arrays of different shapes. A call of it, a call given it, an
    operator on it, a method of it called: each is computed for every item, in the branches of
    a ``lax.switch`` on ``i`` (``runtime/calls.py``: as the arms of an ``if`` chain, so the
    results must agree in structure, shape and dtype, or the line runs as Python). An attribute
    that is no method is :func:`item` of the items' attributes. Anything that needs the item
    itself (its truth, its length, the item as an array) asks for the index's value."""

    __slots__ = ("items", "index", "what", "filename", "line")

    def __init__(self, items: tuple, index, what: str, filename: str, line: int):
        self.items, self.index, self.what, self.filename, self.line = items, index, what, filename, line

    def __call__(self, *args, **kwargs):  # (called by code laxify did not convert)
        from laxify.runtime.calls import call  # (imports this module)

        return call(self, *args, **kwargs)

    def __getattr__(self, name):
        try:
            values = [getattr(v, name) for v in self.items]
        except AttributeError:
            raise jax.errors.TracerIntegerConversionError(self.index) from None
        if all(callable(v) and not hasattr(v, "shape") for v in values):
            return Picked(tuple(values), self.index, self.what, self.filename, self.line)
        return item(values, self.index)

    __bool__ = __len__ = __iter__ = __index__ = __int__ = __float__ = __complex__ = _refused
    __hash__ = __format__ = __array__ = __contains__ = _refused

    def __repr__(self) -> str:  # (for laxify's own messages: no name of laxify's in it)
        return f"<one of the {len(self.items)} items of a {self.what}, picked by a traced index>"


_PICKED_BINARY = "add sub mul truediv floordiv mod pow matmul and_ or_ xor lshift rshift".split()
for _op in (*_PICKED_BINARY, "lt", "le", "eq", "ne", "gt", "ge", "getitem", "neg", "pos", "abs", "invert"):
    setattr(Picked, f"__{_op.rstrip('_')}__", _picked_operator(getattr(operator, _op)))
for _op in _PICKED_BINARY:
    setattr(Picked, f"__r{_op.rstrip('_')}__", _picked_reflected(getattr(operator, _op)))
del _op

# It stands for the item the index picks: messages that name its type (a function returned from
# a program, which JAX refuses) say `function`, as they would of the one eager code picks.
Picked.__name__ = Picked.__qualname__ = "function"
Picked.__module__ = "builtins"
