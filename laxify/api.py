"""The public decorator ``to_static``, ``convert`` and ``do_not_convert``."""

from __future__ import annotations

import functools
import inspect
import linecache
import os
import threading
import types
import weakref
import warnings
from typing import Any, Callable, Iterable, Literal, Sequence, overload

import jax
import numpy as np

from laxify.conversion import Converted, convert_function, fresh_ir
from laxify.diff import Diff
from laxify.explain import Explanation, explain
from laxify.graph import Graph, to_dot
from laxify.split import SplitRunner
from laxify.fallback import (
    CONCRETE_ERRORS,
    fallback_at,
    fallback_error,
    located_concrete_error,
    located_trace_error,
    about_a_traced_value,
    raised_while_tracing,
    warn_value_fallback,
    restoring_shared_names,
    warn_at_user_code,
    warn_fallback,
    warn_unconverted_eager,
)
from laxify.ir.errors import ConversionError, FallbackWarning, Location, NeedsPython, warn_at
from laxify.ir.printer import print_function
from laxify.models import Split, holds_nnx, needs_split, nnx_jit, unwrap
from laxify.runtime.checks import AssertMode, CheckedJit, ConcreteJit, with_assert_mode
from laxify.runtime.error_channel import (NeedsChecks, PathRaised, at_top, functionalizing, recorded, unflagged,
                                          without_checks)
from laxify.runtime.evaluate import make_evaluator
from laxify.runtime.lists import materialized
from laxify.runtime.int_overflow import CodedJit, Int32OverflowError, collects
from laxify.runtime.options import without_run_time_warnings
from laxify.runtime.signature import param_types_for
from laxify.runtime.writeback import Changes, writing_back, written_back
from laxify.runtime.pure_twins import pure_twin
from laxify.tracebacks import hide_own_frames
from laxify.transpiler.source import python_only_error

__all__ = ["to_static", "StaticFunction", "convert", "do_not_convert", "load"]

FALLBACK_MODES = ("warn", "error", "silent")
RETRACE_WARNING_AFTER = 8

# Argument types that are always traced: a call with only these needs no classification.
_ARRAY_TYPES = frozenset({type(jax.numpy.zeros(())), np.ndarray})

_SCALARS = (int, float, bool, complex, str, bytes, type(None))

# A call whose arguments all have these exact types is classified by their types alone (arrays
# traced, Python scalars static): later calls with the same types take the hot path.
_HOT_TYPES = _ARRAY_TYPES | frozenset(_SCALARS)


# Traced like arrays: a ShapeDtypeStruct (concrete or symbolic shape) stands for an array in
# `lower`, `trace`, `eval_shape` and `export`, as it does for jax.jit.
_ARRAYS = (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)


def _argument_kind(value: Any) -> str:
    """DESIGN §1: arrays (and pytrees holding them) are ``traced``; other hashable values are
    ``static``; an unhashable object that is no container of numbers (a model object, a
    non-frozen dataclass) is static by ``identity``. Model objects (laxify/models.py): a Flax
    NNX module is jitted by ``nnx``; a pytree with arrays and other leaves (an Equinox module)
    is ``split``: its arrays traced, the rest static."""
    if isinstance(value, _SCALARS):
        return "static"
    if isinstance(value, _ARRAYS):
        return "traced"
    if holds_nnx(value):
        return "nnx"
    leaves = jax.tree_util.tree_leaves(value)
    if any(isinstance(leaf, _ARRAYS) for leaf in leaves):
        return "split" if needs_split(value, leaves) else "traced"
    try:
        hash(value)
        return "static"
    except TypeError:
        pass
    if all(isinstance(leaf, (bool, int, float, complex)) for leaf in leaves):
        return "traced"  # a list or dict of numbers: JAX converts it
    return "identity"


class _SplitHot:
    """A hot-path entry whose signature runs split: its runner, called without the handlers
    of a jitted program (nothing is traced there; its errors are the eager run's own)."""

    __slots__ = ("runner",)

    def __init__(self, runner: Callable):
        self.runner = runner


def _static_by_type(value: Any) -> bool:
    """Whether every value of ``value``'s type is ``static`` (so its type may stand for its
    kind on the hot path): an object hashed by identity that is a pytree leaf and no array or
    Flax NNX node, such as the instance a method is called on (``model.f(x)``)."""
    return (type(value).__hash__ is object.__hash__ and not isinstance(value, _ARRAYS)
            and jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))
            and _argument_kind(value) == "static")


def _kind(value: Any, forced_static: bool) -> str:
    """``_argument_kind``, where ``static_argnums``/``static_argnames`` may force ``static``."""
    kind = _argument_kind(value)
    return "static" if forced_static and kind != "identity" else kind


_UNBOUND = object()  # no object bound: the function is not a bound method


class _ById:
    """An unhashable static argument, hashed and compared by identity."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ById) and other.value is self.value


_STATIC_KINDS = ("static", "identity")
_WRAPS = {"identity": _ById, "split": Split.of}


def _wrapped(value: Any, kind: str) -> Any:
    """``value`` as the jitted function takes it (see ``_argument_kind``)."""
    wrap = _WRAPS.get(kind)
    return value if wrap is None else wrap(value)


def _unwrapped(value: Any) -> Any:
    return value.value if isinstance(value, _ById) else unwrap(value)


def _unwrapping(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        args = tuple(map(_unwrapped, args))
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
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
    if isinstance(fn, types.BuiltinFunctionType):
        # A C function of the standard library with a pure-Python twin (bisect.bisect_left):
        # the twin, which the module documents as its equivalent, is converted.
        return pure_twin(fn) or fn
    if isinstance(fn, (types.FunctionType, types.MethodType, functools.partial, StaticFunction)):
        return fn
    method = _as_method(fn)
    if method is not None:
        return method
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, (types.FunctionType, StaticFunction)):
        # An object with a Python __call__: its bound method.
        return _as_method(fn.__call__) or fn.__call__
    return fn


def _as_method(fn: Any) -> types.MethodType | None:
    """A bound method that a library made its own way (``eqx_model.__call__`` is a pytree of
    Equinox's with ``__func__`` and ``__self__``) as a Python bound method; else ``None``."""
    if isinstance(fn, types.MethodType):
        return fn
    func, obj = getattr(fn, "__func__", None), getattr(fn, "__self__", None)
    if obj is not None and isinstance(func, (types.FunctionType, StaticFunction)):
        return types.MethodType(func, obj)
    return None


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


def _python_call_error(fn: Callable, args: tuple, kwargs: dict) -> TypeError | None:
    """The TypeError Python raises for calling ``fn`` with these arguments (missing, extra or
    unknown ones: ``f() got an unexpected keyword argument 'z'``), or ``None`` if they bind."""
    fn, args, kwargs = _function_and_arguments(fn, args, kwargs)
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    stub = types.FunctionType(_signature_stub(code), {}, code.co_name, fn.__defaults__)
    stub.__kwdefaults__ = fn.__kwdefaults__
    try:
        stub(*args, **kwargs)
    except TypeError as e:
        return e.with_traceback(None)
    return None


def _signature_stub(code: types.CodeType) -> types.CodeType:
    """A code object with ``code``'s parameters, name and qualified name, and an empty body:
    calling it binds arguments exactly as ``code`` does, and runs nothing. (Parameter names are
    identifiers read from ``code``, so the one-line ``def`` is safe to compile.)"""
    names, flags = code.co_varnames, code.co_flags
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    params = list(names[:code.co_posonlyargcount])
    if params:
        params.append("/")
    params += names[code.co_posonlyargcount:positional]
    rest = positional + keyword_only
    if flags & inspect.CO_VARARGS:
        params.append("*" + names[rest])
        rest += 1
    elif keyword_only:
        params.append("*")
    params += names[positional:positional + keyword_only]
    if flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[rest])
    namespace: dict = {}
    exec(compile(f"def stub({', '.join(params)}): pass", "<laxify signature>", "exec"), namespace)
    return namespace["stub"].__code__.replace(co_name=code.co_name, co_qualname=code.co_qualname)


def convert(fn: Callable, *, checks: bool = False) -> Callable:
    """The converted, un-jitted Python function: composable with ``jax.jit``/``grad``/``vmap``.

    Takes functions, lambdas, bound methods, ``functools.partial`` objects, objects whose class
    defines ``__call__`` (their bound ``__call__`` is converted), and ``staticmethod`` /
    ``classmethod`` objects (converted inside, same kind returned). ``checks=True``: an
    ``assert`` on a traced value becomes a ``checkify.check``, for the caller to functionalize
    with ``jax.experimental.checkify.checkify``."""
    if isinstance(fn, StaticFunction):
        fn = fn._unconverted()
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(convert(fn.__func__, checks=checks))
    if checks:
        return with_assert_mode(convert(fn), AssertMode(checks=True))
    target = _callable_target(fn, "laxify.convert")
    lazy = python_only_error(_function_and_arguments(target, (), {})[0])
    if lazy is not None:
        raise lazy
    return _convert_callable(target)


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


def _returning_arrays(fn: Callable, inner: Callable) -> Callable:
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
                    f"({jax.dtypes.canonicalize_dtype(np.int64).name}) cannot hold", where,
                    "Enable 64-bit integers before any JAX call (jax.config.update(\"jax_enable_x64\", True)), "
                    "or compute it as a float.")
            made = (" made from a traced value (its text shows the tracer where eager Python writes "
                    "the value's digits)" if isinstance(leaf, (str, bytes)) else "")
            raise NeedsPython(
                f"{name} returns a Python {type(leaf).__name__}{made}, and one XLA program returns only "
                f"arrays, numbers and strings made from Python values", where,
                f"Return arrays and numbers only (build the {type(leaf).__name__} from the results "
                f"where the function is called), or call it unconverted.")
        if texts:
            out = jax.tree_util.tree_unflatten(structure, [
                leaf if isinstance(leaf, _RESULT_LEAVES) else _StaticText(leaf) for leaf in leaves])
        return out

    return run


class StaticFunction:
    """A function converted by laxify and run under ``jax.jit``.

    Arrays are traced; Python scalars, strings, ``None`` and other hashable values are static.
    """

    def __init__(self, fn: Callable, *, static_argnums=(), static_argnames=(), fallback: str = "warn",
                 strict: bool = False, donate_argnums=(), checks: bool = False, **jit_options):
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
        self.checks = checks  # asserts on traced values are checked with checkify
        static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
        # A bound method runs as its function with the object as first argument, an argument
        # like any other: a model's parameters are traced, not baked into the program.
        self._self: Any = _UNBOUND
        self._target = fn  # what is converted and jitted
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, (types.FunctionType, StaticFunction)):
            self._self, self._target = fn.__self__, fn.__func__
            static_argnums = tuple(i + 1 for i in static_argnums)
            donate_argnums = tuple(i + 1 for i in donate_argnums)
        # Calls may take the hot path unless a bound object is one that is not a static leaf
        # (a plain object: hashable and no pytree, so it stays static).
        self._hot = True
        if self._self is not _UNBOUND:
            leaf = jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(self._self))
            self._hot = leaf and _kind(self._self, 0 in static_argnums) == "static"
        # The function as written, called when it runs eagerly (with the object first if bound).
        self._plain = self._target.python_function if isinstance(self._target, StaticFunction) else self._target
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset(
            (static_argnames,) if isinstance(static_argnames, str) else static_argnames)
        self._donate = donate_argnums
        self._jit_options = jit_options
        self._converted_fn: Callable | None = None
        self._jitted: dict[tuple, Callable] = {}
        self._checked_keys: set[tuple] = set()  # programs that report run-time errors
        self._coded_keys: set[tuple] = set()  # programs that return an int32 overflow code
        self._by_types: dict[Any, tuple] = {}  # argument types -> (jitted, jit cache key)
        # Input signatures that run eagerly, and what runs: the function as written, or (for
        # value-dependent Python met in converted code) the converted function, un-jitted.
        self._eager: dict[tuple, Callable] = {}
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

    def _segmented(self, lines) -> Callable | None:
        """The converted code with segments around the statements at ``lines`` (laxify/split.py,
        runtime/segments.py), or None where none can be made."""
        try:
            return self._converted.segmented(self._inner, lines)
        except (SyntaxError, ValueError, TypeError):  # (a form the grouping does not know: none)
            return None

    def _split_runner(self, located: ConversionError, warn: bool, kept: bool = False) -> SplitRunner:
        fn = self._function()
        return SplitRunner(fn, located, self._inner, warn, kept=kept,
                           variant=self._segmented if fn is not self._plain else None)

    def _convert(self) -> Callable:
        """The converted function, or the function as written (with a warning) when it has no
        source that laxify can convert."""
        try:
            return _convert_callable(self._target, locate_fallbacks=False)
        except ConversionError as e:
            if self.fallback == "error":
                raise
            self._no_source = e
            if self.fallback == "warn":
                warn_at_user_code(f"{e}\nThe function runs unconverted.")
            return self._plain

    # -- calling ---------------------------------------------------------------------
    def _with_self(self, args: tuple) -> tuple:
        return args if self._self is _UNBOUND else (self._self, *args)

    def _prepare(self, args, kwargs) -> tuple[tuple, tuple, dict]:
        """The jit cache key — (static positions, static names[, kinds that need wrapping]) —
        and the arguments as the jitted function takes them (see ``_argument_kind``)."""
        kinds = [_kind(a, i in self._static_argnums) for i, a in enumerate(args)]
        named = {k: _kind(v, k in self._static_argnames) for k, v in kwargs.items()}
        nums = tuple(i for i, kind in enumerate(kinds) if kind in _STATIC_KINDS)
        names = tuple(sorted(k for k, kind in named.items() if kind in _STATIC_KINDS))
        special = frozenset(kind for kind in (*kinds, *named.values()) if kind not in ("static", "traced"))
        if not special:
            return (nums, names), args, kwargs
        args = tuple(map(_wrapped, args, kinds))
        kwargs = {k: _wrapped(v, named[k]) for k, v in kwargs.items()}
        return (nums, names, special), args, kwargs

    def _jit_for(self, key: tuple) -> Callable:
        jitted = self._jitted.get(key)
        if jitted is None:
            fn = _unwrapping(self._function()) if len(key) == 3 else self._function()
            # An argument holding a Flax NNX module: nnx.jit traces its state and writes back
            # what the function changes on it.
            checked = self.checks or key in self._checked_keys
            jit = (nnx_jit if len(key) == 3 and "nnx" in key[2] else CheckedJit if checked
                   else CodedJit if key in self._coded_keys else jax.jit)
            fn = self._traceable(fn, self.checks)
            if jit is jax.jit:
                fn = self._noting_checks(fn, key)
            if key[0] or key[1]:
                fn = self._noting_static(fn, key)
            fn = self._writing_back(fn)
            with self._lock:
                jitted = self._jitted.get(key)
                if jitted is None:
                    jitted = jit(fn, static_argnums=key[0], static_argnames=key[1],
                                 donate_argnums=self._donate, **self._jit_options)
                    if jit is CheckedJit:
                        jitted.eager_on_overflow = True
                    self._jitted[key] = jitted
        return jitted

    def _writing_back(self, fn: Callable) -> Callable:
        """``fn`` returning, with its result, what it changed in place in its list and dict
        arguments (runtime/writeback.py): the caller's objects get it after the call
        (``written_back``), as Python's would. Decided while tracing: a function that changes
        no argument returns its result as it is."""
        code = getattr(self._inner, "__code__", None)
        names = code.co_varnames[:code.co_argcount] if code is not None else ()
        return writing_back(fn, names)

    def _noting_checks(self, fn: Callable, key: tuple) -> Callable:
        """``fn`` that stops its trace when it recorded a run-time check (a ``raise`` under
        traced control flow): the program of ``key`` is then made again, functionalized by
        checkify (``CheckedJit``), and the caller runs that one. A function without such a
        check keeps the plain program and pays nothing."""

        # Held weakly: JAX's cache of traces holds `run`, which must not keep this object (and
        # the user's function and code) alive after the user has dropped them.
        owner = weakref.ref(self)

        # A trace whose int arithmetic gave overflow codes (runtime/int_overflow.py), or whose
        # every check is a `raise` of the user's that the function's `raised` flag shows
        # (error_channel.raise_flags), is made again as a program that returns the code and
        # the flag (CodedJit); one with other checks, functionalized by checkify (CheckedJit).
        codes: list = []
        flags: list = []
        collecting = collects(fn, codes, flags)

        @functools.wraps(fn)
        def run(*args, **kwargs):
            before, unflagged_before = recorded(), unflagged()
            codes.clear()
            flags.clear()
            with functionalizing():
                out = collecting(*args, **kwargs)
            checked = recorded() != before and (unflagged() != unflagged_before or not flags)
            if checked or codes or flags:
                this = owner()
                if this is not None:
                    with this._lock:
                        (this._checked_keys if checked else this._coded_keys).add(key)
                        this._jitted.pop(key, None)
                        this._by_types.clear()
                raise NeedsChecks()
            return out

        return run

    def _traceable(self, fn: Callable, checks: bool) -> Callable:
        """``fn`` with its asserts checked or not, the shared names a fallback re-runs the
        assignments of restored (see ``restoring_shared_names``), and its results checked to
        be what one XLA program can return."""
        fn = _returning_arrays(fn, self._inner)
        return restoring_shared_names(with_assert_mode(fn, AssertMode(checks, self.fallback)), self._plain)

    def _jit_checked(self, key: tuple, args: tuple, kwargs: dict) -> Callable:
        """``_jit_for(key)``; arguments that do not fit the function (too many, missing, an
        unknown keyword) are Python's own TypeError, not jax.jit's complaint about the static
        arguments they made."""
        try:
            return self._jit_for(key)
        except ValueError:
            error = _python_call_error(self._target, args, kwargs)
            if error is not None:
                raise error from None
            raise

    def _noting_static(self, fn: Callable, key: tuple) -> Callable:
        """``fn`` noting its static argument values each time it is traced (a new value is a
        new trace: see ``_note_static``); calls of programs already compiled cost nothing."""

        @functools.wraps(fn)
        def run(*args, **kwargs):
            self._note_static(key, args, kwargs)
            return fn(*args, **kwargs)

        return run

    def _note_static(self, key, args, kwargs) -> None:
        try:
            values = (tuple((i, args[i]) for i in key[0]), tuple((k, kwargs[k]) for k in key[1]))
            self._static_values.add(values)
        except (TypeError, IndexError, KeyError):
            return
        if len(self._static_values) > RETRACE_WARNING_AFTER and not self._retrace_warned:
            self._retrace_warned = True
            code = getattr(self._inner, "__code__", None)
            changing = self._changing_arguments(code)
            which = f" `{changing[0]}` took {changing[1]} of them;" if changing else ""
            warnings.warn_explicit(
                f"{self.__qualname__} has been traced for {len(self._static_values)} distinct static "
                f"argument values;{which} each one compiles anew. Pass values that change from call "
                f"to call as arrays (jnp.asarray) so that they are traced instead.",
                FallbackWarning, code.co_filename if code else "<unknown>", code.co_firstlineno if code else 0,
            )

    def _changing_arguments(self, code) -> tuple[str, int] | None:
        """The static argument with the most distinct values seen, by its name, and how many."""
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] if code else ()
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

    def __call__(self, *args, **kwargs):
        if not kwargs:
            # Hot path: positional arrays and Python scalars, of the same types as a call
            # before (so classified alike: arrays traced, scalars static). The key is the
            # argument's type for one argument, else the tuple of their types; the stored
            # program has a bound object (a static leaf) already bound.
            n = len(args)
            hot = self._by_types.get(
                type(args[0]) if n == 1 else (type(args[0]), type(args[1])) if n == 2 else tuple(map(type, args)))
            if hot is not None:
                jitted, key = hot
                if type(jitted) is _SplitHot:  # a signature that runs split (laxify/split.py)
                    try:
                        return jitted.runner(*args)
                    except Exception as e:
                        hide_own_frames(e)
                        raise
                failed = None
                try:
                    return materialized(jitted(*args))
                except NeedsChecks:
                    pass  # traced again below, with its run-time checks
                except Int32OverflowError as e:
                    failed = e
                except CONCRETE_ERRORS as e:
                    return self._concrete_error(e, key, self._with_self(args), kwargs)
                except Exception as e:  # the user's error: shown with the user's frames only
                    if not raised_while_tracing(e):
                        hide_own_frames(e)
                        raise
                    failed = e
                if failed is not None:  # (outside the handler: eager's error is not chained to it)
                    try:
                        return self._eager_after_trace_error(failed, key, self._with_self(args), kwargs)
                    except Exception as e:  # (fallback="error", or eager's own error)
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
        key, wrapped_args, wrapped_kwargs = self._prepare(args, kwargs)
        runner = self._eager.get(key)
        if runner is not None:
            return runner(*args, **kwargs)
        jitted = self._jit_checked(key, args, kwargs)
        args, kwargs = wrapped_args, wrapped_kwargs
        if not kwargs and len(key) == 2 and self._hot:
            self._remember_types(jitted, key, args)
        failed = None
        # The program of the key; a trace that recorded a run-time check (NeedsChecks) is made
        # again with its checks, once, outside the first handler.
        for again in (False, True):
            try:
                program = self._jit_for(key) if again else jitted
                return written_back(program(*args, **kwargs), args, kwargs)
            except NeedsChecks:
                if again:
                    raise
            except Int32OverflowError as e:
                failed = e
                break
            except CONCRETE_ERRORS as e:
                return self._concrete_error(e, key, args, kwargs)
            except Exception as e:
                if not raised_while_tracing(e):
                    raise
                failed = e
                break
        # Outside the handlers: an error of the eager run is not chained to the trace's.
        return self._eager_after_trace_error(failed, key, args, kwargs)

    def _overflowed(self, error: Int32OverflowError, args: tuple, kwargs: dict):
        """A value that is a Python int in eager code passed int32 in the program on this input
        (``runtime/int_overflow.py``): eager Python gives the exact integer, with a
        FallbackWarning at the user's line (this call only: the next input may fit);
        ``fallback="error"``: the located ``OverflowError`` itself."""
        if self.fallback == "error":
            raise error
        if self.fallback == "warn":
            what = f"`{error.name}`" if error.name else "An integer"
            warn_at(f"{what} is a Python int in eager code but an int32 array in the compiled loop, and on "
                    f"this input its value passed int32's range (2**31 - 1) here: {self._inner.__qualname__} "
                    f"ran eagerly, op by op, for Python's exact integer (this call only). To keep it "
                    f"compiled, enable 64-bit integers before any JAX call "
                    f"(jax.config.update(\"jax_enable_x64\", True); pass int64 bounds), or compute it as a "
                    f"float.", FallbackWarning, error.filename, error.line)
        args = tuple(map(_unwrapped, args))
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
        try:
            return self._plain(*args, **kwargs)
        except Exception as eager_error:  # Python raises too: its error, as Python gives it
            hide_own_frames(eager_error)
            raise eager_error from None

    def _remember_types(self, jitted: Callable, key: tuple, args: tuple) -> None:
        """Let later calls with arguments of these types take the hot path."""
        if isinstance(jitted, ConcreteJit):
            jitted = jitted.concrete  # hot-path arguments are concrete arrays and Python scalars
        if self._self is not _UNBOUND:
            if type(jitted) is _SplitHot:
                jitted.runner, args = functools.partial(jitted.runner, self._self), args[1:]
            else:
                jitted, args = functools.partial(jitted, self._self), args[1:]
        if not all(type(a) in _HOT_TYPES or _static_by_type(a) for a in args):
            return
        n = len(args)
        self._by_types[type(args[0]) if n == 1 else tuple(map(type, args))] = (jitted, key)

    def _remember_split(self, runner: Callable, key: tuple, args: tuple, kwargs: dict) -> None:
        """Let later calls of a signature that runs split, with arguments of these types, take
        the hot path (the split run's own cost per call is the issue-25 benchmark's concern)."""
        if isinstance(runner, SplitRunner) and not kwargs and len(key) == 2 and self._hot:
            self._remember_types(_SplitHot(runner.concrete), key, args)

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
        return self._plain(*args, **kwargs)

    def _concrete_error(self, error: Exception, key, args, kwargs):
        """A traced value reached Python code that needs a concrete one: fall back or explain."""
        inner = self._inner
        outer = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))
        runner = self._plain
        if self._no_source is not None:
            # Not converted at all (no source): like a construct kept as Python, it runs eagerly.
            if outer:
                raise located_concrete_error(error, inner, self._no_source) from error
            if self.fallback == "warn":
                warn_unconverted_eager(error, inner, self._no_source)
        else:
            found = fallback_at(self._converted.conversion, error)
            if found is None:
                # Value-dependent Python on the user's line (`int(x)` of a traced float, a traced
                # index into a Python list, ...): what eager Python runs, the function runs
                # eagerly, said once at that line; refused where it cannot run eagerly.
                located = located_concrete_error(error, inner)
                if self.fallback == "error" or outer:
                    raise located from error
                # The converted code itself, eagerly: Python decides each `if`/`while` on
                # concrete values, and laxify's meaning of the user's code holds (`x[i] = v` on
                # a JAX array updates it, as on a NumPy array). Split (laxify/split.py): each
                # loop runs as a compiled program of its own where it can; the FallbackWarning
                # after the first run says which.
                runner = self._split_runner(located, self.fallback == "warn")
            else:
                if self.fallback == "error" or outer:
                    raise fallback_error(found, inner, outer) from error
                if self._converted_fn is not self._plain:
                    # Split as the value fallback: the converted code, loops compiled apart.
                    kept = fallback_error(found, inner, False)
                    runner = self._split_runner(kept, self.fallback == "warn", kept=True)
                elif self.fallback == "warn":
                    warn_fallback(found, inner)
        self._eager[key] = runner
        self._by_types.clear()
        self._remember_split(runner, key, args, kwargs)
        args = tuple(map(_unwrapped, args))
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
        return runner(*args, **kwargs)

    def _eager_after_trace_error(self, error: Exception, key, args, kwargs):
        """An error other than laxify's own stopped the trace (JAX refused a traced value where
        Python needs a concrete one: a traced slice bound, iteration over a traced scalar; or
        the user's Python raised on values only a trace has): eager Python decides, as it
        would for the function as written. Its value, with one FallbackWarning at the line
        where the trace stopped, or its own error (then no warning, and no eager cache entry).
        ``fallback="error"`` and an outer transformation: the located ``ConversionError`` when
        JAX's error is about a traced value, else the error as raised. An int32 overflow of a
        Python int (:meth:`_overflowed`) runs eagerly for this call only."""
        if isinstance(error, Int32OverflowError):
            return self._overflowed(error, args, kwargs)
        inner = self._inner
        outer = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))
        if self.fallback == "error" or outer:
            if about_a_traced_value(error):
                raise located_trace_error(error, inner) from error
            raise error
        located = located_trace_error(error, inner)
        # Split like the value fallback (laxify/split.py): loops run compiled where they can.
        runner = (self._plain if self._no_source is not None
                  else self._split_runner(located, warn=False))
        args = tuple(map(_unwrapped, args))
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
        try:
            result = runner(*args, **kwargs)
        except Exception as eager_error:  # Python raises too: its error, as Python gives it
            hide_own_frames(eager_error)
            raise eager_error from None
        if self.fallback == "warn":
            if isinstance(runner, SplitRunner):
                runner.warn()
            else:
                warn_value_fallback(located, inner)
        self._eager[key] = runner
        self._by_types.clear()
        self._remember_split(runner, key, args, kwargs)
        return result

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
        runner = self._eager.get(self._prepare(self._with_self(args), kwargs)[0])
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
        error = _python_call_error(self.python_function, args, kwargs)
        if error is not None:
            raise error
        fn, args, kwargs = _function_and_arguments(self.python_function, args, kwargs)
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
        return self._stage(lambda jitted: getattr(jitted, "checked", jitted).trace, args, kwargs)

    def eval_shape(self, *args, **kwargs) -> Any:
        """The shapes and dtypes of the result (a pytree of ``jax.ShapeDtypeStruct``), as
        ``jax.jit(f).eval_shape``: traced only, nothing compiled or run; arguments as for
        :meth:`lower`."""
        return self._stage(lambda jitted: getattr(jitted, "plain", jitted).eval_shape, args, kwargs)

    def clear_cache(self) -> None:
        """Forget the traced and compiled programs, as ``jax.jit(f).clear_cache()``: the next
        call traces and compiles again (and a signature that ran eagerly is tried again)."""
        with self._lock:
            for jitted in self._jitted.values():
                for program in {jitted, *(getattr(jitted, name, jitted)
                                          for name in ("plain", "plain_checked", "flagged", "checked", "coded"))}:
                    clear = getattr(program, "clear_cache", None)
                    if clear is not None:
                        clear()
            self._jitted.clear()
            self._by_types.clear()
            self._eager.clear()
            self._static_values.clear()
            self._retrace_warned = False

    def _stage(self, method: Callable[[Any], Callable], args: tuple, kwargs: dict) -> Any:
        """``method(jitted)(*args, **kwargs)`` for the jitted program of these arguments; a
        function that needs concrete values (it would run eagerly) is a located
        ConversionError: it has no program to stage."""
        args = self._with_self(args)
        key, wrapped_args, wrapped_kwargs = self._prepare(args, kwargs)
        jitted = self._jit_checked(key, args, kwargs)
        try:
            try:
                staged = method(jitted)(*wrapped_args, **wrapped_kwargs)
            except NeedsChecks:
                staged = method(self._jit_for(key))(*wrapped_args, **wrapped_kwargs)
            return staged.out if type(staged) is Changes else staged  # (eval_shape's result)
        except CONCRETE_ERRORS as e:
            raise self._not_one_program(e) from e

    def _not_one_program(self, error: Exception) -> ConversionError:
        """Why tracing met Python that needs a concrete value: the construct kept as Python
        (at its line), the function laxify could not convert, or the user's line."""
        if self._no_source is not None:
            return located_concrete_error(error, self._inner, self._no_source)
        found = fallback_at(self._converted.conversion, error)
        if found is None:
            return located_concrete_error(error, self._inner)
        return fallback_error(found, self._inner, outer=False)

    def export(self, *args, path=None, platforms: Sequence[str] | None = None, vjp_order: int = 0,
               **kwargs) -> bytes:
        """Serialized ``jax.export`` bytes for these arguments (written to ``path`` if given);
        ``laxify.load`` runs them without the source. Arguments as for :meth:`lower` (a
        symbolic shape exports a shape-polymorphic program). ``platforms``: lower for these
        (``("cpu", "cuda")``; default: the current backend), as ``jax.export.export``.
        ``vjp_order``: also serialize that many orders of derivatives, so that ``jax.grad``
        works through the loaded function, as ``Exported.serialize``."""
        call_args = self._with_self(args)
        key, args, kwargs = self._prepare(call_args, kwargs)
        if key[0] or key[1]:
            raise ValueError(
                "export takes array arguments only; bind static arguments first "
                "(for example with functools.partial) so that the exported program has no Python inputs"
            )
        if len(key) == 3 and key[2] & {"nnx", "split"}:
            raise ValueError(
                "export takes arrays and lists, tuples and dicts of them; a model object (a Flax NNX or "
                "Equinox module, a pytree holding functions) has a structure that a serialized program "
                "cannot hold. Export a function of the parameters: flatten the model "
                "(leaves, treedef = jax.tree_util.tree_flatten(model)), pass its array leaves as a list, "
                "and put it back together inside the function (jax.tree_util.tree_unflatten, closing "
                "over treedef and the other leaves)")
        error = _python_call_error(self._target, call_args, kwargs)
        if error is not None:
            raise error
        # A program of its own, traced without run-time warnings (host callbacks, which a
        # serialized program cannot hold) and without checkify checks.
        fn = without_run_time_warnings(_without_checks(self._traceable(self._function(), checks=False)))
        jitted = jax.jit(fn, donate_argnums=self._donate, **self._jit_options)
        try:
            exported = jax.export.export(jitted, platforms=platforms)(*args, **kwargs)
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


def _without_checks(fn: Callable) -> Callable:
    """``fn`` traced without run-time checks of ``raise`` (see ``error_channel.without_checks``)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with without_checks():
            return fn(*args, **kwargs)

    return run


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
    fn: Callable[..., Any], /, *, static_argnums: int | Sequence[int] = (),
    static_argnames: str | Iterable[str] = (), fallback: Literal["warn", "error", "silent"] = "warn",
    strict: bool = False, donate_argnums: int | Sequence[int] = (), checks: bool = False, **jit_options: Any,
) -> StaticFunction: ...


@overload
def to_static(
    fn: None = None, /, *, static_argnums: int | Sequence[int] = (),
    static_argnames: str | Iterable[str] = (), fallback: Literal["warn", "error", "silent"] = "warn",
    strict: bool = False, donate_argnums: int | Sequence[int] = (), checks: bool = False, **jit_options: Any,
) -> Callable[[Callable[..., Any]], StaticFunction]: ...


def to_static(fn: Callable | None = None, **options) -> StaticFunction | Callable[[Callable[..., Any]], StaticFunction]:
    """Convert ``fn`` to one static jax.lax program, run with ``jax.jit``.

    Use bare (``@to_static``) or with options (``@to_static(static_argnums=1)``). Options:
    ``static_argnums``/``static_argnames`` (as ``jax.jit``), ``fallback="warn"|"error"|"silent"``
    (``strict=True`` is ``fallback="error"``), ``donate_argnums``, ``checks`` (asserts on traced
    values are checked), and other ``jax.jit`` keywords, passed through.
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
