"""A Python function traced once, replayed wherever the program needs its operations.

A traced construct must often know what its function gives before it can build the ``lax``
primitive (a branch that gives no value where another gives an array, dtypes to join, a
loop carry that changes type): tracing the user's Python again for each question would run
it (and everything it calls) several times. :func:`capture` runs it once, under
``jax.make_jaxpr``, and keeps the jaxpr with the Python values of its result; the construct
then reads the outputs' types from it and replays its operations (``jax.core.eval_jaxpr``)
inside the ``lax`` primitive it builds. Values of enclosing traces that the function reads
become the jaxpr's constants, so the replay reads them where it runs, as the function did.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Captured", "capture", "output_avals", "promoted"]

_ARRAYS = (jax.Array, np.ndarray, np.generic)
_NESTED_TRACE_LIMIT = 4000


class Captured:
    """One run of a function, traced: ``outputs`` is its result with each array in it
    replaced by its type (a ``jax.ShapeDtypeStruct``); :meth:`replay` gives the result again
    for arguments of the same types, its arrays computed by the recorded operations in the
    trace where it is called, its other values (Python numbers, objects) the very ones the
    run gave."""

    __slots__ = ("jaxpr", "consts", "treedef", "leaves", "arrays", "outputs")

    def __init__(self, jaxpr, treedef, leaves: list, arrays: list[int], marks: dict | None = None):
        self.jaxpr, self.consts = jaxpr.jaxpr, jaxpr.consts
        self.treedef, self.leaves, self.arrays = treedef, leaves, arrays
        shown = list(leaves)
        for k, aval in zip(arrays, jaxpr.out_avals):
            shown[k] = jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)
            if marks and k in marks:
                _numbers().note(shown[k], marks[k])  # what Python number it stands for
        self.outputs = jax.tree_util.tree_unflatten(treedef, shown)

    def replay(self, *args) -> Any:
        values = jax.core.eval_jaxpr(self.jaxpr, self.consts, *jax.tree_util.tree_leaves(args))
        leaves = list(self.leaves)
        for k, v in zip(self.arrays, values):
            leaves[k] = v
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


def _numbers():
    """runtime/numbers.py (which reaches this module through the error channel)."""
    from laxify.runtime import numbers

    return numbers


def capture(fn: Callable[..., Any], *args) -> Captured:
    """Trace ``fn(*args)`` once (see the module's docstring); ``args``: pytrees of arrays (or
    ``jax.ShapeDtypeStruct``), which the run gets as traced values of their types."""
    found: dict = {}

    def traced(*args):
        out = fn(*args)
        leaves, treedef = jax.tree_util.tree_flatten(out, is_leaf=lambda v: v is None)
        arrays = [k for k, v in enumerate(leaves) if isinstance(v, _ARRAYS)]
        entry = _numbers().entry
        marks = {
            k: m for k in arrays if getattr(leaves[k], "shape", None) == () and (m := entry(leaves[k])) is not None
        }
        found.update(treedef=treedef, leaves=leaves, arrays=arrays, marks=marks)
        return [leaves[k] for k in arrays]

    # Each capture nests a JAX trace (some twenty frames) inside the one around: deeply nested
    # code needs more than Python's default limit while it is traced (not when it runs).
    limit = sys.getrecursionlimit()
    if limit < _NESTED_TRACE_LIMIT:
        sys.setrecursionlimit(_NESTED_TRACE_LIMIT)
    try:
        jaxpr = jax.make_jaxpr(traced)(*args)
    finally:
        if limit < _NESTED_TRACE_LIMIT and sys.getrecursionlimit() == _NESTED_TRACE_LIMIT:
            sys.setrecursionlimit(limit)
    leaves = list(found["leaves"])
    for k in found["arrays"]:
        leaves[k] = None  # (the values of the run's trace: the replay computes them)
    return Captured(jaxpr, found["treedef"], leaves, found["arrays"], found["marks"])


def output_avals(value) -> Any:
    """``value`` (a captured output, or a Python number) with its arrays and numbers as
    ``jax.ShapeDtypeStruct``: what ``jax.eval_shape`` gives for it."""

    def aval(v):
        if isinstance(v, jax.ShapeDtypeStruct):
            return v
        if isinstance(v, (bool, int, float, complex)):
            return jax.ShapeDtypeStruct((), jnp.result_type(v), weak_type=type(v) is not bool)
        if isinstance(v, _ARRAYS):
            return jax.ShapeDtypeStruct(np.shape(v), jnp.result_type(v), weak_type=getattr(v, "weak_type", False))
        return v

    return jax.tree_util.tree_map(aval, value)


def promoted(carries, outputs):
    """``carries`` (a loop's, before it) with each weakly typed one (a Python number) promoted
    to the type the body gives it (``outputs``: the body's captured outputs), as
    ``lax.while_loop`` and ``lax.scan`` promote them; ``None`` where none changes (or where the
    structures differ: the loop says so)."""
    leaves, treedef = jax.tree_util.tree_flatten(carries)
    outs, out_tree = jax.tree_util.tree_flatten(output_avals(outputs))
    if treedef != out_tree:
        return None
    changed = False
    for k, (value, out) in enumerate(zip(leaves, outs)):
        if not isinstance(out, jax.ShapeDtypeStruct):
            continue
        weak = (
            isinstance(value, (int, float, complex))
            and not isinstance(value, bool)
            or getattr(value, "weak_type", False)
        )
        if weak and (np.shape(value) != out.shape or jnp.result_type(value) != out.dtype):
            leaves[k] = jax.lax.convert_element_type(value, jnp.result_type(value, out))
            changed = True
    return jax.tree_util.tree_unflatten(treedef, leaves) if changed else None
