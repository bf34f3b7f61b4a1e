"""Values shared by the dispatcher's constructs: what is traced, what an array is, and the
stand-ins for names that have no value on a path (``Undefined``, ``Fillable``)."""

from __future__ import annotations

import linecache
import sys

import jax
import numpy as np

from laxify.runtime.lowering import Site

__all__ = [
    "ATOMS",
    "ById",
    "Fillable",
    "UnsetName",
    "Tracer",
    "Undefined",
    "UndefinedReturn",
    "any_traced",
    "array_like",
    "fresh",
    "is_array",
    "is_traced",
]

Tracer = jax.core.Tracer

# Python values that hold no other object and never change: a signature keeps them by value,
# the effect tracking never watches them.
ATOMS = (int, float, complex, bool, str, bytes, type(None), type(Ellipsis), range, slice)


class ById:
    """A key for a value by its identity (an unhashable static argument, a module's globals,
    a library function): hashed and compared by ``id``, holding the value alive."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, ById) and other.value is self.value


def is_traced(x) -> bool:
    return isinstance(x, Tracer)


def any_traced(tree) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(tree))


def is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def array_like(x) -> bool:
    """An array or a Python number: something traced control flow can carry or select."""
    return is_array(x) or isinstance(x, (bool, int, float, complex))


class UnsetName(UnboundLocalError):
    """A name read where it has no value on this path (Python raises ``UnboundLocalError``)."""

    def __init__(self, name: str, message: str, line: int | None = None):
        super().__init__(message)
        self.name, self.line = name, line


class Undefined:
    """Stands for a name that has no value on this path. Any use raises like Python would."""

    __slots__ = ("name", "site")

    def __init__(self, name: str, site: Site | None = None):
        self.name, self.site = name, site

    def _fail(self, *args, **kwargs):
        line = self._user_line()
        where = ""
        if line is not None:
            text = linecache.getline(self.site.filename, line).strip()
            where = f'\n  File "{self.site.filename}", line {line}\n    {text}'
        raise UnsetName(
            self.name,
            f"cannot access local variable '{self.name}' where it is not associated with a value: "
            f"it is assigned only on some paths through the control flow before this use" + where,
            line,
        )

    def _user_line(self) -> int | None:
        """The user's line that used the name (the nearest frame in the user's file)."""
        if self.site is None:
            return None
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename != self.site.filename:
            frame = frame.f_back
        return None if frame is None else frame.f_lineno

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = __call__ = _fail
    __getattr__ = __getitem__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __matmul__ = __neg__ = __abs__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __array__ = _fail
    # JAX looks this attribute up (and refuses objects that have it) before calling it: fail
    # at the lookup, so that `jnp.sin(name)` raises like Python's read of an unbound name.
    __jax_array__ = property(_fail)
    __str__ = __format__ = __contains__ = _fail
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def fresh(tree):
    """Rebuild containers so that in-place changes in one branch do not leak into another."""
    return jax.tree_util.tree_map(lambda x: x, tree, is_leaf=lambda x: isinstance(x, Undefined))


class Fillable(Undefined):
    """A value no path observes before it is set (a return value before any ``return``, a
    loop target after a ``break``): filled with zeros where a traced branch or loop must
    carry it."""

    __slots__ = ()


class UndefinedReturn(Fillable):
    """The return value before any ``return`` ran (the return flag guards every use)."""

    __slots__ = ()

    def __init__(self):
        super().__init__("return value")
