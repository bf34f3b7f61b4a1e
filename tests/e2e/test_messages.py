"""Messages of exceptions raised for traced values: a `raise` or `assert` message that formats
a traced value (an f-string, `%`, `str.format`, `repr`) shows the value as eager Python shows
it, never a tracer's text (`JitTracer(...)`, `Traced<...>`) or laxify's placeholder
(`<'...' formatted when printed>`).

The oracle is the function run eagerly; each function runs on inputs that pass and inputs
that fail, through `to_static` and `laxify.checked(jax.jit(laxify.convert(f)))`, and the
program holds the traced control flow (no eager fallback) where the message is written in
the `raise`/`assert` itself.

PYTEST_DONT_REWRITE: the functions here use `assert`.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims

INTERNAL = ("Tracer", "Traced<", "formatted when printed", "_lx")


def raise_fstring_repr(x, n):
    if x > 0:
        raise ValueError(f"bad {x!r} ({n})")
    return x + n


def raise_percent(x, n):
    if x > 0:
        raise ValueError("bad %s and %r" % (x, n))
    return x + n


def raise_percent_number(x, n):
    if x > 0:
        raise ValueError("bad %d of %5.2f" % (x, n))
    return x + n


def raise_str_format(x, n):
    if x > 0:
        raise ValueError("bad {!r} ({})".format(x, n))
    return x + n


def raise_repr(x, n):
    if x > 0:
        raise KeyError(repr(x) + " " + str(n))
    return x + n


def raise_percent_in_a_scan(xs, n):
    s = xs[0] * 0
    for v in xs:
        if v > n:
            raise ValueError("item %r above %s" % (v, n))
        s = s + v
    return s


def raise_fstring_in_a_while(xs, n):
    i = 0
    s = xs[0] * 0
    while i < xs.shape[0]:
        if xs[i] > n:
            raise IndexError(f"item {xs[i]!r} at {i} above {n:.1f}")
        s = s + xs[i]
        i += 1
    return s


def assert_fstring(x, n):
    assert x <= 0, f"bad {x!r} ({n})"
    return x + n


def assert_percent(x, n):
    assert x <= 0, "bad %s (%r)" % (x, n)
    return x + n


def assert_str_format_in_a_loop(xs, n):
    s = xs[0] * 0
    for v in xs:
        assert v <= n, "item {} above {!r}".format(v, n)
        s = s + v
    return s


SCALARS = [(jnp.int32(1), jnp.float32(3.0)), (jnp.int32(-1), jnp.float32(3.0))]
ARRAYS = [(jnp.array([1.0, 2.0, 3.0]), jnp.float32(2.5)), (jnp.array([1.0, 2.0, 3.0]), jnp.float32(5.0))]

CASES = [
    (raise_fstring_repr, SCALARS, {"cond"}),
    (raise_percent, SCALARS, {"cond"}),
    (raise_percent_number, SCALARS, {"cond"}),
    (raise_str_format, SCALARS, {"cond"}),
    (raise_repr, SCALARS, {"cond"}),
    (raise_percent_in_a_scan, ARRAYS, {"scan"}),
    (raise_fstring_in_a_while, ARRAYS, {"while"}),
    (assert_fstring, SCALARS, set()),
    (assert_percent, SCALARS, set()),
    (assert_str_format_in_a_loop, ARRAYS, {"scan"}),
]


def _outcome(call):
    try:
        return "value", call()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return "raised", e


@pytest.mark.parametrize("fn, inputs, prims", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_message_shows_the_values_as_eager_python_does(fn, inputs, prims):
    routes = {
        "to_static": laxify.to_static(fn),
        "checked(jit(convert))": laxify.checked(jax.jit(laxify.convert(fn))),
    }
    outcomes = set()
    for args in inputs:
        kind, expected = _outcome(lambda: fn(*args))
        outcomes.add(kind)
        for way, call in routes.items():
            with warnings.catch_warnings():
                warnings.simplefilter("error", laxify.FallbackWarning)  # converted: no fallback
                got_kind, got = _outcome(lambda: call(*args))
            assert got_kind == kind, (way, got)
            if kind == "value":
                assert_trees_close(expected, got, what=way)
                continue
            assert type(got) is type(expected), (way, got)
            assert str(got) == str(expected), (way, str(got), str(expected))
            assert not any(word in str(got) for word in INTERNAL), (way, str(got))
    assert outcomes == {"value", "raised"}  # the inputs take both paths
    jaxpr = jax.make_jaxpr(laxify.convert(fn, checks=True))(*inputs[0])
    assert prims <= control_flow_prims(jaxpr), jaxpr


def message_built_before_the_raise(x, n):
    if x > 0:
        message = f"bad {x!r} ({n})"
        raise ValueError(message)
    return x + n


def message_built_before_the_assert(x, n):
    message = "bad %s" % x
    assert x <= 0, message
    return x + n


@pytest.mark.parametrize("fn", [message_built_before_the_raise, message_built_before_the_assert],
                         ids=lambda f: f.__name__)
def test_a_message_formatted_before_the_raise_falls_back_to_pythons(fn):
    """A string made from a traced value in an earlier statement would show the tracer's text:
    to_static runs the function eagerly (Python's exact message) with a warning at the line;
    under jax.jit it is a located error."""
    x, n = SCALARS[0]
    with pytest.raises(type(_outcome(lambda: fn(x, n))[1])) as eager:
        fn(x, n)
    with pytest.warns(laxify.FallbackWarning, match="formatted from a traced value"):
        with pytest.raises(type(eager.value)) as info:
            laxify.to_static(fn)(x, n)
    assert str(info.value) == str(eager.value)
    with pytest.raises(laxify.ConversionError) as located:
        laxify.checked(jax.jit(laxify.convert(fn)))(x, n)
    assert not any(word in str(located.value) for word in INTERNAL), str(located.value)
    with pytest.warns(laxify.FallbackWarning):  # (the same fallback: the branch is traced)
        np.testing.assert_allclose(laxify.to_static(fn)(*SCALARS[1]), fn(*SCALARS[1]))


def assert_on_a_python_value_with_a_traced_message(x, n):
    assert n < 2, f"{x!r} ({n}) invalid"
    return x


def test_a_failing_python_assert_with_a_traced_message_under_jit_is_located():
    """The assert fails while tracing (its test is Python's), and its message needs the run's
    value: under a plain jax.jit that is a located error, not `<'...' formatted when printed>`."""
    x = jnp.int32(1)
    with pytest.raises(AssertionError) as eager:
        assert_on_a_python_value_with_a_traced_message(x, 3)
    with pytest.raises(AssertionError) as info:
        laxify.to_static(assert_on_a_python_value_with_a_traced_message)(x, 3)
    assert str(info.value) == str(eager.value)
    with pytest.raises(laxify.ConversionError) as located:
        jax.jit(laxify.convert(assert_on_a_python_value_with_a_traced_message), static_argnums=1)(x, 3)
    assert "laxify.checked" in str(located.value)
    assert not any(word in str(located.value) for word in INTERNAL), str(located.value)


def checked_action(action):
    assert action < 2, "%r (%s) invalid" % (action, type(action))
    if action > 0:
        action = action - 1
    return action


def type_of_a_traced_array(x):
    if x.sum() > 0:
        x = x + 1
    return type(x) is type(jnp.zeros(2)), type(x).__name__


def test_type_of_a_traced_array_is_the_class_eager_code_sees():
    # `type(action)` of a traced array named the tracer class (`DynamicJaxprTracer`) in the
    # message, where eager code names JAX's array class.
    with pytest.raises(AssertionError) as eager:
        checked_action(jnp.int32(3))
    for route in (laxify.to_static(checked_action), laxify.checked(jax.jit(laxify.convert(checked_action)))):
        with pytest.raises(AssertionError) as got:
            route(jnp.int32(3))
        assert str(got.value) == str(eager.value)
        assert "Tracer" not in str(got.value)
        assert int(route(jnp.int32(1))) == 0
    assert laxify.to_static(type_of_a_traced_array)(jnp.ones(2)) == type_of_a_traced_array(jnp.ones(2))
