"""f.diff(): the unified diff (golden) and the side-by-side HTML with syntax colours."""

from __future__ import annotations

import re
import textwrap
from html.parser import HTMLParser

from laxify.diff import Diff, highlight


def test_unified_diff_golden(static):
    diff = static("tiny").diff()
    text = str(diff).replace(diff.filename, "FILE")
    line = static("tiny").python_function.__code__.co_firstlineno  # hunks count the file's lines
    assert text == textwrap.dedent(f"""\
        --- FILE (original)
        +++ FILE (laxify)
        @@ -{line},4 +{line},8 @@
         def tiny(x):
        -    if x > 0:
        +    def _lx_if_true_1(x):
                 x = -x
        +        return (x,)
        +    def _lx_if_false_2(x):
        +        return (x,)
        +    (x,) = _lx.cond(x > 0, (_lx_if_true_1, _lx_if_false_2), (x,), _lx_sites[0])
             return x""")


def test_diff_numbers_the_files_lines_after_decorators():
    diff = Diff("def f(x):\n    if x:\n        x = 1\n    return x\n",
                "def f(x):\n    x = g(x)\n    return x\n", "m.py", first_line=40)
    assert "@@ -40,4 +40,3 @@" in str(diff)
    numbers = re.findall(r"<td class='lx-no'>(\d+)</td>", diff._repr_html_())
    assert numbers[:2] == ["40", "40"] and "43" in numbers and "39" not in numbers


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.classes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("src", "href", "action", "data") and value:
                self.urls.append(value)
            if key == "class" and value:
                self.classes.append(value)

    def handle_data(self, data):
        self.text.append(data)


def test_html_side_by_side_is_coloured_and_self_contained(static):
    page = _Page()
    html = static("search").diff()._repr_html_()
    page.feed(html)
    assert page.urls == []
    assert "http" not in html and "//" not in html.replace("://", "")
    assert {"lx-k", "lx-n", "lx-del", "lx-add"} <= set(page.classes)
    text = "".join(page.text)
    assert "if x[i % 3] > 5:" in text  # the escaped source reads back as written


def test_highlight_keeps_text_and_marks_tokens():
    source = 'def f(x):  # note\n    s = """a\nb"""\n    return len(x) + 1\n'
    lines = highlight(source)
    assert len(lines) == 4
    page = _Page()
    page.feed("\n".join(lines))
    assert "".join(page.text) == source.rstrip("\n")  # colours add markup, never change the text
    assert "<span class='lx-k'>def</span>" in lines[0] and "lx-c" in lines[0]
    assert "lx-s" in lines[1] and "lx-s" in lines[2]  # a string over two lines
    assert "<span class='lx-b'>len</span>" in lines[3] and "<span class='lx-n'>1</span>" in lines[3]


def test_highlight_of_broken_source_stays_text():
    lines = highlight("x = (1,\n")
    assert len(lines) == 1 and lines[0].endswith(",") and "x = (" in lines[0]
    assert Diff("a < b", "a > b")._repr_html_().count("&lt;") == 1
