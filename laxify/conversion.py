"""Conversion of one function, end to end, with a cache keyed on the code object.

source → converters → IR → passes (verify, types, static folding, DCE) → lowering → code.
The code object is shared by every function made from the same ``def``; each function
object gets its own closure cells. The cache holds code objects by identity and weakly:
CPython compares code objects by value (ignoring the file name), and a function redefined
in a loop or a re-run notebook cell must be freed with its conversion.

An optional on-disk cache (``LAXIFY_CACHE_DIR`` or :func:`set_cache_dir`) keeps conversions
across processes; see :mod:`laxify._disk_cache`.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import threading
import types
import weakref
from dataclasses import dataclass

from laxify.ir import Function
from laxify.ir.errors import ConversionError, FallbackWarning, Location, NeedsPython, warn_at
from laxify.ir.passes.infer_types import MergeTypeError
from laxify.ir.passes import default_passes, run_passes
from laxify.runtime.calls import set_converter
from laxify.runtime.compile import compile_lowered, make_function
from laxify.runtime.lowering import LoweredSource, SiteTable, lower_function
from laxify import _disk_cache
from laxify.runtime.options import restoring_options, with_options
from laxify.transpiler import depth
from laxify.transpiler.pipeline import Conversion, convert_source
from laxify.transpiler.recent import clear_caches as clear_texts
from laxify.transpiler.source import function_code

__all__ = ["Converted", "convert_function", "fresh_ir", "clear_cache", "set_cache_dir"]

set_cache_dir = _disk_cache.set_cache_dir


@dataclass
class Converted:
    """The result of converting one code object."""

    conversion: Conversion
    ir: Function
    lowered: LoweredSource
    code: types.CodeType
    _segmented: dict | None = None  # split-run variants, by the lines that need Python

    @property
    def source(self) -> str:
        return self.lowered.text()

    @property
    def filename(self) -> str:
        return self.conversion.source.filename

    @property
    def has_fallbacks(self) -> bool:
        """Whether some construct stays Python (and may meet a traced value)."""
        return bool(self.conversion.fallbacks)

    @property
    def pushes_loop_options(self) -> bool:
        return self.conversion.pushes_loop_options

    @functools.cached_property
    def calls_user_code(self) -> bool:
        """Whether the converted code calls functions through ``_lx.call`` (which may run a
        generator function, or a function with constructs kept as Python)."""
        return f"{self.lowered.runtime}.call(" in self.source

    def segmented(self, fn: types.FunctionType, lines) -> types.FunctionType | None:
        """The split run's variant of the converted function for ``fn``: the statements around
        those at ``lines`` (that need Python) grouped into segments, each compiled on its own in
        a split run (``runtime/segments.py``); ``None`` where none could be made."""
        key = frozenset(lines)
        made = self._segmented.get(key) if self._segmented is not None else None
        if made is None:
            sites = list(self.lowered.sites)
            code = compile_lowered(
                self.lowered,
                function_code(fn).co_freevars,
                self.conversion.source.filename,
                function_code(fn).co_qualname,
                segments_at=key,
                sites=sites,
            )
            made = (code, SiteTable(sites)) if len(sites) > len(self.lowered.sites) else (None, None)
            if self._segmented is None:
                self._segmented = {}
            self._segmented[key] = made
        code, sites = made
        if code is None:
            return None
        return self._with_options(make_function(code, self.lowered, fn, None, sites), fn)

    def bind(self, fn: types.FunctionType, locate_fallbacks: bool = True):
        """The converted function for ``fn`` (its closure cells, its loop options).
        ``to_static`` handles constructs kept as Python and JAX's errors itself
        (``locate_fallbacks=False``); elsewhere the handler at the converted function's edge
        gives them as located errors (:func:`_boundary`). The function is its own code object,
        ``__code__`` included."""
        boundary = _boundary(self, fn) if locate_fallbacks else None
        return self._with_options(make_function(self.code, self.lowered, fn, boundary), fn)

    def _with_options(self, converted: types.FunctionType, fn: types.FunctionType):
        """``converted`` under ``fn``'s loop options (a decorator's), or restoring them."""
        opts = getattr(fn, "__laxify_loop_options__", None)
        if opts is not None:
            return with_options(converted, opts)
        if self.pushes_loop_options:
            # A `return`/`break` out of a `with loop_options(...)` block skips its pop.
            return restoring_options(converted)
        return converted


# id(code) -> (weak reference to that code object, its conversion)
_CACHE: dict[int, tuple[weakref.ref, Converted]] = {}
# One conversion at a time: threads making the first call of one function at once convert it
# once. Re-entrant: a conversion may need the conversion of another function.
_LOCK = threading.RLock()


def _cached(code: types.CodeType) -> Converted | None:
    entry = _CACHE.get(id(code))
    return entry[1] if entry is not None and entry[0]() is code else None


def _remember(code: types.CodeType, converted: Converted) -> None:
    key = id(code)

    def forget(ref: weakref.ref, cache: dict = _CACHE) -> None:  # `cache` outlives module teardown
        if cache.get(key, (None,))[0] is ref:
            cache.pop(key, None)

    _CACHE[key] = (weakref.ref(code, forget), converted)


def _boundary(converted: Converted, original):
    """What an error leaving ``original``'s converted function becomes, outside ``to_static``
    (``jax.jit(laxify.convert(f))``, ``vmap``, ``grad``, eager calls): nothing can run eagerly
    there, so where ``to_static`` would fall back it is the located ``ConversionError`` that
    ``to_static(f, fallback="error")`` gives, with the same text. Called by the handler that
    ``runtime.compile`` puts around the converted body; it returns the error to raise, the
    error itself (raised as it is), or ``None`` (the function returns ``None``).

    - a construct kept as Python that met a traced value: the construct, at its line
      (``KeptPythonError``: a ``to_static`` caller catches it and falls back);
    - JAX's concrete-value errors (``TracerBoolConversionError``, ...): the located text, as
      ``NeedsPython`` (a ``ConversionError``; a ``to_static`` caller falls back on it too);
    - another error of JAX's that refuses a traced value (``x[a:b]`` with traced bounds):
      "Tracing f stopped at this line with ...", as ``to_static`` says it (the user's own
      ``raise`` stays the user's error);
    - a ``raise`` met on every path (``PathRaised``): the call returns ``None``, its result
      is never observed.

    A function called from converted code (``in_call``) leaves the last three to its caller,
    which locates them as ``to_static`` does (at the caller's line when the callee lives in
    another file); a function that holds constructs kept as Python or calls user code
    locates JAX's errors itself (``to_static`` then falls back at that line)."""
    from laxify.fallback import (
        CONCRETE_ERRORS,
        KeptPythonError,
        fallback_at,
        located_concrete_error,
        located_trace_error,
        jax_refused_a_traced_value,
        refused_by_a_c_function,
    )
    from laxify.fallback import _raised_by_laxify
    from laxify.runtime.error_channel import HandlerNeedsData, PathRaised, at_top, in_call
    from laxify.tracebacks import hide_own_frames

    keeps = converted.has_fallbacks or converted.calls_user_code

    def boundary(error: Exception):
        nested = in_call()
        if isinstance(error, PathRaised):  # a helper that raises on every input
            if nested:
                return error
            try:
                return at_top(error)
            except NeedsPython as e:
                return _chained(e, error)
        if isinstance(error, CONCRETE_ERRORS):
            if nested and not keeps:
                return error
            found = fallback_at(converted.conversion, error)
            if found is not None:
                # Where the trace stopped at something only Python decides (NeedsPython, a
                # handler that needs the data), the text of to_static(f, fallback="error"); a
                # construct kept as Python (here or in a function called) says too that an
                # outer transformation cannot run it eagerly, as it did before this handler.
                outer = nested or not isinstance(error, (NeedsPython, HandlerNeedsData))
                return _chained(KeptPythonError(found, original, outer=outer), error)
            if isinstance(error, ConversionError):
                return error
            located = located_concrete_error(error, original)
        elif (
            nested
            or isinstance(error, ConversionError)
            or type(error).__module__.startswith("laxify")
            or _raised_by_laxify(error)
            or not (jax_refused_a_traced_value(error) or refused_by_a_c_function(error, original))
        ):
            if not nested and not _raised_by_laxify(error):
                # The user's own error (a `raise` the runtime raised for them, Python's own):
                # shown with the user's frames, as to_static shows it.
                hide_own_frames(error, jax_too=False)
            return error
        else:
            located = located_trace_error(error, original)
        if located.location is None:
            return error
        reason = located.message[0].lower() + located.message[1:]
        return _chained(NeedsPython(reason, located.location, located.fix), error)

    return boundary


def _chained(new: Exception, cause: Exception) -> Exception:
    """``new``, raised for ``cause``: JAX's error stays out of the traceback shown, as JAX's own
    frames do, unless traceback filtering is off (``JAX_TRACEBACK_FILTERING=off``)."""
    import jax

    new.__cause__ = cause if getattr(jax.config, "jax_traceback_filtering", "auto") == "off" else None
    return new


def convert_function(fn: types.FunctionType) -> Converted:
    """Convert ``fn`` (cached per code object: a second conversion costs a dict lookup).
    A callable that is not a Python function is a :class:`ConversionError` saying why."""
    code = function_code(fn)
    hit = _cached(code)
    if hit is not None:
        return hit
    with _LOCK:
        hit = _cached(code)
        if hit is None:
            directory = _disk_cache.cache_dir()
            key = _disk_cache.key(fn, code) if directory is not None else None
            if key is not None:
                hit = _disk_cache.load(directory, key, fn, code, _FromDisk)
            if hit is None:
                with _depth_limit(fn, code):
                    hit = _convert(fn, code)
                if key is not None:
                    _disk_cache.store(directory, key, hit)
            _remember(code, hit)
    return hit


class _FromDisk(Converted):
    """A conversion read from the on-disk cache: the compiled code and the lowered source are
    stored; the parsed source, IR and fallbacks (for ``explain``, ``ir``, ``diff`` and the
    messages of constructs kept as Python) are made again the first time they are needed."""

    def __init__(self, fn: types.FunctionType, code: types.CodeType, lowered: LoweredSource, meta: dict):
        self.lowered = lowered
        self.code = code
        self._fn = weakref.ref(fn)
        self._meta = meta

    @functools.cached_property
    def _full(self) -> Converted:
        fn = self._fn()
        if fn is None:
            raise RuntimeError("the converted function is gone; convert it again")
        with _depth_limit(fn, fn.__code__):
            return _convert(fn, fn.__code__)

    @property
    def conversion(self) -> Conversion:  # type: ignore[override]
        return self._full.conversion

    @property
    def ir(self) -> Function:  # type: ignore[override]
        return self._full.ir

    @property
    def filename(self) -> str:
        return self._meta["filename"]

    @property
    def has_fallbacks(self) -> bool:
        return self._meta["fallbacks"]

    @property
    def pushes_loop_options(self) -> bool:
        return self._meta["pushes_loop_options"]


# CPython's limits on nesting in the code it compiles (the converted code nests a level or two
# per construct converted inside another).
_NESTING_LIMITS = ("too many levels of indentation", "too many statically nested blocks")


@contextlib.contextmanager
def _depth_limit(fn, code: types.CodeType):
    """A function nested too deeply to convert becomes a ConversionError naming it and the fix:
    a tree deeper than the conversion allows (``depth.MAX_NESTING`` levels: an expression chain such
    as ``a and b and ...`` nests one level per operand), or converted code that nests past
    CPython's limits."""
    try:
        yield
    except RecursionError:
        raise _too_deep(
            code,
            f"it holds an expression or block nested too deeply to convert "
            f"(more than about {depth.MAX_NESTING:,} levels; a chain such as "
            f"`a and b and ...` nests one level per operand)",
        ) from None
    except SyntaxError as e:
        if not any(limit in str(e.msg) for limit in _NESTING_LIMITS):
            raise
        raise _too_deep(
            code,
            f"its converted code nests more deeply than Python allows ({e.msg}); "
            f"each traced `if` or loop inside another nests a level or two",
        ) from None


def _too_deep(code: types.CodeType, why: str) -> ConversionError:
    text = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    return ConversionError(
        f"laxify cannot convert {code.co_qualname}: {why}.",
        Location(code.co_filename, code.co_firstlineno, len(text) - len(text.lstrip()), text),
        "Split the long expression or chain into several statements with intermediate variables, "
        "or replace a long `elif` chain by a lookup (index an array of values, or "
        "jax.lax.switch with a list of functions).",
    )


def _convert(fn: types.FunctionType, code: types.CodeType) -> Converted:
    """Source → IR → passes → lowered code for ``fn`` (no cache)."""
    conversion = convert_source(fn)
    ir_fn = conversion.ir
    _run_passes(ir_fn, conversion, default_passes())
    lowered = lower_function(ir_fn, conversion.source.filename)
    compiled = compile_lowered(lowered, code.co_freevars, conversion.source.filename, code.co_qualname)
    return Converted(conversion, ir_fn, lowered, compiled)


def fresh_ir(fn: types.FunctionType, param_types=None, evaluate=None) -> Function:
    """A new IR of ``fn`` typed for a signature (``param_types``) and folded accordingly."""
    with _depth_limit(fn, function_code(fn)):
        conversion = convert_source(fn)
        _run_passes(conversion.ir, conversion, default_passes(param_types, evaluate))
    return conversion.ir


def _run_passes(ir_fn: Function, conversion: Conversion, passes: list) -> None:
    """Run IR passes; a type that cannot be joined becomes a located ConversionError."""
    try:
        run_passes(ir_fn, passes)
    except MergeTypeError as e:
        span = e.op.span
        where = conversion.source.location(span.line, span.col) if span else None
        left, right = e.sides
        raise ConversionError(
            f"`{e.name}` has no common type on the two sides of this `{e.op.name}`: "
            f"{left} gives {e.error.left}, {right} gives {e.error.right} ({e.error.reason}).",
            where,
            f"Revise the code so that `{e.name}` keeps one shape, dtype kind and structure on every path.",
        ) from None


def clear_cache() -> None:
    """Forget every conversion (the next call of each function converts it again), and the
    texts parsed and compiled for them (the next conversion starts from the text)."""
    with _LOCK:
        _CACHE.clear()
    clear_texts()


def _convert_called(fn: types.FunctionType):
    """How converted code converts the user functions it calls. A failure of laxify's own
    while converting one (a bug: never the callee's fault) leaves the callee to run as
    written, with a warning that says so, rather than an exception in the user's face."""
    try:
        return convert_function(fn).bind(fn)
    except (ConversionError, RecursionError):
        raise
    except Exception as e:  # noqa: BLE001 - laxify's own failure, reported below
        code = fn.__code__
        warn_at(
            f"laxify failed to convert `{code.co_qualname}` ({type(e).__name__}: {e}), an error "
            "of laxify's own: it runs as written, as plain Python. Please report it.",
            FallbackWarning,
            code.co_filename,
            code.co_firstlineno,
        )
        raise ConversionError(f"laxify failed to convert `{code.co_qualname}`") from None


set_converter(_convert_called)
