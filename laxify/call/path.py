"""The call path of a ``to_static`` function: convert once, then per call Signature → Program →
Decision.

:class:`CallPath` (which ``StaticFunction`` is) holds what the calls share: the converted
function, one :class:`~laxify.call.program.Program` per :class:`~laxify.call.signature.Signature`,
the signatures that run split or eagerly (decided once: ``laxify/call/decision.py``), and the
hot path, which maps the argument types of a call seen before straight to what runs.
"""

from __future__ import annotations

import functools
import threading
import types
import warnings
from typing import Any, Callable

import jax

from laxify.call.decision import Decision, decide, outer_call
from laxify.call.program import Program, returning_arrays
from laxify.call.signature import HOT_TYPES, Signature, kind, signature, static_by_type, unwrapped, unwrapping
from laxify.call.targets import Converted, convert_callable, function_and_arguments, python_call_error
from laxify.conversion import convert_function
from laxify.fallback import CONCRETE_ERRORS, raised_while_tracing, restoring_shared_names, warn_at_user_code
from laxify.ir.errors import ConversionError, FallbackWarning
from laxify.models import nnx_jit
from laxify.runtime.checks import AssertMode, with_assert_mode
from laxify.runtime.numbers import NumberNotHeld
from laxify.runtime.lists import materialized
from laxify.runtime.writeback import marking_numpy, writing_back, written_back
from laxify.split import SplitRunner
from laxify.tracebacks import hide_own_frames
from laxify.transpiler.source import python_only_error

__all__ = ["CallPath", "FALLBACK_MODES", "RETRACE_WARNING_AFTER"]

FALLBACK_MODES = ("warn", "error", "silent")
RETRACE_WARNING_AFTER = 8

_UNBOUND = object()  # no object bound: the function is not a bound method


class _SplitHot:
    """A hot-path entry whose signature runs split: its runner, called without the handlers
    of a jitted program (nothing is traced there; its errors are the eager run's own)."""

    __slots__ = ("runner",)

    def __init__(self, runner: Callable):
        self.runner = runner


class CallPath(Converted):
    """See the module's docstring. ``fn``: what is converted (a function, a bound method, a
    partial); the options are ``to_static``'s."""

    def __init__(
        self,
        fn: Callable,
        *,
        static_argnums=(),
        static_argnames=(),
        fallback: str = "warn",
        strict: bool = False,
        donate_argnums=(),
        checks: bool = True,
        **jit_options,
    ):
        if strict:
            fallback = "error"
        if fallback not in FALLBACK_MODES:
            raise ValueError(f"fallback must be one of {FALLBACK_MODES}, got {fallback!r}")
        self.python_function = fn
        self.fallback = fallback
        self.checks = checks  # asserts on traced values are checked at run time
        static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
        # A bound method runs as its function with the object as first argument, an argument
        # like any other: a model's parameters are traced, not baked into the program.
        self._self: Any = _UNBOUND
        self._target = fn  # what is converted and jitted
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, (types.FunctionType, Converted)):
            self._self, self._target = fn.__self__, fn.__func__
            static_argnums = tuple(i + 1 for i in static_argnums)
            donate_argnums = tuple(i + 1 for i in donate_argnums)
        # Calls may take the hot path unless a bound object is one that is not a static leaf
        # (a plain object: hashable and no pytree, so it stays static).
        self._hot = True
        if self._self is not _UNBOUND:
            leaf = jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(self._self))
            self._hot = leaf and kind(self._self, 0 in static_argnums) == "static"
        # The function as written, called when it runs eagerly (with the object first if bound).
        self.plain = self._target.python_function if isinstance(self._target, Converted) else self._target
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset((static_argnames,) if isinstance(static_argnames, str) else static_argnames)
        self._donate = donate_argnums
        self._jit_options = jit_options
        self._converted_fn: Callable | None = None
        self._programs: dict[Signature, Program] = {}
        self._by_types: dict[Any, tuple] = {}  # argument types -> (what runs, its signature)
        # Signatures that run split or eagerly, and what runs (see laxify/call/decision.py).
        self._eager: dict[Signature, Callable] = {}
        self._static_values: set = set()
        self._retrace_warned = False
        self.no_source: ConversionError | None = None
        self.inner = function_and_arguments(fn, (), {})[0]  # under bound methods and partials
        # A generator or coroutine function runs as Python: jax.jit cannot return its result.
        self._python_only = python_only_error(self.inner)
        self._python_only_warned = False
        self._lock = threading.RLock()

    # -- conversion ------------------------------------------------------------------
    @property
    def _converted(self):
        """The conversion of the function (``laxify/conversion.py``: cached per code object)."""
        return convert_function(self.inner)

    def conversion(self):
        return self._converted.conversion

    def converted(self) -> Callable:
        """The converted function (converted once, also when threads call first at once), or the
        function as written (with a warning) when it has no source that laxify can convert."""
        fn = self._converted_fn
        if fn is None:
            with self._lock:
                if self._converted_fn is None:
                    self._converted_fn = self._convert()
                fn = self._converted_fn
        return fn

    def _convert(self) -> Callable:
        try:
            return convert_callable(self._target, locate_fallbacks=False)
        except ConversionError as e:
            if self.fallback == "error":
                raise
            self.no_source = e
            if self.fallback == "warn":
                warn_at_user_code(f"{e}\nThe function runs unconverted.")
            return self.plain

    def _segmented(self, lines) -> Callable | None:
        """The converted code with segments around the statements at ``lines`` (laxify/split.py,
        runtime/segments.py), or None where none can be made."""
        try:
            return self._converted.segmented(self.inner, lines)
        except (SyntaxError, ValueError, TypeError):  # (a form the grouping does not know: none)
            return None

    def split_runner(self, located: ConversionError, warn: bool, kept: bool = False) -> SplitRunner:
        fn = self.converted()
        return SplitRunner(
            fn, located, self.inner, warn, kept=kept, variant=self._segmented if fn is not self.plain else None
        )

    # -- programs --------------------------------------------------------------------
    def _with_self(self, args: tuple) -> tuple:
        return args if self._self is _UNBOUND else (self._self, *args)

    def _signature(self, args: tuple, kwargs: dict) -> tuple[Signature, tuple, dict]:
        return signature(args, kwargs, self._static_argnums, self._static_argnames)

    def _traceable(self, fn: Callable, checks: bool) -> Callable:
        """``fn`` with its asserts checked or not, the shared names a fallback re-runs the
        assignments of restored (see ``restoring_shared_names``), and its results checked to
        be what one XLA program can return."""
        fn = returning_arrays(fn, self.inner)
        return restoring_shared_names(with_assert_mode(fn, AssertMode(checks)), self.plain)

    def _program(self, sig: Signature) -> Program:
        program = self._programs.get(sig)
        if program is None:
            fn = self.converted()
            fn = self._traceable(unwrapping(fn) if sig.wraps else fn, self.checks)
            if sig.has_static:
                fn = self._noting_static(fn, sig)
            code = getattr(self.inner, "__code__", None)
            # What the function changes in its list and dict arguments, for the caller's objects
            # (runtime/writeback.py).
            fn = writing_back(fn, code.co_varnames[: code.co_argcount] if code is not None else ())
            if sig.numpy:
                # NumPy array arguments: the function may not change them in place (runtime/writeback.py).
                fn = marking_numpy(fn, sig.numpy)
            # An argument holding a Flax NNX module: nnx.jit traces its state and writes back
            # what the function changes on it.
            jit = nnx_jit if sig.nnx else jax.jit
            with self._lock:
                program = self._programs.get(sig)
                if program is None:
                    program = self._programs[sig] = Program(
                        fn,
                        jit,
                        static_argnums=sig.static_argnums,
                        static_argnames=sig.static_argnames,
                        donate_argnums=self._donate,
                        **self._jit_options,
                    )
        return program

    def _program_for(self, sig: Signature, args: tuple, kwargs: dict) -> Program:
        """``_program(sig)``; arguments that do not fit the function (too many, missing, an
        unknown keyword) are Python's own TypeError, not jax.jit's complaint about the static
        arguments they made."""
        try:
            return self._program(sig)
        except ValueError:
            error = python_call_error(self._target, args, kwargs)
            if error is not None:
                raise error from None
            raise

    def _noting_static(self, fn: Callable, sig: Signature) -> Callable:
        """``fn`` noting its static argument values each time it is traced (a new value is a
        new trace: see ``_note_static``); calls of programs already compiled cost nothing."""

        @functools.wraps(fn)
        def run(*args, **kwargs):
            self._note_static(sig, args, kwargs)
            return fn(*args, **kwargs)

        return run

    def _note_static(self, sig: Signature, args, kwargs) -> None:
        try:
            values = (
                tuple((i, args[i]) for i in sig.static_argnums),
                tuple((k, kwargs[k]) for k in sig.static_argnames),
            )
            self._static_values.add(values)
        except (TypeError, IndexError, KeyError):
            return
        if len(self._static_values) > RETRACE_WARNING_AFTER and not self._retrace_warned:
            self._retrace_warned = True
            code = getattr(self.inner, "__code__", None)
            changing = self._changing_arguments(code)
            which = f" `{changing[0]}` took {changing[1]} of them;" if changing else ""
            warnings.warn_explicit(
                f"{self.__qualname__} has been traced for {len(self._static_values)} distinct static "
                f"argument values;{which} each one compiles anew. Pass values that change from call "
                f"to call as arrays (jnp.asarray) so that they are traced instead.",
                FallbackWarning,
                code.co_filename if code else "<unknown>",
                code.co_firstlineno if code else 0,
            )

    def _changing_arguments(self, code) -> tuple[str, int] | None:
        """The static argument with the most distinct values seen, by its name, and how many."""
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] if code else ()
        seen: dict = {}
        for positional, keywords in self._static_values:
            for where, value in (*positional, *keywords):
                try:
                    seen.setdefault(where, set()).add(value)
                except TypeError:
                    continue
        if not seen:
            return None
        where, distinct = max(seen.items(), key=lambda item: len(item[1]))
        if isinstance(where, int):
            where = names[where] if where < len(names) else f"argument {where}"
        return where, len(distinct)

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not kwargs:
            # Hot path: positional arrays and Python scalars, of the same types as a call
            # before (so classified alike: arrays traced, scalars static). The key is the
            # argument's type for one argument, else the tuple of their types; the stored
            # program has a bound object (a static leaf) already bound.
            n = len(args)
            hot = self._by_types.get(
                type(args[0]) if n == 1 else (type(args[0]), type(args[1])) if n == 2 else tuple(map(type, args))
            )
            if hot is not None:
                run, sig = hot
                if type(run) is _SplitHot:  # a signature that runs split (laxify/split.py)
                    try:
                        return run.runner(*args)
                    except Exception as e:
                        hide_own_frames(e)
                        raise
                failed = None
                try:
                    return materialized(run(*args))
                except (NumberNotHeld, *CONCRETE_ERRORS) as e:
                    failed = e
                except Exception as e:  # the user's error: shown with the user's frames only
                    if not raised_while_tracing(e):
                        hide_own_frames(e)
                        raise
                    failed = e
                # (outside the handler: the eager run's error is not chained to the trace's)
                try:
                    return materialized(self._failed(failed, sig, self._with_self(args), {}))
                except Exception as e:
                    hide_own_frames(e)
                    raise
        try:
            return materialized(self._call(self._with_self(args), kwargs))
        except Exception as e:  # here, so that this frame goes too
            hide_own_frames(e)
            raise

    def _call(self, args: tuple, kwargs: dict):
        """A call off the hot path: classify the arguments, pick (or make) the program."""
        if self._python_only is not None:
            return self._run_as_python(args, kwargs)
        sig, wrapped_args, wrapped_kwargs = self._signature(args, kwargs)
        runner = self._eager.get(sig)
        if runner is not None:
            return runner(*args, **kwargs)
        program = self._program_for(sig, args, kwargs)
        if not kwargs and not sig.wraps and self._hot:
            self._remember_types(program, sig, wrapped_args)
        failed = None
        try:
            return written_back(program(*wrapped_args, **wrapped_kwargs), wrapped_args, wrapped_kwargs)
        except (NumberNotHeld, *CONCRETE_ERRORS) as e:
            failed = e
        except Exception as e:
            if not raised_while_tracing(e):
                raise
            failed = e
        # Outside the handlers: an error of the eager run is not chained to the trace's.
        return self._failed(failed, sig, wrapped_args, wrapped_kwargs)

    def _failed(self, error: BaseException, sig: Signature, args: tuple, kwargs: dict):
        """What the call becomes where its program could not give Python's answer: the
        decision table's answer (``laxify/call/decision.py``), carried out."""
        decision = decide(error, self, outer_call(args, kwargs))
        if decision.action == "raise":
            if decision.error is error:
                raise error
            raise decision.error from error
        args = tuple(map(unwrapped, args))
        kwargs = {k: unwrapped(v) for k, v in kwargs.items()}
        if decision.warn_after:  # eager Python decides: its error, or its value and then the warning
            try:
                result = decision.runner(*args, **kwargs)
            except Exception as eager_error:
                hide_own_frames(eager_error)
                raise eager_error from None
            self._settled(decision, sig, args, kwargs)
            return result
        self._settled(decision, sig, args, kwargs)
        if decision.cached:
            return decision.runner(*args, **kwargs)
        try:
            return decision.runner(*args, **kwargs)
        except Exception as eager_error:  # Python raises too: its error, as Python gives it
            hide_own_frames(eager_error)
            raise eager_error from None

    def _settled(self, decision: Decision, sig: Signature, args: tuple, kwargs: dict) -> None:
        """Say the decision (its warning), and keep its runner for the signature's later calls."""
        if decision.warn is not None:
            decision.warn()
        if not decision.cached:
            return
        self._eager[sig] = decision.runner
        self._by_types.clear()
        if isinstance(decision.runner, SplitRunner) and not kwargs and not sig.wraps and self._hot:
            self._remember_types(_SplitHot(decision.runner.concrete), sig, args)

    def _remember_types(self, run: Callable, sig: Signature, args: tuple) -> None:
        """Let later calls with arguments of these types take the hot path."""
        if isinstance(run, Program):
            run = run.concrete  # hot-path arguments are concrete arrays and Python scalars
        if self._self is not _UNBOUND:
            if type(run) is _SplitHot:
                run.runner, args = functools.partial(run.runner, self._self), args[1:]
            else:
                run, args = functools.partial(run, self._self), args[1:]
        if not all(type(a) in HOT_TYPES or static_by_type(a) for a in args):
            return
        n = len(args)
        self._by_types[type(args[0]) if n == 1 else tuple(map(type, args))] = (run, sig)

    def _run_as_python(self, args, kwargs):
        """A generator or coroutine function: called as written (no conversion, no jit), with a
        FallbackWarning once at its ``yield``/``async def`` line; an error if fallback="error"."""
        error = self._python_only
        if self.fallback == "error":
            raise error
        if self.fallback == "warn" and not self._python_only_warned:
            self._python_only_warned = True
            where = error.location
            warnings.warn_explicit(
                f"{error.message} It runs as plain Python, eagerly, op by op, which is much slower. {error.fix}",
                FallbackWarning,
                where.filename,
                where.line,
            )
        return self.plain(*args, **kwargs)
