"""``enumerate``/``zip``/``reversed`` in converted ``for`` loops (``_lx.iterable(enumerate)(...)``).

On arrays they give an :class:`ArraySequence`, one pytree of arrays with a common leading
axis that ``for_each`` runs ``lax.scan`` over (each step gets one element, such as the tuple
``(i, x)``); on anything else, the builtin's own result, iterated as Python.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["ArraySequence", "as_scan_input", "enumerate_", "iterable", "reversed_", "reversed_range", "zip_"]


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
