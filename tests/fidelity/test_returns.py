"""`return` as Python means it: a `return` in `finally` overrides the one in `try`, code
after a `return` never runs (and does not make a branch "fall off" the function), a
structure mismatch between returns is reported in the user's words, and bound methods
bind their arguments as Python does.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from fidelity_tools import Raised, assert_clean_error, outcomes
from harness import CASE_FIELDS, assert_trees_close, case, check

XS = jnp.array([1.0, 2.0, 3.0], jnp.float32)


def _xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


# -- return in finally -------------------------------------------------------------------

def finally_return_overrides(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1
    return 0  # dead: the try always returns


def finally_return_overrides_array(x, flag):
    try:
        return x * 2
    finally:
        if flag > 0:
            return x + 1
    return x * 0


def finally_return_in_python_loop(x, k):
    for i in range(3):
        try:
            if k > i:
                return x * i
        finally:
            if k > 1:
                return -x
    return x * 10


def finally_return_after_traced_if(x, flag):
    if x.sum() > 0:
        x = x + 1
    try:
        return x * 2
    finally:
        if flag:
            return x


def finally_runs_after_try_falls_through(x, k):
    try:
        x = x + 1
    finally:
        if k > 0:
            return x * 3
    return x


def finally_rebinds_after_return_value_taken(x):
    r = x
    try:
        return r + 1
    finally:
        r = r * 100


def finally_returns_last_after_its_if(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1
        return 0


def finally_return_drops_the_exception(x, k):
    try:
        x = x + 1
        raise ValueError("from try")
    finally:
        if k > 0:
            return x * 0 + k


def nested_finally_returns(x, k):
    try:
        try:
            return x
        finally:
            if k > 1:
                return x * 2
    finally:
        if k > 0:
            return x * 3


FINALLY_CASES = [
    case(finally_returns_last_after_its_if, (0,), (1,), prims=()),
    case(finally_return_drops_the_exception, (XS, 1), prims=()),
    case(nested_finally_returns, (XS, 0), (XS, 1), (XS, 2), prims=()),
    case(finally_return_overrides, (0,), (1,), (0.5,), (-1.0,), prims=()),
    case(finally_return_overrides_array, (XS, 0), (XS, 1), prims=()),
    case(finally_return_in_python_loop, (XS, 0), (XS, 1), (XS, 2), (XS, 5), prims={"cond", "scan"}),
    case(finally_return_after_traced_if, (XS, True), (XS, False), (-XS, False), prims={"cond"}),
    case(finally_runs_after_try_falls_through, (XS, 1), (XS, 0), prims=()),
    case(finally_rebinds_after_return_value_taken, (XS,), prims=()),
]


@pytest.mark.parametrize(CASE_FIELDS, FINALLY_CASES)
def test_return_in_finally_overrides_as_in_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_exception_through_finally_that_does_not_return_propagates():
    with pytest.raises(ValueError, match="from try"):
        laxify.to_static(finally_return_drops_the_exception)(XS, 0)


def finally_return_on_traced_condition(x):
    try:
        return x * 2
    finally:
        if x.sum() > 0:
            return x + 1


@pytest.mark.parametrize("x", [XS, -XS], ids=["taken", "not_taken"])
def test_return_in_finally_on_traced_value_falls_back_with_a_warning(x):
    with pytest.warns(laxify.FallbackWarning, match="try"):
        got = laxify.to_static(finally_return_on_traced_condition)(x)
    assert_trees_close(finally_return_on_traced_condition(x), got, what="to_static")
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(finally_return_on_traced_condition))(x)
    assert_clean_error(info.value, finally_return_on_traced_condition, None, "try:")


# -- dead code after return ---------------------------------------------------------------

def dead_assignment_after_return_in_branch(x):
    if x.sum() > 0:
        return x + 1
        x = x * 2
    else:
        return x - 1


def dead_call_after_return_in_else(x):
    if x.sum() > 0:
        return x + 1
    else:
        return x - 1
        print("never")


def dead_code_after_return_in_elif(x):
    s = x.sum()
    if s > 5:
        return x * 3
    elif s > 0:
        return x * 2
        s = s + 1
    else:
        return -x


def dead_code_after_return_in_while(x):
    while x.sum() < 10:
        x = x + 1
        if x.sum() > 5:
            return x
            x = x + 100
    return x * 0


def dead_code_then_trailing_return(x):
    if x.sum() > 0:
        return x + 1
        x = x * 2
    return x - 1



DEAD_CASES = [
    case(dead_assignment_after_return_in_branch, (XS,), (-XS,), prims={"cond"}),
    case(dead_call_after_return_in_else, (XS,), (-XS,), prims={"cond"}),
    case(dead_code_after_return_in_elif, (XS,), (XS * 0.1,), (-XS,), prims={"cond"}),
    case(dead_code_after_return_in_while, (XS,), (XS * 5,), prims={"while", "cond"}),
    case(dead_code_then_trailing_return, (XS,), (-XS,), prims={"cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, DEAD_CASES)
def test_dead_code_after_return_never_runs(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- returns of different structures ------------------------------------------------------

def returns_tuple_or_array(x):
    if x.sum() > 0:
        return x, x
    return x


def returns_dicts_with_other_keys(x):
    if x.sum() > 0:
        return {"a": x}
    return {"b": x}


@pytest.mark.parametrize("fn, snippet", [
    pytest.param(returns_tuple_or_array, "return x, x", id="tuple_or_array"),
    pytest.param(returns_dicts_with_other_keys, 'return {"a": x}', id="dict_keys"),
])
def test_return_structure_mismatch_is_in_the_users_words(fn, snippet):
    results = outcomes(fn, XS)
    results.pop("eager")
    for way, result in results.items():
        assert isinstance(result, Raised) and isinstance(result.exc, laxify.ConversionError), (way, result)
        message = str(result.exc)
        assert "_lx" not in message, message
        assert "return value" in message or "returned value" in message, message
        assert f'File "{__file__}"' in message, message


def returns_in_loop_then_tuple(x):
    for v in x:
        if v > 1:
            return v
    return x, x


@pytest.mark.parametrize("fn, construct", [
    pytest.param(returns_tuple_or_array, "this `if` on a traced value", id="if"),
    pytest.param(returns_in_loop_then_tuple, "a `return` in this `for` loop", id="for"),
])
def test_return_structure_mismatch_names_the_sides_the_user_wrote(fn, construct):
    """The table's columns are the user's paths: for a `return` inside an earlier statement, the
    code after it (a tuple here) against that `return` (an array), in that order."""
    with pytest.raises(laxify.ConversionError) as info:  # eager Python runs it: refused here
        laxify.to_static(fn, fallback="error")(XS)
    message = str(info.value)
    assert construct in message, message
    if fn is returns_in_loop_then_tuple:
        header = next(line for line in message.splitlines() if " vs " in line)
        assert header.split() == ["code", "after", "it", "vs", "branch", "where", "a", "`return`", "ran"], message
        assert "structure: PyTreeDef((*, *))  vs  PyTreeDef(*)" in message, message


# -- bound methods ------------------------------------------------------------------------

class Net:
    def __init__(self, bias):
        self.bias = bias

    def forward(self, x, scale):
        return x * scale + self.bias

    def clipped(self, x):
        while x.sum() < 10:
            x = x * 2 + self.bias
        return x

    def branchy(self, x, flag):
        if flag and x.sum() > 0:
            return x * self.bias
        return x




@pytest.mark.parametrize("method, args", [
    pytest.param("forward", (jnp.ones(2, jnp.float32), 3.0), id="forward"),
    pytest.param("clipped", (XS,), id="clipped_traced_while"),
    pytest.param("branchy", (XS, True), id="branchy"),
])
def test_to_static_of_bound_method(method, args):
    net = Net(0.0 if method == "forward" else 1.0)
    bound = getattr(net, method)
    expected = bound(*args)
    got = laxify.to_static(bound)(*args)
    assert_trees_close(expected, got, what=f"to_static(net.{method})")


@pytest.mark.parametrize("method, args", [
    pytest.param("forward", (jnp.ones(2, jnp.float32), 3.0), id="forward"),
    pytest.param("clipped", (XS,), id="clipped_traced_while"),
])
def test_convert_of_bound_method(method, args):
    net = Net(0.0)
    bound = getattr(net, method)
    expected = bound(*args)
    statics = tuple(i for i, a in enumerate(args) if not isinstance(a, jax.Array))
    got = jax.jit(laxify.convert(bound), static_argnums=statics)(*args)
    assert_trees_close(expected, got, what=f"jit(convert(net.{method}))")


class Decorated:
    def __init__(self, bias):
        self.bias = bias

    @laxify.to_static
    def forward(self, x, scale):
        if x.sum() > 0:
            return x * scale + self.bias
        return x


def test_to_static_as_method_decorator():
    obj = Decorated(1.0)
    x = jnp.ones(2, jnp.float32)
    np.testing.assert_allclose(obj.forward(x, 3.0), Decorated.forward.python_function(obj, x, 3.0))
