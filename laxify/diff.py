"""Original vs transformed source: a unified diff as text, side by side as HTML."""

from __future__ import annotations

import builtins
import difflib
import html
import io
import keyword
import re
import token
import tokenize
from dataclasses import dataclass

__all__ = ["Diff"]

_STYLE = (
    "<style>.lx-diff{border-collapse:collapse;font-family:monospace;font-size:12px}"
    ".lx-diff td{padding:0 8px;white-space:pre;vertical-align:top}"
    ".lx-diff th{text-align:left;padding:2px 8px;border-bottom:1px solid #ccc}"
    ".lx-del{background:#ffecec}.lx-add{background:#eaffea}.lx-no{color:#999;text-align:right}"
    ".lx-k{color:#0033b3;font-weight:bold}.lx-s{color:#067d17}.lx-n{color:#1750eb}"
    ".lx-c{color:#8c8c8c;font-style:italic}.lx-b{color:#871094}.lx-g{color:#999}</style>"
)


def _token_class(tok: tokenize.TokenInfo, generated: str) -> str | None:
    if tok.type == token.STRING or tok.type in _FSTRING_TYPES:
        return "lx-s"
    if tok.type == token.NUMBER:
        return "lx-n"
    if tok.type == token.COMMENT:
        return "lx-c"
    if tok.type == token.NAME:
        if keyword.iskeyword(tok.string):
            return "lx-k"
        if tok.string.startswith(generated):
            return "lx-g"  # laxify's own names, dimmed: the user's code stands out
        if hasattr(builtins, tok.string):
            return "lx-b"
    return None


_FSTRING_TYPES = {getattr(token, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(token, n)}


def highlight(source: str, generated: str = "_lx") -> list[str]:
    """``source`` as HTML, one string per line, with Python syntax colours (CSS classes)."""
    lines = source.splitlines()
    marks: list[list[tuple[int, int, str]]] = [[] for _ in lines]
    try:
        previous = ""
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            cls = _token_class(tok, generated) if previous != "." else None  # x.sum: no builtin
            if tok.type not in (token.NL, token.NEWLINE, token.INDENT, token.DEDENT, token.COMMENT):
                previous = tok.string
            if cls is None:
                continue
            (r0, c0), (r1, c1) = tok.start, tok.end
            for row in range(r0, min(r1, len(lines)) + 1):
                if row - 1 >= len(lines):
                    break
                start = c0 if row == r0 else 0
                end = c1 if row == r1 else len(lines[row - 1])
                marks[row - 1].append((start, end, cls))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # what was tokenised keeps its colours, the rest stays plain
    out = []
    for text, spans in zip(lines, marks):
        pos, parts = 0, []
        for start, end, cls in sorted(spans):
            if start < pos:
                continue
            parts.append(html.escape(text[pos:start]))
            parts.append(f"<span class='{cls}'>{html.escape(text[start:end])}</span>")
            pos = end
        parts.append(html.escape(text[pos:]))
        out.append("".join(parts))
    return out


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass
class Diff:
    """``original`` (the function as written, from its ``def`` line: ``first_line`` of its
    file) against ``transformed``; both sides are numbered from ``first_line``."""

    original: str
    transformed: str
    filename: str = "<source>"
    first_line: int = 1

    def _shifted(self, header: str) -> str:
        """A hunk header numbered by the file's lines (difflib counts from 1)."""
        shift = self.first_line - 1

        def line(n: str) -> str:
            return str(int(n) + shift) if int(n) else n  # 0: an empty side stays 0

        return _HUNK.sub(lambda m: f"@@ -{line(m[1])}{m[2] or ''} +{line(m[3])}{m[4] or ''} @@", header)

    def unified(self, color: bool = False) -> str:
        lines = difflib.unified_diff(
            self.original.splitlines(),
            self.transformed.splitlines(),
            f"{self.filename} (original)",
            f"{self.filename} (laxify)",
            lineterm="",
        )
        if self.first_line != 1:
            lines = (self._shifted(ln) if ln.startswith("@@") else ln for ln in lines)
        if not color:
            return "\n".join(lines)
        out = []
        for ln in lines:
            if ln.startswith("+") and not ln.startswith("+++"):
                ln = f"\033[32m{ln}\033[0m"
            elif ln.startswith("-") and not ln.startswith("---"):
                ln = f"\033[31m{ln}\033[0m"
            elif ln.startswith("@@"):
                ln = f"\033[36m{ln}\033[0m"
            out.append(ln)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.unified()

    def _repr_html_(self) -> str:
        a, b = self.original.splitlines(), self.transformed.splitlines()
        ha, hb = highlight(self.original), highlight(self.transformed)
        rows, shift = [], self.first_line - 1
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            span = max(i2 - i1, j2 - j1)
            for k in range(span):
                left = a[i1 + k] if i1 + k < i2 else None
                right = b[j1 + k] if j1 + k < j2 else None
                lcls = "lx-del" if tag != "equal" and left is not None else ""
                rcls = "lx-add" if tag != "equal" and right is not None else ""
                rows.append(
                    f"<tr><td class='lx-no'>{'' if left is None else i1 + k + 1 + shift}</td>"
                    f"<td class='{lcls}'>{'' if left is None else ha[i1 + k]}</td>"
                    f"<td class='lx-no'>{'' if right is None else j1 + k + 1 + shift}</td>"
                    f"<td class='{rcls}'>{'' if right is None else hb[j1 + k]}</td></tr>"
                )
        head = "<tr><th></th><th>original</th><th></th><th>laxify</th></tr>"
        return f"{_STYLE}<table class='lx-diff'>{head}{''.join(rows)}</table>"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.unified())
