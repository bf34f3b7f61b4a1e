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
int32 array, it records an overflow check in the run-time report (``runtime/report.py``): a
loop carries it as one int32 code, read after the call. The user gets
:class:`Int32OverflowError` at the user's line, which ``to_static`` turns into an eager run of
the function (Python's exact integer) with a ``FallbackWarning``.

Not checked (the cost rule, see docs/semantics.md "Numbers"): a sum or difference with a
Python int smaller than 2**16 in magnitude (``i += 1``: a counter needs more than 2**31 / |c|
iterations to get there), values the user made as arrays (``jnp.int32(...)``, items of array
arguments: they wrap, as in JAX and NumPy), and int64 results (under ``jax_enable_x64``).
"""

from __future__ import annotations

import operator
import sys

import jax
import jax.numpy as jnp
from jax import lax

from laxify.runtime import report, trace

__all__ = ["Int32OverflowError", "int_op", "is_python_int", "mark_python_int", "mark_results", "marking"]

# Sums and differences with a Python int below this magnitude are not checked.
SMALL_CONSTANT = 2**16

_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "**": operator.pow,
    "//": operator.floordiv,
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "//=": operator.ifloordiv,
    "neg": lambda a, _: -a,
    "abs": lambda a, _: abs(a),
}

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class Int32OverflowError(OverflowError):
    """A value that is a Python int in eager code passed int32's range in the program."""

    def __init__(self, name: str | None = None, filename: str = "<unknown>", line: int = 0):
        what = f"`{name}`" if name else "this integer"
        super().__init__(
            f"{what} is a Python int in eager code but an int32 array in the compiled loop, and its "
            f"value passed int32's range (-2**31 to 2**31 - 1) here, which Python's unbounded int never "
            f'does. Enable 64-bit integers before any JAX call (jax.config.update("jax_enable_x64", '
            f"True); pass int64 bounds), or compute it as a float."
        )
        self.name, self.filename, self.line = name, filename, line

    def __reduce__(self):
        return type(self), (self.name, self.filename, self.line)


# Traced values that stand for Python ints in eager code (the trace state's ``python_ints``): a
# loop body's carries that started as Python ints and its range or enumerate index (while the
# body is traced), what `+ - *` make of those, a loop's results, `int(x)` of a traced value.
# Weakly held: an entry goes with its tracer (a body's tracers with its trace), and an id is
# never taken for another object's.


def mark_python_int(value):
    """``value``, noted as a Python int in eager code: its ``+``, ``-``, ``*``, ``**`` with other
    such values are checked (see :func:`int_op`)."""
    if (
        isinstance(value, jax.core.Tracer)
        and getattr(value, "shape", None) == ()
        and jnp.issubdtype(value.dtype, jnp.integer)
    ):
        trace.current().python_ints[id(value)] = value
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
    known = trace.current().python_ints
    if known and known.get(id(value)) is value:
        return True
    # A loop's carry that started as a Python int is weakly typed (and stays so through `i + 1`,
    # which the converter leaves as it is); arrays the user made are not (`jnp.int32(0)`).
    return (
        isinstance(value, jax.core.Tracer)
        and getattr(value, "weak_type", False)
        and value.shape == ()
        and value.dtype == jnp.int32
    )


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
    report.record(jnp.logical_not(ok), _rule(name, filename, line, caller.f_code.co_name))
    return result


def _rule(name: str | None, filename: str, line: int, function: str) -> report.Rule:
    what = f"`{name}`" if name else "an integer"
    return report.Rule(
        lambda values: Int32OverflowError(name, filename, line),
        filename,
        line,
        function,
        f"OverflowError: {what} passed int32's range (at {filename}:{line})",
    )


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
    while x**e > _INT32_MAX:
        x -= 1
    while (x + 1) ** e <= _INT32_MAX:
        x += 1
    return x
