"""The check that a source text is still the source of the function that runs must not depend
on where the modules the function reads were imported (another notebook cell, ``exec``'d code,
a module global assigned a module): CPython 3.13 compiles ``jnp.sum(x)`` differently when the
text that defines the function imports ``jnp`` itself. Real edits must still be caught.

Each case defines a function from one text (a "cell") in globals that another text filled,
registered in linecache as notebooks and IPython do, converts it with ``to_static`` (no
FallbackWarning: the suite turns one into an error) and compares it with the eager run."""

from __future__ import annotations

import itertools
import linecache
import math
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify.conversion import convert_function
from laxify.ir.errors import ConversionError

_names = itertools.count()


def _cell(src: str, namespace: dict, name: str = "f"):
    """Run ``src`` as a registered cell in ``namespace``; the function it defines."""
    src = textwrap.dedent(src).lstrip("\n")
    filename = f"<laxify-context-cell-{next(_names)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name], filename


def _imports_cell() -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile("import math\nimport jax.numpy as jnp\n", "<laxify-context-imports>", "exec"), namespace)
    return namespace


COLLATZ = """
    def f(x):
        steps = 0
        while jnp.abs(x) > 1:
            if jnp.remainder(x, 2) == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            steps += 1
        return steps
    """


def _agrees(fn, *args):
    want = fn(*args)
    got = laxify.to_static(fn)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    return got


def test_module_imported_in_another_cell():
    fn, _ = _cell(COLLATZ, _imports_cell())
    assert int(_agrees(fn, jnp.int32(27))) == 111
    prims = {e.primitive.name for e in jax.make_jaxpr(laxify.convert(fn))(jnp.int32(27)).jaxpr.eqns}
    assert "while" in prims


def test_module_global_assigned_a_module():
    # The array namespace by assignment, as array-API code does (`xp = jnp`).
    namespace = {"__name__": "__main__", "xp": jnp, "m": math}
    fn, _ = _cell("""
        def f(x):
            total = xp.zeros(())
            for i in range(4):
                if xp.sum(x) * m.cos(0.0) > i:
                    total = total + xp.max(x)
            return total
        """, namespace)
    for x in (jnp.ones(3), -jnp.ones(3), jnp.array([0.5, 1.0, 1.0])):
        _agrees(fn, x)


def test_some_modules_imported_in_the_cell_and_some_elsewhere():
    namespace = _imports_cell()
    fn, _ = _cell("""
        import numpy as onp

        def f(x):
            if jnp.sum(x) > onp.float32(0.0):
                return jnp.sqrt(jnp.abs(x)) * math.pi
            return onp.float32(2.0) * x
        """, namespace)
    for x in (jnp.ones(3), -jnp.ones(3)):
        _agrees(fn, x)


def test_nested_function_and_lambda_calling_a_module_of_another_cell():
    fn, _ = _cell("""
        def f(x):
            g = lambda v: jnp.tanh(v)

            def h(v):
                return jnp.exp(-v)

            if jnp.mean(x) > 0:
                x = g(x)
            else:
                x = h(x)
            return x
        """, _imports_cell())
    for x in (jnp.ones(3), -jnp.ones(3)):
        _agrees(fn, x)


@pytest.mark.parametrize("edit", [
    ("jnp.abs(x) > 1", "jnp.sign(x) > 1"),   # another function of the module
    ("3 * x + 1", "3 * x - 1"),              # an operator
    ("x // 2", "x // 3"),                    # a constant
    ("steps += 1", "steps += 1\n        steps += 1"),  # a statement added
    ("jnp.remainder(x, 2)", "jnp.remainder(x, 2, 1)"),  # a call's arguments
])
def test_a_real_edit_is_still_caught(edit):
    fn, filename = _cell(COLLATZ, _imports_cell())
    old, new = edit
    edited = textwrap.dedent(COLLATZ).lstrip("\n").replace(old, new)
    assert edited != textwrap.dedent(COLLATZ).lstrip("\n")
    linecache.cache[filename] = (len(edited), None, edited.splitlines(keepends=True), filename)
    with pytest.raises(ConversionError, match="not the source of the function that runs"):
        convert_function(fn)


def test_a_class_defined_in_the_function_is_not_an_edit():
    # CPython 3.13 keeps a class body's first line as a constant; the text is compiled at
    # another line than the file's.
    fn, _ = _cell("\n" * 30 + """
        def f(x):
            class Box:
                pass

            box = Box()
            box.v = jnp.zeros(())
            while jnp.sum(x) < 10:
                x = x + 1
            box.v = x
            return box.v
        """, _imports_cell())
    convert_function(fn)
