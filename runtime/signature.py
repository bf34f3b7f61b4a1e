"""IR types of concrete call arguments (the input signature of per-signature inference)."""

from __future__ import annotations

import inspect

import jax
import numpy as np

from laxify.ir.types import UNKNOWN, Array, Static, Type

__all__ = ["type_of", "param_types_for"]


def type_of(value) -> Type:
    """``Array(shape, dtype, weak)`` for arrays, ``Static(value)`` for hashable Python values."""
    if isinstance(value, (jax.Array, np.ndarray, np.generic)) or hasattr(value, "aval"):
        weak = bool(getattr(value, "weak_type", False))
        return Array(tuple(value.shape), str(value.dtype), weak)
    try:
        hash(value)
    except TypeError:
        return UNKNOWN
    if any(isinstance(leaf, (jax.Array, np.ndarray)) for leaf in jax.tree_util.tree_leaves(value)):
        return UNKNOWN
    return Static(value)


def param_types_for(fn, args, kwargs) -> list[Type]:
    """One type per parameter of ``fn`` (defaults included), in the IR's parameter order."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return [type_of(v) for v in bound.arguments.values()]
