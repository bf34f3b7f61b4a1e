"""Errors as Python raises them, in the user's words.

A name read before its first assignment raises ``UnboundLocalError`` (a subclass of
``NameError``) as in Python; a ``del`` in a traced branch, an attribute write on a Python
object in a traced loop and the like are either Python's result or a located laxify error
that names the user's variable and line and shows no laxify-made name (``_lx...``), no
object address.
"""

from __future__ import annotations

import re

import jax.numpy as jnp
import pytest

import laxify
from fidelity_tools import Raised, assert_clean_error, check_raises_like_python, outcomes
from harness import assert_trees_close

XS = jnp.array([1.0, 2.0, 3.0], jnp.float32)


# -- a name read before its first assignment -----------------------------------------------

def read_before_assignment_in_python_loop(x):
    out = []
    for v in [0, 1]:
        out.append(acc is None)  # noqa: F821 - the point of the test
        acc = v
    return out


def read_before_assignment_in_static_range(x):
    total = x
    for i in range(3):
        total = total + prev  # noqa: F821
        prev = x * i
    return total


def read_before_assignment_in_python_while(x, n):
    i = 0
    while i < n:
        x = x + step  # noqa: F821
        step = 1.0
        i += 1
    return x


def first_set_in_python_while_that_ran_zero_times(x, n):
    i = 0
    while i < n:
        z = x * 2
        i += 1
    return z + 1


def first_set_in_python_for_that_ran_zero_times(x, n):
    for i in range(n):
        z = x * i
    return z + 1


def first_set_in_python_while_returned(x, n):
    i = 0
    while i < n:
        z = x * 2
        i += 1
    return jnp.sin(z)


def undefined_under_python_if(x, flag):
    if flag:
        y = x * 2
    return y + 1


def deleted_under_python_if(x, flag):
    y = x + 1
    if flag:
        del y
    return y


@pytest.mark.parametrize("fn, args, name, snippet", [
    pytest.param(read_before_assignment_in_python_loop, (XS,), "acc", "out.append(acc is None)",
                 id="python_loop"),
    pytest.param(read_before_assignment_in_static_range, (XS,), "prev", "total = total + prev",
                 id="static_range"),
    pytest.param(read_before_assignment_in_python_while, (XS, 2), "step", "x = x + step",
                 id="python_while"),
    pytest.param(first_set_in_python_while_that_ran_zero_times, (XS, 0), "z", "return z + 1",
                 id="zero_trip_while"),
    pytest.param(first_set_in_python_for_that_ran_zero_times, (XS, 0), "z", "return z + 1",
                 id="zero_trip_for"),
    pytest.param(first_set_in_python_while_returned, (XS, 0), "z", "return jnp.sin(z)",
                 id="zero_trip_while_into_jnp"),
    pytest.param(undefined_under_python_if, (XS, False), "y", "return y + 1",
                 id="python_if"),
    pytest.param(deleted_under_python_if, (XS, True), "y", "return y", id="python_del"),
])
def test_unbound_local_as_in_python(fn, args, name, snippet):
    check_raises_like_python(fn, *args, error=UnboundLocalError, name=name, snippet=snippet)


def test_zero_trip_python_while_runs_when_it_does_run():
    fn = laxify.to_static(first_set_in_python_while_that_ran_zero_times, fallback="error")
    assert_trees_close(first_set_in_python_while_that_ran_zero_times(XS, 2), fn(XS, 2), what="to_static")


def read_before_assignment_in_traced_while(x):
    while x.sum() < 10:
        x = x + prev  # noqa: F821
        prev = x
    return x


def test_read_before_assignment_in_traced_loop_is_a_located_error():
    """Python raises on the first iteration; laxify may say so before running (ConversionError)."""
    results = outcomes(read_before_assignment_in_traced_while, XS)
    eager = results.pop("eager")
    assert isinstance(eager, Raised) and isinstance(eager.exc, UnboundLocalError)
    for way, result in results.items():
        assert isinstance(result, Raised), f"{way} returned {result!r}"
        assert isinstance(result.exc, (UnboundLocalError, laxify.ConversionError)), (way, result)
        assert_clean_error(result.exc, read_before_assignment_in_traced_while, "prev",
                           ("x = x + prev", "while x.sum() < 10:"))


# -- del in a traced branch ------------------------------------------------------------------

def deleted_in_traced_branch_then_used(x):
    y = x + 1
    if x.sum() > 0:
        del y
    return y


def deleted_and_reassigned_in_traced_branch(x):
    y = x + 1
    if x.sum() > 0:
        del y
        y = x * 2
    return y


def deleted_in_traced_branch_unused(x):
    y = x + 1
    if x.sum() > 0:
        del y
    else:
        y = y * 2
    return x


def deleted_in_traced_branch_without_else(x):
    y = x + 1
    if x.sum() > 0: del y
    return x


def deleted_in_scanned_loop_then_reassigned(x):
    y = x + 1
    for i in range(3):
        if x.sum() > 0:
            del y
            y = x * i
    return y


@pytest.mark.parametrize("x", [XS, -XS], ids=["deleting_path", "keeping_path"])
def test_del_in_traced_branch_then_use_is_a_located_error(x):
    fn = deleted_in_traced_branch_then_used
    results = outcomes(fn, x)
    eager = results.pop("eager")
    for way, result in results.items():
        if not isinstance(result, Raised):
            assert not isinstance(eager, Raised), f"{way} returned {result!r}, Python raises {eager!r}"
            assert_trees_close(eager, result, what=way)
            continue
        assert isinstance(result.exc, (laxify.ConversionError, UnboundLocalError)), (way, result)
        assert_clean_error(result.exc, fn, "y", "if x.sum() > 0:" if isinstance(
            result.exc, laxify.ConversionError) else "return y")
        assert 'File "' in str(result.exc) or isinstance(result.exc, UnboundLocalError)


@pytest.mark.parametrize("fn", [
    deleted_and_reassigned_in_traced_branch,
    deleted_in_traced_branch_unused,
    deleted_in_traced_branch_without_else,
    deleted_in_scanned_loop_then_reassigned,
], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [XS, -XS], ids=["deleting_path", "keeping_path"])
def test_del_in_traced_branch_without_later_use_matches_python(fn, x):
    results = outcomes(fn, x)
    eager = results.pop("eager")
    for way, result in results.items():
        assert_trees_close(eager, result, what=way)


# -- attribute writes on Python objects inside traced loops ------------------------------------

class Box:
    pass


BOX = Box()


def attribute_of_local_object_in_traced_while(x):
    foo = Box()
    foo.c = 0.0
    while x.sum() < 10:
        x = x + 1
        foo.c = foo.c + 1
    return foo.c


def attribute_of_local_class_in_traced_while(x):
    class Local:
        pass

    foo = Local()
    foo.c = 0.0
    while x.sum() < 10:
        x = x + 1
        foo.c = foo.c + 1
    return foo.c


def attribute_of_argument_in_traced_branch(x, foo):
    for i in range(3):
        if x.sum() > 0:
            foo.c = x.sum()
    return x


def attribute_of_global_in_traced_branch_loop(x):
    BOX.c = 0.0
    for i in range(3):
        if x.sum() > 0:
            BOX.c = BOX.c + x.sum()
    return BOX.c


def attribute_of_local_object_in_static_loop(x):
    foo = Box()
    foo.c = 0.0
    for i in range(3):
        foo.c = foo.c + x.sum()
    return foo.c


ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _check_attribute_write(fn, args, name, snippet):
    results = outcomes(fn, *args)
    eager = results.pop("eager")
    assert not isinstance(eager, Raised), eager
    for way, result in results.items():
        if isinstance(result, Raised):
            assert isinstance(result.exc, laxify.ConversionError), f"{way} raised {result!r}"
            message = str(result.exc)
            assert not ADDRESS.search(message), f"object address in the message:\n{message}"
            assert "<locals>" not in message, message
            assert_clean_error(result.exc, fn, name, snippet)
        else:
            assert_trees_close(eager, result, what=way)


@pytest.mark.parametrize("fn, args, name, snippet", [
    pytest.param(attribute_of_local_object_in_traced_while, (XS,), "foo", "while x.sum() < 10:",
                 id="local_object"),
    pytest.param(attribute_of_local_class_in_traced_while, (XS,), "foo", "while x.sum() < 10:",
                 id="local_class"),
    pytest.param(attribute_of_argument_in_traced_branch, (XS, Box()), "foo", "if x.sum() > 0:",
                 id="argument"),
    pytest.param(attribute_of_global_in_traced_branch_loop, (XS,), "BOX", ("if x.sum() > 0:", "for i in range(3):"),
                 id="global"),
    pytest.param(attribute_of_local_object_in_static_loop, (XS,), "foo", "foo.c = foo.c + x.sum()",
                 id="static_loop"),
])
def test_attribute_write_in_traced_loop_is_right_or_clearly_refused(fn, args, name, snippet):
    _check_attribute_write(fn, args, name, snippet)


def read_conditionally_before_assignment(x):
    out = []
    for v in [0, 1, 2]:
        if v > 0:
            out.append(prev is None)  # noqa: F821
        prev = v
    return out


def test_a_name_read_only_once_it_has_a_value_is_fine():
    assert laxify.to_static(read_conditionally_before_assignment)(XS) == read_conditionally_before_assignment(XS)
