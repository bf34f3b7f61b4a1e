"""Texts seen before: a new code object of a text laxify converted already (a notebook cell
or a module re-run unchanged) reuses its parse and compile, never a stale text's; and the
converters that enter only the nodes above those they rewrite (calls, and/or/not, conditional
expressions) write what a transform entering every node writes."""

from __future__ import annotations

import gc
import itertools
import linecache
import textwrap

import jax
import jax.numpy as jnp
import libcst as cst
import numpy as np
import pytest

from laxify.conversion import convert_function
from laxify.ir.errors import ConversionError
from laxify.transpiler.converters import calls, conditional_expressions, logical_expressions
from laxify.transpiler.converters.base import Context
from laxify.transpiler.recent import Recent, clear_caches
from laxify.transpiler.source import get_source

_names = itertools.count()


def _register(src: str) -> str:
    filename = f"<laxify-seen-text-{next(_names)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    return filename


def _define(src: str, filename: str, name: str = "f"):
    namespace: dict = {"jnp": jnp}
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


CELL = textwrap.dedent("""\
    def f(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y
    """)


def test_a_cell_re_run_unchanged_converts_alike():
    clear_caches()
    filename = _register(CELL)
    first = _define(CELL, filename)
    second = _define(CELL, filename)  # the cell run again: a new code object, the same text
    assert first.__code__ is not second.__code__
    a, b = convert_function(first), convert_function(second)
    assert a.source == b.source
    assert get_source(first).module is get_source(second).module  # parsed once
    for x in (jnp.ones(3), -jnp.ones(3)):
        want = second(np.asarray(x))
        got = jax.jit(b.bind(second))(x)
        np.testing.assert_allclose(got, want)
    jaxpr = jax.make_jaxpr(b.bind(second))(jnp.ones(3))
    assert any(e.primitive.name == "cond" for e in jaxpr.jaxpr.eqns)


def test_a_cell_edited_after_its_run_is_still_stale():
    clear_caches()
    filename = _register(CELL)
    fn = _define(CELL, filename)
    convert_function(fn)  # its text now remembered
    # The cell edited (not run): linecache holds the new text for the same file.
    edited = CELL.replace("x * 2", "x * 3")
    linecache.cache[filename] = (len(edited), None, edited.splitlines(keepends=True), filename)
    copy = type(fn)(fn.__code__.replace(), fn.__globals__, "f")
    with pytest.raises(ConversionError, match="not the source of the function that runs"):
        convert_function(copy)
    # ... and the remembered text still converts the code it is the source of,
    linecache.cache[filename] = (len(CELL), None, CELL.splitlines(keepends=True), filename)
    convert_function(type(fn)(fn.__code__.replace(), fn.__globals__, "f"))
    # but not the code of the edited text: its compile is remembered, the comparison is not.
    ran_edited = _define(edited, filename)
    with pytest.raises(ConversionError, match="not the source of the function that runs"):
        convert_function(ran_edited)


def test_the_same_text_at_another_line_is_placed_there():
    clear_caches()
    body = textwrap.dedent("""\
        def f(x):
            for i in range(3):
                x = x + i
            return x
        """)
    early, late = _register(body), _register("\n" * 7 + body)
    a = convert_function(_define(body, early))
    b = convert_function(_define("\n" * 7 + body, late))
    lines_a = {op.span.line for op in a.ir.walk() if op.span is not None}
    lines_b = {op.span.line for op in b.ir.walk() if op.span is not None}
    assert lines_b == {line + 7 for line in lines_a}


class _Owner:
    """Stands for a code object: something weakly referenced."""


def test_recent_keeps_the_latest_entries():
    recent = Recent(2)
    owner = _Owner()
    recent.put("a", 1, owner)
    recent.put("b", 2, owner)
    assert recent.get("a", owner) == 1  # now the most recent
    recent.put("c", 3, owner)  # evicts "b", the least recently used
    assert recent.get("b", owner) is None and recent.get("a", owner) == 1 and recent.get("c", owner) == 3
    clear_caches()
    assert recent.get("a", owner) is None


def test_recent_entries_go_with_their_last_owner():
    recent = Recent(8)
    first, second, other = _Owner(), _Owner(), _Owner()
    recent.put("text", 1, first)
    recent.put("other", 2, other)
    assert recent.get("text", second) == 1  # a new code object of the same text owns it too
    del first
    gc.collect()
    assert recent.get("other", other) == 2 and "text" in recent.items  # the second owner lives
    del second
    gc.collect()
    assert recent.get("other", other) == 2 and "text" not in recent.items


def test_an_edited_cell_keeps_no_parse_of_its_old_versions():
    clear_caches()
    from laxify.transpiler import source
    for k in range(20):
        text = CELL.replace("x * 2", f"x * {k}")
        fn = _define(text, _register(text))
        convert_function(fn)
        del fn
        gc.collect()
    convert_function(_define(CELL, _register(CELL)))
    assert len(source._PARSED.items) <= 2 and len(source._COMPILED.items) <= 2


# -- the calls converter enters only the way to the calls it rewrites ------------------------

CALLS = textwrap.dedent("""\
    def f(self, x, ys):
        @deco(helper(1))
        def inner(z):
            return helper(z)
        a = jnp.sum(helper(x)) + len(ys)
        b = [helper(y) for y in ys if check(y)]
        c = (lambda v: helper(v))(x)
        d = f"{helper(x)} and {jnp.abs(x)}"
        if check(x):
            e = outer(1)(x)
        else:
            e = ys[0](x)
        g = super().method(x)
        h = self.step(x).sum()
        for k in helper(ys):
            while check(k):
                k = k - helper(1)
        return a, b, c, d, e, g, h, x.sum(), jnp.mean(x)
    """)


def _both(node: cst.FunctionDef, namespace: dict) -> tuple[str, str]:
    """The code of the calls converter's result, and of a transform entering every node."""
    names = frozenset({"self", "x", "ys", "inner", "a", "b", "c", "d", "e", "g", "h", "k", "y", "v", "z",
                       "__class__"})
    fast = calls.transform(node, Context({}, namespace=namespace, local_names=names))
    ctx = Context({}, namespace=namespace, local_names=names)
    full = node.visit(calls.CallTransformer(ctx, calls._first_param(node, ctx)))
    return cst.Module([fast]).code, cst.Module([full]).code


def test_the_calls_converter_writes_what_a_full_transform_writes():
    node = cst.parse_module(CALLS).body[0]
    fast, full = _both(node, {"jnp": jnp, "len": len})
    assert fast == full
    assert fast.count("_lx.call(") >= 10 and "super(__class__, self)" in fast
    assert "jnp.sum(_lx.call(helper, x))" in fast and "x.sum()" in fast


def test_the_calls_converter_rewrites_a_call_placed_twice():
    node = cst.parse_module("def f(x):\n    a = 1\n    b = 2\n    return a\n").body[0]
    call = cst.parse_expression("helper(x)")
    first, second, last = node.body.body
    twice = node.with_changes(body=node.body.with_changes(body=[
        first.with_changes(body=[first.body[0].with_changes(value=call)]),
        second.with_changes(body=[second.body[0].with_changes(value=call)]),  # the same node
        last,
    ]))
    fast, full = _both(twice, {})
    assert fast == full and fast.count("_lx.call(helper, x)") == 2


LOGICAL = textwrap.dedent("""\
    def f(x, ys, n):
        a = x > 0 and n < 3
        if not (x.sum() > 0 or check(x)) and n:
            b = [y for y in ys if y and not y < 0]
        while n > 0 and (x < 1 or x > 2):
            n = n - 1
        c = 1 if not n else 0 < x < 5
        assert ys or n, "empty"
        d = jnp.where(x > 0, x, -x) + (n or 1)
        def inner(z):
            return z and not z
        e = lambda v: v or n
        return a, b, c, d, e, -x, inner
    """)


def test_the_logical_and_conditional_converters_write_what_a_full_transform_writes():
    node = cst.parse_module(LOGICAL).body[0]
    fast = logical_expressions.transform(node, Context({}))
    full = node.visit(logical_expressions.LogicalTransformer(Context({})))
    fast_code, full_code = cst.Module([fast]).code, cst.Module([full]).code
    assert fast_code == full_code
    assert "condition=True" in fast_code and "truth_only=True" in fast_code and "_lx.compare(" in fast_code
    assert "return z and not z" in fast_code  # nested def: converted on its own
    fast = conditional_expressions.transform(node, Context({}))
    full = node.visit(conditional_expressions.ConditionalTransformer(Context({})))
    assert cst.Module([fast]).code == cst.Module([full]).code
    assert "_lx.ifexp(" in cst.Module([fast]).code
    untouched = cst.parse_module("def f(x):\n    return x + 1\n").body[0]
    assert logical_expressions.transform(untouched, Context({})) is untouched
    assert conditional_expressions.transform(untouched, Context({})) is untouched


def test_clear_cache_forgets_the_texts_too():
    from laxify.conversion import clear_cache

    filename = _register(CELL)
    fn = _define(CELL, filename)
    before = get_source(fn).module
    assert get_source(fn).module is before  # remembered
    clear_cache()
    assert get_source(fn).module is not before  # parsed again
