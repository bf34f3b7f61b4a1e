"""Converted functions under JAX transformations, and `to_static` on methods.

`jax.grad`/`jax.vmap` of `laxify.convert(fn)` (and of the `to_static` function itself) are
compared with the same transformation of eager Python, or with per-example eager results;
`to_static` must also work inside an outer `jax.jit` and as a method with `self` static.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims, jaxpr_of


def f32(*values):
    return jnp.array(values, jnp.float32)


POS = f32(0.5, 1.0, 1.5, 2.0)
NEG = f32(-0.5, -1.0, 0.25, -2.0)


# -- gradients -------------------------------------------------------------------------

def grad_static_range(x):
    acc = 0.0
    for i in range(4):
        acc = acc + jnp.sin(x[i]) * x[i]
    return acc


def grad_static_range_carried_array(x):
    y = x
    for i in range(3):
        y = jnp.tanh(y) * x + i
    return y.sum()


def grad_traced_if(x):
    if x.sum() > 0:
        y = (x ** 2).sum()
    else:
        y = jnp.sin(x).sum()
    return y


def grad_elif(x):
    s = x[0]
    if s > 1:
        y = x[1] * s ** 3
    elif s > 0:
        y = x[1] * s
    else:
        y = jnp.exp(s) + x[2]
    return y


def grad_static_range_with_if(x):
    acc = 0.0
    for i in range(4):
        if x[i] > 0:
            acc = acc + x[i] ** 2
        else:
            acc = acc - 3 * x[i]
    return acc


def grad_scan_over_rows(x):
    h = jnp.zeros(x.shape[1], x.dtype)
    for row in x:
        h = jnp.tanh(h + row)
    return h.sum()


def grad_scan_over_elements_with_if(x):
    acc = 0.0
    for v in x:
        if v > 0:
            acc = acc + v ** 2
        else:
            acc = acc + jnp.sin(v)
    return acc


def grad_stacked_appends(x):
    outs = []
    for i in range(3):
        if x[i] > 0:
            outs.append(x[i] ** 2)
        else:
            outs.append(-x[i])
    return jnp.stack(outs).sum()


GRAD_CASES = [
    pytest.param(grad_scan_over_elements_with_if, [(POS,), (NEG,)], {"scan", "cond"},
                 id="grad_scan_over_elements_with_if"),
    pytest.param(grad_stacked_appends, [(POS,), (NEG,)], {"scan", "cond"},
                 id="grad_stacked_appends"),
    pytest.param(grad_static_range, [(POS,), (NEG,)], {"scan"}, id="grad_static_range"),
    pytest.param(grad_static_range_carried_array, [(POS,), (NEG,)], {"scan"},
                 id="grad_static_range_carried_array"),
    pytest.param(grad_traced_if, [(POS,), (NEG,)], {"cond"}, id="grad_traced_if"),
    pytest.param(grad_elif, [(f32(2.0, 3.0, 1.0),), (f32(0.5, 3.0, 1.0),), (f32(-1.0, 3.0, 1.0),)],
                 {"cond"}, id="grad_elif"),
    pytest.param(grad_static_range_with_if, [(POS,), (NEG,)], {"scan", "cond"},
                 id="grad_static_range_with_if"),
    pytest.param(grad_scan_over_rows, [(POS.reshape(2, 2),), (NEG.reshape(2, 2),)], {"scan"},
                 id="grad_scan_over_rows"),
]


@pytest.mark.parametrize("fn, inputs, prims", GRAD_CASES)
def test_grad_matches_eager_grad(fn, inputs, prims):
    assert control_flow_prims(jaxpr_of(fn, *inputs[0])) == prims
    for args in inputs:
        expected = jax.grad(fn)(*args)
        assert np.all(np.isfinite(expected))
        assert_trees_close(expected, jax.grad(laxify.convert(fn))(*args), what="grad(convert)")
        assert_trees_close(expected, jax.jit(jax.grad(laxify.convert(fn)))(*args),
                           what="jit(grad(convert))")
        assert_trees_close(expected, jax.grad(laxify.to_static(fn))(*args), what="grad(to_static)")


# -- vmap ------------------------------------------------------------------------------

def vmap_if(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y


def vmap_if_elif_two_args(x, t):
    if x[0] > t:
        y = x - t
    elif x[1] > t:
        y = x + t
    else:
        y = x * 0
    return y


def vmap_if_in_static_range(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            acc = acc + x[i]
    return acc


def vmap_while(x):
    while x.sum() < 10:
        x = x * 2
    return x


def vmap_traced_range_bound(x, n):
    for i in range(n):
        x = x + i
    return x


BATCH = jnp.array([[1.0, 2.0], [-3.0, 1.0], [0.5, -0.25], [-1.0, -1.0]], jnp.float32)
THRESHOLDS = f32(0.0, 0.5, 1.0, -2.0)

VMAP_CASES = [
    pytest.param(vmap_if, (BATCH,), id="vmap_if"),
    pytest.param(vmap_if_elif_two_args, (BATCH, THRESHOLDS), id="vmap_if_elif_two_args"),
    pytest.param(vmap_if_in_static_range, (BATCH,), id="vmap_if_in_static_range"),
    pytest.param(vmap_while, (jnp.abs(BATCH) + 0.1,), id="vmap_while"),
    pytest.param(vmap_traced_range_bound, (BATCH, jnp.array([0, 1, 4, 2], jnp.int32)),
                 id="vmap_traced_range_bound"),
]


@pytest.mark.parametrize("fn, batched", VMAP_CASES)
def test_vmap_matches_per_example_eager(fn, batched):
    size = batched[0].shape[0]
    per_example = [fn(*(a[k] for a in batched)) for k in range(size)]
    expected = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *per_example)
    assert_trees_close(expected, jax.vmap(laxify.convert(fn))(*batched), what="vmap(convert)")
    assert_trees_close(expected, jax.jit(jax.vmap(laxify.convert(fn)))(*batched),
                       what="jit(vmap(convert))")
    assert_trees_close(expected, jax.vmap(laxify.to_static(fn))(*batched), what="vmap(to_static)")


def test_grad_and_vmap_of_to_static_with_static_arg():
    static_fn = laxify.to_static(inner_loop_with_static_count)
    for x in (POS, NEG):
        expected = jax.grad(lambda x: inner_loop_with_static_count(x, 3).sum())(x)
        assert_trees_close(expected, jax.grad(lambda x: static_fn(x, 3).sum())(x), what="grad")
    batch = jnp.stack([POS, NEG])
    expected = jnp.stack([inner_loop_with_static_count(x, 2) for x in batch])
    assert_trees_close(expected, jax.vmap(lambda x: static_fn(x, 2))(batch), what="vmap")


# -- inside an outer jax.jit -----------------------------------------------------------

def inner_traced_if(x):
    if x.sum() > 0:
        y = x * 3
    else:
        y = -x
    return y


def inner_loop_with_static_count(x, n):
    for i in range(n):
        if x[i] > 0:
            x = x.at[i].set(0.0)
    return x


@pytest.mark.parametrize("x", [POS, NEG], ids=["positive", "negative"])
def test_to_static_inside_outer_jit(x):
    static_fn = laxify.to_static(inner_traced_if)

    @jax.jit
    def outer(x):
        return static_fn(x) + static_fn(-x)

    expected = inner_traced_if(x) + inner_traced_if(-x)
    assert_trees_close(expected, outer(x), what="jit(outer(to_static))")


@pytest.mark.parametrize("x", [POS, NEG], ids=["positive", "negative"])
def test_to_static_with_static_arg_inside_outer_jit(x):
    static_fn = laxify.to_static(inner_loop_with_static_count)
    outer = jax.jit(lambda x: static_fn(x, 3) * 2)
    assert_trees_close(inner_loop_with_static_count(x, 3) * 2, outer(x), what="jit(outer)")


# -- methods ---------------------------------------------------------------------------

class Scaler:
    """A plain class (hashable by identity): `self` is a static argument."""

    def __init__(self, scale: float, steps: int):
        self.scale = scale
        self.steps = steps

    @laxify.to_static
    def apply(self, x):
        if x.sum() > 0:
            y = x * self.scale
        else:
            y = x
        return y

    @laxify.to_static
    def iterate(self, x):
        for i in range(self.steps):
            x = x * self.scale + i
        return x

    def plain(self, x):
        while x.sum() < self.scale:
            x = x + 1
        return x


@dataclasses.dataclass(frozen=True)
class FrozenModel:
    """A frozen dataclass: hashable by value."""

    offset: float

    @laxify.to_static
    def __call__(self, x):
        if x[0] > self.offset:
            x = x - self.offset
        else:
            x = x + self.offset
        return x


@pytest.mark.parametrize("x", [POS, NEG], ids=["positive", "negative"])
def test_to_static_method_with_traced_if(x):
    model = Scaler(3.0, 4)
    expected = Scaler.apply.python_function(model, x)
    assert_trees_close(expected, model.apply(x), what="method")
    assert_trees_close(Scaler.iterate.python_function(model, x), model.iterate(x), what="method loop")
    other = Scaler(-2.0, 1)
    assert_trees_close(Scaler.apply.python_function(other, x), other.apply(x), what="second instance")


def test_to_static_method_inside_outer_jit():
    model = Scaler(3.0, 4)
    outer = jax.jit(lambda x: model.apply(x) + model.iterate(x))
    for x in (POS, NEG):
        expected = Scaler.apply.python_function(model, x) + Scaler.iterate.python_function(model, x)
        assert_trees_close(expected, outer(x), what="jit(method)")


def test_convert_bound_method():
    model = Scaler(5.0, 1)
    for x in (f32(10.0), f32(0.5), f32(-3.0, 1.0)):
        assert_trees_close(model.plain(x), jax.jit(laxify.convert(model.plain))(x), what="bound")
    assert control_flow_prims(jax.make_jaxpr(laxify.convert(model.plain))(f32(0.5))) == {"while"}


@pytest.mark.parametrize("x", [f32(3.0, 1.0), f32(-3.0, 1.0)], ids=["above", "below"])
def test_to_static_dunder_call_on_frozen_dataclass(x):
    model = FrozenModel(1.5)
    assert_trees_close(FrozenModel.__call__.python_function(model, x), model(x), what="__call__")
