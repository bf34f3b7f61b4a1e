"""Model objects as ``to_static`` arguments: Flax NNX modules and pytrees with non-array leaves.

A Flax NNX module (or anything holding one) is jitted with ``nnx.jit``, so that its parameters
are traced and what the function changes on it (batch statistics, RNG counters) is written
back, as NNX users expect. A pytree with leaves that are not arrays (an Equinox module holds
activation functions and Python numbers) is split as ``eqx.filter_jit`` splits it: its arrays
are traced, every other leaf is static. Flax and Equinox are optional: they are looked up in
``sys.modules`` (a model object of theirs can only exist once they are imported), never
imported here.
"""

from __future__ import annotations

import sys
from typing import Any

import jax
import numpy as np

__all__ = ["holds_nnx", "needs_split", "Split", "nnx_jit", "unwrap"]

# Leaves that are traced (a ShapeDtypeStruct stands for an array in `lower`/`eval_shape`/...).
_ARRAYS = (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)
_NUMBERS = (bool, int, float, complex)


def _nnx():
    return sys.modules.get("flax.nnx")


def _nnx_node_types(nnx) -> tuple[type, ...]:
    """The base classes of NNX graph nodes (``nnx.Pytree`` since Flax 0.11, ``nnx.Object`` before)."""
    base = getattr(nnx, "Pytree", None) or nnx.Object
    return (base, nnx.Variable)


def holds_nnx(value: Any) -> bool:
    """Whether ``value`` is, or holds, a Flax NNX graph node (a Module, Variable, Rngs, Optimizer)."""
    nnx = _nnx()
    if nnx is None:
        return False
    nodes = _nnx_node_types(nnx)
    if isinstance(value, nodes):
        return True
    return any(
        isinstance(leaf, nodes) for leaf in jax.tree_util.tree_leaves(value, is_leaf=lambda v: isinstance(v, nodes))
    )


def _is_equinox_module(value: Any) -> bool:
    eqx = sys.modules.get("equinox")
    return eqx is not None and isinstance(value, eqx.Module)


def needs_split(value: Any, leaves: list) -> bool:
    """Whether a pytree ``value`` with array ``leaves`` is passed split: an Equinox module (or a
    container of them), or a pytree with a leaf ``jax.jit`` cannot trace (a function, a string)."""
    if not all(isinstance(leaf, _ARRAYS + _NUMBERS) for leaf in leaves):
        return True
    if "equinox" not in sys.modules:
        return False
    if _is_equinox_module(value):
        return True
    return any(map(_is_equinox_module, jax.tree_util.tree_leaves(value, is_leaf=_is_equinox_module)))


class _Static:
    """The static half of a split pytree: its structure and non-array leaves, hashed and
    compared by value (by identity where a leaf is unhashable), as a jit cache key."""

    __slots__ = ("treedef", "leaves", "_hash")

    def __init__(self, treedef, leaves: tuple):
        self.treedef = treedef
        self.leaves = leaves
        self._hash = hash((treedef, tuple(map(_leaf_key, leaves))))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if not isinstance(other, _Static) or self._hash != other._hash or self.treedef != other.treedef:
            return False
        return all(
            a is b or (_hashable(a) and type(a) is type(b) and a == b) for a, b in zip(self.leaves, other.leaves)
        )


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _leaf_key(value: Any) -> Any:
    return value if _hashable(value) else id(value)


@jax.tree_util.register_pytree_node_class
class Split:
    """A pytree passed to ``jax.jit`` as its arrays (traced) and a static rest (in the treedef)."""

    __slots__ = ("arrays", "static")

    def __init__(self, arrays: list, static: _Static):
        self.arrays = arrays
        self.static = static

    @classmethod
    def of(cls, value: Any) -> "Split":
        leaves, treedef = jax.tree_util.tree_flatten(value)
        arrays = [leaf for leaf in leaves if isinstance(leaf, _ARRAYS)]
        rest = tuple(None if isinstance(leaf, _ARRAYS) else leaf for leaf in leaves)
        return cls(arrays, _Static(treedef, rest))

    def value(self) -> Any:
        """The pytree put back together (with tracers in place of the arrays inside ``jit``)."""
        arrays = iter(self.arrays)
        leaves = [next(arrays) if leaf is None else leaf for leaf in self.static.leaves]
        return jax.tree_util.tree_unflatten(self.static.treedef, leaves)

    def tree_flatten(self):
        return self.arrays, self.static

    @classmethod
    def tree_unflatten(cls, static: _Static, arrays) -> "Split":
        return cls(list(arrays), static)


def nnx_jit(fn, **options):
    """``nnx.jit`` of ``fn`` (Flax is imported: an argument holds an NNX node)."""
    return _nnx().jit(fn, **options)


def unwrap(value: Any) -> Any:
    """A split pytree put back together; anything else as it is."""
    return value.value() if isinstance(value, Split) else value
