"""User-facing errors and source locations, shared by the transpiler and the runtime."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConversionError", "FallbackWarning", "Location", "NeedsPython", "UnsupportedSyntax"]


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
        self.reason = reason
        super().__init__(reason[0].upper() + reason[1:] + ".", location, fix)


class UnsupportedSyntax(Exception):
    """Raised inside the transpiler for a construct that stays plain Python."""

    def __init__(self, construct: str, reason: str):
        self.construct, self.reason = construct, reason
        super().__init__(f"{construct}: {reason}")


class FallbackWarning(UserWarning):
    """A construct stays plain Python and the function runs eagerly; issued at the user's line."""
