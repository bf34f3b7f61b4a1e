"""laxify in a Jupyter notebook: source from cells, warnings at the cell's line, the diff as HTML."""

from __future__ import annotations


import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    "import warnings\nimport jax.numpy as jnp\nimport laxify",
    # A function defined in a cell: its source comes from IPython's linecache entry.
    "@laxify.to_static\n"
    "def halve(x):\n"
    "    while x.sum() > 1:\n"
    "        x = x / 2\n"
    "    return x\n"
    "print(float(halve(jnp.ones(4) * 8).sum()))",
    "print('_lx.while_loop' in halve.source)\nprint('<table' in halve.diff()._repr_html_())",
    # A construct kept as Python that meets a traced value: the warning names the cell's line.
    "def kept(x):\n"
    "    try:\n"
    "        if x.sum() > 0:\n"
    "            x = x + 1\n"
    "    except* ValueError:\n"
    "        pass\n"
    "    return x\n"
    "with warnings.catch_warnings(record=True) as caught:\n"
    "    warnings.simplefilter('always')\n"
    "    out = laxify.to_static(kept)(jnp.ones(2))\n"
    "w = [c for c in caught if issubclass(c.category, laxify.FallbackWarning)][0]\n"
    "print(float(out.sum()), w.lineno, 'try' in str(w.message))",
    # The README's quick start as people write notebooks: the imports were in the first cell,
    # the function calls `jnp` in this one (Python 3.13 compiles such calls differently from
    # a text that imports the module itself; laxify must not call the function edited).
    "@laxify.to_static\n"
    "def collatz(x):\n"
    "    steps = 0\n"
    "    while jnp.abs(x) > 1:\n"
    "        if x % 2 == 0:\n"
    "            x = x // 2\n"
    "        else:\n"
    "            x = 3 * x + 1\n"
    "        steps += 1\n"
    "    return steps\n"
    "with warnings.catch_warnings(record=True) as caught:\n"
    "    warnings.simplefilter('always')\n"
    "    steps = collatz(jnp.int32(27))\n"
    "print(int(steps), len(caught), 'while_loop' in collatz.source)",
    # A function without source text, called from a cell: the warning is issued at the cell's
    # line (its globals have no module loader, which made Python 3.13 raise inside warnings).
    "def here():\n"
    "    pass\n"
    "exec('def no_text(x):\\n    while x.sum() > 1:\\n        x = x / 2\\n    return x\\n')\n"
    "with warnings.catch_warnings(record=True) as caught:\n"
    "    warnings.simplefilter('always')\n"
    "    out = laxify.to_static(no_text)(jnp.ones(4) * 8)\n"
    "w = caught[0]\n"
    "print(float(out.sum()), w.category.__name__, w.lineno,\n"
    "      w.filename == here.__code__.co_filename and 'no source text' in str(w.message))",
]


@pytest.fixture(scope="module")
def outputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": "."}})
    client.execute()
    texts = []
    for cell in nb.cells:
        texts.append("".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream"))
    return texts


def test_a_cell_function_converts_and_runs(outputs):
    assert outputs[1].strip() == "1.0"


def test_source_and_html_diff_in_a_notebook(outputs):
    assert outputs[2].split() == ["True", "True"]


def test_fallback_warning_points_at_the_cell_line(outputs):
    total, line, names_try = outputs[3].split()
    assert float(total) == 4.0
    assert line == "2"  # the `try` is on line 2 of its cell
    assert names_try == "True"


def test_function_in_a_later_cell_than_its_imports_converts(outputs):
    steps, warned, converted = outputs[4].split()
    assert (steps, warned, converted) == ("111", "0", "True")


def test_warning_for_a_function_without_source_is_at_the_cells_line(outputs):
    total, category, line, says_why = outputs[5].split()
    assert (float(total), category, line, says_why) == (1.0, "FallbackWarning", "6", "True")
