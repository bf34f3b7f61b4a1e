"""`global` and `nonlocal` writes under traced control flow, and `loop_options`.

A write to a global or nonlocal name in a traced branch is never silently dropped: either
the name holds Python's value after the call (the function ran eagerly after a
``FallbackWarning``, or laxify made it work), or the call is a located laxify error.
``loop_options`` as a decorator does not change the function it decorates for other users,
and a loop cut short by ``max_iters`` says so.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from fidelity_tools import assert_clean_error
from harness import assert_trees_close

XS = jnp.array([1.0, 2.0, 3.0], jnp.float32)


def _xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


# -- global and nonlocal writes -------------------------------------------------------------

FLAG = 0
COUNT = 0
TOTAL = 0.0


def set_global_constant_in_traced_branch(x):
    global FLAG
    if x.sum() > 0:
        FLAG = 1
    return x


def increment_global_in_traced_branch(x):
    global COUNT
    if x.sum() > 0:
        COUNT = COUNT + 1
    return x


def set_global_in_traced_while(x):
    global TOTAL
    while x.sum() < 10:
        x = x + 1
        TOTAL = 5.0
    return x


def set_global_under_python_branch(x, flag):
    global FLAG
    if flag:
        FLAG = 1
    return x * 2


def read_global_in_traced_loop(x):
    while x.sum() < 10:
        x = x + TOTAL + 1
    return x


def nonlocal_write_in_traced_branch(x):
    c = 0

    def inner(x):
        nonlocal c
        if x.sum() > 0:
            c = 1
        return x

    inner(x)
    return x + c


def nonlocal_increment_in_traced_branch(x):
    c = 0

    def inner(x):
        nonlocal c
        if x.sum() > 0:
            c = c + 1
        return x

    inner(x)
    return x * 0 + c


def _reset():
    global FLAG, COUNT, TOTAL
    FLAG, COUNT, TOTAL = 0, 0, 0.0


def _globals():
    return {"FLAG": FLAG, "COUNT": COUNT, "TOTAL": TOTAL}


def _call_recording_fallbacks(call):
    """``call()``'s value or exception, and the FallbackWarnings it issued."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            result = call()
            jax.block_until_ready(result)
        except Exception as exc:  # noqa: BLE001 - the exception is the observation
            result = exc
    return result, [w for w in record if issubclass(w.category, laxify.FallbackWarning)]


def _assert_python_state_or_located_error(fn, x, snippet, way):
    _reset()
    expected = fn(x)
    expected_globals = _globals()
    _reset()
    if way == "to_static":
        call = lambda: laxify.to_static(fn)(x)  # noqa: E731
    else:
        call = lambda: jax.jit(laxify.convert(fn))(x)  # noqa: E731
    result, fallbacks = _call_recording_fallbacks(call)
    if isinstance(result, Exception):
        assert isinstance(result, laxify.ConversionError), f"{way} raised {type(result).__name__}: {result}"
        assert_clean_error(result, fn, None, snippet)
        return
    for w in fallbacks:
        assert "_lx" not in str(w.message), w.message
        assert w.filename == __file__, (w.filename, w.lineno)
    assert_trees_close(expected, result, what=way)
    assert _globals() == expected_globals, f"{way}: globals {_globals()}, Python leaves {expected_globals}"




@pytest.mark.parametrize("way", ["to_static", "jit(convert)"])
@pytest.mark.parametrize("fn, x, snippet", [
    pytest.param(set_global_constant_in_traced_branch, XS, "if x.sum() > 0:", id="constant-taken"),
    pytest.param(set_global_constant_in_traced_branch, -XS, "if x.sum() > 0:", id="constant-not_taken"),
    pytest.param(increment_global_in_traced_branch, XS, "if x.sum() > 0:", id="increment-taken"),
    pytest.param(increment_global_in_traced_branch, -XS, "if x.sum() > 0:", id="increment-not_taken"),
    pytest.param(set_global_in_traced_while, XS, "while x.sum() < 10:", id="constant_in_while"),
])
def test_global_write_in_traced_branch_is_never_dropped(fn, x, snippet, way):
    try:
        _assert_python_state_or_located_error(fn, x, snippet, way)
    finally:
        _reset()


def test_global_write_under_python_branch():
    try:
        fn = laxify.to_static(set_global_under_python_branch)
        np.testing.assert_allclose(fn(XS, False), XS * 2)
        assert FLAG == 0
        np.testing.assert_allclose(fn(XS, True), XS * 2)
        assert FLAG == 1
    finally:
        _reset()


def test_global_read_in_traced_loop():
    got = laxify.to_static(read_global_in_traced_loop, fallback="error")(XS)
    assert_trees_close(read_global_in_traced_loop(XS), got, what="to_static")




@pytest.mark.parametrize("fn, x", [
    pytest.param(nonlocal_write_in_traced_branch, XS, id="constant-taken"),
    pytest.param(nonlocal_write_in_traced_branch, -XS, id="constant-not_taken"),
    pytest.param(nonlocal_increment_in_traced_branch, XS, id="increment-taken"),
    pytest.param(nonlocal_increment_in_traced_branch, -XS, id="increment-not_taken"),
])
def test_nonlocal_write_in_traced_branch_is_never_dropped(fn, x):
    expected = fn(x)
    for way, call in (("to_static", lambda: laxify.to_static(fn)(x)),
                      ("jit(convert)", lambda: jax.jit(laxify.convert(fn))(x))):
        result, fallbacks = _call_recording_fallbacks(call)
        if isinstance(result, Exception):
            assert isinstance(result, laxify.ConversionError), f"{way} raised {type(result).__name__}: {result}"
            assert_clean_error(result, fn, "c", ("nonlocal c", "if x.sum() > 0:"))
        else:
            assert_trees_close(expected, result, what=way)


# -- loop_options -------------------------------------------------------------------------

def doubling_loop(x):
    while x.sum() < 100:
        x = x * 2
    return x


def doubling_loop_copy(x):
    while x.sum() < 100:
        x = x * 2
    return x


def test_loop_options_decorator_does_not_change_an_earlier_to_static():
    x = jnp.ones(2, jnp.float32)
    earlier = laxify.to_static(doubling_loop)
    bounded = laxify.loop_options(max_iters=1)(doubling_loop)
    np.testing.assert_allclose(earlier(x), doubling_loop(x))
    np.testing.assert_allclose(laxify.to_static(doubling_loop)(x), doubling_loop(x))
    np.testing.assert_allclose(jax.jit(laxify.convert(doubling_loop))(x), doubling_loop(x))
    # The decorated function is bounded: one doubling.
    np.testing.assert_allclose(laxify.to_static(bounded)(x), x * 2)


def test_loop_options_bound_applies_to_the_decorated_function():
    x = jnp.ones(2, jnp.float32)
    bounded = laxify.loop_options(max_iters=3)(doubling_loop_copy)
    np.testing.assert_allclose(laxify.to_static(bounded)(x), x * 8)


def _signs_of_truncation(call, capfd) -> str:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = call()
        jax.block_until_ready(result)
        jax.effects_barrier()
    out, err = capfd.readouterr()
    return " ".join([str(w.message) for w in record] + [out, err])


def test_loop_cut_short_by_max_iters_says_so(capfd):
    x = jnp.ones(2, jnp.float32)
    bounded = laxify.to_static(laxify.loop_options(max_iters=2)(halving_loop_bounded_source()))
    text = _signs_of_truncation(lambda: bounded(x * 64), capfd)
    assert "max_iters" in text, f"no sign of the cut: {text!r}"


def test_loop_within_max_iters_says_nothing(capfd):
    x = jnp.ones(2, jnp.float32)
    bounded = laxify.to_static(laxify.loop_options(max_iters=50)(halving_loop_bounded_source()))
    text = _signs_of_truncation(lambda: bounded(x * 64), capfd)
    assert "max_iters" not in text, text


def halving_loop_bounded_source():
    """A fresh function each time, so that the decorator's options never leak between tests."""
    def halve(x):
        while x.sum() > 1:
            x = x / 2
        return x
    return halve
