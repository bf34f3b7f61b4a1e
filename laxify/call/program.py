"""One compiled program per input signature: ``jax.jit`` of the converted function, traced once
under a trace state of its own (``runtime/trace.py``), returning its outputs and its report
(``runtime/report.py``). A call on concrete arguments reads the report after the run and raises
what it says; a call inside an outer trace (``jax.jit``, ``vmap``, ``grad`` around it) hands
the report to the converted code that called it.
"""

from __future__ import annotations

import functools
import linecache
from typing import Any, Callable

import jax
import numpy as np
from jax.experimental import checkify

from laxify.ir.errors import Location, NeedsPython
from laxify.runtime import report, trace
from laxify.runtime.error_channel import PathRaised, at_top
from laxify.runtime.dispatch.printing import hold, holding, release, unhold
from laxify.runtime.int_overflow import Int32OverflowError

__all__ = ["Program", "returning_arrays"]


class _NeedsCheckify(Exception):
    """The trace met a check that only checkify can carry (a transformation of the user's, such
    as a ``jax.vmap`` around converted code, stands between it and the program's report): the
    program is made again, functionalized by checkify."""


class Reported:
    """A program's result with its report (``out``, ``report``). A pytree whose structure is
    the report's rules: where a trace recorded none it is the result alone (unflattening gives
    ``out`` itself), so a program without checks returns exactly what the function does."""

    __slots__ = ("out", "report")

    def __init__(self, out, found: report.Report):
        self.out, self.report = out, found


jax.tree_util.register_pytree_node(
    Reported,
    lambda r: ((r.out, r.report), True) if r.report.rules else ((r.out,), False),
    lambda reported, children: Reported(*children) if reported else children[0],
)


def _reporting(fn: Callable, program: "Program") -> Callable:
    """``fn`` returning :class:`Reported`, traced under a trace state of its own."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with trace.running() as state, report.frame() as root:
            state.reporting = True
            state.exporting = program.exporting
            out = fn(*args, **kwargs)
        if state.checkify and program.checked is None and not program.exporting and not program.unchecked:
            raise _NeedsCheckify()
        found = root.report()
        if found.rules and not program.reports:
            # The first trace with a check: the run of the call that traced it comes next, and
            # its prints are held too (the caller takes ``late``; see Program.concrete).
            program.reports = True
            program.late = hold()
        return Reported(out, found)

    return run


class Program:
    """``jit(fn)`` for one signature (``jit``: ``jax.jit``, or ``nnx.jit`` for a Flax NNX
    argument), with its report (see the module's docstring). ``exporting``: traced for
    ``jax.export`` (no host callbacks, and no checks: a serialized program holds no report).
    A call of a program none of whose traces recorded a check is the bare ``jax.jit`` call."""

    def __init__(self, fn: Callable, jit: Callable = jax.jit, exporting: bool = False, **jit_options: Any):
        self.fn, self.jit, self.jit_options, self.exporting = fn, jit, jit_options, exporting
        self.checked: Callable | None = None  # the program functionalized by checkify, if a trace needed it
        self.jitted = jit(_reporting(fn, self), **jit_options)
        self.reports = False  # a trace recorded a check: calls hold the program's prints
        # Checks that only checkify carries, which it refuses (a `while` under the function's own
        # `vmap`: checkify-of-vmap-of-while): not checked (docs/semantics.md, "Exceptions").
        self.unchecked = False
        self.late = None  # the prints held since a trace in the middle of a call (see _reporting)

    def _make_checked(self) -> None:
        self.checked = self.jit(
            checkify.checkify(_reporting(self.fn, self), errors=checkify.user_checks), **self.jit_options
        )
        self.reports = True

    def _unheld(self) -> None:
        """End the holding a trace started (see ``_reporting``) where no run reads it."""
        late, self.late = self.late, None
        if late is not None:
            unhold(late[0])
            release(late[1])

    def run(self, *args, **kwargs):
        """The program's result (a :class:`Reported` where a check was recorded), its checkify
        errors raised first where it needs checkify."""
        if self.checked is None:
            try:
                return self.jitted(*args, **kwargs)
            except _NeedsCheckify:
                self._make_checked()
        try:
            error, out = self.checked(*args, **kwargs)
        except ValueError as e:
            if "Checkify does not support" not in str(e):
                raise
            self.checked, self.unchecked = None, True
            return self.jitted(*args, **kwargs)
        if not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(error)):
            report.throw_checkify(error)
        return out

    def __call__(self, *args, **kwargs):
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return self.traced(*args, **kwargs)
        return self.concrete(*args, **kwargs)

    def traced(self, *args, **kwargs):
        """A call inside an outer trace: the report goes to the frame of the code around it."""
        try:
            result = self.run(*args, **kwargs)
        finally:
            self._unheld()
        if type(result) is not Reported:
            return result
        report.absorb(result.report)
        return result.out

    def concrete(self, *args, **kwargs):
        """A call on concrete arguments. Where the program records checks its prints are held
        until its report is read: where a check failed they are printed before the exception,
        except where the function then runs eagerly (an int32 overflow of a Python int: the
        eager run's prints are Python's)."""
        if not self.reports:  # (no check in the traces so far: the bare jitted call)
            try:
                result = self.jitted(*args, **kwargs)
            except _NeedsCheckify:
                self._make_checked()
                return self.concrete(*args, **kwargs)
            except BaseException:
                self._unheld()
                raise
            if type(result) is not Reported:
                return result
            late, self.late = self.late, None  # (the trace in this call started holding its prints)
            outer, kept = late if late is not None else (holding.buffer, [])
            unhold(outer)
            return self._read(result, kept)
        outer, kept = hold()
        try:
            result = self.run(*args, **kwargs)
        finally:
            unhold(outer)
        if type(result) is not Reported:
            if kept:
                release(kept)
            return result
        return self._read(result, kept)

    def _read(self, result: Reported, kept: list):
        """The result's outputs, or the exception its report says."""
        found = result.report
        code = int(np.asarray(found.code))
        if code:
            try:
                report.throw(found, code)
            except Int32OverflowError:
                raise
            except BaseException:
                release(kept)
                raise
        if kept:
            release(kept)
        return result.out

    def without_report(self) -> Callable:
        """``jit`` of the function giving its outputs only (``export``: a serialized program
        holds no report; its checks are left out, said at their lines)."""
        reporting = _reporting(self.fn, self)

        @functools.wraps(self.fn)
        def run(*args, **kwargs):
            result = reporting(*args, **kwargs)
            return result.out if type(result) is Reported else result

        return self.jit(run, **self.jit_options)

    # -- as jax.jit(f).lower / .trace / .eval_shape ------------------------------------------
    def lower(self, *args, **kwargs):
        try:
            return self.jitted.lower(*args, **kwargs)
        finally:
            self._unheld()

    def trace(self, *args, **kwargs):
        try:
            return self.jitted.trace(*args, **kwargs)
        finally:
            self._unheld()

    def eval_shape(self, *args, **kwargs):
        try:
            result = self.jitted.eval_shape(*args, **kwargs)
        finally:
            self._unheld()
        return result.out if type(result) is Reported else result

    def clear_cache(self) -> None:
        for program in (self.jitted, self.checked):
            clear = getattr(program, "clear_cache", None)
            if clear is not None:
                clear()


# -- what one program can return ----------------------------------------------------------------

_RESULT_LEAVES = (jax.Array, np.ndarray, np.generic, bool, int, float, complex)


class _StaticText:
    """A string (``str`` or ``bytes``) in a ``to_static`` function's result, computed while
    tracing from Python values only: the program's output carries it in its tree structure
    (the pytree's auxiliary data), which ``jax.jit`` keeps with each compiled program, so that
    every call of that program returns it (a new static argument, shape or dtype is a new trace,
    which computes it again). Unflattening gives the string itself."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


jax.tree_util.register_pytree_node(_StaticText, lambda s: ((), s.value), lambda value, _: value)


def _static_text(leaf) -> bool:
    """Whether ``leaf`` is a string one program may return as part of its structure: a str or
    bytes that shows no tracer (a string that does was made from a traced value by Python
    that laxify does not see, such as ``"%s" % x``: eager Python writes the value's digits)."""
    if isinstance(leaf, str):
        return "Trace" not in leaf
    if isinstance(leaf, bytes):
        return b"Trace" not in leaf
    return False


def _wide_int(leaf) -> bool:
    """Whether ``leaf`` is a Python int that the program's integer type cannot hold (int32,
    int64 under ``jax_enable_x64``): eager Python returns it exactly, ``jax.jit`` cannot."""
    if type(leaf) is not int:
        return False
    bits = np.iinfo(jax.dtypes.canonicalize_dtype(np.int64)).bits
    return not -(2 ** (bits - 1)) <= leaf < 2 ** (bits - 1)


def returning_arrays(fn: Callable, inner: Callable) -> Callable:
    """``fn``, whose result (while it is traced) must hold arrays, numbers and strings only:
    a string is returned as part of the result's structure (see :class:`_StaticText`); another
    Python object in it is Python that eager Python runs and one XLA program cannot return
    (``NeedsPython``: ``to_static`` falls back, at the ``def`` line). Only the function's
    name and place are kept (JAX's cache holds ``fn``: the user's function and its code must
    not outlive it through this wrapper)."""
    code = getattr(inner, "__code__", None)
    filename, first_line = (code.co_filename, code.co_firstlineno) if code is not None else (None, 0)
    name = getattr(inner, "__qualname__", "the function")

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            out = fn(*args, **kwargs)
        except PathRaised as e:  # a helper that raises on every input: the result is never seen
            out = at_top(e)
        leaves, structure = jax.tree_util.tree_flatten(out)
        texts = False
        for leaf in leaves:
            if isinstance(leaf, _RESULT_LEAVES) and not _wide_int(leaf):
                continue
            if _static_text(leaf):
                texts = True
                continue
            where = None
            if filename is not None:
                text = linecache.getline(filename, first_line).rstrip("\n")
                where = Location(filename, first_line, len(text) - len(text.lstrip()), text)
            if _wide_int(leaf):
                raise NeedsPython(
                    f"{name} returns the Python int {leaf}, which the program's integer type "
                    f"({jax.dtypes.canonicalize_dtype(np.int64).name}) cannot hold",
                    where,
                    'Enable 64-bit integers before any JAX call (jax.config.update("jax_enable_x64", True)), '
                    "or compute it as a float.",
                )
            made = (
                " made from a traced value (its text shows the tracer where eager Python writes the value's digits)"
                if isinstance(leaf, (str, bytes))
                else ""
            )
            raise NeedsPython(
                f"{name} returns a Python {type(leaf).__name__}{made}, and one XLA program returns only "
                f"arrays, numbers and strings made from Python values",
                where,
                f"Return arrays and numbers only (build the {type(leaf).__name__} from the results "
                f"where the function is called), or call it unconverted.",
            )
        if texts:
            out = jax.tree_util.tree_unflatten(
                structure, [leaf if isinstance(leaf, _RESULT_LEAVES) else _StaticText(leaf) for leaf in leaves]
            )
        return out

    return run
