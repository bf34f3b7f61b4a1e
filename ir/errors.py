"""User-facing errors and source locations, shared by the transpiler and the runtime."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

__all__ = [
    "ConversionError",
    "FallbackWarning",
    "Location",
    "NeedsPython",
    "UncheckedWarning",
    "UnsupportedSyntax",
    "warn_at",
]


@dataclass(frozen=True)
class Location:
    """A point in the user's source: file, 1-based line, 0-based column, and that line's text."""

    filename: str
    line: int
    col: int
    text: str = ""

    def render(self) -> str:
        """``file:line`` then the source line and a caret under the column."""
        head = f'  File "{self.filename}", line {self.line}'
        if not self.text:
            return head
        stripped = self.text.lstrip()
        indent = len(self.text) - len(stripped)
        caret = " " * max(self.col - indent, 0)
        return f"{head}\n    {stripped.rstrip()}\n    {caret}^"


class ConversionError(Exception):
    """Code that cannot be made static: says what, where (file:line and a caret) and the fix."""

    def __init__(self, message: str, location: Location | None = None, fix: str | None = None):
        self.message, self.location, self.fix = message, location, fix
        parts = [message]
        if location is not None:
            parts.append(location.render())
        if fix:
            parts.append(fix)
        super().__init__("\n".join(parts))


class NeedsPython(ConversionError):
    """Raised while tracing where only Python itself gives Python's result (an identity the
    trace cannot decide, an effect on a Python object under a traced condition). A
    ``to_static`` function runs eagerly instead, with a ``FallbackWarning`` at ``location``;
    elsewhere it is this located error. ``reason`` completes "laxify runs this line as plain
    Python because ..."."""

    def __init__(self, reason: str, location: Location | None, fix: str):
        self.reason = reason = reason.rstrip(".")
        # A reason that ends with a table (both sides of a mismatch) gets no final period.
        super().__init__(reason[0].upper() + reason[1:] + ("" if "\n" in reason else "."), location, fix)


class UnsupportedSyntax(Exception):
    """Raised inside the transpiler for a construct that stays plain Python."""

    def __init__(self, construct: str, reason: str):
        self.construct, self.reason = construct, reason
        super().__init__(f"{construct}: {reason}")


class FallbackWarning(UserWarning):
    """A construct stays plain Python and the function runs eagerly; issued at the user's line."""


class UncheckedWarning(UserWarning):
    """The program runs, converted, without a check Python would make there (an `assert` on a
    traced value under a plain `jax.jit(laxify.convert(f))`, a `raise` in an exported
    program); issued at the user's line. Nothing falls back."""


def warn_at(
    message: str,
    category: type[Warning],
    filename: str,
    line: int,
    module: str | None = None,
    registry: dict | None = None,
    module_globals: dict | None = None,
) -> None:
    """``warnings.warn_explicit`` that works for every kind of code on every supported Python.

    ``module_globals`` lets the warning show a source line that only the module's loader can
    give (a module in a zip file); they are passed on only when the module has a loader.
    Globals without one (a notebook cell, ``exec``'d text, ``python -c``) make Python warn or
    raise while looking the line up (ImportError on 3.11; DeprecationWarning, or ValueError when
    ``__loader__`` is missing too, on 3.13); the line then comes from ``linecache`` as for any
    other warning."""
    # `module` and `registry` are passed only when given: an explicit None for either is not
    # the same as leaving it out (CPython then matches no filter and shows nothing).
    where = {k: v for k, v in (("module", module), ("registry", registry)) if v is not None}
    spec = (module_globals or {}).get("__spec__")
    if getattr(spec, "loader", None) is not None:
        try:
            warnings.warn_explicit(message, category, filename, line, module_globals=module_globals, **where)
            return
        except (ImportError, ValueError):
            pass  # raised while priming linecache, before the warning was recorded or shown
    warnings.warn_explicit(message, category, filename, line, **where)
