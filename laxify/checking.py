"""``laxify.checked``: the run-time errors of converted code, raised, for the routes where
``to_static`` does not do it itself (``jax.jit(laxify.convert(f))``, ``vmap``, ``grad``)."""

from __future__ import annotations

import functools
from typing import Any, Callable

from laxify.runtime.checks import CheckedJit
from laxify.tracebacks import hide_own_frames

__all__ = ["checked"]


def checked(fn: Callable[..., Any], **jit_options: Any) -> Callable[..., Any]:
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
    transformation: inside one the error is a value that only ``checkify`` can carry."""
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
