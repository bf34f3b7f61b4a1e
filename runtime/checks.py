"""How ``assert`` on traced values behaves while a function is traced: checked with
``jax.experimental.checkify`` (``to_static(checks=True)``) or left unchecked with a warning.

The mode is a thread-local stack read by ``_lx.assert_`` while tracing, set around the
traced call by the API layer (as loop options are).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from laxify.runtime.dispatch.printing import hold, release, replaying, unhold
from laxify.runtime.error_channel import functionalizing, is_functionalizing, report

__all__ = ["AssertMode", "CheckedJit", "current", "functionalized", "raise_failed", "with_assert_mode"]

# What a failed laxify check says after the user's message (``_lx.assert_`` writes it); it
# tells laxify's own failed checks apart from the user's own ``checkify.check`` calls.
WHERE = " (assert at {filename}:{line})"
_OURS = re.compile(r" \(assert at .+:\d+\)")
_CHECK_FAILED = " (`check` failed)"


@dataclass(frozen=True)
class AssertMode:
    """``checks``: traced asserts become ``checkify.check``; otherwise ``unchecked`` says what
    an assert on a traced value does: ``"warn"`` once, ``"error"`` (a ConversionError), or
    ``"silent"``."""

    checks: bool = False
    unchecked: str = "warn"


_DEFAULT = AssertMode()
_state = threading.local()


def current() -> AssertMode:
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else _DEFAULT


def with_assert_mode(fn, mode: AssertMode):
    """``fn`` running with ``mode`` for the asserts it (and what it calls) traces."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(mode)
        try:
            return fn(*args, **kwargs)
        finally:
            stack.pop()

    return run


def functionalized(fn):
    """``fn`` returning ``(error, result)``: its checks functionalized by checkify. Only array
    arguments reach checkify (the function is closed over its arguments), so static Python
    arguments of an enclosing ``jax.jit`` stay Python values."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with functionalizing():
            return checkify.checkify(lambda: fn(*args, **kwargs), errors=checkify.user_checks)()

    return run


def raise_failed(error) -> None:
    """Raise a failed check: laxify's asserts as ``AssertionError`` (what Python raises),
    the user's own ``checkify.check`` calls as checkify raises them."""
    try:
        error.throw()
    except checkify.JaxRuntimeError as e:
        text = str(e)
        if not _OURS.search(text):
            raise
        raise AssertionError(text.replace(_CHECK_FAILED, "")) from None


def flagged(fn):
    """``fn`` returning ``(failed, result)``: its checks functionalized by checkify and
    reduced to one boolean, whether any failed (the error itself is found again by the
    program of :func:`functionalized`, only when one did: a call that fails nothing moves
    one boolean to the host, not checkify's whole error value)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with functionalizing():
            error, out = checkify.checkify(lambda: fn(*args, **kwargs), errors=checkify.user_checks)()
        # The error's booleans are its predicates (a boolean payload can only make this true
        # where nothing failed, and the full program then finds no error).
        preds = [leaf for leaf in jax.tree_util.tree_leaves(error)
                 if jnp.result_type(leaf) == jnp.bool_]
        failed = functools.reduce(jnp.logical_or, (jnp.any(p) for p in preds), jnp.asarray(False))
        return failed, out

    return run


class ConcreteJit:
    """A ``jax.jit`` whose call on concrete arguments (:meth:`concrete`) runs a program that
    also reports something about the run, read after it (:class:`CheckedJit`: whether a check
    failed; ``int_overflow.CodedJit``: an int32 overflow code). Inside an outer jax
    transformation (tracers among the arguments) it runs the plain program, whose checks the
    outer computation must functionalize (``laxify.checked``, ``checkify.checkify``).
    ``program``: the program :meth:`lower` and :meth:`trace` show."""

    def __init__(self, fn, **jit_options):
        self.plain = jax.jit(fn, **jit_options)
        # The same program with its checks, for an outer trace that reports them: a function of
        # its own, so that JAX's cache of traces keeps the two apart.
        self.plain_checked = jax.jit(functools.wraps(fn)(lambda *a, **k: fn(*a, **k)), **jit_options)

    def __call__(self, *args, **kwargs):
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return (self.plain_checked if is_functionalizing() else self.plain)(*args, **kwargs)
        return self.concrete(*args, **kwargs)

    # Whether a failed check that is an int32 overflow of a Python int is not the run's result
    # (``to_static`` then runs the function eagerly, whose prints are then the only ones).
    eager_on_overflow = False

    def concrete(self, *args, **kwargs):
        raise NotImplementedError

    def _raise_failed(self, checked, args, kwargs, kept: list) -> None:
        """Raise the first failed check of this call's run, found by ``checked`` (the program
        functionalized by checkify) run again with its prints muted; the run's prints ``kept``
        come out before it, unless the function then runs eagerly (``eager_on_overflow``)."""
        try:
            with replaying():  # the program's prints happened in the run before
                error, _ = checked(*args, **kwargs)
                jax.block_until_ready(error)
                jax.effects_barrier()
            report(error)
        except OverflowError as e:
            from laxify.runtime.int_overflow import Int32OverflowError  # (it imports this module)

            if not (self.eager_on_overflow and isinstance(e, Int32OverflowError)):
                release(kept)
            raise
        except BaseException:
            release(kept)
            raise
        raise AssertionError(  # the flag and the checks come from the same trace: never here
            "laxify: the program said a check failed, and its checkified program found none")

    def lower(self, *args, **kwargs):
        return self.program.lower(*args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.program.trace(*args, **kwargs)


class CheckedJit(ConcreteJit):
    """A ``jax.jit`` of a function that holds run-time checks (a ``raise`` under traced control
    flow, checked asserts): each call runs the checkified program and raises the first check
    that failed (see :class:`ConcreteJit`)."""

    def __init__(self, fn, **jit_options):
        super().__init__(fn, **jit_options)
        self.flagged = jax.jit(flagged(fn), **jit_options)
        self.checked = self.program = jax.jit(functionalized(fn), **jit_options)

    def concrete(self, *args, **kwargs):
        """A call on concrete arguments (no tracer among them: the caller knows). Its prints
        are held until it is known whether a check failed (see ``eager_on_overflow``)."""
        outer, kept = hold()
        try:
            failed, out = self.flagged(*args, **kwargs)
            failed = bool(np.asarray(failed))
        finally:
            unhold(outer)
        if failed:
            self._raise_failed(self.checked, args, kwargs, kept)
        if kept:
            release(kept)
        return out
