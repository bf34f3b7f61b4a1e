"""``laxify.checked``: the run-time errors of converted code, raised, for the routes where
``to_static`` does not do it itself (``jax.jit(laxify.convert(f))``, ``vmap``, ``grad``)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
from jax.experimental import checkify

from laxify.runtime.checks import CheckedJit
from laxify.runtime.error_channel import functionalizing, report
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
    program = CheckedJit(fn, **jit_options)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return program(*args, **kwargs)
        except Exception as e:  # the user's exception, at the user's line only
            hide_own_frames(e)
            raise

    return run


def _checked_vmap(fn: Callable[..., Any], in_axes: Any, jit_options: dict) -> Callable[..., Any]:
    clear = getattr(fn, "clear_cache", None)
    if callable(clear):
        clear()

    def element(*args):
        with functionalizing():
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
            report(error)
            return out
        except Exception as e:  # the user's exception, at the user's line only
            hide_own_frames(e)
            raise

    return run


def _axes(in_axes: Any, args: tuple) -> tuple:
    return tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)


def _mappable(in_axes: Any, args: tuple) -> bool:
    axes = _axes(in_axes, args)
    return len(axes) == len(args) and all(a is None or isinstance(a, int) for a in axes) and any(
        a is not None for a in axes)


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

    with functionalizing():
        return checkify.checkify(whole, errors=checkify.user_checks)()
