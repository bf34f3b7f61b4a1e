"""Re-running an edited notebook cell frees the old conversions (a real kernel, as a user's).

Each edit is a new cell source: IPython compiles it under a new file name registered in
linecache, so every edit is a new code object and a new conversion. After the edits and a
``gc.collect()`` only the last one may be alive, and nothing laxify's own code allocated per
edit is left once JAX's caches are cleared (JAX's bounded LRU caches hold primitive parameters
and traced programs until they are evicted: docs/semantics.md, "Memory")."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import laxify

EDITS = 40
FIRST_MEASURED = 10
ROOTS = [str(Path(laxify.__file__).resolve().parent.parent / d) for d in ("laxify", "runtime", "ir", "transpiler")]

SETUP = f"""\
import gc, json, tracemalloc, weakref
import jax, jax.numpy as jnp
import laxify
from laxify import conversion
from laxify.runtime.lowering import Site
ROOTS = {ROOTS!r}
tracemalloc.start(1)
functions, codes, snaps = [], [], []
"""


def edit(k: int) -> str:
    """The cell as the user has it after edit ``k``: a traced `while`, a traced `if`, a
    gradient through a bounded loop; the result not kept by IPython's `Out` (`;`)."""
    snap = "" if k not in (FIRST_MEASURED, EDITS - 1) else (
        "jax.clear_caches()\ngc.collect()\nsnaps.append(tracemalloc.take_snapshot())\n")
    return (
        "@laxify.to_static\n"
        "def step(x):\n"
        f"    while x.sum() > {k + 1}:\n"
        "        x = x / 2\n"
        f"    if x.max() > {k % 3}:\n"
        "        x = -x\n"
        "    return x\n"
        "step(jnp.ones(4) * 8);\n"
        "functions.append(weakref.ref(step.python_function))\n"
        "codes.append(weakref.ref(step._converted.code))\n"
        + snap
    )


REPORT = """\
del step
gc.collect()
def own(stat):
    return any(stat.traceback[0].filename.startswith(root) for root in ROOTS)
grown = sum(s.size_diff for s in snaps[1].compare_to(snaps[0], 'filename') if own(s))
print(json.dumps({
    "conversions": len(conversion._CACHE),
    "functions": sum(r() is not None for r in functions),
    "codes": sum(r() is not None for r in codes),
    "sites": sum(isinstance(o, Site) for o in gc.get_objects()),
    "own_bytes_per_edit": grown / (len(functions) - 1 - %d),
}))
""" % FIRST_MEASURED


@pytest.fixture(scope="module")
def report() -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in [SETUP, *map(edit, range(EDITS)), REPORT]]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    return json.loads(text.strip().splitlines()[-1])


def test_old_conversions_are_freed_after_edits(report):
    assert report["conversions"] <= 1, report
    assert report["functions"] == 0, report
    assert report["codes"] == 0, report


def test_no_lowering_site_outlives_its_function(report):
    assert report["sites"] == 0, report


def test_laxify_keeps_nothing_per_edit(report):
    # Was about 730 bytes per edit: every traced `while` kept its error message for good. Left:
    # 100 to 200 bytes that JAX keeps per jitted function, attributed to laxify's line calling
    # the jitted function (plain `jax.jit` in a loop keeps as much at its caller's line).
    assert report["own_bytes_per_edit"] < 400, report
