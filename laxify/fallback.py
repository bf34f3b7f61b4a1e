"""What happens when a traced value reaches code that needs a concrete one: the eager
fallback of a construct kept as Python (with its warning), or a located error."""

from __future__ import annotations

import linecache
import warnings

import jax

from laxify.ir.errors import ConversionError, FallbackWarning, Location
from laxify.transpiler.pipeline import Conversion
from laxify.transpiler.to_ir import Fallback

__all__ = ["CONCRETE_ERRORS", "fallback_at", "fallback_error", "located_concrete_error", "warn_fallback",
           "warn_unconverted_eager"]

CONCRETE_ERRORS = (
    jax.errors.TracerBoolConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)

_FIX = ("Rewrite the construct without that feature, or mark the argument it depends on "
        "static (static_argnums/static_argnames).")


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
    """The construct kept as Python inside which ``error`` was raised, if any."""
    lines = _user_lines(error, conversion.source.filename)
    for fb in conversion.fallbacks:
        if any(fb.span.line <= ln <= fb.end_line for ln in lines):
            return fb
    return None


def _message(fb: Fallback, fn) -> str:
    return (f"laxify kept this `{fb.construct}` as plain Python because {fb.reason}, and it depends "
            f"on a traced value, so {fn.__qualname__} cannot be one XLA program.")


def fallback_error(fb: Fallback, fn, outer: bool) -> ConversionError:
    where = " Inside an outer jax transformation it cannot run eagerly either." if outer else ""
    return ConversionError(_message(fb, fn) + where,
                           _line_location(fn.__code__.co_filename, fb.span.line), _FIX)


def warn_fallback(fb: Fallback, fn) -> None:
    """The one-time FallbackWarning, issued at the user's line of the construct."""
    warnings.warn_explicit(
        f"{_message(fb, fn)} It runs eagerly, op by op, which is much slower. {_FIX}",
        FallbackWarning, fn.__code__.co_filename, fb.span.line,
    )


def _concrete_location(error: BaseException, fn) -> Location | None:
    """The last line of ``fn``'s file in the traceback of ``error`` (``None`` without one)."""
    code = getattr(fn, "__code__", None)
    lines = _user_lines(error, code.co_filename) if code is not None else []
    return _line_location(code.co_filename, lines[-1]) if lines else None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def located_concrete_error(error: BaseException, fn, unconverted: ConversionError | None = None) -> ConversionError:
    """DESIGN §6: a traced value used where Python needs a concrete one, at the user's line.
    ``unconverted``: why ``fn`` was not converted at all (then it ran as written)."""
    message = (f"A traced value is used where Python needs a concrete one "
               f"({type(error).__name__}: {_first_line(error)}).")
    if unconverted is not None:
        message += (f" {unconverted.message} So it runs as written, and inside an outer jax "
                    f"transformation it cannot run eagerly either.")
    fix = ("Keep that value static (pass it as a Python value or list it in static_argnums), or use "
           "a jax.numpy / jax.lax operation that accepts traced values (jnp.where, lax.dynamic_slice, ...).")
    return ConversionError(message, _concrete_location(error, fn), fix)


def warn_unconverted_eager(error: BaseException, fn, unconverted: ConversionError) -> None:
    """The one-time FallbackWarning of a function laxify could not convert whose Python needs a
    concrete value: it runs eagerly from now on (at the user's line when there is one)."""
    where = _concrete_location(error, fn)
    code = getattr(fn, "__code__", None)
    filename, line = (where.filename, where.line) if where else (
        (code.co_filename, code.co_firstlineno) if code else ("<unknown>", 0))
    warnings.warn_explicit(
        f"{unconverted.message} Its Python code needs a concrete value here "
        f"({type(error).__name__}: {_first_line(error)}), so it runs eagerly, op by op, which is "
        f"much slower. {unconverted.fix}", FallbackWarning, filename, line)
