"""What happens when a traced value reaches code that needs a concrete one: the eager
fallback of a construct kept as Python (with its warning), or a located error."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import linecache
import re
import sys
import types
import warnings

import jax

from laxify.ir.errors import ConversionError, FallbackWarning, Location, NeedsPython, warn_at
from laxify.transpiler.pipeline import Conversion
from laxify.ir.core import Span
from laxify.ir.user_code import LIBRARY_PACKAGES, names_a_traced_value, raised_by_array_library
from laxify.runtime import effects
from laxify.runtime.error_channel import ABOUT_TRACED, HandlerNeedsData
from laxify.transpiler.to_ir import Fallback

__all__ = [
    "CONCRETE_ERRORS",
    "about_a_traced_value",
    "jax_refused_a_traced_value",
    "KeptPythonError",
    "fallback_at",
    "fallback_error",
    "located_concrete_error",
    "located_trace_error",
    "refused_by_a_c_function",
    "names_a_traced_value",
    "raised_while_tracing",
    "restoring_shared_names",
    "warn_at_user_code",
    "warn_fallback",
    "warn_unconverted_eager",
    "warn_value_fallback",
]


class KeptPythonError(ConversionError):
    """Python that laxify kept (a construct, or a generator function) met a traced value in a
    function called by converted code. A ``to_static`` caller may still run eagerly: it
    catches this error and falls back (``fallback``: the construct; ``fn``: its function)."""

    def __init__(self, fallback: Fallback, fn, outer: bool):
        # Callers report it in their own messages: the construct keeps its own file.
        fallback = dataclasses.replace(fallback, filename=_filename(fallback, fn))
        error = fallback_error(fallback, fn, outer)
        super().__init__(error.message, error.location, error.fix)
        self.fallback, self.fn = fallback, fn


CONCRETE_ERRORS = (
    jax.errors.TracerBoolConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    KeptPythonError,
    NeedsPython,
    HandlerNeedsData,
)

# Code laxify runs as plain Python wherever it is called: a call returns a generator or an
# awaitable, never arrays.
_PYTHON_ONLY = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

_FIX = (
    "Rewrite the construct without that feature, or mark the argument it depends on "
    "static (static_argnums/static_argnames)."
)


def _line_location(filename: str, line: int) -> Location:
    text = linecache.getline(filename, line).rstrip("\n")
    return Location(filename, line, len(text) - len(text.lstrip()), text)


def _user_lines(error: BaseException, filename: str) -> list[int]:
    lines, tb = [], error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    return lines


def fallback_at(conversion: Conversion, error: BaseException) -> Fallback | None:
    """The construct kept as Python inside which ``error`` was raised, if any: one of
    ``conversion``'s own, one in a function it called (``KeptPythonError``), or a line of a
    generator function it called (laxify runs those as plain Python)."""
    if isinstance(error, KeptPythonError):
        return error.fallback
    if isinstance(error, NeedsPython):
        return _kept_at(conversion, error.location) or _needs_python(error)
    if isinstance(error, HandlerNeedsData):
        text = linecache.getline(error.filename, error.line)
        return Fallback(
            Span(error.line, len(text) - len(text.lstrip())),
            error.CONSTRUCT,
            error.REASON,
            error.line,
            error.filename,
            error.FIX,
        )
    lines = _user_lines(error, conversion.source.filename)
    for fb in conversion.fallbacks:
        if any(fb.span.line <= ln <= fb.end_line for ln in lines):
            return fb
    return python_only_line(error)


def _kept_at(conversion: Conversion, where: Location | None) -> Fallback | None:
    """The construct of ``conversion`` kept as Python that starts at ``where`` (its own words
    then say why it runs as Python: runtime/effects.py ``kept_effects``)."""
    if where is None or where.filename != conversion.source.filename:
        return None
    return next((fb for fb in conversion.fallbacks if fb.span.line == where.line and fb.filename is None), None)


def _needs_python(error: NeedsPython) -> Fallback:
    """The line where the trace met something only Python decides, as a fallback."""
    where = error.location
    line, col, filename = (where.line, where.col, where.filename) if where else (0, 0, None)
    return Fallback(Span(line, col), "", error.reason, line, filename, error.fix)


def python_only_line(error: BaseException) -> Fallback | None:
    """The line of a generator or coroutine function (code laxify runs as plain Python) where
    ``error`` was raised, as a fallback; ``None`` when no such function is in its traceback."""
    found, tb = None, error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_flags & _PYTHON_ONLY:
            found = tb
        tb = tb.tb_next
    if found is None:
        return None
    code, line = found.tb_frame.f_code, found.tb_lineno
    what, returns = (
        ("a generator function", "a generator")
        if code.co_flags & inspect.CO_GENERATOR
        else ("a coroutine function", "an awaitable")
    )
    return Fallback(
        Span(line, 0),
        "",
        f"it is in `{code.co_qualname}`, {what} (a call returns {returns}, not arrays, so laxify does not convert it)",
        line,
        code.co_filename,
        f"Make `{code.co_qualname}` return its values instead (collect them in a list and return "
        f"it): laxify converts such a function. Or mark the argument the line depends on static "
        f"(static_argnums/static_argnames).",
    )


def _message(fb: Fallback, fn) -> str:
    kept = (
        f"laxify kept this `{fb.construct}` as plain Python"
        if fb.construct
        else "laxify runs this line as plain Python"
    )
    # A reason with a table (both sides of a mismatch) ends the sentence with it.
    reason, _, table = fb.reason.partition("\n")
    return (
        f"{kept} because {reason.rstrip(':')}, and it depends on a traced value, so {fn.__qualname__} "
        f"cannot be one XLA program" + (f":\n{table}" if table else ".")
    )


def _filename(fb: Fallback, fn) -> str:
    return fb.filename or fn.__code__.co_filename


def fallback_error(fb: Fallback, fn, outer: bool) -> ConversionError:
    where = " Inside an outer jax transformation it cannot run eagerly either." if outer else ""
    return ConversionError(_message(fb, fn) + where, _line_location(_filename(fb, fn), fb.span.line), fb.fix or _FIX)


def warn_fallback(fb: Fallback, fn) -> None:
    """The one-time FallbackWarning, issued at the user's line of the construct."""
    warnings.warn_explicit(
        f"{_message(fb, fn)} It runs eagerly, op by op, which is much slower. {fb.fix or _FIX}",
        FallbackWarning,
        _filename(fb, fn),
        fb.span.line,
    )


def _concrete_location(error: BaseException, fn) -> Location | None:
    """The last line of ``fn``'s file in the traceback of ``error`` (``None`` without one)."""
    code = getattr(fn, "__code__", None)
    lines = _user_lines(error, code.co_filename) if code is not None else []
    return _line_location(code.co_filename, lines[-1]) if lines else None


# What JAX's refusals of a traced value mean, in the user's terms: their own text names JAX's
# tracer classes and internal functions, and links to JAX's documentation.
_REFUSALS = (
    (
        jax.errors.TracerBoolConversionError,
        "Python asks for the truth value of a traced array (an `if`, a `while`, "
        "`and`/`or`, `not` or `bool()` of it), which exists only when the program runs",
    ),
    (
        jax.errors.TracerIntegerConversionError,
        "Python asks for a traced array as an int (an index into a Python "
        "list or tuple, a `range` bound, `__index__`), which exists only when the program runs",
    ),
    (
        jax.errors.TracerArrayConversionError,
        "NumPy asks for the values of a traced array (`np.asarray`, a NumPy "
        "function), which exist only when the program runs",
    ),
    (
        jax.errors.ConcretizationTypeError,
        "Python asks for the value of a traced array (`float()`, `int()`, "
        "`.item()`, `.tolist()`, a shape or a size), which exists only when the program runs",
    ),
)
_JAX_NAMES = (
    (re.compile(r"<function (\w+) at 0x[0-9a-f]+>"), r"`\1`"),
    (re.compile(r"\b\w*Tracer\b(\(\w+\[[^\]]*\]\))?"), "traced array"),
)


def _first_line(error: BaseException) -> str:
    """The first line of ``error``'s text in the user's terms: JAX's refusals of a traced value
    said in laxify's words, and no tracer class or function address quoted."""
    for kind, words in _REFUSALS:
        if isinstance(error, kind):
            return words
    text = str(error).strip()
    text = text.splitlines()[0] if text else type(error).__name__
    for pattern, replacement in _JAX_NAMES:
        text = pattern.sub(replacement, text)
    return text


def located_concrete_error(error: BaseException, fn, unconverted: ConversionError | None = None) -> ConversionError:
    """DESIGN §6: a traced value used where Python needs a concrete one, at the user's line.
    ``unconverted``: why ``fn`` was not converted at all (then it ran as written)."""
    message = (
        f"A traced value is used where Python needs a concrete one ({type(error).__name__}: {_first_line(error)})."
    )
    if unconverted is not None:
        message += (
            f" {unconverted.message} So it runs as written, and inside an outer jax "
            f"transformation it cannot run eagerly either."
        )
    fix = (
        "Keep that value static (pass it as a Python value or list it in static_argnums), or use "
        "a jax.numpy / jax.lax operation that accepts traced values (jnp.where, lax.dynamic_slice, ...)."
    )
    return ConversionError(message, _concrete_location(error, fn), fix)


def warn_value_fallback(located: ConversionError, fn) -> None:
    """The one-time FallbackWarning of a function whose converted code met Python that needs a
    concrete value (the text of ``located``, at its line): it runs eagerly from then on."""
    where = located.location
    filename, line = (where.filename, where.line) if where else (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    warn_at(
        f"{located.message} So {fn.__qualname__} cannot be one XLA program: it runs eagerly, op "
        f"by op, which is much slower. {located.fix}",
        FallbackWarning,
        filename,
        line,
    )


def _is_library_frame(frame: types.FrameType) -> bool:
    """A frame that is never "the user's code": laxify's own, JAX's (a to_static function called
    inside jax.jit/vmap is called from JAX's tracing machinery), the model libraries'
    transformations that call it (nnx.jit, eqx.filter_jit)."""
    name = frame.f_globals.get("__name__") or ""
    return name.partition(".")[0] in LIBRARY_PACKAGES


def warn_at_user_code(message: str) -> None:
    """A FallbackWarning at the innermost line of the user's code on the stack (the line that
    called into laxify, directly or through a JAX transformation)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and _is_library_frame(frame):
        frame = frame.f_back
    globals_ = frame.f_globals
    warn_at(
        message,
        FallbackWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        globals_.get("__name__") or "<string>",
        globals_.setdefault("__warningregistry__", {}),
        globals_,
    )


def warn_unconverted_eager(error: BaseException, fn, unconverted: ConversionError) -> None:
    """The one-time FallbackWarning of a function laxify could not convert whose Python needs a
    concrete value: it runs eagerly from now on (at the user's line when there is one)."""
    where = _concrete_location(error, fn)
    code = getattr(fn, "__code__", None)
    filename, line = (
        (where.filename, where.line)
        if where
        else ((code.co_filename, code.co_firstlineno) if code else ("<unknown>", 0))
    )
    warnings.warn_explicit(
        f"{unconverted.message} Its Python code needs a concrete value here "
        f"({type(error).__name__}: {_first_line(error)}), so it runs eagerly, op by op, which is "
        f"much slower. {unconverted.fix}",
        FallbackWarning,
        filename,
        line,
    )


_MISSING = object()


_TRACE_ERROR = "__laxify_raised_while_tracing__"


def marking_trace_errors(traced):
    """``traced`` such that an exception it raises (while ``jax.jit`` traces it) says so: such
    an error may be Python that only concrete values run (``to_static`` then runs the function
    eagerly, see :func:`raised_while_tracing`), unlike an error raised when the compiled program
    has run (a run-time check)."""

    @functools.wraps(traced)
    def run(*args, **kwargs):
        try:
            return traced(*args, **kwargs)
        except Exception as error:
            try:
                setattr(error, _TRACE_ERROR, True)
                if _iterates_a_tracer(error):  # (JAX drops its frames when the error leaves jit)
                    setattr(error, ABOUT_TRACED, True)
            except (AttributeError, TypeError):  # an exception class with __slots__
                pass
            raise

    return run


def raised_while_tracing(error: BaseException) -> bool:
    """Whether ``error`` stopped the trace of a ``to_static`` function at the user's code (or in
    JAX, called from it) and is none of the errors laxify says itself (a located
    ``ConversionError``; the concrete-value errors, handled as ``CONCRETE_ERRORS``)."""
    return (
        getattr(error, _TRACE_ERROR, False)
        and not isinstance(error, ConversionError)
        and not isinstance(error, CONCRETE_ERRORS)
        and not _raised_by_laxify(error)
    )


def _raised_by_laxify(error: BaseException) -> bool:
    """Whether ``error`` is a fault of laxify's own, shown as it is, never turned into a
    fallback: a ``NameError`` or ``AttributeError`` whose innermost frame is laxify's runtime.
    (Other errors there come from JAX called by the runtime on the user's values: JAX's
    filtering of tracebacks leaves the runtime's frame innermost.)"""
    if not isinstance(error, (NameError, AttributeError)):
        return False
    tb = _innermost(error)
    return tb is not None and _package_of(tb) == "laxify"


def _innermost(error: BaseException):
    """The innermost entry of ``error``'s traceback, or None."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _package_of(tb) -> str:
    return (tb.tb_frame.f_globals.get("__name__") or "").partition(".")[0]


def about_a_traced_value(error: BaseException) -> bool:
    """Whether ``error``'s text says that a traced value was given where a concrete one is
    needed (a tracer, a static or concrete value), or laxify marked it so
    (:func:`jax_refused_a_traced_value`)."""
    return names_a_traced_value(error) or getattr(error, ABOUT_TRACED, False)


def jax_refused_a_traced_value(error: BaseException) -> bool:
    """Whether JAX raised ``error`` on a traced value: the innermost frame of its traceback is
    JAX's and its text names a traced value, or laxify's runtime, raising an error of JAX's
    itself on a traced value whose text says nothing of it (``TypeError: iteration over a 0-d
    array`` from ``for v in x`` on a traced scalar), marked it (``ABOUT_TRACED``). Never the
    user's own ``raise``, whose message may show a tracer, nor an error JAX raises on traced
    and concrete values alike (incompatible shapes)."""
    return getattr(error, ABOUT_TRACED, False) or raised_by_array_library(error) or _iterates_a_tracer(error)


def _iterates_a_tracer(error: BaseException) -> bool:
    """JAX's ``TypeError: iteration over a 0-d array`` raised on a tracer (a Python ``for`` or
    ``iter`` on a traced scalar, where eager Python may have a number: ``for v in items`` of a
    list argument whose numbers ``jax.jit`` traces): the innermost frame is JAX's and holds one."""
    if not isinstance(error, TypeError) or "0-d array" not in str(error):
        return False
    tb = _innermost(error)
    if tb is None or _package_of(tb) not in ("jax", "jaxlib"):
        return False
    try:
        return any(isinstance(v, jax.core.Tracer) for v in tb.tb_frame.f_locals.values())
    except Exception:  # noqa: BLE001 - a frame whose locals cannot be read says nothing
        return False


def located_trace_error(error: BaseException, fn) -> ConversionError:
    """The located text of an error that stopped the trace where eager Python runs on (or, under
    an outer transformation, may run on) concrete values."""
    code = getattr(fn, "__code__", None)
    refusal = _call_given_traced(error, code.co_filename) if code is not None else None
    if refusal is not None:
        callee, name = refusal
        what = (
            f"Tracing {fn.__qualname__} stopped at this line: `{callee}` needs a concrete value, and "
            f"`{name}` is a traced value here (it raised {_qualified_name(type(error))}: {_first_line(error)}); "
            f"eager Python calls it with concrete values."
        )
    else:
        what = (
            f"Tracing {fn.__qualname__} stopped at this line with {type(error).__name__}: "
            f"{_first_line(error)}; eager Python decides this line with concrete values."
        )
    return ConversionError(
        what,
        _concrete_location(error, fn),
        "Keep the values this line depends on static (Python values, static_argnums), or use a "
        "jax.numpy / jax.lax operation that accepts traced values (jnp.where, lax.dynamic_slice, ...).",
    )


def refused_by_a_c_function(error: BaseException, fn) -> bool:
    """Whether ``error`` was raised by a function without Python code (``struct.pack``)
    given a traced value on a line of ``fn`` (see :func:`_call_given_traced`)."""
    code = getattr(fn, "__code__", None)
    return code is not None and _call_given_traced(error, code.co_filename) is not None


def _call_given_traced(error: BaseException, filename: str) -> tuple[str, str] | None:
    """Where ``error`` was raised by a function without Python code (``struct.pack``, a C
    extension) called on the user's line with a traced value: that function as the line
    writes it and the traced name given to it; None where the line does not say it plainly
    (one innermost call that is given a traced name)."""
    tb = _innermost(error)
    if tb is None or tb.tb_frame.f_code.co_filename != filename:
        return None
    try:
        traced = {n for n, v in tb.tb_frame.f_locals.items() if isinstance(v, jax.core.Tracer)}
    except Exception:  # noqa: BLE001 - a frame whose locals cannot be read says nothing
        return None
    text = linecache.getline(filename, tb.tb_lineno).strip()
    if not traced or not text:
        return None
    try:
        tree = ast.parse(text + (" pass" if text.endswith(":") else ""))
    except SyntaxError:
        return None
    if any(isinstance(node, (ast.Raise, ast.Assert)) for node in ast.walk(tree)):
        return None  # (the user's own exception, made on that line)
    given = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            names = [a.id for a in args if isinstance(a, ast.Name) and a.id in traced]
            if names:
                given[node] = names[0]
    innermost = [call for call in given if not any(other is not call and _inside(other, call) for other in given)]
    if len(innermost) != 1:
        return None
    call = innermost[0]
    return ast.unparse(call.func), given[call]


def _qualified_name(kind: type) -> str:
    """``struct.error`` rather than ``error``; a builtin exception by its name alone."""
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(child is node for child in ast.walk(outer))


def restoring_shared_names(traced, original):
    """``traced`` (what ``jax.jit`` traces for ``original``), such that when the trace stops at
    Python that needs a concrete value, the globals and nonlocals ``original`` assigns get
    back the values they had before it: the eager run that follows then assigns them once,
    as Python does (``G += 1`` before the construct would otherwise count twice). An error
    raised while tracing is marked (:func:`marking_trace_errors`)."""
    traced = marking_trace_errors(traced)
    code = getattr(original, "__code__", None)
    if not isinstance(code, types.CodeType):
        return traced
    globals_, written = effects.shared_stores(code)
    cells = dict(zip(code.co_freevars, original.__closure__ or ()))
    shared = [cells[name] for name in written if name in cells]
    if not globals_ and not shared:
        return traced
    namespace = original.__globals__

    @functools.wraps(traced)
    def run(*args, **kwargs):
        saved = [namespace.get(name, _MISSING) for name in globals_]
        saved_cells = [_cell_value(cell) for cell in shared]
        try:
            return traced(*args, **kwargs)
        except Exception:  # an eager run may follow
            for name, value in zip(globals_, saved):
                if value is _MISSING:
                    namespace.pop(name, None)
                else:
                    namespace[name] = value
            for cell, value in zip(shared, saved_cells):
                if value is _MISSING:
                    try:
                        del cell.cell_contents
                    except ValueError:
                        pass
                else:
                    cell.cell_contents = value
            raise

    return run


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # empty cell
        return _MISSING
