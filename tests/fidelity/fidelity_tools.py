"""Helpers of the fidelity suite: eager Python is the oracle, also for exceptions and prints.

``outcomes(fn, *args)`` runs ``fn`` eagerly, through ``laxify.to_static`` and through
``jax.jit(laxify.convert(fn))`` and records for each either the value or the exception.
``check_raises_like_python`` asserts that all three raise the same kind of exception and
that laxify's text is clean (no ``_lx`` name, the user's variable, the user's line).
``printed(call)`` returns what a call wrote to stdout, ``jax.debug.print`` output included.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import traceback
from typing import Any, Callable, Sequence

import jax
import numpy as np

import laxify
from harness import assert_trees_close, static_positions

WAYS = ("eager", "to_static", "jit(convert)")


class Raised:
    """The exception a call raised, in place of its value."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def __repr__(self) -> str:
        return f"Raised({type(self.exc).__name__}: {self.exc})"


def _attempt(call: Callable[[], Any]) -> Any:
    try:
        result = call()
        jax.block_until_ready(result)
        return result
    except Exception as exc:  # noqa: BLE001 - the exception is the observation
        return Raised(exc)


def outcomes(fn: Callable, *args, static_argnums: Sequence[int] | None = None,
             **options) -> dict[str, Any]:
    """``fn(*args)`` eagerly, through ``to_static`` and through ``jit(convert)``."""
    statics = tuple(static_argnums) if static_argnums is not None else static_positions(args)
    options.setdefault("fallback", "error")
    if static_argnums is not None:
        options["static_argnums"] = statics
    static_fn = laxify.to_static(fn, **options)
    return {
        "eager": _attempt(lambda: fn(*args)),
        "to_static": _attempt(lambda: static_fn(*args)),
        "jit(convert)": _attempt(lambda: jax.jit(laxify.convert(fn), static_argnums=statics)(*args)),
    }


def line_of(fn: Callable, snippet: str) -> int:
    """The absolute line number of the first line of ``fn`` that holds ``snippet``."""
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if snippet in line:
            return start + k
    raise AssertionError(f"{snippet!r} not in {fn.__name__}")


def _located(exc: BaseException, filename: str, lineno: int) -> bool:
    message = str(exc)
    if f'File "{filename}", line {lineno}' in message:
        return True
    if f"line {lineno}" in message and filename in message:
        return True
    # An exception raised while running converted code keeps the user's line in its traceback.
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename == filename and frames[-1].lineno == lineno


def assert_clean_error(exc: BaseException, fn: Callable, name: str | None,
                       snippet: str | tuple[str, ...] | None) -> None:
    """No laxify-made name, the user's variable ``name``, and the user's line holding ``snippet``
    (or one of the lines holding the snippets of a tuple)."""
    message = str(exc)
    assert "_lx" not in message, f"internal name in the message:\n{message}"
    rendered = "".join(traceback.format_exception_only(type(exc), exc))
    assert "_lx" not in rendered, f"internal name in the message:\n{rendered}"
    if name is not None:
        assert any(form in message for form in (f"`{name}`", f"'{name}'", f'"{name}"')), (
            f"the variable {name!r} is not named:\n{message}")
    if snippet is not None:
        filename = fn.__code__.co_filename
        snippets = (snippet,) if isinstance(snippet, str) else snippet
        linenos = [line_of(fn, s) for s in snippets]
        assert any(_located(exc, filename, lineno) for lineno in linenos), (
            f"not located at {filename}:{linenos} ({snippet!r}):\n{message}\n"
            + "".join(traceback.format_tb(exc.__traceback__)[-3:]))


def check_raises_like_python(fn: Callable, *args, error: type[BaseException], name: str | None,
                             snippet: str | None, static_argnums: Sequence[int] | None = None) -> None:
    """Eager Python raises ``error``; so do ``to_static`` and ``jit(convert)``, with a clean text."""
    results = outcomes(fn, *args, static_argnums=static_argnums)
    eager = results.pop("eager")
    assert isinstance(eager, Raised) and isinstance(eager.exc, error), f"eager gave {eager!r}"
    for way, result in results.items():
        assert isinstance(result, Raised), f"{way} returned {result!r}, Python raises {error.__name__}"
        assert isinstance(result.exc, error), (
            f"{way} raised {type(result.exc).__name__}, Python raises {error.__name__}: {result.exc}")
        assert_clean_error(result.exc, fn, name, snippet)


def check_value_or_clean_error(fn: Callable, *args, name: str | None, snippet: str | None,
                               expected: Any = None) -> None:
    """The eager value (or ``expected``), or a located ``laxify.ConversionError``; never another value."""
    results = outcomes(fn, *args)
    eager = results.pop("eager")
    assert not isinstance(eager, Raised), f"eager raised {eager!r}"
    want = eager if expected is None else expected
    for way, result in results.items():
        if isinstance(result, Raised):
            assert isinstance(result.exc, laxify.ConversionError), (
                f"{way} raised {type(result.exc).__name__}: {result.exc}")
            assert_clean_error(result.exc, fn, name, snippet)
        else:
            assert_trees_close(want, result, what=way)


def check_values(fn: Callable, *args, expected: Any, static_argnums: Sequence[int] | None = None) -> None:
    """``to_static`` and ``jit(convert)`` give ``expected`` (values, shapes and dtypes)."""
    results = outcomes(fn, *args, static_argnums=static_argnums)
    results.pop("eager")
    for way, result in results.items():
        assert not isinstance(result, Raised), f"{way} raised {result!r}"
        assert_trees_close(expected, result, what=way)


def printed(call: Callable[[], Any]) -> tuple[Any, str]:
    """The result of ``call()`` and everything it printed, ``jax.debug.print`` included."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        result = call()
        jax.block_until_ready(result)
        jax.effects_barrier()
    return result, buffer.getvalue()


def as_numpy(tree: Any) -> Any:
    return jax.tree_util.tree_map(np.asarray, tree)
