"""The type lattice of the IR: Unknown above, Static and Array below, pytrees of those.

``join`` is the least upper bound used where control flow merges (branch outputs, loop
carries). It follows JAX's promotion for dtypes (Python numbers are weakly typed) and
raises :class:`TypeJoinError` where no join exists (shapes or structures differ).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Type",
    "Unknown",
    "Static",
    "Array",
    "PyTree",
    "Undefined",
    "UNKNOWN",
    "UNDEFINED",
    "TypeJoinError",
    "join",
    "is_static",
]


class Type:
    """Base class of IR types."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@dataclass(frozen=True)
class Unknown(Type):
    """Nothing is known: the value may be a Python object or a traced array."""

    def __str__(self) -> str:
        return "?"


@dataclass(frozen=True)
class Undefined(Type):
    """The name has no value on this path (Python would raise NameError on use)."""

    def __str__(self) -> str:
        return "undef"


_NO_VALUE = object()


@dataclass(frozen=True)
class Static(Type):
    """A value known while tracing: a Python literal, a static argument, a shape.

    ``value`` is set when the value itself is known, ``pytype`` when only its Python
    type is (``None`` for "some static value").
    """

    value: Any = _NO_VALUE
    pytype: type | None = None

    @property
    def has_value(self) -> bool:
        return self.value is not _NO_VALUE

    def __str__(self) -> str:
        if self.has_value:
            return f"static({self.value!r})"
        if self.pytype is not None:
            return f"static({self.pytype.__name__})"
        return "static"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Static):
            return NotImplemented
        if self.has_value != other.has_value or self.pytype != other.pytype:
            return False
        if not self.has_value:
            return True
        try:
            return type(self.value) is type(other.value) and bool(self.value == other.value)
        except Exception:
            return self.value is other.value

    def __hash__(self) -> int:
        try:
            return hash((self.pytype, self.value if self.has_value else None))
        except TypeError:
            return hash(self.pytype)


@dataclass(frozen=True)
class Array(Type):
    """A JAX array: ``shape`` is a tuple (``None`` when unknown), ``dtype`` a name or None."""

    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    weak: bool = False

    def __str__(self) -> str:
        dt = self.dtype or "?"
        if self.weak:
            dt += "~"
        if self.shape is None:
            return f"{dt}[?]"
        return f"{dt}[{','.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class PyTree(Type):
    """A container of typed leaves: ``kind`` is 'tuple', 'list' or 'dict'."""

    kind: str
    keys: tuple[Any, ...]
    children: tuple[Type, ...]

    def __str__(self) -> str:
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, self.children))
            return "{" + inner + "}"
        inner = ", ".join(str(c) for c in self.children)
        return f"({inner})" if self.kind == "tuple" else f"[{inner}]"


UNKNOWN = Unknown()
UNDEFINED = Undefined()


class TypeJoinError(TypeError):
    """Two types that meet at a merge point have no common type."""

    def __init__(self, left: Type, right: Type, path: str, reason: str):
        self.left, self.right, self.path, self.reason = left, right, path, reason
        self.name = ""  # the variable whose types met, when the caller knows it
        where = f" at {path}" if path else ""
        super().__init__(f"{left} and {right} cannot be joined{where}: {reason}")


def is_static(t: Type) -> bool:
    """True when every leaf of ``t`` is known while tracing."""
    if isinstance(t, Static):
        return True
    if isinstance(t, PyTree):
        return all(is_static(c) for c in t.children)
    return False


def _python_scalar_dtype(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int32"
    if isinstance(value, float):
        return "float32"
    if isinstance(value, complex):
        return "complex64"
    return None


def _as_array(t: Static) -> Array | None:
    """The array type a static Python number becomes when JAX converts it (weakly typed)."""
    if t.has_value:
        dt = _python_scalar_dtype(t.value)
    elif t.pytype in (bool, int, float, complex):
        dt = {bool: "bool", int: "int32", float: "float32", complex: "complex64"}[t.pytype]
    else:
        dt = None
    if dt is None:
        return None
    return Array((), dt, weak=dt != "bool")


def _join_dtypes(a: Array, b: Array) -> tuple[str | None, bool]:
    if a.dtype is None or b.dtype is None:
        return None, a.weak and b.weak
    if a.dtype == b.dtype:
        return a.dtype, a.weak and b.weak
    # Weakly typed values take the other side's dtype when the kinds allow it, as in JAX.
    order = "biufc"
    ka, kb = np.dtype(a.dtype).kind, np.dtype(b.dtype).kind
    if a.weak and not b.weak and order.index(ka) <= order.index(kb):
        return b.dtype, False
    if b.weak and not a.weak and order.index(kb) <= order.index(ka):
        return a.dtype, False
    # JAX's lattice, not NumPy's: int32 with float32 is float32 there, float64 here. A weak
    # side that gets here has the higher kind, so the result stays weak (int32 with 1.5 is float32~).
    from jax import numpy as jnp

    return str(jnp.promote_types(a.dtype, b.dtype)), a.weak or b.weak


def join(a: Type, b: Type, path: str = "") -> Type:
    """The least upper bound of two types, or :class:`TypeJoinError`."""
    if a == b:
        return a
    if isinstance(a, Undefined):
        return b
    if isinstance(b, Undefined):
        return a
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return UNKNOWN
    if isinstance(a, Static) and isinstance(b, Static):
        if a.has_value and b.has_value and type(a.value) is type(b.value):
            return Static(pytype=type(a.value))
        ta = type(a.value) if a.has_value else a.pytype
        tb = type(b.value) if b.has_value else b.pytype
        return Static(pytype=ta if ta is tb else None)
    if {type(a), type(b)} == {Static, Array}:
        # Convert in place (no swap) so that errors keep the caller's left and right.
        ca = _as_array(a) if isinstance(a, Static) else a
        cb = _as_array(b) if isinstance(b, Static) else b
        if ca is None or cb is None:
            static = a if isinstance(a, Static) else b
            if not static.has_value and static.pytype is None:
                return UNKNOWN  # some static value: whether it converts is decided while tracing
            raise TypeJoinError(a, b, path, "a Python value that is not a number cannot become an array")
        a, b = ca, cb
    if isinstance(a, Array) and isinstance(b, Array):
        if a.shape is not None and b.shape is not None and a.shape != b.shape:
            raise TypeJoinError(a, b, path, f"shapes {a.shape} and {b.shape} differ")
        shape = a.shape if a.shape is not None else b.shape
        dtype, weak = _join_dtypes(a, b)
        return Array(shape, dtype, weak)
    if isinstance(a, PyTree) and isinstance(b, PyTree):
        if (a.kind, a.keys, len(a.children)) != (b.kind, b.keys, len(b.children)):
            raise TypeJoinError(a, b, path, "the pytree structures differ")
        children = tuple(join(x, y, f"{path}[{k!r}]") for k, x, y in zip(a.keys, a.children, b.children))
        return PyTree(a.kind, a.keys, children)
    raise TypeJoinError(a, b, path, "a container and a leaf cannot be joined")
