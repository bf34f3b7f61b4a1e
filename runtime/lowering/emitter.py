"""Collects generated Python lines with the user's line (and column shift) for each one."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

__all__ = ["Emitter", "Line"]

INDENT = "    "


@dataclass
class Line:
    depth: int  # indentation level in generated code
    text: str  # without indentation (verbatim lines keep their relative indent)
    user_line: int  # the user's file line it stands for
    user_col: int  # the user's column of the first non-blank character
    raw: bool = False  # inside a multi-line string: emitted exactly as is


@dataclass
class Emitter:
    lines: list[Line] = field(default_factory=list)
    depth: int = 0

    def line(self, text: str, user_line: int, user_col: int) -> None:
        self.lines.append(Line(self.depth, text, user_line, user_col))

    def verbatim(self, code: str, first_user_line: int, user_col: int) -> None:
        """Statement text from the user's source; keeps comments and inner indentation."""
        raw = _string_interior_lines(code) if ('"""' in code or "'''" in code or "\\\n" in code) else set()
        for k, text in enumerate(code.split("\n")):
            self.lines.append(Line(self.depth, text, first_user_line + k, user_col, raw=k in raw))

    def render(self, base_depth: int = 0) -> tuple[str, list[tuple[int, int]]]:
        """The source text and, per generated line, (user line, column shift)."""
        out: list[str] = []
        mapping: list[tuple[int, int]] = []
        for ln in self.lines:
            if ln.raw:
                out.append(ln.text)
                mapping.append((ln.user_line, 0))
                continue
            indent = INDENT * (ln.depth + base_depth)
            out.append(indent + ln.text if ln.text.strip() else "")
            mapping.append((ln.user_line, ln.user_col - len(indent)))
        return "\n".join(out) + "\n", mapping


def _string_interior_lines(code: str) -> set[int]:
    """0-based indexes of lines that continue a multi-line string or a backslash line."""
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))  # 1-based start+1 .. end
    except (tokenize.TokenError, IndentationError):
        return inside
    return inside
