"""What a call becomes when its program cannot give Python's answer: the one place that decides.

A call's trace, or the run of its program, may stop at something that one XLA program cannot
hold. What then runs is chosen here, from what stopped it (the *failure*), the function's
``fallback`` mode, and whether the call is inside an outer transformation (``jax.jit``,
``vmap``, ``grad`` around it: nothing can run eagerly there). Each entry of the table names
the failure, its reason, the action and the user-facing message:

=============  =====================================================  ==================  ===============
failure        what the trace met                                     ``warn``/``silent``  ``error``/outer
=============  =====================================================  ==================  ===============
``kept``       a construct laxify keeps as Python met a traced value   split (warned)      located error
``value``      Python on the user's line that needs a concrete value   split (warned)      located error
``refused``    another refusal of a traced value by JAX (a traced      split (warned if    located error
               slice bound, ...) or the user's Python on a value        eager returns)     (or the error)
               only a trace has
``overflow``   a Python int passed int32 in the program (at run time)  eager, this call    the OverflowError
``unconverted`` a function laxify could not convert met a traced value eager (warned)      located error
``python``     a generator or coroutine function                       eager (warned once) the error
=============  =====================================================  ==================  ===============

*Split*: the converted code run eagerly, its loops and straight-line segments compiled where
they can be (``laxify/split.py``); *eager*: the function as written. A split or eager run is
cached for the signature (the next call takes it at once), except after an overflow (the next
input may fit). The user's own exceptions are not failures: they are raised as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax

from laxify.fallback import (
    CONCRETE_ERRORS,
    about_a_traced_value,
    fallback_at,
    fallback_error,
    located_concrete_error,
    located_trace_error,
    refused_by_a_c_function,
)
from laxify.ir.errors import ConversionError
from laxify.runtime.numbers import Int32OverflowError, NumberNotHeld

__all__ = ["Decision", "decide"]


@dataclass
class Decision:
    """The table's answer for one failure: ``action`` is ``"raise"`` (``error``), ``"split"``
    or ``"eager"`` (``runner``: what runs, for this call and, with ``cached``, the later calls
    of the signature); ``warn``: the one-time FallbackWarning to issue (``None``: none, or the
    runner issues it itself after its first run); ``failure``: the table's entry."""

    failure: str
    action: str
    error: BaseException | None = None
    runner: Callable | None = None
    cached: bool = True
    warn: Callable[[], None] | None = None
    warn_after: bool = False  # the warning comes only after the eager run returned


class Context:
    """What the table reads of the function being called (``laxify/call/path.py`` provides it)."""

    fallback: str  # "warn" | "error" | "silent"
    inner: Callable  # the user's function (under bound methods and partials)
    plain: Callable  # the function as written
    no_source: ConversionError | None  # why it has no converted code, if it has none

    def conversion(self) -> Any: ...
    def converted(self) -> Callable: ...
    def split_runner(self, located: ConversionError, warn: bool, kept: bool = False) -> Callable: ...


def decide(error: BaseException, context: Context, outer: bool, staged: bool = False) -> Decision:
    """The decision for ``error``, which stopped a call (see the module's docstring);
    ``outer``: the call is inside an outer transformation; ``staged``: the trace was for
    ``lower``/``trace``/``eval_shape``/``export``, which have no eager run to fall back to
    (always ``raise``, the texts of ``fallback="error"``)."""
    strict = context.fallback == "error" or staged
    warn = context.fallback == "warn"
    inner = context.inner
    if isinstance(error, NumberNotHeld):
        if strict:
            return Decision("overflow", "raise", error=error)
        return Decision(
            "overflow",
            "eager",
            runner=context.plain,
            cached=False,
            warn=(lambda: _warn_overflow(error, inner)) if warn else None,
        )
    if isinstance(error, CONCRETE_ERRORS):
        if context.no_source is not None:
            if outer or staged:
                return Decision("unconverted", "raise", error=located_concrete_error(error, inner, context.no_source))
            from laxify.fallback import warn_unconverted_eager

            unconverted = context.no_source
            return Decision(
                "unconverted",
                "eager",
                runner=context.plain,
                warn=(lambda: warn_unconverted_eager(error, inner, unconverted)) if warn else None,
            )
        found = fallback_at(context.conversion(), error)
        if found is None:
            located = located_concrete_error(error, inner)
            if strict or outer:
                return Decision("value", "raise", error=located)
            return Decision("value", "split", runner=context.split_runner(located, warn))
        if strict or outer:
            return Decision("kept", "raise", error=fallback_error(found, inner, outer))
        if context.converted() is context.plain:
            from laxify.fallback import warn_fallback

            return Decision(
                "kept", "eager", runner=context.plain, warn=(lambda: warn_fallback(found, inner)) if warn else None
            )
        kept = fallback_error(found, inner, False)
        return Decision("kept", "split", runner=context.split_runner(kept, warn, kept=True))
    # Another error stopped the trace: JAX refused a traced value where Python needs a
    # concrete one (a traced slice bound, iteration over a traced scalar), or the user's
    # Python raised on values only a trace has. Eager Python decides, as it would for the
    # function as written: its value (then the warning) or its own error.
    if strict or outer:
        if about_a_traced_value(error) or refused_by_a_c_function(error, inner):
            return Decision("refused", "raise", error=located_trace_error(error, inner))
        return Decision("refused", "raise", error=error)
    located = located_trace_error(error, inner)
    if context.no_source is not None:
        from laxify.fallback import warn_value_fallback

        return Decision(
            "refused",
            "eager",
            runner=context.plain,
            warn_after=True,
            warn=(lambda: warn_value_fallback(located, inner)) if warn else None,
        )
    runner = context.split_runner(located, warn=False)
    return Decision("refused", "split", runner=runner, warn_after=True, warn=runner.warn if warn else None)


def outer_call(args: tuple, kwargs: dict) -> bool:
    """Whether a call's arguments hold tracers of an outer transformation."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))


def _warn_overflow(error: NumberNotHeld, inner: Callable) -> None:
    from laxify.ir.errors import FallbackWarning, warn_at

    if isinstance(error, Int32OverflowError):
        what = f"`{error.name}`" if error.name else "An integer"
        text = (
            f"{what} is a Python int in eager code but an int32 array in the compiled program, "
            f"and on this input its value passed int32's range (2**31 - 1) here: "
            f"{inner.__qualname__} ran eagerly, op by op, for Python's exact integer (this call only). "
            f"To keep it compiled, enable 64-bit integers before any JAX call "
            f'(jax.config.update("jax_enable_x64", True); pass int64 bounds), or compute it as a float.'
        )
    else:
        what = f"`{error.name}`" if error.name else "A value"
        text = (
            f"{what} is a Python number in eager code, and on this input {error.what} here: "
            f"{inner.__qualname__} ran eagerly, op by op, for Python's value (this call only). "
            f"To keep it compiled: {error.FIX[0].lower()}{error.FIX[1:]}"
        )
    warn_at(text, FallbackWarning, error.filename, error.line)
