"""The public decorator ``to_static``, ``convert`` and ``do_not_convert``."""

from __future__ import annotations

import functools
import os
import types
from typing import Any, Callable, Iterable, Literal, Sequence, overload

import jax

from laxify.call.path import CallPath
from laxify.call.targets import callable_target, convert_callable, function_and_arguments, python_call_error
from laxify.conversion import fresh_ir
from laxify.diff import Diff
from laxify.explain import Explanation, explain
from laxify.graph import Graph, to_dot
from laxify.split import SplitRunner
from laxify.call.decision import decide
from laxify.fallback import CONCRETE_ERRORS
from laxify.ir.printer import print_function
from laxify.call.program import Program
from laxify.runtime.checks import AssertMode, with_assert_mode
from laxify.runtime.evaluate import make_evaluator
from laxify.runtime.lists import materialized
from laxify.runtime.signature import param_types_for
from laxify.runtime.writeback import Changes
from laxify.transpiler.source import python_only_error

__all__ = ["to_static", "StaticFunction", "convert", "do_not_convert", "load"]


def do_not_convert(fn: Callable) -> Callable:
    """Leave ``fn`` as Python: ``to_static`` only jits it, converted callers do not convert it."""
    fn.__laxify_do_not_convert__ = True
    return fn


def convert(fn: Callable, *, checks: bool | None = None) -> Callable:
    """The converted, un-jitted Python function: composable with ``jax.jit``/``grad``/``vmap``.

    Takes functions, lambdas, bound methods, ``functools.partial`` objects, objects whose class
    defines ``__call__`` (their bound ``__call__`` is converted), and ``staticmethod`` /
    ``classmethod`` objects (converted inside, same kind returned). An ``assert`` on a traced
    value is checked where a report collects it (``to_static``, ``laxify.checked``);
    ``checks=True``: also as a ``checkify.check`` for the caller to functionalize with
    ``jax.experimental.checkify.checkify``; ``checks=False``: not checked."""
    if isinstance(fn, StaticFunction):
        fn = fn._unconverted()
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(convert(fn.__func__, checks=checks))
    if checks is not None:
        return with_assert_mode(convert(fn), AssertMode(checks=checks, checkify=checks))
    target = callable_target(fn, "laxify.convert")
    lazy = python_only_error(function_and_arguments(target, (), {})[0])
    if lazy is not None:
        raise lazy
    return convert_callable(target)


class StaticFunction(CallPath):
    """A function converted by laxify and run under ``jax.jit``.

    Arrays are traced; Python scalars, strings, ``None`` and other hashable values are static.
    Calling it goes through its call path (``laxify/call``): one program per input signature,
    traced once, whose report says what the run raises.
    """

    def __init__(self, fn: Callable, **options):
        # `@to_static` over `@staticmethod`/`@classmethod`: convert the function, bind as they do.
        self._binding = type(fn) if isinstance(fn, (staticmethod, classmethod)) else None
        if self._binding is not None:
            fn = fn.__func__
        fn = callable_target(fn, "laxify.to_static")
        functools.update_wrapper(self, fn)
        if not isinstance(getattr(self, "__qualname__", None), str):
            self.__qualname__ = self.__name__ = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        super().__init__(fn, **options)

    def _unconverted(self) -> Any:
        """The function as given (a ``staticmethod``/``classmethod`` wrapped again)."""
        return self._binding(self.python_function) if self._binding else self.python_function

    def __get__(self, instance, owner=None):
        if self._binding is staticmethod:
            return self
        if self._binding is classmethod:
            return types.MethodType(self, owner if owner is not None else type(instance))
        if instance is None:
            return self
        return types.MethodType(self, instance)

    # -- inspection ------------------------------------------------------------------
    @property
    def source(self) -> str:
        """The transformed Python source that runs."""
        return self._converted.source

    def diff(self) -> Diff:
        """Original vs transformed: ``str()`` is a unified diff, ``_repr_html_`` side by side."""
        conv = self.conversion()
        original = conv.source.module.code_for_node(conv.source.module.body[0]) if conv.source.module.body else ""
        text, decorators = _strip_decorators(original)
        return Diff(text, self.source, conv.source.filename, conv.source.first_line + decorators)

    def ir(self, *args, **kwargs) -> str:
        """The typed SSA IR as text, specialised to the arguments when they are given."""
        if not args and not kwargs:
            return print_function(self._converted.ir)
        return print_function(self._specialised_ir(args, kwargs))

    def explain(self, *args, **kwargs) -> Explanation:
        """Every control-flow construct: converted, kept static, or kept as Python, and why
        (specialised to the arguments when they are given)."""
        if not args and not kwargs:
            return explain(self._converted.ir)
        explanation = explain(self._specialised_ir(args, kwargs), specialised=True, unspecialised=self._converted.ir)
        runner = self._eager.get(self._signature(self._with_self(args), kwargs)[0])
        if isinstance(runner, SplitRunner):
            explanation.split = runner.plan.lines()
        return explanation

    def graph(self, *args, **kwargs) -> Graph:
        """The dataflow graph of the IR (specialised to the arguments when they are given):
        ``str()`` is Graphviz DOT text; notebooks show it as SVG when Graphviz is installed."""
        if not args and not kwargs:
            return Graph(to_dot(self._converted.ir))
        return Graph(to_dot(self._specialised_ir(args, kwargs)))

    def _specialised_ir(self, args, kwargs):
        error = python_call_error(self.python_function, args, kwargs)
        if error is not None:
            raise error
        fn, args, kwargs = function_and_arguments(self.python_function, args, kwargs)
        args, kwargs = tuple(map(_as_array_type, args)), {k: _as_array_type(v) for k, v in kwargs.items()}
        types_ = param_types_for(fn, args, kwargs)
        return fresh_ir(fn, types_, make_evaluator(fn.__globals__))

    # -- ahead of time, as jax.jit(f).lower / .trace / .eval_shape -----------------------
    def lower(self, *args, **kwargs) -> jax.stages.Lowered:
        """``jax.stages.Lowered`` for these arguments (``.as_text()`` gives StableHLO), as
        ``jax.jit(f).lower``: arrays or ``jax.ShapeDtypeStruct`` (also with symbolic shapes
        from ``jax.export.symbolic_shape``) stand for the traced arguments."""
        return self._stage(lambda jitted: jitted.lower, args, kwargs)

    def trace(self, *args, **kwargs) -> jax.stages.Traced:
        """``jax.stages.Traced`` for these arguments (``.jaxpr``, ``.lower()``), as
        ``jax.jit(f).trace``; arguments as for :meth:`lower`."""
        return self._stage(lambda jitted: jitted.trace, args, kwargs)

    def eval_shape(self, *args, **kwargs) -> Any:
        """The shapes and dtypes of the result (a pytree of ``jax.ShapeDtypeStruct``), as
        ``jax.jit(f).eval_shape``: traced only, nothing compiled or run; arguments as for
        :meth:`lower`."""
        return self._stage(lambda jitted: jitted.eval_shape, args, kwargs)

    def clear_cache(self) -> None:
        """Forget the traced and compiled programs, as ``jax.jit(f).clear_cache()``: the next
        call traces and compiles again (and a signature that ran eagerly is tried again)."""
        with self._lock:
            for program in self._programs.values():
                program.clear_cache()
            self._programs.clear()
            self._by_types.clear()
            self._eager.clear()
            self._static_values.clear()
            self._retrace_warned = False

    def _stage(self, method: Callable[[Any], Callable], args: tuple, kwargs: dict) -> Any:
        """``method(jitted)(*args, **kwargs)`` for the jitted program of these arguments; a
        function that needs concrete values (it would run eagerly) is a located
        ConversionError: it has no program to stage."""
        args = self._with_self(args)
        sig, wrapped_args, wrapped_kwargs = self._signature(args, kwargs)
        sig = sig.staged()
        program = self._program_for(sig, args, kwargs)
        try:
            staged = method(program)(*wrapped_args, **wrapped_kwargs)
            return staged.out if type(staged) is Changes else staged  # (eval_shape's result)
        except CONCRETE_ERRORS as e:
            raise self._not_one_program(e) from e

    def _not_one_program(self, error: Exception) -> BaseException:
        """Why tracing met Python that needs a concrete value (the decision table's error for
        a staged trace: the construct kept as Python, the function laxify could not convert,
        or the user's line)."""
        return decide(error, self, outer=False, staged=True).error

    def export(self, *args, path=None, platforms: Sequence[str] | None = None, vjp_order: int = 0, **kwargs) -> bytes:
        """Serialized ``jax.export`` bytes for these arguments (written to ``path`` if given);
        ``laxify.load`` runs them without the source. Arguments as for :meth:`lower` (a
        symbolic shape exports a shape-polymorphic program). ``platforms``: lower for these
        (``("cpu", "cuda")``; default: the current backend), as ``jax.export.export``.
        ``vjp_order``: also serialize that many orders of derivatives, so that ``jax.grad``
        works through the loaded function, as ``Exported.serialize``."""
        call_args = self._with_self(args)
        sig, args, kwargs = self._signature(call_args, kwargs)
        sig = sig.staged()
        if sig.has_static:
            raise ValueError(
                "export takes array arguments only; bind static arguments first "
                "(for example with functools.partial) so that the exported program has no Python inputs"
            )
        if sig.special & {"nnx", "split"}:
            raise ValueError(
                "export takes arrays and lists, tuples and dicts of them; a model object (a Flax NNX or "
                "Equinox module, a pytree holding functions) has a structure that a serialized program "
                "cannot hold. Export a function of the parameters: flatten the model "
                "(leaves, treedef = jax.tree_util.tree_flatten(model)), pass its array leaves as a list, "
                "and put it back together inside the function (jax.tree_util.tree_unflatten, closing "
                "over treedef and the other leaves)"
            )
        error = python_call_error(self._target, call_args, kwargs)
        if error is not None:
            raise error
        # A program of its own, traced without run-time warnings (host callbacks, which a
        # serialized program cannot hold) and without its report.
        program = Program(
            self._traceable(self.converted(), checks=self.checks),
            exporting=True,
            donate_argnums=self._donate,
            **self._jit_options,
        )
        try:
            exported = jax.export.export(program.without_report(), platforms=platforms)(*args, **kwargs)
        except CONCRETE_ERRORS as e:
            raise self._not_one_program(e) from e
        try:
            data = bytes(exported.serialize(vjp_order=vjp_order))
        except ImportError as e:
            raise ImportError(f"{e}: install it with `pip install flatbuffers`") from None
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

    def __repr__(self) -> str:
        return f"<laxify.to_static {self.__qualname__}>"


class _ArrayType:
    """What ``runtime.signature.type_of`` reads of an array (its ``aval``, shape and dtype),
    for a ``jax.ShapeDtypeStruct`` argument of ``ir``/``explain``."""

    __slots__ = ("aval", "shape", "dtype", "weak_type")

    def __init__(self, spec: jax.ShapeDtypeStruct):
        self.aval, self.shape, self.dtype, self.weak_type = spec, spec.shape, spec.dtype, spec.weak_type


def _as_array_type(value: Any) -> Any:
    return _ArrayType(value) if isinstance(value, jax.ShapeDtypeStruct) else value


def _strip_decorators(code: str) -> tuple[str, int]:
    """``code`` from its ``def`` line on, and how many decorator lines came before it."""
    lines = code.splitlines(keepends=True)
    k = 0
    while k < len(lines) and lines[k].lstrip().startswith("@"):
        k += 1
    return "".join(lines[k:]), k


@overload
def to_static(
    fn: Callable[..., Any],
    /,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Iterable[str] = (),
    fallback: Literal["warn", "error", "silent"] = "warn",
    strict: bool = False,
    donate_argnums: int | Sequence[int] = (),
    checks: bool = True,
    **jit_options: Any,
) -> StaticFunction: ...


@overload
def to_static(
    fn: None = None,
    /,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Iterable[str] = (),
    fallback: Literal["warn", "error", "silent"] = "warn",
    strict: bool = False,
    donate_argnums: int | Sequence[int] = (),
    checks: bool = True,
    **jit_options: Any,
) -> Callable[[Callable[..., Any]], StaticFunction]: ...


def to_static(fn: Callable | None = None, **options) -> StaticFunction | Callable[[Callable[..., Any]], StaticFunction]:
    """Convert ``fn`` to one static jax.lax program, run with ``jax.jit``.

    Use bare (``@to_static``) or with options (``@to_static(static_argnums=1)``). Options:
    ``static_argnums``/``static_argnames`` (as ``jax.jit``), ``fallback="warn"|"error"|"silent"``
    (``strict=True`` is ``fallback="error"``), ``donate_argnums``, ``checks`` (``True`` by default: asserts on
    traced values are checked at run time, as Python checks them; ``False`` turns that off, as
    ``python -O`` does), and other ``jax.jit`` keywords, passed through.
    """
    if fn is None:
        return lambda f: StaticFunction(f, **options)
    return StaticFunction(fn, **options)


def load(path_or_bytes: str | os.PathLike | bytes | bytearray) -> Callable[..., Any]:
    """Run a program saved by ``StaticFunction.export``: returns a callable on arrays (``jax.grad``
    works through it up to the ``vjp_order`` it was exported with)."""
    data = path_or_bytes
    if not isinstance(data, (bytes, bytearray)):
        with open(data, "rb") as f:
            data = f.read()
    try:
        exported = jax.export.deserialize(bytearray(data))
    except ImportError as e:
        raise ImportError(f"{e}: install it with `pip install flatbuffers`") from None
    if "BoundedList" not in str(exported.out_tree):
        return exported.call

    def call(*args, **kwargs):
        # A list a `max_iters` loop appended to: its first `count` rows, as `to_static` gives it.
        return materialized(exported.call(*args, **kwargs))

    return call
