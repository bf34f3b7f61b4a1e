"""`print` prints what Python prints, in Python's order: a traced value prints its value
(each time the program runs, through ``jax.debug.print``), never a tracer, and prints of
static and traced values come out in the order the statements run.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import laxify
from fidelity_tools import printed
from harness import assert_trees_close, static_positions

X = jnp.float32(1.5)
XS = jnp.array([1.0, 2.0], jnp.float32)


def fstring_of_traced(x):
    print(f"x = {x}")
    return x + 1


def fstring_with_format_spec(x):
    print(f"x = {x:.2f}")
    return x + 1


def format_method_of_traced(x):
    print("x is {}".format(x))
    return x + 1


def str_concat_of_traced(x):
    print("x=" + str(x))
    return x + 1


def static_traced_static(x):
    print("before")
    print("value", x)
    print("after")
    return x * 2


def traced_then_static(x):
    print("value", x)
    print("done")
    return x * 2


def prints_in_static_loop(x):
    for i in range(3):
        print("step", i)
        print("value", x * i)
    return x


def traced_prints_in_static_loop(x):
    for i in range(4):
        x = x + 1
        print("x", x)
    return x


def prints_in_traced_while(x):
    while x < 5:
        x = x + 1
        print("x", x)
    return x


def print_in_taken_branch_only(x):
    if x > 0:
        print("positive", x)
    else:
        print("not positive", x)
    return x


def print_with_sep_and_end(x):
    print("a", x, "b", sep="|", end="!\n")
    return x


def print_of_several_traced(x, y):
    print("x", x, "y", y)
    print("sum", x + y)
    return x + y


def print_static_only(x):
    print("static only")
    return x + 1


def static_prints_in_traced_branches(x):
    if x > 0:
        print("positive")
    else:
        print("not positive")
    return x


def print_to_a_file_with_python_sep_and_end(x):
    import sys
    print("x", x, sep=None, end=None, file=sys.stdout)
    print("flushed", f"{x!r}", sep="", flush=True)
    return x


def _run_ways(fn, args):
    statics = static_positions(args)
    yield "to_static", laxify.to_static(fn, fallback="error")
    yield "jit(convert)", jax.jit(laxify.convert(fn), static_argnums=statics)


@pytest.mark.parametrize("fn, args", [
    pytest.param(fstring_of_traced, (X,), id="fstring"),
    pytest.param(fstring_with_format_spec, (X,), id="fstring_format_spec"),
    pytest.param(format_method_of_traced, (X,), id="str_format"),
    pytest.param(str_concat_of_traced, (X,), id="str_concat"),
    pytest.param(static_traced_static, (X,), id="static_traced_static"),
    pytest.param(traced_then_static, (X,), id="traced_then_static"),
    pytest.param(prints_in_static_loop, (X,), id="static_loop_mixed"),
    pytest.param(traced_prints_in_static_loop, (X,), id="static_loop_traced_only"),
    pytest.param(prints_in_traced_while, (X,), id="traced_while"),
    pytest.param(print_in_taken_branch_only, (X,), id="branch_taken"),
    pytest.param(print_in_taken_branch_only, (-X,), id="branch_not_taken"),
    pytest.param(print_with_sep_and_end, (XS,), id="sep_end"),
    pytest.param(print_of_several_traced, (X, XS), id="several_traced"),
    pytest.param(print_static_only, (X,), id="static_only"),
    pytest.param(static_prints_in_traced_branches, (X,), id="static_branch_taken"),
    pytest.param(static_prints_in_traced_branches, (-X,), id="static_branch_not_taken"),
    pytest.param(print_to_a_file_with_python_sep_and_end, (XS,), id="file_none_sep_end_flush"),
])
def test_first_call_prints_as_python(fn, args):
    expected, eager_out = printed(lambda: fn(*args))
    assert eager_out, "the oracle prints something"
    for way, run in _run_ways(fn, args):
        got, out = printed(lambda: run(*args))
        assert_trees_close(expected, got, what=way)
        assert out == eager_out, f"{way} printed\n{out!r}\nPython printed\n{eager_out!r}"


@pytest.mark.parametrize("fn", [
    pytest.param(fstring_of_traced, id="fstring"),
    pytest.param(format_method_of_traced, id="str_format"),
    pytest.param(traced_then_static, id="traced_print_call"),
    pytest.param(str_concat_of_traced, id="str_concat"),
    pytest.param(print_static_only, id="static_only"),
])
def test_traced_print_prints_the_value_on_every_run(fn):
    static_fn = laxify.to_static(fn, fallback="error")
    for value in (1.5, 2.5, -4.0):
        x = jnp.float32(value)
        _, eager_out = printed(lambda: fn(x))
        _, out = printed(lambda: static_fn(x))
        first_line = eager_out.splitlines()[0]
        assert first_line in out.splitlines(), f"run with {value}: printed {out!r}, want {first_line!r}"
