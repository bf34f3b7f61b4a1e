"""``print``: ``jax.debug.print`` when an argument is traced."""

from __future__ import annotations

import jax

from laxify.runtime.dispatch.values import any_traced

__all__ = ["print_"]


def print_(*args, sep: str = " ", end: str = "\n", **kwargs):
    """``print``: ``jax.debug.print`` when an argument is traced, so that the values are
    printed each time the program runs; Python's ``print`` otherwise."""
    if not any_traced(args) or kwargs.get("file") is not None:
        print(*args, sep=sep, end=end, **kwargs)
        return
    fmt = sep.join("{}" for _ in args) + ("" if end == "\n" else end)
    jax.debug.print(fmt, *args)
