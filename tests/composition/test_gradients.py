"""Derivatives through converted loops and branches, against eager JAX and finite differences.

Each function below decides its control flow on array values. Eagerly (plain Python on concrete
arrays) JAX differentiates the path that runs; the converted program holds `scan`/`while`/`cond`
and must give the same derivatives on every path. The oracles are `jax.grad` (and friends) of
the plain Python function, and central finite differences of it (float32, with a tolerance fit
for float32). Both `laxify.convert(f)` and `laxify.to_static(f)` are checked.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims


def f32(*values):
    return jnp.array(values, jnp.float32)


# -- the functions: Python control flow on array values --------------------------------------

def mlp_steps(x):
    """A static-trip loop of a small residual layer: one `lax.scan`."""
    h = x
    for i in range(6):
        h = h + 0.3 * jnp.tanh(h * 0.8 + 0.1 * i)
    return (h ** 2).sum()


def bounded_growth(x):
    """A traced `while` bounded by `max_iters`: a `lax.scan` of `lax.cond`."""
    with laxify.loop_options(max_iters=12):
        while x.sum() < 8.0:
            x = x * 1.3 + 0.2 * jnp.sin(x)
    return (x ** 2).sum() + x[0] * x[1]


def if_in_static_loop(x):
    """A traced `if` per iteration of a static-trip loop."""
    acc = 0.0
    for i in range(4):
        if x[i] > 0:
            acc = acc + x[i] ** 3
        else:
            acc = acc + jnp.sin(x[i]) * x[i]
    return acc


@laxify.loop_options(max_iters=10)
def if_in_bounded_while(x):
    """A traced `if` inside a `max_iters`-bounded traced `while`."""
    n = 0
    while x.sum() < 6.0 and n < 10:
        if x[0] > x[1]:
            x = x * 1.4
        else:
            x = x + jnp.exp(0.5 * x) * 0.3
        n += 1
    return (x * x).sum()


def if_in_row_scan(x):
    """`for row in x` (a scan over rows) with a traced `if` on each row."""
    h = jnp.zeros(x.shape[1], x.dtype)
    for row in x:
        if row.sum() > 0:
            h = jnp.tanh(h + row)
        else:
            h = h * 0.5 + row ** 2
    return (h * jnp.arange(1.0, x.shape[1] + 1)).sum()


# Inputs take every path, away from the predicates' switching points (so that finite
# differences see one path).
CASES = [
    pytest.param(mlp_steps, [f32(0.5, -1.0, 1.5, 0.2), f32(-2.0, 0.3, 0.0, 1.0)], {"scan"},
                 id="scan"),
    pytest.param(bounded_growth, [f32(0.5, 0.7), f32(2.0, 1.5), f32(9.0, 1.0)], {"scan", "cond"},
                 id="bounded_while"),
    pytest.param(if_in_static_loop, [f32(0.5, -1.0, 1.5, -0.2), f32(-0.5, 1.0, -1.5, 0.7)],
                 {"scan", "cond"}, id="if_in_scan"),
    pytest.param(if_in_bounded_while, [f32(1.0, 0.5), f32(0.3, 0.9), f32(7.0, 1.0)],
                 {"scan", "cond"}, id="if_in_bounded_while"),
    pytest.param(if_in_row_scan, [f32(0.5, 1.0, -1.0, -0.5, 0.25, 0.75).reshape(3, 2),
                                  f32(-0.5, -1.0, 1.0, 0.5, 0.2, -0.9).reshape(3, 2)],
                 {"scan", "cond"}, id="if_in_row_scan"),
]
APIS = [pytest.param(laxify.convert, id="convert"), pytest.param(laxify.to_static, id="to_static")]


def central_differences(fn, x, eps=1e-2):
    """d fn / d x by central differences, one coordinate at a time (float32 arithmetic)."""
    flat = np.asarray(x, np.float32).ravel()
    grad = np.zeros_like(flat)
    for k in range(flat.size):
        step = np.zeros_like(flat)
        step[k] = eps
        up = fn(jnp.asarray((flat + step).reshape(x.shape)))
        down = fn(jnp.asarray((flat - step).reshape(x.shape)))
        grad[k] = (float(up) - float(down)) / (2 * eps)
    return grad.reshape(x.shape)


@pytest.mark.parametrize("fn, inputs, prims", CASES)
def test_reverse_mode_program_holds_the_loops(fn, inputs, prims):
    """The derivative program keeps the control flow as primitives (nothing unrolled)."""
    for transform in (jax.grad, jax.hessian):
        jaxpr = jax.make_jaxpr(transform(laxify.convert(fn)))(inputs[0])
        assert control_flow_prims(jaxpr) == prims, (transform.__name__, control_flow_prims(jaxpr))


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("fn, inputs, prims", CASES)
def test_derivatives_match_eager(api, fn, inputs, prims):
    converted = api(fn)
    for x in inputs:
        expected_grad = jax.grad(fn)(x)
        assert np.all(np.isfinite(expected_grad)) and np.any(expected_grad != 0)
        assert_trees_close(expected_grad, jax.grad(converted)(x), what="grad", rtol=1e-4, atol=1e-5)
        assert_trees_close(jax.value_and_grad(fn)(x), jax.value_and_grad(converted)(x),
                           what="value_and_grad", rtol=1e-4, atol=1e-5)
        tangent = jnp.linspace(-1.0, 1.0, x.size, dtype=x.dtype).reshape(x.shape)
        assert_trees_close(jax.jvp(fn, (x,), (tangent,)), jax.jvp(converted, (x,), (tangent,)),
                           what="jvp", rtol=1e-4, atol=1e-5)
        value, pullback = jax.vjp(converted, x)
        assert_trees_close(fn(x), value, what="vjp value", rtol=1e-5)
        assert_trees_close((expected_grad * 2.5,), pullback(jnp.float32(2.5)), what="vjp",
                           rtol=1e-4, atol=1e-5)
        assert_trees_close(jax.hessian(fn)(x), jax.hessian(converted)(x), what="hessian",
                           rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fn, inputs, prims", CASES)
def test_gradient_matches_finite_differences(fn, inputs, prims):
    grad = jax.jit(jax.grad(laxify.convert(fn)))
    for x in inputs:
        expected = central_differences(fn, x)
        np.testing.assert_allclose(np.asarray(grad(x)), expected, rtol=2e-2, atol=2e-2)


def test_grad_with_respect_to_weights_of_scanned_layer():
    """Gradients reach parameters closed over by the loop body through argnums."""
    def layers(w, b, x):
        h = x
        for _ in range(5):
            h = jnp.tanh(h @ w + b)
        if h.sum() > 0:
            out = (h ** 2).mean()
        else:
            out = jnp.abs(h).mean()
        return out

    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(3, 3)) * 0.7, jnp.float32)
    b = jnp.asarray(rng.normal(size=3) * 0.1, jnp.float32)
    for x in (jnp.ones((2, 3), jnp.float32), -jnp.ones((2, 3), jnp.float32)):
        expected = jax.grad(layers, argnums=(0, 1))(w, b, x)
        for api in (laxify.convert, laxify.to_static):
            assert_trees_close(expected, jax.grad(api(layers), argnums=(0, 1))(w, b, x),
                               what=api.__name__, rtol=1e-4, atol=1e-6)
    assert control_flow_prims(jax.make_jaxpr(jax.grad(laxify.convert(layers)))(w, b, x)) == {"scan", "cond"}
