"""The public decorator ``to_static``, ``convert`` and ``do_not_convert``."""

from __future__ import annotations

import functools
import inspect
import threading
import types
import warnings
from typing import Any, Callable

import jax
import numpy as np

from laxify.conversion import Converted, convert_function, fresh_ir
from laxify.diff import Diff
from laxify.explain import Explanation, explain
from laxify.fallback import (
    CONCRETE_ERRORS,
    fallback_at,
    fallback_error,
    located_concrete_error,
    warn_fallback,
    warn_unconverted_eager,
)
from laxify.ir.errors import ConversionError, FallbackWarning
from laxify.ir.printer import print_function
from laxify.runtime.evaluate import make_evaluator
from laxify.runtime.signature import param_types_for
from laxify.transpiler.source import python_only_error

__all__ = ["to_static", "StaticFunction", "convert", "do_not_convert", "load"]

FALLBACK_MODES = ("warn", "error", "silent")
RETRACE_WARNING_AFTER = 8

# Argument types that are always traced: a call with only these needs no classification.
_ARRAY_TYPES = frozenset({type(jax.numpy.zeros(())), np.ndarray})

_SCALARS = (int, float, bool, complex, str, bytes, type(None))


_ARRAYS = (jax.Array, np.ndarray, np.generic)


def _argument_kind(value: Any) -> str:
    """DESIGN §1: arrays (and pytrees holding them) are ``traced``; other hashable values are
    ``static``; an unhashable object that is no container of numbers (a model object, a
    non-frozen dataclass) is static by ``identity``."""
    if isinstance(value, _SCALARS):
        return "static"
    if isinstance(value, _ARRAYS):
        return "traced"
    leaves = jax.tree_util.tree_leaves(value)
    if any(isinstance(leaf, _ARRAYS) for leaf in leaves):
        return "traced"
    try:
        hash(value)
        return "static"
    except TypeError:
        pass
    if all(isinstance(leaf, (bool, int, float, complex)) for leaf in leaves):
        return "traced"  # a list or dict of numbers: JAX converts it
    return "identity"


class _ById:
    """An unhashable static argument, hashed and compared by identity."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ById) and other.value is self.value


def _unwrapping(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        args = tuple(a.value if isinstance(a, _ById) else a for a in args)
        kwargs = {k: v.value if isinstance(v, _ById) else v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return run


def do_not_convert(fn: Callable) -> Callable:
    """Leave ``fn`` as Python: ``to_static`` only jits it, converted callers do not convert it."""
    fn.__laxify_do_not_convert__ = True
    return fn


# -- what laxify can be given --------------------------------------------------------------

def _describe(value: Any) -> str:
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    text = repr(value)
    article = "an" if name[0] in "aeiou" else "a"
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({article} {name} object)"


def _callable_target(fn: Any, api: str) -> Callable:
    """The callable ``api`` converts for ``fn``: ``fn`` itself, or the bound ``__call__`` of an
    object that defines one. Non-callables and classes are a TypeError saying what to pass."""
    if isinstance(fn, type):
        raise TypeError(
            f"{api} expects a function, got the class {fn.__qualname__}. Decorate one of its "
            f"methods (for example __call__), or pass an instance whose class defines __call__.")
    if not callable(fn):
        raise TypeError(
            f"{api} expects a function, got {_describe(fn)}. Pass a Python function (def or "
            f"lambda), a method, or an object whose class defines __call__.")
    if isinstance(fn, (types.FunctionType, types.MethodType, functools.partial, StaticFunction,
                       types.BuiltinFunctionType)):
        return fn
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, (types.FunctionType, StaticFunction)):
        return fn.__call__  # an object with a Python __call__: its bound method
    return fn


def _convert_callable(fn: Callable, locate_fallbacks: bool = True) -> Callable:
    """``fn`` converted: Python functions, bound methods (bound to the same object), partials
    (with the same arguments); anything else is a ConversionError saying why."""
    if isinstance(fn, StaticFunction):
        fn = fn.python_function
    if getattr(fn, "__laxify_do_not_convert__", False):
        return fn
    if isinstance(fn, types.MethodType):
        return types.MethodType(_convert_callable(fn.__func__, locate_fallbacks), fn.__self__)
    if isinstance(fn, functools.partial):
        return functools.partial(_convert_callable(fn.func, locate_fallbacks), *fn.args, **fn.keywords)
    return convert_function(fn).bind(fn, locate_fallbacks)


def _function_and_arguments(fn: Callable, args: tuple, kwargs: dict):
    """The plain function under bound methods and partials, with the arguments they bind."""
    if isinstance(fn, StaticFunction):
        return _function_and_arguments(fn.python_function, args, kwargs)
    if isinstance(fn, types.MethodType):
        return _function_and_arguments(fn.__func__, (fn.__self__, *args), kwargs)
    if isinstance(fn, functools.partial):
        return _function_and_arguments(fn.func, (*fn.args, *args), {**fn.keywords, **kwargs})
    return fn, args, kwargs


def convert(fn: Callable) -> Callable:
    """The converted, un-jitted Python function: composable with ``jax.jit``/``grad``/``vmap``.

    Takes functions, lambdas, bound methods, ``functools.partial`` objects, objects whose class
    defines ``__call__`` (their bound ``__call__`` is converted), and ``staticmethod`` /
    ``classmethod`` objects (converted inside, same kind returned)."""
    if isinstance(fn, StaticFunction):
        fn = fn._unconverted()
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(convert(fn.__func__))
    target = _callable_target(fn, "laxify.convert")
    lazy = python_only_error(_function_and_arguments(target, (), {})[0])
    if lazy is not None:
        raise lazy
    return _convert_callable(target)


class StaticFunction:
    """A function converted by laxify and run under ``jax.jit``.

    Arrays are traced; Python scalars, strings, ``None`` and other hashable values are static.
    """

    def __init__(self, fn: Callable, *, static_argnums=(), static_argnames=(), fallback: str = "warn",
                 strict: bool = False, donate_argnums=(), **jit_options):
        if strict:
            fallback = "error"
        if fallback not in FALLBACK_MODES:
            raise ValueError(f"fallback must be one of {FALLBACK_MODES}, got {fallback!r}")
        # `@to_static` over `@staticmethod`/`@classmethod`: convert the function, bind as they do.
        self._binding = type(fn) if isinstance(fn, (staticmethod, classmethod)) else None
        if self._binding is not None:
            fn = fn.__func__
        fn = _callable_target(fn, "laxify.to_static")
        functools.update_wrapper(self, fn)
        if not isinstance(getattr(self, "__qualname__", None), str):
            self.__qualname__ = self.__name__ = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        self.python_function = fn
        self.fallback = fallback
        self._static_argnums = frozenset(
            (static_argnums,) if isinstance(static_argnums, int) else static_argnums)
        self._static_argnames = frozenset(
            (static_argnames,) if isinstance(static_argnames, str) else static_argnames)
        self._donate = donate_argnums
        self._jit_options = jit_options
        self._converted_fn: Callable | None = None
        self._jitted: dict[tuple, Callable] = {}
        self._by_types: dict[tuple, Callable] = {}  # argument types (all arrays) -> jitted
        self._eager: set[tuple] = set()
        self._static_values: set = set()
        self._retrace_warned = False
        self._no_source: ConversionError | None = None
        self._inner = _function_and_arguments(fn, (), {})[0]  # under bound methods and partials
        # A generator or coroutine function runs as Python: jax.jit cannot return its result.
        self._python_only = python_only_error(self._inner)
        self._python_only_warned = False
        self._lock = threading.RLock()

    # -- conversion ------------------------------------------------------------------
    def _unconverted(self) -> Any:
        """The function as given (a ``staticmethod``/``classmethod`` wrapped again)."""
        return self._binding(self.python_function) if self._binding else self.python_function

    @property
    def _converted(self) -> Converted:
        return convert_function(self._inner)

    def _function(self) -> Callable:
        """The converted function (converted once, also when threads call first at once)."""
        fn = self._converted_fn
        if fn is None:
            with self._lock:
                if self._converted_fn is None:
                    self._converted_fn = self._convert()
                fn = self._converted_fn
        return fn

    def _convert(self) -> Callable:
        """The converted function, or the function as written (with a warning) when it has no
        source that laxify can convert."""
        try:
            return _convert_callable(self.python_function, locate_fallbacks=False)
        except ConversionError as e:
            if self.fallback == "error":
                raise
            self._no_source = e
            if self.fallback == "warn":
                warnings.warn(f"{e}\nThe function runs unconverted.", FallbackWarning, stacklevel=5)
            return self.python_function

    # -- calling ---------------------------------------------------------------------
    def _key(self, args, kwargs) -> tuple:
        """(static positions, static names, whether some static value is held by identity)."""
        kinds = [(i in self._static_argnums, _argument_kind(a)) for i, a in enumerate(args)]
        nums = tuple(i for i, (forced, kind) in enumerate(kinds) if forced or kind != "traced")
        named = {k: (k in self._static_argnames, _argument_kind(v)) for k, v in kwargs.items()}
        names = tuple(sorted(k for k, (forced, kind) in named.items() if forced or kind != "traced"))
        by_id = any(kind == "identity" for _, kind in kinds) or any(kind == "identity" for _, kind in named.values())
        return (nums, names, True) if by_id else (nums, names)

    def _jit_for(self, key: tuple) -> Callable:
        jitted = self._jitted.get(key)
        if jitted is None:
            fn = _unwrapping(self._function()) if len(key) == 3 else self._function()
            with self._lock:
                jitted = self._jitted.get(key)
                if jitted is None:
                    jitted = jax.jit(fn, static_argnums=key[0], static_argnames=key[1],
                                     donate_argnums=self._donate, **self._jit_options)
                    self._jitted[key] = jitted
        return jitted

    def _note_static(self, key, args, kwargs) -> None:
        try:
            values = (tuple(args[i] for i in key[0]), tuple(kwargs[k] for k in key[1]))
            self._static_values.add(values)
        except TypeError:
            return
        if len(self._static_values) > RETRACE_WARNING_AFTER and not self._retrace_warned:
            self._retrace_warned = True
            code = getattr(self._inner, "__code__", None)
            warnings.warn_explicit(
                f"{self.__qualname__} has been traced for {len(self._static_values)} distinct static "
                f"argument values; each one compiles anew. Pass values that change from call to call "
                f"as arrays (jnp.asarray) so that they are traced instead.",
                FallbackWarning, code.co_filename if code else "<unknown>", code.co_firstlineno if code else 0,
            )

    def __call__(self, *args, **kwargs):
        if not kwargs:
            # Hot path: positional arrays only, the same argument types as a call before.
            jitted = self._by_types.get(tuple(map(type, args)))
            if jitted is not None:
                try:
                    return jitted(*args)
                except CONCRETE_ERRORS as e:
                    return self._concrete_error(e, ((), ()), args, kwargs)
        if self._python_only is not None:
            return self._run_as_python(args, kwargs)
        key = self._key(args, kwargs)
        if key in self._eager:
            return self.python_function(*args, **kwargs)
        if len(key) == 3:
            args = tuple(_ById(a) if _argument_kind(a) == "identity" else a for a in args)
            kwargs = {k: _ById(v) if _argument_kind(v) == "identity" else v for k, v in kwargs.items()}
        jitted = self._jit_for(key)
        if key[0] or key[1]:
            self._note_static(key, args, kwargs)
        elif not kwargs and all(type(a) in _ARRAY_TYPES for a in args):
            self._by_types[tuple(map(type, args))] = jitted
        try:
            return jitted(*args, **kwargs)
        except CONCRETE_ERRORS as e:
            return self._concrete_error(e, key, args, kwargs)

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
                f"{error.message} It runs as plain Python, eagerly, op by op, which is much slower. "
                f"{error.fix}", FallbackWarning, where.filename, where.line)
        return self.python_function(*args, **kwargs)

    def _concrete_error(self, error: Exception, key, args, kwargs):
        """A traced value reached Python code that needs a concrete one: fall back or explain."""
        inner = self._inner
        outer = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))
        if self._no_source is not None:
            # Not converted at all (no source): like a construct kept as Python, it runs eagerly.
            if outer:
                raise located_concrete_error(error, inner, self._no_source) from error
            if self.fallback == "warn":
                warn_unconverted_eager(error, inner, self._no_source)
        else:
            found = fallback_at(self._converted.conversion, error)
            if found is None:
                raise located_concrete_error(error, inner) from error
            if self.fallback == "error" or outer:
                raise fallback_error(found, inner, outer) from error
            if self.fallback == "warn":
                warn_fallback(found, inner)
        self._eager.add(key)
        self._by_types.clear()
        args = tuple(a.value if isinstance(a, _ById) else a for a in args)
        kwargs = {k: v.value if isinstance(v, _ById) else v for k, v in kwargs.items()}
        return self.python_function(*args, **kwargs)

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
        conv = self._converted.conversion
        original = conv.source.module.code_for_node(conv.source.module.body[0]) \
            if conv.source.module.body else ""
        return Diff(_strip_decorators(original), self.source, conv.source.filename)

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
        return explain(self._specialised_ir(args, kwargs), specialised=True)

    def _specialised_ir(self, args, kwargs):
        fn, args, kwargs = _function_and_arguments(self.python_function, args, kwargs)
        types_ = param_types_for(fn, args, kwargs)
        return fresh_ir(fn, types_, make_evaluator(fn.__globals__))

    def export(self, *args, path=None, **kwargs) -> bytes:
        """Serialized ``jax.export`` bytes for these arguments (written to ``path`` if given);
        ``laxify.load`` runs them without the source."""
        key = self._key(args, kwargs)
        if key[0] or key[1]:
            raise ValueError(
                "export takes array arguments only; bind static arguments first "
                "(for example with functools.partial) so that the exported program has no Python inputs"
            )
        exported = jax.export.export(self._jit_for(key))(*args, **kwargs)
        try:
            data = bytes(exported.serialize())
        except ImportError as e:
            raise ImportError(f"{e}: install it with `pip install 'laxify[export]'`") from None
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

    def lower(self, *args, **kwargs):
        """``jax.stages.Lowered`` for these arguments (``.as_text()`` gives StableHLO)."""
        return self._jit_for(self._key(args, kwargs)).lower(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<laxify.to_static {self.__qualname__}>"


def _strip_decorators(code: str) -> str:
    lines = code.splitlines(keepends=True)
    k = 0
    while k < len(lines) and lines[k].lstrip().startswith("@"):
        k += 1
    return "".join(lines[k:])


def to_static(fn: Callable | None = None, **options) -> Any:
    """Convert ``fn`` to one static jax.lax program, run with ``jax.jit``.

    Use bare (``@to_static``) or with options (``@to_static(static_argnums=1)``).
    """
    if fn is None:
        return lambda f: StaticFunction(f, **options)
    return StaticFunction(fn, **options)


def load(path_or_bytes):
    """Run a program saved by ``StaticFunction.export``: returns a callable on arrays."""
    data = path_or_bytes
    if not isinstance(data, (bytes, bytearray)):
        with open(data, "rb") as f:
            data = f.read()
    exported = jax.export.deserialize(bytearray(data))
    return exported.call
