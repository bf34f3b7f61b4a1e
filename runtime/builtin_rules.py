"""Python's builtins and ``math`` functions on traced values: ``_lx.builtin(max, a, b)``.

Converted code calls a builtin through :func:`builtin`. When no argument is traced (Python
values, concrete arrays) the builtin itself runs, exactly as in Python. When one is, the rule
for that builtin computes the same value with ``jax.numpy``, following Python's definition
step by step (the table below; each rule says the Python it equals). A builtin without a
rule, or arguments a rule does not cover (a 2-D array where Python would compare rows, say),
run the builtin itself: where Python needs a concrete value there, the function then falls
back to Python as for any other such code. A name that does not hold the builtin (the user's
own ``max``) is called as written (converted when it is user code).

Where a result's Python type differs: a Python ``bool``/``int``/``float`` result is a scalar
array (``bool``, JAX's default int and float dtypes: int32/float32, 64 bits under
``jax_enable_x64``); ``max``/``min`` give the chosen value in the promoted dtype of the
candidates; ``sorted`` gives a Python list of scalar arrays, as Python gives a list.
"""

from __future__ import annotations

import builtins
import functools
import linecache
import math
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
from jax import lax

from laxify.ir.errors import Location, NeedsPython
from laxify.runtime import error_channel, iterables, numbers, trace
from laxify.runtime.calls import call
from laxify.runtime.dispatch.values import any_traced, is_traced

__all__ = [
    "BUILTIN_NAMES",
    "MATH_NAMES",
    "RULES",
    "CallNeedsHandler",
    "builtin",
    "builtin_in_try",
    "contains",
    "not_contains",
]

_NO_DEFAULT = object()


class _NotCovered(Exception):
    """The arguments are outside what the rule expresses: run the builtin itself."""


def _scalar(x) -> bool:
    """A number or an array of one element (a tuple or other object is not one)."""
    if not hasattr(x, "shape"):
        return isinstance(x, (bool, int, float))
    return x.shape == () or math.prod(x.shape) == 1


def _elements(iterable) -> list:
    """The items Python would iterate: a 1-D array's elements (a traced array of static
    length), a list/tuple/range/generator's items."""
    if hasattr(iterable, "shape"):
        if len(iterable.shape) != 1:
            raise _NotCovered  # 0-d: not iterable; 2-D and more: Python compares rows
        return [iterable[i] for i in range(iterable.shape[0])]
    return list(iterable)


def _fold_best(items: list, key, strict: Callable):
    """Python's ``max``/``min`` loop: the first item is the best so far; a later one replaces
    it only when ``strict(key(item), key(best))`` (``>`` for max, ``<`` for min), so the first
    of equal items is kept and a NaN compares as Python's comparisons make it."""
    if not all(_scalar(v) for v in items):
        raise _NotCovered  # Python would take the truth value of an array comparison
    best = items[0]
    best_key = key(best) if key is not None else best
    for item in items[1:]:
        item_key = key(item) if key is not None else item
        take = strict(item_key, best_key)
        if not is_traced(take):  # decided while tracing
            if take:
                best, best_key = item, item_key
            continue
        take = jnp.reshape(take, ())
        best = jnp.where(take, item, best)
        best_key = jnp.where(take, item_key, best_key) if key is not None else best
    return best


def _best_of_array(x, strict: Callable):
    """``max``/``min`` of a traced 1-D array, element by element in order as Python's loop
    (a scan: its length does not grow the program)."""
    if x.shape[0] == 1:
        return x[0]

    def step(best, item):
        return jnp.where(strict(item, best), item, best), None

    best, _ = lax.scan(step, x[0], x[1:])
    return best


def _max_min(name: str, strict: Callable):
    def rule(*args, key=None, default=_NO_DEFAULT):
        if not args:
            raise _NotCovered
        if len(args) > 1:
            if default is not _NO_DEFAULT:
                raise _NotCovered  # Python's TypeError
            return _fold_best(list(args), key, strict)
        iterable = args[0]
        if (
            hasattr(iterable, "shape")
            and is_traced(iterable)
            and len(iterable.shape) == 1
            and iterable.shape[0] > 0
            and key is None
        ):
            return _best_of_array(iterable, strict)
        items = _elements(iterable)
        if not items:  # Python's own error (its text differs between versions), or the default
            return getattr(builtins, name)([], **({} if default is _NO_DEFAULT else {"default": default}))
        return _fold_best(items, key, strict)

    rule.__doc__ = (
        f"``{name}(a, b, ...)`` and ``{name}(iterable)``: ``best = first; for v in rest: "
        f"if v {'>' if name == 'max' else '<'} best: best = v`` (``key=``, ``default=``)."
    )
    return rule


def _truth(v):
    """Python's truth value of one scalar, as a traced boolean."""
    if not _scalar(v):
        raise _NotCovered  # Python raises on the truth value of a larger array
    v = jnp.reshape(jnp.asarray(v), ())
    return v if v.dtype == jnp.bool_ else v != 0


def _any(iterable):
    """``any(xs)``: ``for v in xs: if v: return True``; ``return False``."""
    if hasattr(iterable, "shape") and len(iterable.shape) == 1:
        return jnp.any(iterable != 0) if iterable.dtype != jnp.bool_ else jnp.any(iterable)
    items = _elements(iterable)
    return jnp.any(jnp.stack([_truth(v) for v in items])) if items else False


def _all(iterable):
    """``all(xs)``: ``for v in xs: if not v: return False``; ``return True``."""
    if hasattr(iterable, "shape") and len(iterable.shape) == 1:
        return jnp.all(iterable != 0) if iterable.dtype != jnp.bool_ else jnp.all(iterable)
    items = _elements(iterable)
    return jnp.all(jnp.stack([_truth(v) for v in items])) if items else True


def _bool(*args):
    """``bool(x)``: ``x != 0`` for a number (NaN is true); a size-1 array as its one value."""
    if len(args) != 1:
        raise _NotCovered
    return _truth(args[0])


class CallNeedsHandler(error_channel.HandlerNeedsData):
    """A builtin or ``math`` call on traced values that raises Python's error for some data
    (``math.sqrt`` of a value that may be negative) inside a ``try`` whose ``except`` may catch
    it (or a ``with`` whose context manager may suppress it)."""

    CONSTRUCT = "call"
    REASON = (
        "it raises Python's error for some data (`math.sqrt` of a negative number, `math.exp` past "
        "float64's range) inside a `try` whose `except` clauses may catch it: which handler runs would "
        "depend on the data"
    )
    FIX = (
        "Compute the handler's value with the condition instead (for example "
        "`r = jnp.where(x < 0, 0.0, jnp.sqrt(jnp.maximum(x, 0)))`), or move the call out of the `try`."
    )
    MESSAGE = (
        "This call raises Python's error for some data inside a `try` whose `except` clauses may "
        "catch it: which of them runs would depend on the data, and one XLA program cannot choose a "
        "handler at run time."
    )


def _raise_where(bad, exception: Callable[[], BaseException]) -> None:
    """Python raises ``exception()`` where ``bad`` holds: a run-time check at the user's line
    of the call (the run-time error channel, as for a ``raise``). Where a handler may catch it,
    the statement runs as Python (:class:`CallNeedsHandler`)."""
    filename, line, in_try = trace.current().where
    if in_try and not (isinstance(bad, (bool, np.bool_)) and not bad):
        raise CallNeedsHandler(filename, line)
    error_channel.check_at(jnp.logical_not(bad), exception, filename, line)


def _to_int(x, rounded):
    """A float rounded to an integer by ``rounded`` (``jnp.trunc``, ``jnp.floor``, ...), with
    Python's errors: ``ValueError`` for NaN, ``OverflowError`` for an infinity; a value beyond
    JAX's default int dtype (Python's ints are unbounded) is an ``OverflowError`` too, never a
    wrapped integer."""
    target = jnp.result_type(int)
    _raise_where(jnp.isnan(x), lambda: ValueError("cannot convert float NaN to integer"))
    _raise_where(jnp.isinf(x), lambda: OverflowError("cannot convert float infinity to integer"))
    value = rounded(x)
    limit = float(jnp.iinfo(target).max) + 1.0
    _raise_where(
        jnp.logical_and(jnp.isfinite(x), jnp.logical_or(value >= limit, value < -limit)),
        lambda: OverflowError(
            f"the integer is too large for {jnp.dtype(target).name}, laxify's "
            f"Python int on traced values (jax_enable_x64 gives int64)"
        ),
    )
    return jnp.where(jnp.isfinite(value), value, 0).astype(target)


def _int(*args):
    """``int(x)``: a bool or integer as it is (in JAX's default int dtype for a bool); a float
    truncated toward zero, with Python's errors on NaN and infinities (run-time checks)."""
    if len(args) != 1 or not _scalar(args[0]):
        raise _NotCovered
    x = jnp.reshape(jnp.asarray(args[0]), ())
    if x.dtype == jnp.bool_:
        return x.astype(jnp.result_type(int))
    if jnp.issubdtype(x.dtype, jnp.integer):
        # A value of its own: it is a Python int in eager code, the argument an array (see
        # `_PYTHON_INT_RESULTS`).
        return x if x is not args[0] else jnp.array(x, copy=True)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return _to_int(x, jnp.trunc)
    raise _NotCovered


def _float(*args):
    """``float(x)``: the value in JAX's default float dtype (float32; float64 under x64)."""
    if len(args) != 1 or not _scalar(args[0]):
        raise _NotCovered
    x = jnp.reshape(jnp.asarray(args[0]), ())
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise _NotCovered  # Python's TypeError
    return _widened(x)


def _sorted(iterable, *, key=None, reverse=False):
    """``sorted(xs)`` of scalars: a list, smallest first (``reverse=True``: largest first).
    Python's sort is stable: a stable sort on the values, with ``-0.0`` and ``0.0`` one key,
    keeps equal floats in their order. A NaN among floats (Python's order of NaNs depends on
    where they stand) is not held: ``to_static`` runs the function eagerly."""
    if key is not None:
        raise _NotCovered
    items = _elements(iterable)
    if not items:
        return []
    if not all(_scalar(v) for v in items):
        raise _NotCovered
    values = jnp.stack([jnp.reshape(jnp.asarray(v), ()) for v in items])
    if jnp.issubdtype(values.dtype, jnp.integer) or values.dtype == jnp.bool_:
        ordered = jnp.sort(values)  # (equal ints are one value: their order is not seen)
        if reverse:
            ordered = ordered[::-1]
    elif jnp.issubdtype(values.dtype, jnp.floating):
        nan = jnp.any(jnp.isnan(values))
        _not_held(nan, "the items to sort hold a NaN, which Python leaves where comparisons put it")
        keys = values + 0.0  # (-0.0 + 0.0 is 0.0: the two zeros are equal keys, as Python's)
        order = jnp.argsort(-keys if reverse else keys, stable=True)
        ordered = values[order]
    else:
        raise _NotCovered
    return [ordered[i] for i in range(ordered.shape[0])]


def _two_reals(args: tuple) -> tuple:
    """The two arguments of a ``math`` function of two numbers, real scalars, as 0-d arrays
    (``_NotCovered`` otherwise)."""
    if len(args) != 2 or not all(_scalar(a) for a in args):
        raise _NotCovered
    a, b = (jnp.reshape(jnp.asarray(v), ()) for v in args)
    if jnp.issubdtype(a.dtype, jnp.complexfloating) or jnp.issubdtype(b.dtype, jnp.complexfloating):
        raise _NotCovered
    return a, b


def _one_real(args: tuple):
    """The one argument of a ``math`` function of one number, a real scalar, as a 0-d array
    (``_NotCovered`` otherwise: Python's own error, or a complex number)."""
    if len(args) != 1 or not _scalar(args[0]):
        raise _NotCovered
    x = jnp.reshape(jnp.asarray(args[0]), ())
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise _NotCovered
    return x


def _math_unary(fn: Callable, *, integer_result: bool = False, floats_only: bool = False, exact: bool = False):
    """A ``math`` function of one number (``exact``: its float is its argument's exactly, up to
    the sign: computed only where the argument was, as ``math.fabs``)."""

    def rule(*args):
        x = _one_real(args)
        if integer_result:
            # math.floor/ceil of an int or bool is that int; of a float, rounded with Python's
            # errors on NaN and infinities. (math.trunc has no rule: a JAX array has no
            # __trunc__, so Python raises TypeError on one.)
            if x.dtype == jnp.bool_:
                return x.astype(jnp.result_type(int))
            if jnp.issubdtype(x.dtype, jnp.integer):
                return x
            if jnp.issubdtype(x.dtype, jnp.floating):
                return _to_int(x, fn)
            raise _NotCovered
        if floats_only:
            return fn(x)
        computed = not exact or numbers.computed_float(args[0])
        return _python_float(fn(_widened(x)), x, computed=computed)

    return rule


def _math_domain(fn: Callable, outside: Callable):
    """``math.sqrt``/``log``/``log2``/``log10``/``sin``/``cos``/``tan`` of one number: the
    ``jax.numpy`` function in JAX's default float dtype; where Python raises ``ValueError:
    math domain error`` (``outside(x)``: a negative number's square root, the logarithm of
    zero or of a negative number, the sine of an infinity), a run-time check raises it at the
    call's line. NaN gives NaN, as in Python."""

    def rule(*args):
        x = _one_real(args)
        wide = _widened(x)
        if outside is not None:
            _raise_where(outside(wide), lambda: ValueError("math domain error"))
        return _python_float(fn(wide), x)

    return rule


def _math_binary(fn: Callable):
    def rule(*args):
        if len(args) != 2 or not all(_scalar(a) for a in args):
            raise _NotCovered
        a, b = (jnp.reshape(jnp.asarray(v), ()) for v in args)
        return _python_float(fn(_widened(a), _widened(b)), a, b)

    return rule


def _math_pow(*args):
    """``math.pow(a, b)``: a float, with Python's ``ValueError: math domain error`` for a
    negative base and a fractional exponent, and for 0 to a negative power."""
    if len(args) != 2 or not all(_scalar(a) for a in args):
        raise _NotCovered
    a, b = (jnp.reshape(jnp.asarray(v), ()) for v in args)
    af, bf = _widened(a), _widened(b)
    bad = jnp.logical_or(jnp.logical_and(af < 0, bf != jnp.floor(bf)), jnp.logical_and(af == 0, bf < 0))
    _raise_where(bad, lambda: ValueError("math domain error"))
    return _python_float(jnp.power(af, bf), a, b)


def _python_float(result, *args, computed: bool = True):
    """A ``math`` function's result: a Python float in eager code (``runtime/numbers.py``).
    Python's float is weakly typed: with a float16 array it gives float16. The result is in
    the float dtype of its arguments where they are floats (``math.cos`` of a float16 value
    is float16, not float32 or float64 under x64), else in JAX's default float dtype."""
    floats = [a.dtype for a in args if jnp.issubdtype(a.dtype, jnp.floating)]
    if floats and len(floats) == len(args):
        result = result.astype(jnp.result_type(*floats))
    return numbers.mark(result, float, computed=computed)


def _widened(x):
    """``x`` in JAX's default float dtype, as Python's ``float`` holds it; an int or bool is
    made a weakly typed float, as a Python float is (``x16 * math.cos(k)`` of an int ``k`` is
    float16 in eager code). (A float array stays strongly typed: JAX has no public way to
    weaken it.)"""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return x.astype(jnp.result_type(float))
    return x * 1.0  # (an int times a Python float: JAX's weakly typed float)


def _python_overflow_limit(fn: Callable, dtype) -> float:
    """The largest value of ``dtype`` on which Python's ``fn`` (``math.exp``, ``math.cosh``, ...)
    gives a float rather than ``OverflowError: math range error``: a bisection over the
    dtype's values between 0 and its largest finite value."""
    info = np.finfo(dtype)
    low, high = np.asarray(0, dtype), np.asarray(info.max, dtype)  # fn(low) fits, fn(high) does not
    bits = low.view(f"int{info.bits}").dtype
    lo, hi = int(low.view(bits)), int(high.view(bits))
    while hi - lo > 1:  # non-negative floats are ordered as their bit patterns
        mid = (lo + hi) // 2
        try:
            fn(float(np.asarray(mid, bits).view(dtype)))
        except OverflowError:
            hi = mid
        else:
            lo = mid
    return float(np.asarray(lo, bits).view(dtype))


def _math_range(fn: Callable, python_fn: Callable, symmetric: bool = False):
    """``math.exp``/``expm1``/``exp2``/``sinh``/``cosh`` of one number: the ``jax.numpy``
    function in JAX's default float dtype. Where Python's float64 overflows (``x`` past the
    largest value Python's function takes; ``|x|`` for ``sinh``/``cosh``) a run-time check
    raises Python's ``OverflowError: math range error``; where only the program's float does
    (float32 from ``exp(88.8)`` on, a finite float64 in Python), :class:`NumberNotHeld` sends
    ``to_static`` to eager Python."""

    def rule(*args):
        x = _one_real(args)
        wide = _widened(x)
        result = fn(wide)
        size = jnp.abs(wide) if symmetric else wide
        limit = _overflow_limit(python_fn, wide.dtype)
        python_overflows = size > limit
        _raise_where(python_overflows, lambda: OverflowError("math range error"))
        lost = jnp.logical_and(jnp.isinf(result), jnp.logical_and(jnp.isfinite(wide), ~python_overflows))
        _not_held(lost, f"its value passed {wide.dtype.name}'s range, where Python's float (float64) holds it")
        return _python_float(result, x)

    return rule


@functools.cache
def _overflow_limit(python_fn: Callable, dtype) -> float:
    return _python_overflow_limit(python_fn, np.dtype(dtype))


def _not_held(failed, what: str) -> None:
    """:class:`NumberNotHeld` where ``failed``: the program cannot hold Python's value, and
    ``to_static`` answers with eager Python."""
    filename, line, _ = trace.current().where
    error_channel.check_at(
        jnp.logical_not(failed), lambda: numbers.NumberNotHeld(what, None, filename, line), filename, line
    )


def _fmod(*args):
    """``math.fmod(x, y)``: C's ``fmod`` in JAX's default float dtype, with Python's
    ``ValueError: math domain error`` where ``y`` is zero or ``x`` an infinity (and neither
    operand is NaN, which gives NaN)."""
    a, b = _two_reals(args)
    x, y = _widened(a), _widened(b)
    bad = jnp.logical_or(jnp.logical_and(y == 0, ~jnp.isnan(x)), jnp.logical_and(jnp.isinf(x), ~jnp.isnan(y)))
    _raise_where(bad, lambda: ValueError("math domain error"))
    return _python_float(jnp.fmod(x, y), a, b)


def _hypot(*args):
    """``math.hypot(*coordinates)``: the Euclidean norm, scaled by the largest magnitude so
    that squares do not overflow where the norm itself fits; an infinity gives an infinity
    even beside NaN, as in Python. Where the norm passes the program's float and not
    Python's float64, :class:`NumberNotHeld`."""
    if not args or not all(_scalar(a) for a in args):
        raise _NotCovered
    values = [jnp.reshape(jnp.asarray(v), ()) for v in args]
    if any(jnp.issubdtype(v.dtype, jnp.complexfloating) for v in values):
        raise _NotCovered
    sizes = [jnp.abs(_widened(v)) for v in values]  # (item by item: a stack is strongly typed)
    top = functools.reduce(jnp.maximum, sizes)
    scale = jnp.where(jnp.logical_and(top > 0, jnp.isfinite(top)), top, 1)
    norm = scale * jnp.sqrt(functools.reduce(jnp.add, [jnp.square(v / scale) for v in sizes]))
    size = jnp.stack(sizes)
    norm = jnp.where(jnp.any(jnp.isinf(size)), jnp.inf, norm)
    _not_held(
        jnp.logical_and(jnp.isinf(norm), jnp.all(jnp.isfinite(size))),
        f"its value passed {size.dtype.name}'s range, where Python's float (float64) holds it",
    )
    return _python_float(norm, *values)


def _integer_args(args) -> list | None:
    """The arguments as integer arrays when each is an int or bool (Python's ``math`` integer
    functions take no float)."""
    values = [jnp.reshape(jnp.asarray(v), ()) for v in args]
    if not all(jnp.issubdtype(v.dtype, jnp.integer) or v.dtype == jnp.bool_ for v in values):
        return None
    return [v.astype(jnp.result_type(int)) if v.dtype == jnp.bool_ else v for v in values]


def _gcd(*args):
    """``math.gcd(*ints)``: the greatest common divisor, never negative (0 without arguments
    or when all are 0). ``gcd(-2**31, 0)`` is 2**31 in Python: past int32, :class:`NumberNotHeld`."""
    if not args or not all(_scalar(a) for a in args):
        raise _NotCovered
    values = _integer_args(args)
    if values is None:
        raise _NotCovered  # a float: Python's TypeError
    result = values[0]
    for v in values[1:]:
        result = jnp.gcd(result, v)
    result = jnp.abs(result)
    _not_held(result < 0, f"it passed {result.dtype.name}'s range")
    return result


def _factorial(*args):
    """``math.factorial(n)`` of an int: a table of the factorials JAX's default int holds (up
    to 12! in int32, 20! in int64); ``ValueError`` for a negative ``n``, as Python raises it,
    and :class:`NumberNotHeld` past the table (Python's int is unbounded)."""
    if len(args) != 1 or not _scalar(args[0]):
        raise _NotCovered
    values = _integer_args(args)
    if values is None:
        raise _NotCovered  # a float: Python's TypeError
    (n,) = values
    kind = jnp.result_type(int)
    table, k = [], 1
    while k * max(len(table), 1) <= jnp.iinfo(kind).max:
        k *= max(len(table), 1)
        table.append(k)
    _raise_where(n < 0, lambda: ValueError("factorial() not defined for negative values"))
    _not_held(n >= len(table), f"it passed {jnp.dtype(kind).name}'s range")
    return jnp.asarray(table, kind)[jnp.clip(n, 0, len(table) - 1)]


def _math_predicate(fn: Callable):
    """``math.isnan``/``isinf``/``isfinite`` of one number: a Python bool."""

    def rule(*args):
        x = _one_real(args)
        return numbers.mark(fn(x), bool)

    return rule


def _log(*args):
    """``math.log(x)`` and ``math.log(x, base)``: ``log(x) / log(base)`` in JAX's default float
    dtype; Python's ``ValueError: math domain error`` for ``x <= 0`` or ``base <= 0``, and its
    ``ZeroDivisionError: float division by zero`` for ``base == 1``."""
    if len(args) != 2:
        return _natural_log(*args)
    x, base = _two_reals(args)
    xf, bf = _widened(x), _widened(base)
    _raise_where(jnp.logical_or(xf <= 0, bf <= 0), lambda: ValueError("math domain error"))
    _raise_where(jnp.logical_and(bf == 1, xf > 0), lambda: ZeroDivisionError("float division by zero"))
    return _python_float(jnp.log(xf) / jnp.log(bf), x, base)


_natural_log = _math_domain(jnp.log, lambda x: x <= 0)


def _float_args_held(args, wide) -> bool:
    """Whether the program's float ``wide`` holds each argument as eager Python sees it: a
    Python float it rounds (``0.1`` in float32), or a Python float the program computed in a
    narrower float than Python's (``math.sin(x)``), is not held."""
    if jnp.finfo(wide).bits >= 64:
        return True
    for a in args:
        if type(a) is float and float(np.asarray(a, wide)) != a:
            return False
        if is_traced(a) and numbers.computed_float(a):
            return False
    return True


def _isclose(*args, rel_tol=1e-09, abs_tol=0.0):
    """``math.isclose(a, b, rel_tol=..., abs_tol=...)``: Python's test, ``a == b``, or both finite
    and ``|a - b| <= max(rel_tol * |a|, rel_tol * |b|, abs_tol)``. The tolerances are Python
    numbers. Without x64 the test is in float32: where no bound decides it by more than a few
    float32 roundings, Python's float64 may decide otherwise, and the value is not held
    (``to_static`` runs the function eagerly)."""
    if len(args) != 2 or not all(_scalar(a) for a in args):
        raise _NotCovered
    if not all(type(t) in (int, float) and t >= 0 for t in (rel_tol, abs_tol)):
        raise _NotCovered  # Python's own error (negative tolerances), or traced tolerances
    wide = jnp.result_type(float)
    if not _float_args_held(args, wide):
        raise _NotCovered
    a, b = (jnp.reshape(jnp.asarray(v), ()).astype(wide) for v in args)
    diff = jnp.abs(b - a)
    bounds = ([rel_tol * jnp.abs(b), rel_tol * jnp.abs(a)] if rel_tol > 0 else []) + (
        [jnp.asarray(abs_tol, wide)] if abs_tol > 0 else []
    )
    finite = jnp.logical_and(jnp.isfinite(a), jnp.isfinite(b))
    close = functools.reduce(jnp.logical_or, [diff <= t for t in bounds], jnp.zeros((), bool))
    close = jnp.logical_or(a == b, jnp.logical_and(finite, close))
    if jnp.finfo(wide).bits < 64 and bounds:
        slack = 4 * jnp.finfo(wide).eps
        margins = [slack * jnp.maximum(diff, t) for t in bounds]
        surely = functools.reduce(jnp.logical_or, [diff <= t - m for t, m in zip(bounds, margins)])
        surely_not = functools.reduce(jnp.logical_and, [diff > t + m for t, m in zip(bounds, margins)])
        open_ = jnp.logical_not(jnp.logical_or(surely, surely_not))
        _not_held(jnp.logical_and(jnp.logical_and(finite, a != b), open_), "the test is too close to call in float32")
    return numbers.mark(close, bool)


def _fsum(*args):
    """``math.fsum(xs)``: the sum of scalars, compensated (Neumaier) in JAX's default float
    dtype, a Python float; Python's ``ValueError`` for ``inf`` and ``-inf`` together, and a sum
    of finite items that passes the dtype's range is not held (float64 holds more)."""
    if len(args) != 1:
        raise _NotCovered
    items = _elements(args[0])
    if not items:
        return 0.0
    if not all(_scalar(v) for v in items):
        raise _NotCovered
    given = [jnp.reshape(jnp.asarray(v), ()) for v in items]
    if any(jnp.issubdtype(v.dtype, jnp.complexfloating) for v in given):
        raise _NotCovered
    values = [_widened(v) for v in given]
    total, error = values[0], 0.0
    for v in values[1:]:
        t = total + v
        error = error + jnp.where(jnp.abs(total) >= jnp.abs(v), (total - t) + v, (v - t) + total)
        total = t
    stacked = jnp.stack(values)
    both = jnp.logical_and(jnp.any(stacked == jnp.inf), jnp.any(stacked == -jnp.inf))
    _raise_where(both, lambda: ValueError("-inf + inf in fsum"))
    result = jnp.where(jnp.isfinite(total), total + error, total)
    _not_held(
        jnp.logical_and(jnp.all(jnp.isfinite(stacked)), jnp.logical_not(jnp.isfinite(result))),
        "it passed the float's range",
    )
    return _python_float(result, *given)


def _count_product(n, k, divide: bool):
    """``n * (n-1) * ... * (n-k+1)`` (``divide``: over ``k!`` as it goes, exact at each step),
    a loop of ``k`` steps; an intermediate past the int's range is not held."""
    kind = n.dtype
    top = jnp.iinfo(kind).max

    def step(i, carry):
        value, over = carry
        factor = n - i
        over = jnp.logical_or(over, jnp.logical_and(factor > 0, value > top // jnp.maximum(factor, 1)))
        value = value * factor
        return (value // (i + 1) if divide else value), over

    value, over = lax.fori_loop(jnp.zeros((), kind), k, step, (jnp.ones((), kind), jnp.zeros((), bool)))
    _not_held(over, f"it passed {jnp.dtype(kind).name}'s range")
    return value


def _counting(divide: bool):
    """``math.comb(n, k)`` (``divide``: the ways to choose ``k`` of ``n``) and ``math.perm(n, k)``
    (``n! / (n - k)!``; ``perm(n)`` is ``n!``) of ints: 0 where ``k > n``, Python's
    ``ValueError`` for a negative ``n`` or ``k``."""

    def rule(*args):
        if not divide and len(args) == 1:
            return _factorial(*args)
        if len(args) != 2 or not all(_scalar(a) for a in args):
            raise _NotCovered
        values = _integer_args(args)
        if values is None:
            raise _NotCovered  # a float: Python's TypeError
        n, k = jnp.broadcast_arrays(*values)
        kind = jnp.result_type(n, k)
        n, k = n.astype(kind), k.astype(kind)
        _raise_where(n < 0, lambda: ValueError("n must be a non-negative integer"))
        _raise_where(k < 0, lambda: ValueError("k must be a non-negative integer"))
        inside = jnp.logical_and(k <= n, k >= 0)
        steps = jnp.where(inside, jnp.minimum(k, n - k) if divide else k, 0)
        return jnp.where(inside, _count_product(n, steps, divide), 0)

    return rule


def _needs_python(reason: str, fix: str) -> NeedsPython:
    """Eager Python runs this call (``to_static`` falls back), said at the user's line."""
    filename, line, _ = trace.current().where
    text = linecache.getline(filename, line)
    return NeedsPython(reason, Location(filename, line, len(text) - len(text.lstrip()), text.rstrip("\n")), fix)


def _text_of(name: str):
    def rule(*args, **kwargs):
        """``str(x)``/``repr(x)``/``format(x, spec)`` of a traced value: its digits are known
        only when the program runs, and while tracing Python would write the tracer's name
        into the string. Eager Python runs it (``NeedsPython``: ``to_static`` falls back)."""
        raise _needs_python(
            f"`{name}()` of a traced value makes a Python string of its digits, which exist only when the program runs",
            f"Keep the value as an array and make the string where the function is called "
            f"(`{name}(f(x))`), or print it with `print`/`jax.debug.print`, which laxify formats "
            f"at run time.",
        )

    return rule


def _isinstance(value, classinfo):
    """``isinstance(v, int)`` of a traced value that is a Python number in eager code (a loop's
    index, a carried counter: ``runtime/numbers.py``): of the Python type it stands for."""
    kind = numbers.python_type(value)
    if kind is None:
        raise _NotCovered
    return issubclass(kind, classinfo)


def _type(*args):
    """``type(v)`` of a traced value that is a Python number in eager code: that Python type;
    of another traced array: the class of JAX's arrays, as eager code sees it (a message that
    formats ``type(x)`` shows what eager's shows, never a tracer class)."""
    if len(args) != 1:
        raise _NotCovered
    kind = numbers.python_type(args[0])
    if kind is not None:
        return kind
    if isinstance(args[0], jax.core.Tracer):
        return _array_class()
    raise _NotCovered


@functools.cache
def _array_class() -> type:
    """The class of a concrete JAX array (made once, outside any trace)."""
    with jax.ensure_compile_time_eval():
        return type(jnp.zeros((), jnp.int32))


def _pow(*args, **kwargs):
    """``pow(a, b)`` is ``a ** b`` (with Python's meaning for Python numbers: ``runtime/numbers.py``).
    ``pow(a, b, m)`` of traced integers:
    Python's ints are unbounded, and the products of a modular power overflow JAX's int32
    (from ``m > 46341`` on): no program gives Python's value for every input, so eager Python
    runs it (``NeedsPython``: ``to_static`` falls back)."""
    if len(args) + len(kwargs) < 3:
        base, exp = (*args, *kwargs.values())
        return numbers.at_users_line("**", base, exp)
    raise _needs_python(
        "`pow(a, b, m)` of traced integers computes with Python's unbounded ints, where the "
        "products of a modular power overflow JAX's int32",
        "Write the modular power as a loop over the bits of the exponent with `% m` after each "
        "product (exact while m*m fits in the dtype), or keep the arguments static (Python ints).",
    )


# One table: the builtin or ``math`` function → its rule. Only functions that Python never
# makes raise on the inputs a rule covers are listed (the rest need the run-time error channel).
RULES: dict[Any, Callable] = {
    builtins.max: _max_min("max", lambda a, b: a > b),
    builtins.min: _max_min("min", lambda a, b: a < b),
    builtins.any: _any,
    builtins.all: _all,
    builtins.bool: _bool,
    builtins.int: _int,
    builtins.float: _float,
    builtins.sorted: _sorted,
    builtins.str: _text_of("str"),
    builtins.repr: _text_of("repr"),
    builtins.format: _text_of("format"),
    builtins.pow: _pow,
    builtins.isinstance: _isinstance,
    builtins.type: _type,
    math.floor: _math_unary(jnp.floor, integer_result=True),
    math.ceil: _math_unary(jnp.ceil, integer_result=True),
    math.fabs: _math_unary(jnp.abs, exact=True),
    math.isnan: _math_predicate(jnp.isnan),
    math.isinf: _math_predicate(jnp.isinf),
    math.isfinite: _math_predicate(jnp.isfinite),
    math.atan: _math_unary(jnp.arctan),
    math.tanh: _math_unary(jnp.tanh),
    math.sqrt: _math_domain(jnp.sqrt, lambda x: x < 0),
    math.log: _log,
    math.log2: _math_domain(jnp.log2, lambda x: x <= 0),
    math.log10: _math_domain(jnp.log10, lambda x: x <= 0),
    math.sin: _math_domain(jnp.sin, jnp.isinf),
    math.cos: _math_domain(jnp.cos, jnp.isinf),
    math.tan: _math_domain(jnp.tan, jnp.isinf),
    math.atan2: _math_binary(jnp.arctan2),
    math.pow: _math_pow,
    math.copysign: _math_binary(jnp.copysign),
    math.exp: _math_range(jnp.exp, math.exp),
    math.expm1: _math_range(jnp.expm1, math.expm1),
    math.sinh: _math_range(jnp.sinh, math.sinh, symmetric=True),
    math.cosh: _math_range(jnp.cosh, math.cosh, symmetric=True),
    math.log1p: _math_domain(jnp.log1p, lambda x: x <= -1),
    math.asin: _math_domain(jnp.arcsin, lambda x: jnp.abs(x) > 1),
    math.acos: _math_domain(jnp.arccos, lambda x: jnp.abs(x) > 1),
    math.atanh: _math_domain(jnp.arctanh, lambda x: jnp.abs(x) >= 1),
    math.acosh: _math_domain(jnp.arccosh, lambda x: x < 1),
    math.asinh: _math_unary(jnp.arcsinh),
    math.degrees: _math_unary(lambda x: x * (180.0 / math.pi)),
    math.radians: _math_unary(lambda x: x * (math.pi / 180.0)),
    math.erf: _math_unary(jax.scipy.special.erf),
    math.erfc: _math_unary(jax.scipy.special.erfc),
    math.fmod: _fmod,
    math.hypot: _hypot,
    math.gcd: _gcd,
    math.factorial: _factorial,
    math.isclose: _isclose,
    math.fsum: _fsum,
    math.comb: _counting(divide=True),
    math.perm: _counting(divide=False),
}
if sys.version_info >= (3, 11):
    RULES[math.exp2] = _math_range(jnp.exp2, math.exp2)
    RULES[math.cbrt] = _math_unary(jnp.cbrt)

# Types of a value that is concrete and no iterator: a builtin of it alone is the builtin.
_CONCRETE = frozenset({type(jnp.zeros(())), int, float, bool, str})

_OF_ITERABLE = frozenset({builtins.max, builtins.min, builtins.any, builtins.all, builtins.sorted})


def _is_iterator(value) -> bool:
    return hasattr(type(value), "__next__") and not hasattr(value, "shape")


# The names the converter routes: builtins by name, ``math`` functions by attribute.
BUILTIN_NAMES = frozenset(fn.__name__ for fn in RULES if getattr(builtins, fn.__name__, None) is fn) - {"range"}
MATH_NAMES = frozenset(fn.__name__ for fn in RULES if getattr(math, fn.__name__, None) is fn)


def _short_circuit(fn, iterator):
    """``any``/``all`` over an iterator (a generator expression): its items one by one as
    Python takes them, ending where a Python truth value decides (a later item is then never
    computed); from the first traced item on, the rest is taken too, and the result is traced.
    ``None`` when no item is traced (the result is then the Python value, in the second slot)."""
    deciding = fn is builtins.any  # any() ends at a true item, all() at a false one
    items = []
    for item in iterator:
        if not items and not any_traced(item):
            if bool(item) == deciding:
                return None, deciding
            continue
        items.append(item)
    return (items, None) if items else (None, not deciding)


def builtin(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with Python's meaning: a builtin's rule when an argument is
    traced, the builtin itself otherwise; anything else called as converted code calls it.
    An iterator argument (a generator expression) is taken item by item first, as the builtin
    would take it."""
    return _builtin(fn, args, kwargs, False, sys._getframe(1))


def builtin_in_try(fn, *args, **kwargs):
    """:func:`builtin` for a call in the body of a ``try`` whose ``except`` may catch what it
    raises, or of a ``with``: an error Python raises there for some data makes the statement run
    as Python (:class:`CallNeedsHandler`), where the handler runs exactly when Python's would."""
    return _builtin(fn, args, kwargs, True, sys._getframe(1))


def _builtin(fn, args: tuple, kwargs: dict, in_try: bool, caller):
    if args and type(args[0]) is iterables.TracedRange:
        rule = functools.partial(_of_range, fn)  # (`len(r)`, `sum(r)`, ... from the bounds)
    else:
        try:
            rule = RULES.get(fn)
        except TypeError:  # an unhashable callable: not a builtin
            rule = None
        if rule is None:
            return call(fn, *args, **kwargs)
        if len(args) == 1 and not kwargs and type(args[0]) in _CONCRETE:  # (the eager run's `int(x)`)
            return fn(args[0])
        if numbers.Picked in map(type, args):  # (`isinstance(layers[i], X)`: with each item it may be)
            return call(fn, *args, **kwargs)
        if len(args) == 1 and fn in _OF_ITERABLE and _is_iterator(args[0]):
            if fn is builtins.any or fn is builtins.all:
                items, decided = _short_circuit(fn, args[0])
                if items is None:
                    return decided
            else:
                items = list(args[0])
            args = (items,)
        if not any_traced((args, kwargs)):
            return fn(*args, **kwargs)
    state = trace.current()  # `caller`: the converted code, at the user's file and line
    before, state.where = state.where, (caller.f_code.co_filename, caller.f_lineno, in_try)
    try:
        result = rule(*args, **kwargs)
    except _NotCovered:
        result = _NotCovered
    finally:
        state.where = before
    if result is _NotCovered:
        return fn(*args, **kwargs)  # outside the handler: its error is not chained to _NotCovered
    if fn in _PYTHON_INT_RESULTS or (fn in _PYTHON_INT_KEPT and args and all(numbers.is_python_int(a) for a in args)):
        # A Python int in eager code: its `+ - * **` with other Python ints are checked for
        # int32 overflow (runtime/numbers.py).
        numbers.mark(result, int)
    elif fn is builtins.float and args:
        # A Python float in eager code, exactly its argument's value (computed where that was)
        numbers.mark(result, float, computed=numbers.computed_float(args[0]))
    elif fn in _PYTHON_INT_KEPT and args and all(numbers.python_type(a) in (int, float) for a in args):
        # `max(m, x * 1.01 ** i)` of Python numbers, one a float: one of them, a Python float
        numbers.mark(result, float, computed=any(numbers.computed_float(a) for a in args))
    return result


def _range(*args):
    """``range(*args)`` with a traced bound, where its uses need no item one by one
    (converters/builtin_calls.py): a :class:`~laxify.runtime.iterables.TracedRange`."""
    made = iterables.traced_range(args)
    if made is None:
        raise _NotCovered
    return made


def _of_range(fn, r, *rest, **kwargs):
    """``fn(r, ...)`` of a range with traced bounds ``r``: its answer from the bounds (``len``,
    ``sum``, ``max``/``min``, ``any``/``all``); anything else is the builtin itself, which asks
    Python's own range for its items (its concretization error makes the line run as Python)."""
    if fn is builtins.len and not rest and not kwargs:
        return r.length
    if fn is builtins.sum and len(rest) <= 1 and set(kwargs) <= {"start"}:
        start = rest[0] if rest else kwargs.get("start", 0)
        return r.total() if type(start) is int and start == 0 else numbers.at_users_line("+", start, r.total())
    if fn in (builtins.max, builtins.min) and not rest and set(kwargs) <= {"default"}:
        if numbers.python_type(kwargs.get("default", 0)) in (int, bool):
            return r.extreme(fn is builtins.max, fn.__name__, **kwargs)
    if fn is builtins.any and not rest and not kwargs:
        return r.any_()
    if fn is builtins.all and not rest and not kwargs:
        return r.all_()
    raise _NotCovered


# Routed only where its uses need no item one by one (converters/builtin_calls.py): not among
# the names routed everywhere.
RULES[builtins.range] = _range


# Builtins whose result is a Python int in eager code on any argument, and those whose result is
# one where their arguments are.
_PYTHON_INT_RESULTS = frozenset({builtins.int, math.floor, math.ceil, math.gcd, math.factorial, math.comb, math.perm})
_PYTHON_INT_KEPT = frozenset({builtins.max, builtins.min})


def contains(container, item):
    """``item in container``: Python's ``any(v is item or v == item for v in container)`` for a
    list or tuple holding traced values (or searched for one); ``in`` itself otherwise."""
    if type(container) is iterables.TracedRange:
        found = container.contains(item)
        return found if found is not None else item in container.python()
    if type(container) in (list, tuple) and any_traced((container, item)):
        found = []
        for v in container:
            if v is item:
                return True
            if not (_scalar(v) and _scalar(item)):
                return item in container  # Python compares whole arrays: it raises as it would
            same = v == item
            if not is_traced(same):
                if same:
                    return True
                continue
            found.append(jnp.reshape(same, ()))
        return jnp.any(jnp.stack(found)) if found else False
    return item in container


def not_contains(container, item):
    """``item not in container``, as :func:`contains`."""
    found = contains(container, item)
    return jnp.logical_not(found) if is_traced(found) else not found
