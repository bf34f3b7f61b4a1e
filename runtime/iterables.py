"""``enumerate``/``zip``/``reversed`` in converted ``for`` loops (``_lx.iterable(enumerate)(...)``),
and ``range`` with a traced bound as a value.

On arrays the first three give an :class:`ArraySequence`, one pytree of arrays with a common
leading axis that ``for_each`` runs ``lax.scan`` over (each step gets one element, such as the
tuple ``(i, x)``); on anything else, the builtin's own result, iterated as Python.

``range(n)`` of a traced ``n`` where its uses need no item one by one (``sum(range(n))``,
``len``, ``max``, ``k in range(n)``, ``range(n)[k]``: converters/builtin_calls.py routes those)
is a :class:`TracedRange`, whose answers the program computes from the bounds.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from laxify.runtime import numbers

__all__ = [
    "ArraySequence",
    "TracedRange",
    "as_scan_input",
    "enumerate_",
    "iterable",
    "reversed_",
    "reversed_range",
    "sum_result",
    "summed",
    "traced_range",
    "zip_",
]


class ArraySequence:
    """The elements of ``kind(...)`` over arrays, stored as one pytree whose leaves share the
    leading axis (length ``length``). Iterating it as Python gives exactly the builtin's items."""

    __slots__ = ("kind", "tree", "length", "_python")

    def __init__(self, kind: str, tree: Any, length: int, python: Callable[[], Iterator]):
        self.kind, self.tree, self.length, self._python = kind, tree, length, python

    def __iter__(self) -> Iterator:
        return iter(self._python())

    def __reversed__(self):
        raise TypeError(f"'{self.kind}' object is not reversible")

    def __repr__(self) -> str:
        return f"ArraySequence({self.kind}, length={self.length})"


def _is_sequence_array(x) -> bool:
    """An array with a leading axis to iterate over (0-d arrays fail as the builtins do)."""
    return isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer)) and x.ndim > 0


def _scannable(x) -> bool:
    return isinstance(x, ArraySequence) or _is_sequence_array(x)


def _parts(x) -> tuple[Any, int]:
    """The pytree of arrays that stands for ``x`` and its length."""
    if isinstance(x, ArraySequence):
        return x.tree, x.length
    return x, x.shape[0]


def _head(tree, n: int):
    return jax.tree_util.tree_map(lambda a: a[:n], tree)


def enumerate_(iterable, start=0):
    """``enumerate(iterable, start)``: ``(arange(n) + start, iterable)`` on an array sequence."""
    if not _scannable(iterable):
        return builtins.enumerate(iterable, start)
    if not isinstance(start, jax.core.Tracer):
        start = operator.index(start)  # the builtin's TypeError for a non-integer start
    tree, n = _parts(iterable)
    index = lax.iota(jnp.int32, n)
    if isinstance(start, jax.core.Tracer) or start != 0:
        index = index + start
    return ArraySequence("enumerate", (index, tree), n, lambda: builtins.enumerate(iterable, start))


def zip_(*iterables, strict: bool = False):
    """``zip(*iterables)``: a tuple of the array sequences, cut to the shortest (shapes are
    static); ``strict=True`` checks their lengths as the builtin does."""
    if not iterables or not all(_scannable(x) for x in iterables):
        return builtins.zip(*iterables, strict=strict)
    trees, lengths = builtins.zip(*(_parts(x) for x in iterables))
    n = min(lengths)
    if strict and max(lengths) != n:
        k = next(k for k, m in builtins.enumerate(lengths) if m != lengths[0])
        how = "shorter" if lengths[k] < lengths[0] else "longer"
        plural = "s 1-" if k > 1 else " "
        raise ValueError(f"zip() argument {k + 1} is {how} than argument{plural}{k}")
    tree = tuple(t if m == n else _head(t, n) for t, m in builtins.zip(trees, lengths))
    return ArraySequence("zip", tree, n, lambda: builtins.zip(*iterables, strict=strict))


def reversed_(seq):
    """``reversed(seq)``: an array reversed along its leading axis, else the builtin."""
    if _is_sequence_array(seq):
        return seq[::-1]
    return builtins.reversed(seq)


def reversed_range(*args):
    """``(start, stop, step)`` of the range that ``reversed(range(*args))`` runs over: Python's
    own where the arguments are Python ints (``range(...)[::-1]``), else computed in the program
    (``start + (n - 1) * step``, ``start - step``, ``-step`` for a range of ``n`` items; an empty
    range's bounds are equal). A step of 0 is the reversed range's too: its loop raises
    Python's ``ValueError``."""
    if not any(isinstance(a, jax.core.Tracer) for a in args):
        r = builtins.range(*args)[::-1]
        return r.start, r.stop, r.step
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1) if len(args) == 2 else args
    up = (stop - start + step - 1) // jnp.where(step == 0, 1, step)
    down = (stop - start + step + 1) // jnp.where(step == 0, 1, step)
    n = jnp.maximum(jnp.where(step > 0, up, down), 0)
    return start + (n - 1) * step, start - step, -step


# -- range with a traced bound ------------------------------------------------------------------


def _int_scalar(value, kind):
    """``value`` as a scalar of the default int dtype ``kind`` where it is an int to Python (a
    Python int or bool, a traced int or bool scalar that ``kind`` holds), else None."""
    if isinstance(value, jax.core.Tracer):
        if value.shape != () or not jnp.can_cast(value.dtype, kind):
            return None
        return value.astype(kind)
    try:
        value = operator.index(value)
        if not jnp.iinfo(kind).min <= value <= jnp.iinfo(kind).max:
            return None
    except TypeError:
        return None
    return value


def traced_range(args: tuple) -> "TracedRange | None":
    """``range(*args)`` with a traced bound, or None where the builtin itself should answer (a
    float bound: Python's TypeError; a bound past the default int: Python's own range). A step
    of 0 is Python's ``ValueError``, checked at run time where traced."""
    if not 1 <= len(args) <= 3:
        return None
    kind = jnp.result_type(int)
    bounds = [_int_scalar(a, kind) for a in args]
    if any(b is None for b in bounds):
        return None
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1) if len(bounds) == 2 else bounds
    site = numbers.users_site()
    site.python_error(step == 0, lambda: builtins.range(0, 1, 0))
    span = jnp.asarray(stop, kind) - jnp.asarray(start, kind)
    # `stop - start` passes the int's range where the bounds have opposite signs and the
    # difference's sign is not the sign of `stop` (Python's ints hold it).
    passed = jnp.logical_and(jnp.logical_xor(stop < 0, start < 0), jnp.logical_xor(span < 0, stop < 0))
    site.not_held(passed, f"the range's length passed {jnp.dtype(kind).name}'s range")
    safe = jnp.where(step == 0, 1, step)
    up = jnp.where(span > 0, (span - 1) // safe + 1, 0)
    down = jnp.where(span < 0, (span + 1) // safe + 1, 0)
    length = numbers.mark(jnp.where(step > 0, up, down), int, nonneg=True)
    return TracedRange(start, stop, step, length)


def _of_ints(value, kind):
    """``value`` as an int to compare with a range's items: ``(int, True)``; ``(None, False)``
    where no item can equal it (a Python float that is not a whole number, a Python int past
    the default int); ``(None, None)`` where only Python can tell (a traced float)."""
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None, False
        value = int(value)
    if isinstance(value, (bool, int)) and not jnp.iinfo(kind).min <= value <= jnp.iinfo(kind).max:
        return None, False
    found = _int_scalar(value, kind)
    return (found, True) if found is not None else (None, None)


_NO_DEFAULT = object()  # (`max(r)` without `default=`)


class TracedRange:
    """``range(start, stop, step)`` whose bounds the program computes (``length``: its
    ``len``). It answers what the bounds decide: ``len``, ``sum``, ``max``/``min``,
    ``any``/``all``, an item, membership. What needs its items one by one (iterating it,
    ``list``, a slice, its text) asks Python's own range for them, which needs the bounds'
    values: JAX's concretization error, and the line runs as Python."""

    __slots__ = ("start", "stop", "step", "length")

    def __init__(self, start, stop, step, length):
        self.start, self.stop, self.step, self.length = start, stop, step, length

    def python(self) -> range:
        """Python's own range (raises JAX's concretization error while a bound is traced)."""
        return builtins.range(self.start, self.stop, self.step)

    def __iter__(self):
        return iter(self.python())

    def __len__(self) -> int:
        return len(self.python())

    def __bool__(self) -> bool:
        return bool(self.python())

    def __hash__(self) -> int:
        return hash(self.python())

    def __eq__(self, other):
        return self.python() == other

    def __reversed__(self):
        return reversed(self.python())

    def __contains__(self, item) -> bool:
        return item in self.python()

    def __getattr__(self, name):  # (`count`, `index`: Python's, on concrete bounds)
        return getattr(self.python(), name)

    def __repr__(self) -> str:  # (for laxify's own messages: no name of laxify's in it)
        return "range(...) of traced bounds"

    def _item(self, k):
        return numbers.mark(self.start + k * self.step, int)

    def last(self):
        """The last item (the length is at least 1 where it is read)."""
        return self._item(jnp.maximum(self.length - 1, 0))

    def contains(self, item):
        """``item in self``: between the bounds and a whole number of steps from ``start``; a
        traced float, or anything but a number, gives None (Python compares it item by item)."""
        kind = jnp.result_type(int)
        k, possible = _of_ints(item, kind)
        if k is None:
            return None if possible is None else False
        start, stop, step = self.start, self.stop, self.step
        inside = jnp.where(step > 0, (start <= k) & (k < stop), (stop < k) & (k <= start))
        # (outside the bounds `k - start` may wrap; it is not read there)
        return inside & ((k - start) % jnp.where(step == 0, 1, step) == 0)

    def __getitem__(self, index):
        """``self[index]``: an int index (negative from the end), with Python's ``IndexError``."""
        kind = jnp.result_type(int)
        k, possible = _of_ints(index, kind) if not isinstance(index, float) else (None, None)
        if k is None:
            if possible is False:  # (an int past the default int: past any range's end)
                numbers.users_site().python_error(True, lambda: builtins.range(0)[0])
            return self.python()[index]
        n = self.length
        numbers.users_site().python_error((k < -n) | (k >= n), lambda: builtins.range(0)[0])
        return self._item(jnp.where(k < 0, k + n, k))

    def total(self):
        """``sum(self)``: ``n * start + step * n * (n - 1) / 2``. Where the sum may pass the
        default int (Python's int holds it), it is not held."""
        n, kind = self.length, jnp.result_type(int)
        size = n.astype(jnp.float32)
        estimate = (
            size * jnp.abs(jnp.asarray(self.start, kind)).astype(jnp.float32)
            + jnp.abs(jnp.asarray(self.step, kind)).astype(jnp.float32) * size * size / 2
        )
        numbers.users_site().not_held(
            estimate >= float(jnp.iinfo(kind).max) / 2, f"the sum may pass {jnp.dtype(kind).name}'s range"
        )
        return numbers.mark(n * self.start + self.step * (n * (n - 1) // 2), int)

    def extreme(self, largest: bool, name: str, default=_NO_DEFAULT):
        """``max(self)`` / ``min(self)``: the last item or ``start`` by the step's sign; an empty
        range gives ``default``, or Python's ``ValueError``."""
        n, step = self.length, self.step
        value = numbers.mark(jnp.where((step > 0) == largest, self.last(), self.start), int)
        if default is _NO_DEFAULT:
            numbers.users_site().python_error(n == 0, lambda: getattr(builtins, name)(builtins.range(0)))
            return value
        return jnp.where(n == 0, default, value)

    def any_(self):
        """``any(self)``: an item other than 0 (two items, or one that is not 0)."""
        return (self.length > 1) | ((self.length == 1) & (self.start != 0))

    def all_(self):
        """``all(self)``: no item is 0."""
        return jnp.logical_not(self.contains(0))


# Python's own errors about the object name its type: `'range' object does not support item
# assignment`, as of the range eager code has.
TracedRange.__name__ = TracedRange.__qualname__ = "range"


# -- sum of a generator, as a loop (transpiler/converters/reductions.py) ------------------------


class _Terms:
    """The items a ``sum`` run as Python has met so far, and its start: Python's own ``sum`` of
    them at the end is the generator's sum exactly (its float sum is compensated from 3.12 on)."""

    __slots__ = ("start", "items")

    def __init__(self, start, items: list):
        self.start, self.items = start, items


# (a value of the function like any other: a split run may hand it to a compiled segment)
jax.tree_util.register_pytree_node(_Terms, lambda t: ((t.start, t.items), None), lambda _, c: _Terms(*c))


def summed(total, item):
    """One step of ``sum(generator)`` written as a loop. In a loop the program runs (``total``
    traced: the loop's carry), ``total + item`` as Python adds its numbers; a Python float
    added to a Python number there is not held (eager Python adds float64s, and from 3.12 on
    compensates their rounding), nor is one the program computed (float32), added to an array.
    In a loop run as Python, the item is kept for Python's own ``sum`` (:func:`sum_result`)."""
    if type(total) is _Terms:
        total.items.append(item)
        return total
    if isinstance(total, jax.core.Tracer):
        kinds = numbers.python_type(total), numbers.python_type(item)
        if kinds[0] in (int, float, bool):  # (a sum of Python numbers: Python's float64 if a float joins)
            inexact = kinds[1] is float or (kinds[0] is float and kinds[1] in (int, bool))
        else:  # (an array's sum: a Python float constant joins it as in eager code)
            inexact = numbers.computed_float(item)
        if inexact:
            site = numbers.users_site()
            raise numbers.NumberNotHeld(
                "its `sum(...)` adds Python floats, which eager Python sums in float64 (compensating "
                "their rounding from Python 3.12 on)",
                None,
                site.filename,
                site.line,
            )
        return numbers.at_users_line("+", total, item)
    return _Terms(total, [item])


def sum_result(total):
    """The value of ``sum(generator)`` after its loop (see :func:`summed`)."""
    return builtins.sum(total.items, total.start) if type(total) is _Terms else total


def iterable(fn):
    """What a converted ``for`` statement calls for ``enumerate``/``zip``/``reversed``: laxify's
    version where the name is still the builtin, and otherwise the object the name is (a module
    global or a closure variable that shadows the builtin), to be called as the user wrote it."""
    if fn is builtins.enumerate:
        return enumerate_
    if fn is builtins.zip:
        return zip_
    if fn is builtins.reversed:
        return reversed_
    return fn


def as_scan_input(xs) -> Any | None:
    """The pytree ``lax.scan`` should run over for ``for x in xs``, or None (a plain Python
    loop) when ``xs`` is not an :class:`ArraySequence` or is empty."""
    if isinstance(xs, ArraySequence) and xs.length > 0:
        return xs.tree
    return None
