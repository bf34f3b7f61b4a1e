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

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from laxify.ir.errors import ConversionError

__all__ = ["ReverseModeError", "gate"]


class ReverseModeError(ConversionError):
    """Reverse-mode differentiation reached a traced loop that has no ``max_iters`` bound."""


# The primitive's parameter is a small int (jaxprs print it): the index of the loop's message.
_MESSAGES: dict[str, int] = {}
_BY_INDEX: list[str] = []

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
    raise ReverseModeError(_BY_INDEX[loop])


batching.primitive_batchers[_gate_p] = _batch
ad.primitive_jvps[_gate_p] = _jvp
ad.primitive_transposes[_gate_p] = _transpose


def _differentiable(leaf) -> bool:
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.inexact)


def gate(tree, error: ConversionError):
    """``tree`` unchanged, except that reverse-mode differentiation through its inexact leaves
    raises ``error``'s text as a :class:`ReverseModeError`."""
    message = str(error)
    loop = _MESSAGES.get(message)
    if loop is None:  # one entry per distinct loop and message: bounded by the user's code
        loop = _MESSAGES[message] = len(_BY_INDEX)
        _BY_INDEX.append(message)
    return jax.tree_util.tree_map(
        lambda v: _gate_p.bind(v, loop=loop) if _differentiable(v) else v, tree)
