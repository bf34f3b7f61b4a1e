"""The assert converter alone: golden tests (source before, source after), and the functions it
converts run eagerly and converted on inputs that take every path.

PYTEST_DONT_REWRITE: the functions here use `assert`, whose bytecode pytest's rewriting would
change (laxify then refuses the source, which no longer matches the code that runs).
"""

from __future__ import annotations

import types

import jax
import libcst as cst
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

import laxify
from golden import check, check_unchanged
from harness import assert_trees_close, check as check_equivalent, control_flow_prims
from laxify.transpiler.converters import assert_statements
from laxify.transpiler.converters.base import Context


# -- golden: what becomes `_lx.assert_` -----------------------------------------------------

def test_assert_without_a_message_passes_only_its_test():
    check(assert_statements, """
    def f(x):
        assert x.sum() > 0
        return x
    """, """
    def f(x):
        _lx.assert_(x.sum() > 0)
        return x
    """)


def test_a_plain_string_or_bytes_literal_is_passed_as_it_is():
    # A literal has nothing to evaluate: no thunk.
    check(assert_statements, """
    def f(x, n):
        assert n > 0, 'single quotes'
        assert n < 9, "double quotes"
        assert n != 3, b"bytes"
        return x
    """, """
    def f(x, n):
        _lx.assert_(n > 0, 'single quotes')
        _lx.assert_(n < 9, "double quotes")
        _lx.assert_(n != 3, b"bytes")
        return x
    """)


def test_a_message_that_formats_values_becomes_a_lazy_template():
    """f-strings, `str.format` on a literal and `"..." + str(v)` become `format_` calls (values
    formatted when the check runs), behind a lambda: Python evaluates the message only when the
    assert fails."""
    check(assert_statements, """
    def f(x, n):
        assert n > 0, f"n={n}"
        assert x.max() < 9, f"max {x.max():.1f} too big"
        assert n < 5, "{} is too big".format(n)
        assert n != 2, "n=" + str(n) + " " + repr(x)
        return x
    """, """
    def f(x, n):
        _lx.assert_(n > 0, lambda: _lx.printing.format_("n={0}", n))
        _lx.assert_(x.max() < 9, lambda: _lx.printing.format_("max {0:.1f} too big", x.max()))
        _lx.assert_(n < 5, lambda: _lx.printing.format_("{} is too big", n))
        _lx.assert_(n != 2, lambda: _lx.printing.format_("n={0!s} {1!r}", n, x))
        return x
    """)


def test_any_other_message_is_evaluated_lazily_as_written():
    """Calls, tuples, names, implicitly concatenated literals: a thunk of the expression."""
    check(assert_statements, """
    def f(x, n, text):
        assert n > 0, describe(x)
        assert n < 9, ("n", n)
        assert n != 3, text
        assert n != 4, "two " "parts"
        return x
    """, """
    def f(x, n, text):
        _lx.assert_(n > 0, lambda: describe(x))
        _lx.assert_(n < 9, lambda: ("n", n))
        _lx.assert_(n != 3, lambda: text)
        _lx.assert_(n != 4, lambda: "two " "parts")
        return x
    """)


def test_asserts_in_blocks_and_on_lines_with_other_statements_keep_their_place():
    check(assert_statements, """
    def f(x, n):
        y = x; assert n > 0; z = y
        for i in range(n):
            if x[i] > 0:
                assert x[i] < 5, "small"
        while n > 0:
            assert n < 9  # comment stays
            n = n - 1
        return z
    """, """
    def f(x, n):
        y = x; _lx.assert_(n > 0); z = y
        for i in range(n):
            if x[i] > 0:
                _lx.assert_(x[i] < 5, "small")
        while n > 0:
            _lx.assert_(n < 9)  # comment stays
            n = n - 1
        return z
    """)


# -- golden: what stays Python's `assert` ---------------------------------------------------

def test_a_message_that_binds_a_name_or_yields_is_left_as_written():
    """A thunk would make `:=` bind a name of the lambda, and a lambda cannot `yield`."""
    check_unchanged(assert_statements, """
    def f(x, n):
        assert n > 0, (m := "bad")
        assert n < 9, (yield n)
        assert n != 3, [k for k in range(n) if (last := k)]
        return x, m
    """)


def test_a_message_that_awaits_is_left_as_written():
    check(assert_statements, """
    async def f(x, n):
        assert n > 0, await describe(n)
        assert n < 9, "literal"
        return x
    """, """
    async def f(x, n):
        assert n > 0, await describe(n)
        _lx.assert_(n < 9, "literal")
        return x
    """)


def test_asserts_of_a_nested_def_are_left_alone():
    # A nested function is converted on its own when it is called.
    check(assert_statements, """
    def f(x):
        def g(v):
            assert v > 0, "inner"
            return v
        assert x.sum() > 0, "outer"
        return g(x)
    """, """
    def f(x):
        def g(v):
            assert v > 0, "inner"
            return v
        _lx.assert_(x.sum() > 0, "outer")
        return g(x)
    """)


def test_a_function_without_asserts_is_the_same_tree():
    fn = cst.parse_module("def f(x):\n    return x\n").body[0]
    assert assert_statements.transform(fn, Context({})) is fn


def test_under_python_O_asserts_are_left_to_compile_away():
    """`python -O` removes asserts: the converter, compiled as `-O` compiles it, leaves them as
    written (and Python then drops them)."""
    path = assert_statements.__file__
    with open(path) as file:
        code = compile(file.read(), path, "exec", optimize=1)  # `__debug__` is False, as under -O
    optimized = types.ModuleType("assert_statements_under_O")
    exec(code, optimized.__dict__)
    check_unchanged(optimized, """
    def f(x):
        assert x.sum() > 0, "bad"
        return x
    """)
    check(assert_statements, """
    def f(x):
        assert x.sum() > 0, "bad"
        return x
    """, """
    def f(x):
        _lx.assert_(x.sum() > 0, "bad")
        return x
    """)


# -- equivalence: asserts on Python values are Python's ------------------------------------

X = jnp.array([1.0, 2.0, 3.0], jnp.float32)
DESCRIBED: list = []


def describe(n):
    DESCRIBED.append(n)
    return f"n is {n}"


def assert_on_python_values(x, n):
    assert n > 0, describe(n)
    assert n < 10, "n below ten"
    assert x.ndim == 1
    if x.sum() > n:
        x = x * n
    return x


def test_passing_python_asserts_run_the_traced_rest_and_never_build_their_message():
    DESCRIBED.clear()
    check_equivalent(assert_on_python_values, (X, 2), (X, 9), (-X, 3), expect_prims={"cond"})
    assert DESCRIBED == []  # the message is evaluated only when the assert fails


@pytest.mark.parametrize("n, message", [(0, "n is 0"), (12, "n below ten")])
def test_failing_python_asserts_raise_pythons_error_with_its_message(n, message):
    ways = {
        "eager": lambda: assert_on_python_values(X, n),
        "to_static": lambda: laxify.to_static(assert_on_python_values)(X, n),
        "jit(convert)": lambda: jax.jit(laxify.convert(assert_on_python_values), static_argnums=1)(X, n),
    }
    for way, call in ways.items():
        DESCRIBED.clear()
        with pytest.raises(AssertionError) as info:
            call()
        # (JAX adds a note about its filtered traceback frames to errors raised in a trace.)
        assert str(info.value).splitlines()[0] == message, (way, str(info.value))
        assert (n in DESCRIBED) == (message == "n is 0"), (way, DESCRIBED)


def assert_with_walrus_message(x, n):
    assert n > 0, (m := f"bad {n}")
    return x * n


def test_an_assert_left_as_python_still_passes_and_fails_as_python():
    check_equivalent(assert_with_walrus_message, (X, 2))
    for call in (lambda: assert_with_walrus_message(X, 0),
                 lambda: laxify.to_static(assert_with_walrus_message)(X, 0)):
        with pytest.raises(AssertionError, match="^bad 0"):
            call()


# -- equivalence: asserts on traced values, checked at run time ---------------------------

def asserts_on_traced_values(x):
    assert x.sum() > 0, f"sum {x.sum():.1f} not positive"
    if x[0] > 1:
        assert x[1] < 5, "second is " + str(x[1])
    return x + 1


@pytest.mark.parametrize("x", [X, -X, X * 2, jnp.array([2.0, 7.0, 1.0])],
                         ids=["passes", "first-fails", "branch-passes", "branch-fails"])
def test_checked_asserts_fail_exactly_where_python_fails_with_the_run_values(x):
    static = laxify.to_static(asserts_on_traced_values)  # (checked by default)
    checked = jax.jit(checkify.checkify(laxify.convert(asserts_on_traced_values, checks=True)))
    error, out = checked(x)
    try:
        expected = asserts_on_traced_values(x)
    except AssertionError as e:
        python_message = str(e)
        with pytest.raises(AssertionError) as info:
            static(x)
        # Python's message; checkify's text of it adds where the assert stands.
        assert str(info.value) == python_message, str(info.value)
        assert error.get() is not None and error.get().startswith(python_message), error.get()
        return
    assert_trees_close(expected, static(x), what="to_static")
    assert error.get() is None
    assert_trees_close(expected, out, what="checkify(convert(checks=True))")


def test_the_traced_if_around_a_checked_assert_is_a_cond():
    checked = checkify.checkify(laxify.convert(asserts_on_traced_values, checks=True))
    assert control_flow_prims(jax.make_jaxpr(checked)(X)) == {"cond"}
