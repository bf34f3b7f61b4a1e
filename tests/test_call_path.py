"""The cached call path of `to_static`: calls whose argument types were seen before skip
argument classification (arrays traced, Python scalars static, plain objects static by
identity). These tests check that what the slow path decided still holds on the hot path:
static values pick their own program, a new shape retraces, a trace that needs Python falls
back eagerly, methods keep their object."""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np
import pytest

import laxify

TRACES: list = []


def scaled(x, n, mode):
    TRACES.append((x.shape, n, mode))
    for _ in range(n):
        if mode == "double":
            x = x * 2
        else:
            x = x + 1
    return x


def test_scalar_statics_pick_their_program_on_the_hot_path():
    TRACES.clear()
    f = laxify.to_static(scaled)
    x = jnp.ones(3)
    for _ in range(3):
        np.testing.assert_allclose(f(x, 2, "double"), scaled(x, 2, "double"))
        np.testing.assert_allclose(f(x, 3, "add"), scaled(x, 3, "add"))
    # Two programs, each traced once (the eager oracle's three calls each add an entry too).
    assert TRACES.count(((3,), 2, "double")) == 1 + 3
    assert TRACES.count(((3,), 3, "add")) == 1 + 3
    np.testing.assert_allclose(f(jnp.ones(5), 2, "double"), 4 * np.ones(5))  # a new shape retraces


def needs_python_for_long_inputs(x):
    if x.shape[0] > 2:
        return x.sum().item()  # a traced value where Python needs a concrete one
    return x.sum()


def test_a_trace_that_needs_python_on_the_hot_path_is_located():
    f = laxify.to_static(needs_python_for_long_inputs)
    assert float(f(jnp.ones(2))) == 2.0  # compiled; later calls of this type take the hot path
    with pytest.warns(laxify.FallbackWarning, match="concrete") as caught:
        assert float(f(jnp.ones(4))) == 4.0  # same type, new shape: the retrace meets .item()
    assert (caught[0].filename, caught[0].lineno) == (__file__, needs_python_for_long_inputs.__code__.co_firstlineno + 2)
    assert float(f(jnp.ones(2))) == 2.0  # the compiled program still serves the first shape
    with pytest.raises(laxify.ConversionError, match="concrete") as info:
        laxify.to_static(needs_python_for_long_inputs, fallback="error")(jnp.ones(4))
    assert "test_call_path.py" in str(info.value) and "x.sum().item()" in str(info.value)


class Scaler:
    def __init__(self, k):
        self.k = k

    @laxify.to_static
    def apply(self, x):
        if x.sum() > 0:
            x = x * self.k
        return x


def test_methods_on_plain_objects_keep_their_object():
    a, b = Scaler(2.0), Scaler(3.0)
    x = jnp.ones(2)
    for _ in range(2):
        np.testing.assert_allclose(a.apply(x), 2 * np.ones(2))
        np.testing.assert_allclose(b.apply(x), 3 * np.ones(2))
        np.testing.assert_allclose(a.apply(-x), -np.ones(2))


def test_bound_method_given_to_to_static():
    a = Scaler(4.0)
    f = laxify.to_static(Scaler.apply.python_function.__get__(a))
    for _ in range(2):
        np.testing.assert_allclose(f(jnp.ones(2)), 4 * np.ones(2))


def test_keyword_arguments_and_wrong_calls_still_work():
    f = laxify.to_static(scaled)
    x = jnp.ones(2)
    f(x, 1, "add")
    np.testing.assert_allclose(f(x, n=1, mode="add"), 2 * np.ones(2))
    with pytest.raises(TypeError, match="missing"):
        f(x, 1)


def validated_rnn(x, W, h):
    if jnp.any(jnp.isnan(x)):
        raise ValueError("the input holds NaN")
    for t in range(8):
        h = jnp.tanh(h @ W + x[t])  # (the line counted below)
        if jnp.linalg.norm(h) > 1.5:
            raise FloatingPointError(f"diverged at step {t}")
    return h


def halving_with_guard(x):
    steps = 0
    while x > 1:
        x = x // 2  # (the line counted below)
        if x > 100000:
            raise FloatingPointError(f"diverged at step {steps}")
        steps += 1
    return steps


def _runs_of_line(fn, offset: int, *args) -> int:
    """How many times the first call of ``to_static(fn)`` runs the line ``offset`` lines below
    the ``def`` (converted code keeps the user's lines, which a line tracer sees)."""
    import sys

    line, filename = fn.__code__.co_firstlineno + offset, fn.__code__.co_filename
    count = [0]

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != filename:
            return None
        if event == "line" and frame.f_lineno == line:
            count[0] += 1
        return tracer

    f = laxify.to_static(fn)
    sys.settrace(tracer)
    try:
        f(*args)
    finally:
        sys.settrace(None)
    return count[0]


def test_a_loop_body_with_raises_is_traced_once_on_the_first_call():
    # A scanned range whose body raises (its return flag and return value settled by one
    # probe of the body, which the scan then replays) and a `while` whose body raises.
    x, W, h = jnp.full((8, 4), 0.1), jnp.eye(4) * 0.1, jnp.zeros(4)
    assert _runs_of_line(validated_rnn, 4, x, W, h) == 1
    assert _runs_of_line(halving_with_guard, 3, jnp.int32(27)) == 1
    f = laxify.to_static(validated_rnn)
    np.testing.assert_allclose(f(x, W, h), validated_rnn(x, W, h), rtol=1e-6)
    with pytest.raises(ValueError, match="NaN"):
        f(x.at[1, 1].set(jnp.nan), W, h)
    with pytest.raises(FloatingPointError, match="diverged at step 3"):
        f(x.at[3].set(10.0), W, h)
    assert int(laxify.to_static(halving_with_guard)(jnp.int32(27))) == halving_with_guard(27)
