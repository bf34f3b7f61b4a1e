"""``and``/``or``/``not``, chained comparisons and conditional expressions: Python's
short-circuit on Python values, ``lax`` logic and selection on traced ones."""

from __future__ import annotations

import linecache
import operator
import sys

import jax
import jax.numpy as jnp
from jax import lax

from laxify.ir.errors import ConversionError, Location
from laxify.runtime.dispatch.values import is_traced

__all__ = ["and_", "compare", "ifexp", "not_", "or_"]


def not_(x):
    """``not x``: ``jnp.logical_not`` on a traced value, Python's ``not`` otherwise."""
    if is_traced(x):
        return jnp.logical_not(x)
    return not x


def and_(a, b_fn, lazy: bool = False):
    """``a and b``: Python short-circuit for Python values; on a traced ``a``, ``logical_and``
    (``b`` evaluated in a ``lax.cond`` branch when ``lazy``, that is when it may have effects)."""
    if not is_traced(a):
        return a and b_fn()
    if lazy:
        return lax.cond(a, lambda: jnp.asarray(b_fn(), bool), lambda: jnp.asarray(False))
    return jnp.logical_and(a, b_fn())


def or_(a, b_fn, lazy: bool = False):
    """``a or b``: like :func:`and_`."""
    if not is_traced(a):
        return a or b_fn()
    if lazy:
        return lax.cond(a, lambda: jnp.asarray(True), lambda: jnp.asarray(b_fn(), bool))
    return jnp.logical_or(a, b_fn())


_COMPARE = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
    "is": operator.is_, "is not": operator.is_not,
}


def compare(first, *pairs, lazy: bool = False):
    """A chained comparison ``a < b < c``: each operand evaluated once, Python's short-circuit
    on Python values, ``logical_and`` of the parts on traced ones (with ``lazy``, the parts
    after a traced one run in a ``lax.cond`` branch, as they contain calls)."""
    left, result = first, None
    for k, (op, thunk) in enumerate(pairs):
        if lazy and result is not None and is_traced(result):
            rest = pairs[k:]
            return lax.cond(result, lambda: jnp.asarray(compare(left, *rest), bool),
                            lambda: jnp.asarray(False))
        right = thunk()
        part = _COMPARE[op](left, right)
        if result is None:
            result = part
        elif is_traced(result) or is_traced(part):
            result = jnp.logical_and(result, part)
        else:
            result = result and part
        if not is_traced(result) and not result:
            return result
        left = right
    return result


def _caller_location():
    """The user's line that called into the runtime (generated code keeps user line numbers)."""
    frame = sys._getframe(2)
    filename, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, line).rstrip("\n")
    col = len(text) - len(text.lstrip())
    positions = list(frame.f_code.co_positions())
    here = positions[frame.f_lasti // 2] if frame.f_lasti // 2 < len(positions) else None
    if here is not None and here[0] == line and here[2] is not None:
        col = here[2]  # the call's own column (lowering maps it onto the user's expression)
    return Location(filename, line, col, text)


def ifexp(pred, true_fn, false_fn, lazy: bool = False):
    """``a if pred else b``: Python for a Python ``pred``; ``select_n`` (``jnp.where``) for cheap
    pure operands, ``lax.cond`` when evaluating an operand may have effects (``lazy``)."""
    if not is_traced(pred):
        return true_fn() if pred else false_fn()
    if getattr(pred, "shape", ()) != ():
        raise ConversionError(
            f"The condition of this conditional expression (`a if c else b`) is an array of "
            f"shape {tuple(pred.shape)}, not a scalar.",
            _caller_location(),
            "Use `jnp.where(c, a, b)` for an elementwise choice, or reduce the condition with "
            "`.any()`/`.all()`.",
        )
    if lazy:
        t_aval = jax.eval_shape(true_fn)
        f_aval = jax.eval_shape(false_fn)
        target = jax.tree_util.tree_map(lambda a, b: jnp.result_type(a, b), t_aval, f_aval)

        def cast(fn):
            return lambda: jax.tree_util.tree_map(lambda v, t: jnp.asarray(v, t), fn(), target)

        return lax.cond(pred, cast(true_fn), cast(false_fn))
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), true_fn(), false_fn())

