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
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify

from laxify.ir.errors import Location, NeedsPython
from laxify.runtime import report, trace
from laxify.runtime.error_channel import PathRaised, at_top
from laxify.runtime.dispatch.printing import hold, holding, release, unhold
from laxify.runtime.numbers import NumberNotHeld

__all__ = ["Program", "returning_arrays"]


class _NeedsCheckify(Exception):
    """The trace met a check that only checkify can carry (a transformation of the user's, such
    as a ``jax.vmap`` around converted code, stands between it and the program's report): the
    program is made again, functionalized by checkify."""


class Reported:
    """A program's result with its report (``out``, ``packed``: see :class:`_Packed`). A pytree
    whose structure is the report's rules: where a trace recorded none it is the result alone
    (unflattening gives ``out`` itself), so a program without checks returns exactly what the
    function does."""

    __slots__ = ("out", "packed")

    def __init__(self, out, packed: "_Packed"):
        self.out, self.packed = out, packed

    def code(self) -> int:
        """The report's code, read on the host (0: no check failed)."""
        return int(np.asarray(self.packed.head)[0])

    @property
    def report(self) -> report.Report:
        return self.packed.unpacked()


jax.tree_util.register_pytree_node(
    Reported,
    lambda r: ((r.out, r.packed), True) if r.packed is not None else ((r.out,), False),
    lambda reported, children: Reported(*children) if reported else children[0],
)

_PACKABLE = frozenset(np.dtype(t) for t in (np.int32, np.uint32, np.float32, np.bool_))


class _Packed:
    """A report as the program returns it: its code and its payloads that are 32-bit scalars
    (the common case: the numbers a ``raise``'s message formats) in one int32 vector ``head``,
    the other payloads as they are (``rest``). Each output of a jitted call costs the cached
    call about a microsecond: a guarded call returns one more array, not one per value."""

    __slots__ = ("head", "rest", "spec")

    def __init__(self, head, rest: tuple, spec: tuple):
        self.head, self.rest, self.spec = head, rest, spec  # spec: (rules, treedef, dtype or None per payload)

    @classmethod
    def of(cls, found: report.Report) -> "_Packed | None":
        if not found.rules:
            return None
        leaves, treedef = jax.tree_util.tree_flatten(found.payloads)
        head, rest, kinds = [jnp.asarray(found.code, jnp.int32)], [], []
        for leaf in leaves:
            leaf = jnp.asarray(leaf)
            if leaf.shape == () and leaf.dtype in _PACKABLE:
                kinds.append(leaf.dtype)
                as_int = leaf.astype(jnp.int32) if leaf.dtype == np.bool_ else lax.bitcast_convert_type(leaf, jnp.int32)
                head.append(as_int)
            else:
                kinds.append(None)
                rest.append(leaf)
        return cls(jnp.stack(head), tuple(rest), (found.rules, treedef, tuple(kinds)))

    def unpacked(self) -> report.Report:
        """The :class:`~laxify.runtime.report.Report` again (traced inside an outer trace)."""
        rules, treedef, kinds = self.spec
        head = self.head
        concrete = not isinstance(head, jax.core.Tracer)
        if concrete:
            head = np.asarray(head)
        leaves, rest, k = [], iter(self.rest), 1
        for kind in kinds:
            if kind is None:
                leaves.append(next(rest))
                continue
            value, k = head[k], k + 1
            if kind == np.bool_:
                leaves.append(jnp.asarray(value != 0))
            elif concrete:
                leaves.append(jnp.asarray(np.asarray(value, np.int32).view(kind)))
            else:
                leaves.append(lax.bitcast_convert_type(value, kind))
        code = int(head[0]) if concrete else head[0]
        return report.Report(rules, code, jax.tree_util.tree_unflatten(treedef, leaves))


jax.tree_util.register_pytree_node(
    _Packed, lambda p: ((p.head, p.rest), p.spec), lambda spec, children: _Packed(*children, spec)
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
        return Reported(out, _Packed.of(found))

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
            # (the program without checkify, inline: the cached call of a guarded function)
            result = self.jitted(*args, **kwargs) if self.checked is None else self.run(*args, **kwargs)
        except _NeedsCheckify:
            self._make_checked()
            result = self.run(*args, **kwargs)
        finally:
            unhold(outer)
        if type(result) is Reported and not kept and not result.code():
            return result.out
        if type(result) is not Reported:
            if kept:
                release(kept)
            return result
        return self._read(result, kept)

    def _read(self, result: Reported, kept: list):
        """The result's outputs, or the exception its report says."""
        code = result.code()
        if code:
            found = result.report
            try:
                report.throw(found, code)
            except NumberNotHeld:
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
