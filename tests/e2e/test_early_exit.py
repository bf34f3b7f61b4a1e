"""`laxify.loop_options(early_exit=True)`: a `for` over a static range with a traced `break`
(or `return`) becomes a `lax.while_loop` that stops there, instead of a `lax.scan` that runs
the remaining iterations with its body switched off.

Each function runs eagerly (the oracle), through `to_static` and `jax.jit(convert)`, on inputs
that break early, late, at the last step and never; the jaxpr holds `while`, not `scan`, and
the results equal those of the same loop without the option (a scan).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify

from harness import assert_trees_close, check, control_flow_prims, jaxpr_of

N = 10_000


def f32(value):
    return jnp.float32(value)


# -- the loops, each with and without the option ------------------------------------------

def first_crossing(x):
    acc = x * 0
    for i in range(N):
        if acc > 3:
            break
        acc = acc + x
    return acc, i


def first_crossing_with_block(x):
    acc = x * 0
    with laxify.loop_options(early_exit=True):
        for i in range(N):
            if acc > 3:
                break
            acc = acc + x
    return acc, i


def search_with_else(xs, target):
    found = -1
    for i in range(2, 40, 3):
        if xs[i] == target:
            found = i
            break
        found = found - 1
    else:
        found = found * 100
    return found


def returns_from_loop(x):
    total = x * 0
    for i in range(100):
        total = total + x * i
        if total > 50:
            return total, i
    return -total, 0


def nested_inner_break(m):
    total = m[0, 0] * 0
    for i in range(4):
        for j in range(5):
            if m[i, j] < 0:
                break
            total = total + m[i, j]
    return total


EARLY = laxify.loop_options(early_exit=True)

CASES = [
    (first_crossing, [(f32(1.0),), (f32(0.25),), (f32(-1.0),), (f32(4.0),)]),
    (search_with_else, [(jnp.arange(40.0), 5.0), (jnp.arange(40.0), 38.0), (jnp.arange(40.0), 1000.0)]),
    (returns_from_loop, [(f32(1.0),), (f32(0.01),), (f32(-1.0),), (f32(60.0),)]),
    (nested_inner_break, [(jnp.array([[1.0, 2, -1, 4, 5], [-1, 1, 1, 1, 1], [1, 1, 1, 1, 1],
                                      [2, 2, 2, -2, 2]]),), (jnp.ones((4, 5)),)]),
]


@pytest.mark.parametrize("fn, inputs", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_early_exit_matches_python_and_the_scan(fn, inputs):
    early = EARLY(fn)
    check(early, *inputs, expect_prims=None)
    scanned = jax.jit(laxify.convert(fn), static_argnums=(1,) if fn is search_with_else else ())
    exiting = jax.jit(laxify.convert(early), static_argnums=(1,) if fn is search_with_else else ())
    for args in inputs:
        assert_trees_close(scanned(*args), exiting(*args), what=f"{fn.__name__}: early exit vs scan")
    statics = (1,) if fn is search_with_else else ()
    prims = control_flow_prims(jaxpr_of(early, *inputs[0], static_argnums=statics))
    # The outer loop of nested_inner_break has no break: it stays a scan around the while.
    assert "while" in prims and ("scan" in prims) == (fn is nested_inner_break)
    assert "while" not in control_flow_prims(jaxpr_of(fn, *inputs[0], static_argnums=statics))


def test_with_block_form():
    check(first_crossing_with_block, (f32(1.0),), (f32(0.5),), (f32(-1.0),), expect_prims={"while", "cond"})


def test_to_static_of_decorated_function():
    fn = laxify.to_static(EARLY(first_crossing))
    acc, i = fn(f32(1.0))
    assert (float(acc), int(i)) == (4.0, 4)
    assert "while" in control_flow_prims(fn.trace(f32(1.0)).jaxpr)


def test_stops_at_the_break():
    """The while's condition reads the break flag: a run that breaks at step 3 of 10,000 takes
    4 trips of the body (a counter carried by the loop says how many ran)."""

    @laxify.loop_options(early_exit=True)
    def count(x):
        acc = x * 0
        trips = 0
        for i in range(N):
            trips += 1
            if acc > 2:
                break
            acc = acc + x
        return trips

    assert int(laxify.to_static(count)(f32(1.0))) == count(f32(1.0)) == 4
    assert int(laxify.to_static(count)(f32(-1.0))) == N


def test_loop_without_break_stays_a_scan():
    @laxify.loop_options(early_exit=True)
    def total(x):
        for i in range(10):
            x = x + i
        return x

    check(total, (f32(1.0),), expect_prims={"scan"})


def test_static_break_stays_a_scan_or_python():
    @laxify.loop_options(early_exit=True)
    def until_five(x):
        for i in range(10):
            if i == 5:
                break
            x = x + i
        return x

    check(until_five, (f32(1.0),), expect_prims=None)


def test_appended_list_is_a_located_error():
    @laxify.loop_options(early_exit=True)
    def collect(x):
        out = []
        for i in range(10):
            out.append(x * i)
            if x < i:
                break
        return jnp.stack(out)

    with pytest.raises(laxify.ConversionError, match=r"(?s)`out`.*early_exit.*buf\.at\[i\]\.set") as info:
        laxify.to_static(collect, fallback="error")(f32(3.0))
    assert "test_early_exit.py" in str(info.value)


def test_reverse_mode_is_a_located_error_forward_mode_works():
    early = EARLY(first_crossing)
    loss = lambda x: laxify.convert(early)(x)[0]
    with pytest.raises(laxify.ConversionError, match=r"(?s)early_exit.*max_iters"):
        jax.grad(loss)(f32(1.0))
    _, tangent = jax.jvp(loss, (f32(1.0),), (f32(1.0),))
    _, scan_tangent = jax.jvp(lambda x: laxify.convert(first_crossing)(x)[0], (f32(1.0),), (f32(1.0),))
    np.testing.assert_allclose(tangent, scan_tangent)


def test_with_max_iters_reverse_mode_follows_the_bounded_scan():
    bounded = laxify.loop_options(early_exit=True, max_iters=20)(first_crossing)
    grad = jax.grad(lambda x: laxify.convert(bounded)(x)[0])(f32(1.0))
    expected = jax.grad(lambda x: laxify.convert(first_crossing)(x)[0])(f32(1.0))
    np.testing.assert_allclose(grad, expected)


def test_option_is_validated_and_shown():
    with pytest.raises(ValueError, match="early_exit"):
        laxify.loop_options(early_exit=1)
    assert "early_exit=True" in repr(laxify.loop_options(early_exit=True))
    assert "early_exit" not in repr(laxify.loop_options(max_iters=3))
