"""Equinox models with data-dependent control flow, through every way of running them.

The model is adaptive computation: it refines a hidden state until a halting score passes a
threshold (a traced `while`, bounded by `loop_options(max_iters=8)` so that it differentiates),
then takes a traced `if`. Its fields hold a function (`activation`) and a Python int
(`max_steps`) beside the arrays: under `to_static` they are static, as under
`eqx.filter_jit`. The eager Python run on concrete arrays is the oracle.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import pytest

import laxify
from model_tools import assert_close, directional_fd, dot, primitives, random_like


class AdaptiveMLP(eqx.Module):
    embed: eqx.nn.Linear
    step: eqx.nn.Linear
    halt: eqx.nn.Linear
    head: eqx.nn.Linear
    activation: Callable
    max_steps: int

    def __init__(self, din: int, dhidden: int, *, key: jax.Array, max_steps: int = 8):
        keys = jax.random.split(key, 4)
        self.embed = eqx.nn.Linear(din, dhidden, key=keys[0])
        self.step = eqx.nn.Linear(dhidden, dhidden, key=keys[1])
        self.halt = eqx.nn.Linear(dhidden, 1, key=keys[2])
        self.head = eqx.nn.Linear(dhidden, 1, key=keys[3])
        self.activation = jnp.tanh
        self.max_steps = max_steps

    @laxify.loop_options(max_iters=8)
    def __call__(self, x):
        h = self.activation(jax.vmap(self.embed)(x))
        score = jnp.zeros(())
        n = 0
        while score < 0.9 and n < self.max_steps:
            h = h + self.activation(jax.vmap(self.step)(h))
            score = score + 0.6 * jax.nn.sigmoid(3.0 * jax.vmap(self.halt)(h)).mean()
            n += 1
        y = jax.vmap(self.head)(h)[:, 0]
        if y.mean() > 0:
            y = 2.0 * y
        else:
            y = y - 1.0
        return y, n


class StaticAdaptiveMLP(AdaptiveMLP):
    """The same model with `@laxify.to_static` on `__call__` in the class body."""

    @laxify.to_static
    @laxify.loop_options(max_iters=8)
    def __call__(self, x):
        h = self.activation(jax.vmap(self.embed)(x))
        score = jnp.zeros(())
        n = 0
        while score < 0.9 and n < self.max_steps:
            h = h + self.activation(jax.vmap(self.step)(h))
            score = score + 0.6 * jax.nn.sigmoid(3.0 * jax.vmap(self.halt)(h)).mean()
            n += 1
        y = jax.vmap(self.head)(h)[:, 0]
        if y.mean() > 0:
            y = 2.0 * y
        else:
            y = y - 1.0
        return y, n


def _batch(seed: int, scale: float) -> jax.Array:
    return jax.random.normal(jax.random.key(seed), (4, 3)) * scale


# The loop runs 5, 2 and 3 times on these; the `if` takes both branches.
INPUTS = [_batch(2, 3.0), _batch(2, -3.0), _batch(0, 1.0)]
IDS = ["five-steps", "two-steps", "three-steps"]

TRACES: list[None] = []


def predict(model, x):
    TRACES.append(None)  # runs once per trace
    return model(x)


def loss_fn(model, x, target):
    y, _ = model(x)
    return jnp.mean((y - target) ** 2)


GRAD_INPUTS = (INPUTS[1], jnp.linspace(-1.0, 1.0, 4))  # x and target of the gradient checks


@pytest.fixture(scope="module")
def model() -> AdaptiveMLP:
    return AdaptiveMLP(3, 8, key=jax.random.key(0))


@pytest.fixture(scope="module")
def eager_grads(model):
    """Gradients of the loss w.r.t. the arrays of ``model``, run as Python."""
    return eqx.filter_grad(loss_fn)(model, *GRAD_INPUTS)


def test_inputs_take_every_path(model):
    outputs = [model(x) for x in INPUTS]
    assert sorted(int(n) for _, n in outputs) == [2, 3, 5]
    assert {bool(y.mean() > 0) for y, _ in outputs} == {True, False}


def test_converted_program_has_a_scan_and_a_cond(model):
    jaxpr, _, _ = eqx.filter_make_jaxpr(laxify.convert(predict))(model, INPUTS[0])
    found = primitives(jaxpr)
    assert {"scan", "cond"} <= found  # the bounded `while` is a scan of conds
    assert "while" not in found


# One program per route, compiled once for the three inputs (they share a shape).

def test_to_static_of_a_function_taking_the_model(model):
    run = laxify.to_static(predict)
    for x, name in zip(INPUTS, IDS):
        assert_close(model(x), run(model, x), what=f"to_static(predict)(model, x), {name}")


def test_to_static_of_the_bound_call_and_of_the_model(model):
    by_method, by_object = laxify.to_static(model.__call__), laxify.to_static(model)
    for x, name in zip(INPUTS, IDS):
        assert_close(model(x), by_method(x), what=f"to_static(model.__call__), {name}")
        assert_close(model(x), by_object(x), what=f"to_static(model), {name}")
    # The parameters are inputs of the compiled program (not constants in it).
    signature = by_method.lower(INPUTS[0]).as_text().split("func.func public @main(")[1].split(")")[0]
    assert signature.count("%arg") == len(jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_array))) + 1


def test_to_static_on_call_in_the_class_body(eager_grads):
    model = StaticAdaptiveMLP(3, 8, key=jax.random.key(0))
    for x, name in zip(INPUTS, IDS):
        eager = StaticAdaptiveMLP.__call__.python_function(model, x)
        assert_close(eager, model(x), what=f"@to_static __call__, {name}")
    # Called inside the library's own jit and grad (a to_static program nested in filter_jit).
    # Same parameters as the `model` fixture (same seed); the classes differ.
    nested = eqx.filter_jit(eqx.filter_grad(loss_fn))(model, *GRAD_INPUTS)
    assert_close(jax.tree_util.tree_leaves(eager_grads), jax.tree_util.tree_leaves(nested),
                 what="eqx.filter_jit(eqx.filter_grad) of a model with @to_static __call__", atol=1e-4)


def test_inside_eqx_filter_jit(model):
    run = eqx.filter_jit(laxify.convert(predict))
    for x, name in zip(INPUTS, IDS):
        assert_close(model(x), run(model, x), what=f"eqx.filter_jit(convert(predict)), {name}")


def _scaled(model: AdaptiveMLP, factor: float) -> AdaptiveMLP:
    return jax.tree_util.tree_map(lambda leaf: leaf * factor if eqx.is_array(leaf) else leaf, model)


def test_arrays_are_traced_and_the_other_fields_static():
    model = AdaptiveMLP(3, 8, key=jax.random.key(1))
    run = laxify.to_static(predict)
    x = INPUTS[0]
    TRACES.clear()
    for other in (model, _scaled(model, 1.5), _scaled(model, -0.5)):
        assert_close(other(x), run(other, x), what="new parameters")
    assert len(TRACES) == 1  # no retrace: the parameters are arguments of the program
    # A Python int field is static (as under eqx.filter_jit): a new value traces anew.
    capped = eqx.tree_at(lambda m: m.max_steps, model, 1)
    assert int(capped(x)[1]) == 1
    assert_close(capped(x), run(capped, x), what="max_steps=1")
    assert len(TRACES) == 2


def test_gradients_match_eager_and_finite_differences(model, eager_grads):
    (x, target), eager = GRAD_INPUTS, eager_grads
    assert_close(eager, eqx.filter_grad(laxify.to_static(loss_fn))(model, x, target),
                 what="eqx.filter_grad(to_static)", atol=1e-4)
    # jax.grad over the arrays, the rest of the model closed over.
    params, rest = eqx.partition(model, eqx.is_inexact_array)
    by_params = lambda p: laxify.convert(loss_fn)(eqx.combine(p, rest), x, target)
    grads = jax.jit(jax.grad(by_params))(params)
    assert_close(eqx.filter(eager, eqx.is_inexact_array), grads, what="jit(jax.grad(convert))", atol=1e-4)
    # Finite differences along a random direction (a step small enough to keep the trip count).
    direction = random_like(params)
    eager_loss = lambda p: loss_fn(eqx.combine(p, rest), x, target)
    fd = directional_fd(eager_loss, params, direction, eps=1e-3)
    assert abs(fd - dot(grads, direction)) <= 0.05 * abs(fd) + 1e-3


def test_training_with_optax_lowers_the_loss():
    model = AdaptiveMLP(3, 8, key=jax.random.key(0))
    optimizer = optax.adam(3e-2)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))
    x = jax.random.normal(jax.random.key(7), (16, 3))
    target = jnp.sin(x.sum(axis=1))

    @eqx.filter_jit
    def train_step(model, opt_state, x, target):
        loss, grads = eqx.filter_value_and_grad(laxify.convert(loss_fn))(model, x, target)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    losses = []
    for _ in range(30):
        model, opt_state, loss = train_step(model, opt_state, x, target)
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
    assert_close(loss_fn(model, x, target), laxify.to_static(loss_fn)(model, x, target), what="trained model")


def repeat_activation(p, x):
    for _ in range(p["steps"]):  # a Python int beside the arrays: static, a Python loop
        x = p["act"](x * p["w"])
    if x.sum() > 0:
        x = x * 2.0
    return x


def test_a_pytree_holding_a_function_is_split_as_filter_jit_splits_it():
    run = laxify.to_static(repeat_activation)
    for steps, x in ((2, jnp.ones(3)), (3, -jnp.ones(3))):
        p = {"w": jnp.arange(1.0, 4.0), "act": jnp.tanh, "steps": steps}
        assert_close(repeat_activation(p, x), run(p, x), what=f"steps={steps}")
