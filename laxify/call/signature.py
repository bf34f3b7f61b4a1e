"""The signature of a call: what each argument is to the program (DESIGN §1), and the cache key
of the program it runs.

Arrays (and pytrees holding them) are *traced*; Python scalars, strings, ``None`` and other
hashable values are *static* (a new value is a new program, as with ``static_argnums``); an
unhashable object that is no container of numbers (a model object, a non-frozen dataclass)
is static by *identity*; a Flax NNX module is jitted by ``nnx``; a pytree with arrays and
other leaves (an Equinox module) is *split*: its arrays traced, the rest static.
:class:`Signature` holds which positions and names are static and which kinds need wrapping;
``jax.jit`` keys the rest (shapes, dtypes, static values) itself.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable

import jax
import numpy as np

from laxify.models import Split, holds_nnx, needs_split, unwrap
from laxify.runtime.dispatch.values import ById
from laxify.runtime.writeback import numpy_leaves

__all__ = [
    "ARRAYS",
    "ById",
    "HOT_TYPES",
    "Signature",
    "argument_kind",
    "signature",
    "static_by_type",
    "unwrapped",
    "unwrapping",
]

# Argument types that are always traced: a call with only these needs no classification.
_ARRAY_TYPES = frozenset({type(jax.numpy.zeros(())), np.ndarray})

_SCALARS = (int, float, bool, complex, str, bytes, type(None))

# A call whose arguments all have these exact types is classified by their types alone (arrays
# traced, Python scalars static): later calls with the same types take the hot path.
HOT_TYPES = _ARRAY_TYPES | frozenset(_SCALARS)

# Traced like arrays: a ShapeDtypeStruct (concrete or symbolic shape) stands for an array in
# `lower`, `trace`, `eval_shape` and `export`, as it does for jax.jit.
ARRAYS = (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)

_STATIC_KINDS = ("static", "identity")


def argument_kind(value: Any) -> str:
    """What ``value`` is to the program (see the module's docstring): ``"traced"``,
    ``"static"``, ``"identity"``, ``"nnx"`` or ``"split"``."""
    if isinstance(value, _SCALARS):
        return "static"
    if isinstance(value, ARRAYS):
        return "traced"
    if holds_nnx(value):
        return "nnx"
    leaves = jax.tree_util.tree_leaves(value)
    if any(isinstance(leaf, ARRAYS) for leaf in leaves):
        return "split" if needs_split(value, leaves) else "traced"
    try:
        hash(value)
        return "static"
    except TypeError:
        pass
    if all(isinstance(leaf, (bool, int, float, complex)) for leaf in leaves):
        return "traced"  # a list or dict of numbers: JAX converts it
    return "identity"


def static_by_type(value: Any) -> bool:
    """Whether every value of ``value``'s type is ``static`` (so its type may stand for its
    kind on the hot path): an object hashed by identity that is a pytree leaf and no array or
    Flax NNX node, such as the instance a method is called on (``model.f(x)``)."""
    return (
        type(value).__hash__ is object.__hash__
        and not isinstance(value, ARRAYS)
        and jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))
        and argument_kind(value) == "static"
    )


def kind(value: Any, forced_static: bool) -> str:
    """:func:`argument_kind`, where ``static_argnums``/``static_argnames`` may force ``static``."""
    found = argument_kind(value)
    return "static" if forced_static and found != "identity" else found


_WRAPS = {"identity": ById, "split": Split.of}


def _wrapped(value: Any, found: str) -> Any:
    """``value`` as the jitted function takes it."""
    wrap = _WRAPS.get(found)
    return value if wrap is None else wrap(value)


def unwrapped(value: Any) -> Any:
    """An argument as the function takes it (its wrapping for ``jax.jit`` undone)."""
    return value.value if isinstance(value, ById) else unwrap(value)


def unwrapping(fn: Callable) -> Callable:
    """``fn`` taking the arguments as ``jax.jit`` gives them (wrapped), calling it with them unwrapped."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        args = tuple(map(unwrapped, args))
        kwargs = {k: unwrapped(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return run


@dataclass(frozen=True)
class Signature:
    """The cache key of a call's program: the positions and names of its static arguments
    (``jax.jit``'s ``static_argnums`` and ``static_argnames``), and the kinds among its
    arguments that need wrapping (``"identity"``, ``"split"``) or another jit (``"nnx"``)."""

    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    special: frozenset = frozenset()
    # The leaves of the arguments that are NumPy arrays (runtime/writeback.py ``numpy_leaves``):
    # a function that changes one in place runs as Python, so such calls have programs of their own.
    numpy: tuple[int, ...] = ()

    def staged(self) -> "Signature":
        """The signature of a staged trace (``lower``, ``export``, ...): NumPy array arguments
        are arrays like any other there (nothing runs that NumPy could change in place)."""
        return dataclasses.replace(self, numpy=()) if self.numpy else self

    @property
    def has_static(self) -> bool:
        return bool(self.static_argnums or self.static_argnames)

    @property
    def wraps(self) -> bool:
        """Whether arguments reach the jitted function wrapped (see :func:`unwrapping`)."""
        return bool(self.special)

    @property
    def nnx(self) -> bool:
        return "nnx" in self.special


def signature(
    args: tuple, kwargs: dict, static_argnums: frozenset, static_argnames: frozenset
) -> tuple[Signature, tuple, dict]:
    """The call's :class:`Signature`, and its arguments as the jitted function takes them."""
    kinds = [kind(a, i in static_argnums) for i, a in enumerate(args)]
    named = {k: kind(v, k in static_argnames) for k, v in kwargs.items()}
    nums = tuple(i for i, found in enumerate(kinds) if found in _STATIC_KINDS)
    names = tuple(sorted(k for k, found in named.items() if found in _STATIC_KINDS))
    special = frozenset(found for found in (*kinds, *named.values()) if found not in ("static", "traced"))
    if not special:
        return Signature(nums, names, numpy=numpy_leaves(args, kwargs)), args, kwargs
    args = tuple(map(_wrapped, args, kinds))
    kwargs = {k: _wrapped(v, named[k]) for k, v in kwargs.items()}
    return Signature(nums, names, special, numpy_leaves(args, kwargs)), args, kwargs
