"""Conversion of one function, end to end, with a cache keyed on the code object.

source → converters → IR → passes (verify, types, static folding, DCE) → lowering → code.
The code object is shared by every function made from the same ``def``; each function
object gets its own closure cells.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass

from laxify.ir import Function
from laxify.ir.errors import ConversionError
from laxify.ir.passes.infer_types import MergeTypeError
from laxify.ir.passes import default_passes, run_passes
from laxify.runtime.calls import set_converter
from laxify.runtime.compile import compile_lowered, make_function
from laxify.runtime.lowering import LoweredSource, lower_function
from laxify.runtime.options import restoring_options, with_options
from laxify.transpiler.pipeline import Conversion, convert_source

__all__ = ["Converted", "convert_function", "fresh_ir", "clear_cache"]


@dataclass
class Converted:
    """The result of converting one code object."""

    conversion: Conversion
    ir: Function
    lowered: LoweredSource
    code: types.CodeType

    @property
    def source(self) -> str:
        return self.lowered.text()

    @property
    def filename(self) -> str:
        return self.conversion.source.filename

    def bind(self, fn: types.FunctionType, locate_fallbacks: bool = True):
        """The converted function for ``fn`` (its closure cells, its loop options).
        ``to_static`` handles constructs kept as Python itself (``locate_fallbacks=False``)."""
        converted = make_function(self.code, self.lowered, fn)
        if locate_fallbacks and self.conversion.fallbacks:
            converted = _locating_fallbacks(converted, self.conversion, fn)
        opts = getattr(fn, "__laxify_loop_options__", None)
        if opts is not None:
            return with_options(converted, opts)
        if self.conversion.pushes_loop_options:
            # A `return`/`break` out of a `with loop_options(...)` block skips its pop.
            return restoring_options(converted)
        return converted


_CACHE: dict[types.CodeType, Converted] = {}


def _locating_fallbacks(converted, conversion: Conversion, original):
    """Under ``jax.jit(laxify.convert(f))`` a construct kept as Python that meets a traced
    value cannot fall back to eager execution: say so at its line."""
    from laxify.fallback import CONCRETE_ERRORS, fallback_at, fallback_error

    @functools.wraps(converted)
    def run(*args, **kwargs):
        try:
            return converted(*args, **kwargs)
        except CONCRETE_ERRORS as e:
            found = fallback_at(conversion, e)
            if found is None:
                raise
            raise fallback_error(found, original, outer=True) from e

    return run


def convert_function(fn: types.FunctionType) -> Converted:
    """Convert ``fn`` (cached per code object: a second conversion costs a dict lookup)."""
    code = fn.__code__
    hit = _CACHE.get(code)
    if hit is not None:
        return hit
    conversion = convert_source(fn)
    ir_fn = conversion.ir
    _run_passes(ir_fn, conversion, default_passes())
    lowered = lower_function(ir_fn, conversion.source.filename)
    compiled = compile_lowered(lowered, code.co_freevars, conversion.source.filename)
    converted = Converted(conversion, ir_fn, lowered, compiled)
    _CACHE[code] = converted
    return converted


def fresh_ir(fn: types.FunctionType, param_types=None, evaluate=None) -> Function:
    """A new IR of ``fn`` typed for a signature (``param_types``) and folded accordingly."""
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
    _CACHE.clear()


def _convert_called(fn: types.FunctionType):
    """How converted code converts the user functions it calls."""
    return convert_function(fn).bind(fn)


set_converter(_convert_called)
