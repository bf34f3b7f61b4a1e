"""transpiler/analysis/in_place.py: which parameters' arrays a function may change in place."""

import textwrap

import libcst as cst
import pytest

from laxify.transpiler.analysis.in_place import arrays_changed_in_place


def changed(source: str) -> dict[str, str]:
    fn = cst.parse_module(textwrap.dedent(source)).body[0]
    empty = cst.Module([])
    return {name: empty.code_for_node(stmt).strip() for name, stmt in arrays_changed_in_place(fn).items()}


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def f(x):\n    x += 1\n", {"x": "x += 1"}),
        ("def f(x):\n    a = x\n    a += 1\n", {"x": "a += 1"}),
        ("def f(x):\n    x[0] = 5\n", {"x": "x[0] = 5"}),
        ("def f(x):\n    x[1:] *= 2\n", {"x": "x[1:] *= 2"}),
        ("def f(x):\n    np.add(x, 1, out=x)\n", {"x": "np.add(x, 1, out=x)"}),
        ("def f(x):\n    np.divmod(x, 2, out=(x, y))\n", {"x": "np.divmod(x, 2, out=(x, y))"}),
        ("def f(x):\n    if x.sum() > 0:\n        x += 1\n", {"x": "x += 1"}),
        ("def f(x):\n    for i in range(3):\n        x[i] = 0\n", {"x": "x[i] = 0"}),
        ("def f(x):\n    a = x[1:]\n    a += 1\n", {"x": "a += 1"}),
        ("def f(x):\n    v = x.reshape(2, 2).T\n    v[0] = 1\n", {"x": "v[0] = 1"}),
        ("def f(x):\n    for row in x:\n        row *= 2\n", {"x": "row *= 2"}),
        ("def f(x):\n    x.sort()\n", {"x": "x.sort()"}),
        ("def f(xs, d):\n    xs[0] += 1\n    d['w'][0] = 7\n", {"xs": "xs[0] += 1", "d": "d['w'][0] = 7"}),
        ("def f(x, y):\n    a, b = y, x\n    b += 1\n", {"x": "b += 1"}),
    ],
)
def test_changes_in_place_are_found(source, expected):
    assert changed(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    y = x * 2\n    y += 1\n    return y\n",
        "def f(x):\n    n = x.shape[0]\n    n -= 1\n    return n\n",
        "def f(x):\n    s = 0.0\n    for v in x:\n        s += v\n    return s\n",
        "def f(x):\n    y = x.sum()\n    y += 1\n",
        "def f(x):\n    def g(x):\n        x += 1\n    return g\n",
        "def f():\n    a = [1]\n    a[0] = 2\n",
    ],
)
def test_other_code_changes_no_parameter(source):
    assert changed(source) == {}


def test_a_lambda_is_a_scope_of_its_own():
    assert changed("def f(x):\n    g = lambda x: x.sort()\n    return g\n") == {}
