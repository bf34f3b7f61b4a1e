"""The iterables converter alone, golden tests: source before, source after (LibCST style)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from laxify.transpiler.converters import iterables
from laxify.transpiler.converters.base import Context


def convert(before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = iterables.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(before: str, after: str) -> None:
    assert convert(before) == textwrap.dedent(after).lstrip("\n")


def unchanged(before: str) -> None:
    check(before, before)


def test_enumerate():
    before = """
    def f(xs):
        s = 0.0
        for i, v in enumerate(xs):  # weighted
            s = s + i * v
        return s
    """
    after = """
    def f(xs):
        s = 0.0
        for i, v in _lx.iterable(enumerate)(xs):  # weighted
            s = s + i * v
        return s
    """
    check(before, after)


def test_enumerate_start_argument_is_kept():
    before = """
    def f(xs):
        for i, v in enumerate(xs, start=1):
            pass
        for i, v in enumerate(xs, 2):
            pass
    """
    after = """
    def f(xs):
        for i, v in _lx.iterable(enumerate)(xs, start=1):
            pass
        for i, v in _lx.iterable(enumerate)(xs, 2):
            pass
    """
    check(before, after)


def test_zip_of_several_and_starred():
    before = """
    def f(xs, ys, zs, rows):
        for a, b, c in zip(xs, ys, zs):
            pass
        for a, b in zip(xs, ys, strict=True):
            pass
        for t in zip(*rows):
            pass
    """
    after = """
    def f(xs, ys, zs, rows):
        for a, b, c in _lx.iterable(zip)(xs, ys, zs):
            pass
        for a, b in _lx.iterable(zip)(xs, ys, strict=True):
            pass
        for t in _lx.iterable(zip)(*rows):
            pass
    """
    check(before, after)


def test_reversed():
    before = """
    def f(xs):
        for v in reversed(xs):
            pass
    """
    after = """
    def f(xs):
        for v in _lx.iterable(reversed)(xs):
            pass
    """
    check(before, after)


def test_nested_calls_in_the_arguments():
    before = """
    def f(xs, ys):
        for i, (a, b) in enumerate(zip(xs, reversed(ys))):
            pass
        for i, v in enumerate(reversed(xs)):
            pass
    """
    after = """
    def f(xs, ys):
        for i, (a, b) in _lx.iterable(enumerate)(_lx.iterable(zip)(xs, _lx.iterable(reversed)(ys))):
            pass
        for i, v in _lx.iterable(enumerate)(_lx.iterable(reversed)(xs)):
            pass
    """
    check(before, after)


def test_nested_loops():
    before = """
    def f(xs, ys):
        for a in reversed(xs):
            for i, b in enumerate(ys):
                pass
    """
    after = """
    def f(xs, ys):
        for a in _lx.iterable(reversed)(xs):
            for i, b in _lx.iterable(enumerate)(ys):
                pass
    """
    check(before, after)


def test_range_len_and_other_iterables_are_unchanged():
    unchanged("""
    def f(xs, d):
        for i in range(len(xs)):
            pass
        for k, v in d.items():
            pass
        for v in xs:
            pass
        for p in sorted(zip(xs, xs)):
            pass
    """)


def test_calls_outside_a_for_header_are_unchanged():
    unchanged("""
    def f(xs, ys):
        pairs = list(zip(xs, ys))
        total = sum(i * v for i, v in enumerate(xs))
        for p in pairs:
            print(reversed(p), [a for a, b in zip(xs, ys)])
        return total
    """)


@pytest.mark.parametrize("binding", [
    "def f(xs, zip):",
    "def f(xs, *zip):",
    "def f(xs, **zip):",
    "def f(xs, *, zip=None):",
])
def test_builtin_name_that_is_a_parameter_is_not_rewritten(binding):
    unchanged(f"""
    {binding}
        for a, b in zip(xs, xs):
            pass
    """)


@pytest.mark.parametrize("statement", [
    "zip = my_zip",
    "from itertools import zip_longest as zip",
    "import zip",
    "def zip(*a): return a",
    "for zip in []: pass",
    "(zip := my_zip)",
])
def test_builtin_name_bound_in_the_function_is_not_rewritten(statement):
    unchanged(f"""
    def f(xs):
        {statement}
        for a, b in zip(xs, xs):
            pass
    """)


def test_arguments_of_a_rebound_name_are_not_rewritten_either():
    # The user's own `enumerate` gets exactly the builtin `zip` object it would get eagerly.
    unchanged("""
    def f(xs, enumerate):
        for i, (a, b) in enumerate(zip(xs, xs)):
            pass
    """)


def test_nested_function_is_left_alone():
    unchanged("""
    def f(xs):
        def g(ys):
            for i, v in enumerate(ys):
                pass
        return g(xs)
    """)


def test_async_for_is_left_alone():
    unchanged("""
    async def f(xs):
        async for v in reversed(xs):
            pass
    """)


def test_reversed_range_is_a_range_of_the_reversed_bounds():
    # `range(n)` of a traced `n` is no Python object to reverse: the loop runs over the range
    # the reversed one is, with bounds the runtime computes (in the program where traced).
    check("""
    def f(x, n):
        for i in reversed(range(1, n)):
            x = x + i
        return x
    """, """
    def f(x, n):
        _lx_bounds_1 = _lx.reversed_range(1, n)
        for i in range(_lx_bounds_1[0], _lx_bounds_1[1], _lx_bounds_1[2]):
            x = x + i
        return x
    """)


def test_reversed_of_a_shadowed_range_is_left_to_the_runtime():
    check("""
    def f(x, n, range):
        for i in reversed(range(n)):
            x = x + i
        return x
    """, """
    def f(x, n, range):
        for i in _lx.iterable(reversed)(range(n)):
            x = x + i
        return x
    """)
