"""A located error for reverse-mode differentiation through a traced ``while`` with no bound.

``lax.while_loop`` has no reverse-mode derivative (its trip count is unknown while tracing, so
nothing says how many iterations to store). JAX reports that only when the backward pass
transposes the loop, long after the user's function returned, with a message that names no
line and not ``laxify.loop_options(max_iters=...)``.

:func:`gate` wraps the loop's results in ``laxify_reverse_gate``, an identity primitive: it
lowers to nothing, batches and differentiates forwards as the identity (``jvp``, ``jacfwd``
and ``linearize`` are unchanged), and its transpose, which the backward pass reaches before the
loop's own, raises the error at the loop's line with the fix.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from laxify.ir.errors import ConversionError
from laxify.runtime.lowering import Site

__all__ = ["ReverseModeError", "gate"]


class ReverseModeError(ConversionError):
    """Reverse-mode differentiation reached a traced loop that has no ``max_iters`` bound."""


class _Loop:
    """The primitive's parameter: the loop's site, held weakly, and how to build its error.

    The same loop traced again gives an equal parameter (JAX's caches hit). JAX keeps
    parameters in caches that outlive the function (an LRU of abstract evaluations): holding
    the site weakly and building the message only when reverse mode reaches the loop lets the
    conversion of a function that is gone (an edited notebook cell) be freed with it. Jaxprs
    print the parameter as the loop's line."""

    __slots__ = ("_site", "_key", "_error")

    def __init__(self, site: Site, construct: str, error: Callable[[Site, str], ConversionError]):
        self._site = weakref.ref(site)
        self._key = (id(site), construct, site.filename, site.line, site.col)
        self._error = error

    def error(self) -> ConversionError:
        site = self._site()
        if site is None:  # a jaxpr kept after its function was freed: the loop's place suffices
            _, construct, filename, line, col = self._key
            site = Site(construct, filename, line, col)
        return self._error(site, self._key[1])

    def __eq__(self, other) -> bool:
        return isinstance(other, _Loop) and other._key == self._key and other._site() is self._site()

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"line {self._key[3]}"


_gate_p = Primitive("laxify_reverse_gate")
_gate_p.def_impl(lambda x, *, loop: x)
_gate_p.def_abstract_eval(lambda x, *, loop: x)
mlir.register_lowering(_gate_p, lambda ctx, x, *, loop: [x])


def _batch(args, dims, *, loop):
    return _gate_p.bind(args[0], loop=loop), dims[0]


def _jvp(primals, tangents, *, loop):
    (x,), (t,) = primals, tangents
    out = _gate_p.bind(x, loop=loop)
    if type(t) is ad.Zero:
        return out, t
    return out, _gate_p.bind(t, loop=loop)


def _transpose(ct, x, *, loop):
    raise loop.error()


batching.primitive_batchers[_gate_p] = _batch
ad.primitive_jvps[_gate_p] = _jvp
ad.primitive_transposes[_gate_p] = _transpose


def _differentiable(leaf) -> bool:
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.inexact)


def gate(tree: Any, site: Site, construct: str, error: Callable[[Site, str], ConversionError]) -> Any:
    """``tree`` unchanged, except that reverse-mode differentiation through its inexact leaves
    raises ``error(site, construct)``, a :class:`ReverseModeError` (``error`` a module-level
    function: it is kept by JAX's caches, the site is not)."""
    loop = _Loop(site, construct, error)
    return jax.tree_util.tree_map(lambda v: _gate_p.bind(v, loop=loop) if _differentiable(v) else v, tree)
