"""``laxify.checked``: the run-time errors of converted code, raised, for the routes where
``to_static`` does not do it itself (``jax.jit(laxify.convert(f))``, ``vmap``, ``grad``)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from laxify.runtime import trace
from laxify.runtime.dispatch.printing import hold, release, unhold
from laxify.runtime.report import throw_checkify
from laxify.tracebacks import hide_own_frames

__all__ = ["checked"]


_NO_VMAP = object()


def checked(fn: Callable[..., Any], *, vmap_in_axes: Any = _NO_VMAP, **jit_options: Any) -> Callable[..., Any]:
    """``fn`` with the run-time errors of the converted code it runs raised after each call.

    ``fn`` is any function around converted code: ``jax.jit(laxify.convert(f))``, a
    ``jax.vmap``/``jax.grad`` of it, a ``lax.scan`` over it, a ``to_static`` function called
    inside another. Each call runs ``jax.jit`` of ``fn`` functionalized by
    ``jax.experimental.checkify`` (reduced to one boolean: the error itself is computed again
    only when it is set) and raises the first error the data reached: a ``raise``
    as the user's exception (same class and message, formatted with that run's values, at the
    user's line), a checked ``assert`` as ``AssertionError``, the user's own ``checkify``
    checks as checkify raises them. Under ``vmap`` an error of any element is the error; a
    note on it names the first element that raised. ``jit_options`` go to ``jax.jit``
    (``static_argnums``, ``donate_argnums``, ...). Use it outermost, outside every jax
    transformation: inside one the error is a value that only ``checkify`` can carry.

    ``vmap_in_axes``: ``fn`` is mapped with ``jax.vmap(..., in_axes=vmap_in_axes)`` *outside*
    the checks (``vmap`` of ``checkify``): each element keeps its own error, and the one
    raised is the first element's that failed, with a note naming its index. Use it instead of
    ``laxify.checked(jax.vmap(fn))`` where ``fn`` has a ``while`` loop on a traced value holding
    a check, which ``checkify`` cannot functionalize once batched."""
    if vmap_in_axes is not _NO_VMAP:
        return _checked_vmap(fn, vmap_in_axes, jit_options)
    # A `jax.jit` function called before keeps the programs it traced then, without checks
    # (a trace holds them only where they will be reported): trace it again here.
    clear = getattr(fn, "clear_cache", None)
    if callable(clear):
        clear()
    flagged = jax.jit(_flagged(fn), **jit_options)
    full = jax.jit(_functionalized(fn), **jit_options)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            outer, kept = hold()
            try:
                failed, out = flagged(*args, **kwargs)
                failed = bool(np.asarray(failed))
            finally:
                unhold(outer)
            if failed:
                try:
                    # The run's prints came out (held) in the run before: this one only finds the
                    # failed check.
                    outer, _ = hold()
                    try:
                        error, _ = full(*args, **kwargs)
                        jax.block_until_ready(error)
                        jax.effects_barrier()
                    finally:
                        unhold(outer)
                    release(kept)
                    throw_checkify(error)
                except BaseException:
                    kept.clear()
                    raise
                raise AssertionError(  # the flag and the checks come from the same trace: never here
                    "laxify: the program said a check failed, and its checkified program found none"
                )
            release(kept)
            return out
        except Exception as e:  # the user's exception, at the user's line only
            hide_own_frames(e)
            raise

    return run


def _functionalized(fn: Callable) -> Callable:
    """``fn`` returning ``(error, result)``: the checks of the converted code it runs (which
    reports them, in a trace state of its own) functionalized by checkify. Only array arguments
    reach checkify (the function is closed over its arguments), so static Python arguments of
    an enclosing ``jax.jit`` stay Python values."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with trace.running() as state:
            state.reporting = True
            return checkify.checkify(lambda: fn(*args, **kwargs), errors=checkify.user_checks)()

    return run


def _flagged(fn: Callable) -> Callable:
    """``fn`` returning ``(failed, result)``: whether a check failed, one boolean (the error
    itself is found again by the program of :func:`_functionalized`, only when one did: a call
    that fails nothing moves one boolean to the host, not checkify's whole error value)."""
    checked = _functionalized(fn)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        error, out = checked(*args, **kwargs)
        # The error's booleans are its predicates (a boolean payload can only make this true
        # where nothing failed, and the full program then finds no error).
        preds = [leaf for leaf in jax.tree_util.tree_leaves(error) if jnp.result_type(leaf) == jnp.bool_]
        failed = functools.reduce(jnp.logical_or, (jnp.any(p) for p in preds), jnp.asarray(False))
        return failed, out

    return run


def _checked_vmap(fn: Callable[..., Any], in_axes: Any, jit_options: dict) -> Callable[..., Any]:
    clear = getattr(fn, "clear_cache", None)
    if callable(clear):
        clear()

    def element(*args):
        with trace.running() as state:
            state.reporting = True
            return checkify.checkify(fn, errors=checkify.user_checks)(*args)

    program = jax.jit(jax.vmap(element, in_axes=in_axes), **jit_options)
    mapped = jax.jit(lambda *args: _checked_map(fn, in_axes, args), **jit_options)

    @functools.wraps(fn)
    def run(*args):
        try:
            try:
                error, out = program(*args)
            except ValueError:
                # Some JAX versions (0.10) cannot batch a checkified `while` that holds a
                # check: the elements one after the other (`lax.map`), checked as one.
                if not _mappable(in_axes, args):
                    raise
                error, out = mapped(*args)
            throw_checkify(error)
            return out
        except Exception as e:  # the user's exception, at the user's line only
            hide_own_frames(e)
            raise

    return run


def _axes(in_axes: Any, args: tuple) -> tuple:
    return tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)


def _mappable(in_axes: Any, args: tuple) -> bool:
    axes = _axes(in_axes, args)
    return (
        len(axes) == len(args)
        and all(a is None or isinstance(a, int) for a in axes)
        and any(a is not None for a in axes)
    )


def _checked_map(fn: Callable[..., Any], in_axes: Any, args: tuple):
    """``checkify`` of ``lax.map`` of ``fn`` over the mapped arguments' axes: the error of the
    first element (in order) that failed."""
    axes = _axes(in_axes, args)
    moved = tuple(jax.numpy.moveaxis(a, ax, 0) if ax is not None else None for a, ax in zip(args, axes))
    fixed = tuple(a if ax is None else None for a, ax in zip(args, axes))

    def one(xs):
        return fn(*(f if x is None else x for x, f in zip(xs, fixed)))

    def whole():
        return jax.lax.map(one, moved)

    with trace.running() as state:
        state.reporting = True
        return checkify.checkify(whole, errors=checkify.user_checks)()
