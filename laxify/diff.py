"""Original vs transformed source: a unified diff as text, side by side as HTML."""

from __future__ import annotations

import difflib
import html
from dataclasses import dataclass

__all__ = ["Diff"]

_STYLE = (
    "<style>.lx-diff{border-collapse:collapse;font-family:monospace;font-size:12px}"
    ".lx-diff td{padding:0 8px;white-space:pre;vertical-align:top}"
    ".lx-diff th{text-align:left;padding:2px 8px;border-bottom:1px solid #ccc}"
    ".lx-del{background:#ffecec}.lx-add{background:#eaffea}.lx-no{color:#999;text-align:right}</style>"
)


@dataclass
class Diff:
    original: str
    transformed: str
    filename: str = "<source>"

    def unified(self, color: bool = False) -> str:
        lines = difflib.unified_diff(
            self.original.splitlines(), self.transformed.splitlines(),
            f"{self.filename} (original)", f"{self.filename} (laxify)", lineterm="",
        )
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
        rows = []
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            span = max(i2 - i1, j2 - j1)
            for k in range(span):
                left = a[i1 + k] if i1 + k < i2 else None
                right = b[j1 + k] if j1 + k < j2 else None
                lcls = "lx-del" if tag != "equal" and left is not None else ""
                rcls = "lx-add" if tag != "equal" and right is not None else ""
                rows.append(
                    f"<tr><td class='lx-no'>{'' if left is None else i1 + k + 1}</td>"
                    f"<td class='{lcls}'>{html.escape(left or '')}</td>"
                    f"<td class='lx-no'>{'' if right is None else j1 + k + 1}</td>"
                    f"<td class='{rcls}'>{html.escape(right or '')}</td></tr>"
                )
        head = "<tr><th></th><th>original</th><th></th><th>laxify</th></tr>"
        return f"{_STYLE}<table class='lx-diff'>{head}{''.join(rows)}</table>"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.unified())
