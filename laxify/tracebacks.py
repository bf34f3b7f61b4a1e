"""Tracebacks of errors raised in converted code: the user's frames, not laxify's.

An error in the user's code (a bad shape in a loop body, a missing name) travels up through
laxify's dispatcher (``lax.cond``/``while_loop`` wrappers, the call path of ``to_static``)
before it reaches the user. JAX removes its own frames from such tracebacks; laxify removes
its own the same way, with the same switch: ``JAX_TRACEBACK_FILTERING=off`` (or
``jax.config.update("jax_traceback_filtering", "off")``) keeps every frame.
"""

from __future__ import annotations

import os
import types

import jax

import laxify
import laxify.ir
import laxify.runtime
import laxify.transpiler

__all__ = ["hide_own_frames"]

# laxify's layers, and JAX (frames of an error that laxify raised again after JAX's own
# filtering, such as an error in a loop body shown once, still hold JAX's frames).
_ROOTS = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep
    for module in (laxify, laxify.ir, laxify.runtime, laxify.transpiler, jax)
)


def hide_own_frames(error: BaseException, jax_too: bool = True) -> None:
    """Drop laxify's and JAX's frames from ``error``'s traceback (in place; re-raise it with
    ``raise``). Converted code keeps its frames: it is compiled with the user's file name.
    ``jax_too=False``: laxify's only (an error still inside ``jax.jit``, which filters its own)."""
    if getattr(jax.config, "jax_traceback_filtering", "auto") == "off":
        return
    roots = _ROOTS if jax_too else _ROOTS[:-1]
    kept = []
    entry = error.__traceback__
    while entry is not None:
        if not entry.tb_frame.f_code.co_filename.startswith(roots):
            kept.append(entry)
        entry = entry.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    error.__traceback__ = rebuilt
