"""The documentation's code runs: every ```python block of a page, in order, as one script.

A page is a walk-through: later blocks use the names earlier blocks define. Each page runs in
a fresh interpreter (in a temporary folder: snippets may write files), so that a snippet that
no longer runs, or an `assert` in it that no longer holds, fails here instead of in a reader's
hands. Blocks in other languages (```sh, ```text) are not run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["api.md", "flax_nnx.md", "equinox.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text())


def script(page: str) -> str:
    """The page's blocks, each preceded by a comment naming its place (for a failure's traceback)."""
    parts = ["import warnings\nimport laxify\nwarnings.simplefilter('error', laxify.FallbackWarning)\n"]
    for k, block in enumerate(python_blocks(page), 1):
        parts.append(f"# --- {page}, python block {k}\n{block}")
    return "\n".join(parts)


@pytest.mark.parametrize("page", PAGES)
def test_page_has_python_blocks(page):
    assert len(python_blocks(page)) >= 3


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page, tmp_path):
    (tmp_path / "page.py").write_text(script(page))
    done = subprocess.run([sys.executable, "page.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{page}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
