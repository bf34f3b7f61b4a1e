"""get_source: where a function's text comes from (files, exec + linecache, methods, nested,
decorated functions, lambdas) and the error when there is none."""

from __future__ import annotations

import functools
import itertools
import linecache
import textwrap

import pytest

import laxify
from laxify.transpiler.source import get_source

with open(__file__) as _fh:
    FILE_LINES = _fh.read().splitlines(keepends=True)


def line_of(marker: str) -> int:
    """The 1-based line of this file that carries ``marker`` in a comment."""
    found = [k for k, text in enumerate(FILE_LINES, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


_names = itertools.count()


def exec_registered(src: str, name: str):
    """Define ``name`` by exec'ing ``src`` under a fresh file name registered in linecache."""
    src = textwrap.dedent(src).lstrip("\n")
    filename = f"<laxify-source-test-{next(_names)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name], filename


# -- functions in this file -------------------------------------------------------------

def plain(x, n):  # <plain>
    # a comment kept with the source
    return x + n


def _make_nested():
    scale = 3

    def nested(x):  # <nested>
        return x * scale

    return nested


class Model:
    def method(self, x):  # <method>
        return x - 1


def _register(fn):
    return fn


def _wrap(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return 2 * fn(*args)

    return wrapper


@_register  # <decorated>
def decorated(x):
    return -x


@_wrap
def wrapped(x):
    return x + 1


def test_function_in_a_file():
    src = get_source(plain)
    first = line_of("<plain>")
    assert src.filename == __file__
    assert (src.first_line, src.indent) == (first, 0)
    assert src.node.name.value == "plain"
    assert src.module.code == (
        "def plain(x, n):  # <plain>\n"
        "    # a comment kept with the source\n"
        "    return x + n\n"
    )
    assert src.lines == FILE_LINES
    assert src.lines[src.first_line - 1] == "def plain(x, n):  # <plain>\n"


def test_nested_function_is_dedented_and_mapped_back():
    src = get_source(_make_nested())
    first = line_of("<nested>")
    assert (src.first_line, src.indent) == (first, 4)
    assert src.module.code.startswith("def nested(x):  # <nested>\n    return x * scale\n")
    assert src.lines[src.first_line] == "        return x * scale\n"


@pytest.mark.parametrize("fn", [Model.method, Model().method], ids=["function", "bound"])
def test_method(fn):
    src = get_source(fn)
    assert (src.first_line, src.indent) == (line_of("<method>"), 4)
    assert src.node.name.value == "method"
    assert src.module.code.startswith("def method(self, x):  # <method>\n")


def test_decorated_function_keeps_its_decorator_lines():
    src = get_source(decorated)
    assert src.first_line == line_of("<decorated>")
    assert src.node.name.value == "decorated"
    assert [d.decorator.value for d in src.node.decorators] == ["_register"]
    assert src.module.code == "@_register  # <decorated>\ndef decorated(x):\n    return -x\n"


def test_functools_wraps_wrapper_is_the_wrapper_source():
    src = get_source(wrapped)
    assert src.node.name.value == wrapped.__code__.co_name


def test_exec_source_registered_in_linecache():
    fn, filename = exec_registered(
        """
        import math

        def g(x):
            # scaled
            return x * math.pi
        """,
        "g",
    )
    src = get_source(fn)
    assert src.filename == filename
    assert (src.first_line, src.indent) == (3, 0)
    assert src.module.code == "def g(x):\n    # scaled\n    return x * math.pi\n"
    assert src.lines[src.first_line - 1:] == ["def g(x):\n", "    # scaled\n", "    return x * math.pi\n"]


def test_lambda_without_parameters():
    src = get_source(lambda: 41 + 1)  # <lambda0>
    assert src.filename == __file__
    assert src.node.name.value == "_lambda_"
    assert src.module.code == "def _lambda_():\n    return 41 + 1\n"
    # Line 2 of the synthesised def (the return) is the lambda's own line.
    assert src.first_line + 1 == line_of("<lambda0>")


def test_lambda_with_parameters():
    src = get_source(lambda a, b: a * b)
    assert src.module.code == "def _lambda_(a, b):\n    return a * b\n"


FIRST, SECOND = (lambda: 1), (lambda: 2)


def test_two_lambdas_on_one_line_pick_the_right_one():
    assert get_source(FIRST).module.code == "def _lambda_():\n    return 1\n"
    assert get_source(SECOND).module.code == "def _lambda_():\n    return 2\n"


def test_two_lambdas_with_different_parameters_pick_by_parameters():
    first, second = (lambda a: a + 1), (lambda b: b * 2)
    assert get_source(first).module.code == "def _lambda_(a):\n    return a + 1\n"
    assert get_source(second).module.code == "def _lambda_(b):\n    return b * 2\n"


def test_two_lambdas_on_an_indented_line_pick_the_right_one():
    first, second = (lambda: 1), (lambda: 2)
    assert get_source(first).module.code == "def _lambda_():\n    return 1\n"
    assert get_source(second).module.code == "def _lambda_():\n    return 2\n"


# -- no source ----------------------------------------------------------------------------

def test_exec_without_linecache_is_a_conversion_error_with_a_fix():
    namespace: dict = {}
    exec("def lost(x):\n    return x\n", namespace)
    with pytest.raises(laxify.ConversionError) as info:
        get_source(namespace["lost"])
    message = str(info.value)
    assert message.startswith("laxify cannot convert lost: ")  # names the function
    assert "no source text is available for '<string>'" in message  # says why
    assert "register exec'd source in linecache" in message  # says how to fix
    assert "laxify.do_not_convert" in message


@pytest.mark.parametrize("fn, name", [(len, "len"), (functools.partial(plain, 1), "functools.partial")])
def test_non_python_functions_are_conversion_errors(fn, name):
    with pytest.raises(laxify.ConversionError) as info:
        get_source(fn)
    message = str(info.value)
    assert name in message.splitlines()[0]
    assert "it is not a Python function (no __code__)" in message
    assert "laxify.do_not_convert" in message
