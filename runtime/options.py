"""Loop options (``laxify.loop_options``): a stack in the trace state, read by the dispatcher
while tracing."""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass

from laxify.runtime import trace

__all__ = [
    "LoopOptions",
    "loop_options",
    "current",
    "push",
    "pop",
    "push_options",
    "restoring_options",
    "with_options",
    "run_time_warnings",
]


@dataclass(frozen=True)
class LoopOptions:
    """``max_iters``: bound for traced loops (they then lower to a differentiable scan);
    ``unroll``: passed to ``lax.scan``/``fori_loop``; ``checkpoint``: rematerialise the body;
    ``early_exit``: a ``for`` over a static range with a traced ``break`` (or ``return``)
    lowers to a ``lax.while_loop`` that stops there, instead of a scan to the end."""

    max_iters: int | None = None
    unroll: int | bool | None = None
    checkpoint: bool = False
    early_exit: bool = False


_DEFAULT = LoopOptions()


def _stack() -> list[LoopOptions]:
    return trace.current().options


def current() -> LoopOptions:
    stack = _stack()
    return stack[-1] if stack else _DEFAULT


def push(options: LoopOptions) -> int:
    stack = _stack()
    stack.append(options)
    return len(stack) - 1


def pop(depth: int) -> None:
    del _stack()[depth:]


def run_time_warnings() -> bool:
    """Whether the program being traced may warn at run time (a host callback): not in a
    program traced for ``export``, which cannot serialize host callbacks."""
    return not trace.current().exporting


class loop_options:
    """Options for the loops of a function (as a decorator) or of one block (``with``).

    ``max_iters``: a traced ``while`` (or a ``for`` over a traced range) runs at most this
    many iterations and lowers to a ``lax.scan`` with a ``lax.cond`` per step, which
    reverse-mode differentiates and lets a list be appended to (it holds at most
    ``max_iters`` rows and a traced count: ``len`` and item reads are Python's, see
    docs/semantics.md); ``unroll`` is passed to
    ``lax.scan``; ``checkpoint=True`` rematerialises each iteration in the backward pass.
    ``early_exit=True``: a ``for`` over a static range that a traced ``break`` or ``return``
    may leave lowers to a ``lax.while_loop`` that stops at that iteration (a scan runs every
    iteration, the body switched off after the break); like any ``while_loop`` it is not
    reverse-mode differentiable without ``max_iters``, and it cannot stack appended lists.
    """

    def __init__(
        self,
        max_iters: int | None = None,
        unroll: int | bool | None = None,
        checkpoint: bool = False,
        early_exit: bool = False,
    ):
        if max_iters is not None and (isinstance(max_iters, bool) or not isinstance(max_iters, int) or max_iters < 0):
            raise ValueError(f"loop_options(max_iters=...) takes a non-negative int, got {max_iters!r}")
        if unroll is not None and not isinstance(unroll, (bool, int)):
            raise ValueError(f"loop_options(unroll=...) takes an int or a bool, got {unroll!r}")
        if not isinstance(early_exit, bool):
            raise ValueError(f"loop_options(early_exit=...) takes a bool, got {early_exit!r}")
        self.options = LoopOptions(max_iters, unroll, bool(checkpoint), early_exit)
        self._depth: list[int] = []

    def __enter__(self) -> "loop_options":
        self._depth.append(push(self.options))
        return self

    def __exit__(self, *exc) -> None:
        pop(self._depth.pop())

    def __call__(self, fn):
        """A copy of ``fn`` whose loops use these options; ``fn`` itself is left unchanged (a
        ``to_static`` made of it earlier keeps its unbounded loops)."""
        if isinstance(fn, types.FunctionType):
            copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            functools.update_wrapper(copy, fn)
            del copy.__wrapped__  # the copy is the function itself, not a wrapper of it
            copy.__kwdefaults__ = fn.__kwdefaults__
            copy.__laxify_loop_options__ = self.options
            return copy
        target = getattr(fn, "python_function", fn)
        target.__laxify_loop_options__ = self.options
        return fn

    def __repr__(self) -> str:
        o = self.options
        text = f"loop_options(max_iters={o.max_iters}, unroll={o.unroll}, checkpoint={o.checkpoint}"
        return text + (", early_exit=True)" if o.early_exit else ")")


def push_options(block: loop_options) -> int:
    """``with loop_options(...):`` in converted code: the block's loops see these options."""
    return push(block.options)


def with_options(fn, opts: LoopOptions | None):
    """``fn`` running with ``opts`` as the current loop options (``None``: the options in force);
    whatever ``fn`` pushes is popped when it returns or raises."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        depth = push(opts) if opts is not None else len(_stack())
        try:
            return fn(*args, **kwargs)
        finally:
            pop(depth)

    return run


def restoring_options(fn):
    """``fn``, with the loop options stack restored when it returns or raises."""
    return with_options(fn, None)
