"""Flax NNX models with data-dependent control flow, through every way of running them.

The model is adaptive computation: it refines a hidden state until a halting score passes a
threshold (a traced `while`, bounded by `loop_options(max_iters=8)` so that it differentiates),
then takes a traced `if`. The eager Python run on concrete arrays is the oracle.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest
from flax import nnx

import laxify
from model_tools import assert_close, directional_fd, dot, primitives, random_like


class AdaptiveMLP(nnx.Module):
    def __init__(self, din: int, dhidden: int, *, rngs: nnx.Rngs):
        self.embed = nnx.Linear(din, dhidden, rngs=rngs)
        self.step = nnx.Linear(dhidden, dhidden, rngs=rngs)
        self.halt = nnx.Linear(dhidden, 1, rngs=rngs)
        self.head = nnx.Linear(dhidden, 1, rngs=rngs)

    @laxify.loop_options(max_iters=8)
    def __call__(self, x):
        h = jnp.tanh(self.embed(x))
        score = jnp.zeros(())
        n = 0
        while score < 0.9 and n < 8:
            h = h + jnp.tanh(self.step(h))
            score = score + jax.nn.sigmoid(self.halt(h)).mean()
            n += 1
        y = self.head(h)[:, 0]
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
        h = jnp.tanh(self.embed(x))
        score = jnp.zeros(())
        n = 0
        while score < 0.9 and n < 8:
            h = h + jnp.tanh(self.step(h))
            score = score + jax.nn.sigmoid(self.halt(h)).mean()
            n += 1
        y = self.head(h)[:, 0]
        if y.mean() > 0:
            y = 2.0 * y
        else:
            y = y - 1.0
        return y, n


def _batch(seed: int, scale: float) -> jax.Array:
    return jax.random.normal(jax.random.key(seed), (4, 3)) * scale


# The loop runs 4, 2 and 3 times on these; the `if` takes both branches.
INPUTS = [_batch(2, 3.0), _batch(2, -3.0), _batch(0, 1.0)]
IDS = ["four-steps", "two-steps", "three-steps"]

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
    return AdaptiveMLP(3, 8, rngs=nnx.Rngs(0))


@pytest.fixture(scope="module")
def eager_grads(model):
    """Gradients of the loss w.r.t. the parameters of ``model``, run as Python."""
    return nnx.grad(loss_fn)(model, *GRAD_INPUTS)


def test_inputs_take_every_path(model):
    outputs = [model(x) for x in INPUTS]
    assert sorted(int(n) for _, n in outputs) == [2, 3, 4]
    assert {bool(y.mean() > 0) for y, _ in outputs} == {True, False}


def test_converted_program_has_a_scan_and_a_cond(model):
    found = primitives(jax.make_jaxpr(laxify.convert(predict))(model, INPUTS[0]))
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


def test_to_static_on_call_in_the_class_body(eager_grads):
    model = StaticAdaptiveMLP(3, 8, rngs=nnx.Rngs(0))
    for x, name in zip(INPUTS, IDS):
        eager = StaticAdaptiveMLP.__call__.python_function(model, x)
        assert_close(eager, model(x), what=f"@to_static __call__, {name}")
    # Called inside the library's own jit and grad (a to_static program nested in nnx.jit).
    # Same parameters as the `model` fixture (same seed).
    assert_close(nnx.state(eager_grads), nnx.state(nnx.jit(nnx.grad(loss_fn))(model, *GRAD_INPUTS)),
                 what="nnx.jit(nnx.grad) of a model with @to_static __call__", atol=1e-4)


def test_inside_nnx_jit(model):
    run = nnx.jit(laxify.convert(predict))
    for x, name in zip(INPUTS, IDS):
        assert_close(model(x), run(model, x), what=f"nnx.jit(convert(predict)), {name}")


def _scaled_copy(model: AdaptiveMLP, factor: float) -> AdaptiveMLP:
    graphdef, state = nnx.split(model)
    return nnx.merge(graphdef, jax.tree_util.tree_map(lambda p: p * factor, state))


def test_parameters_are_traced_not_baked_into_the_program():
    model = AdaptiveMLP(3, 8, rngs=nnx.Rngs(1))
    by_function = laxify.to_static(predict)
    by_method = laxify.to_static(model.__call__)
    x = INPUTS[0]
    TRACES.clear()
    by_function(model, x)
    assert_close(model(x), by_method(x), what="first call")
    # Updated in place (as an optimizer does), then a second model of the same structure.
    nnx.update(model, nnx.state(_scaled_copy(model, 1.5)))
    assert_close(model(x), by_function(model, x), what="updated parameters")
    assert_close(model(x), by_method(x), what="updated parameters, bound method")
    other = _scaled_copy(model, -0.5)
    assert_close(other(x), by_function(other, x), what="another model")
    assert len(TRACES) == 1  # no retrace: the parameters are arguments of the program
    # The parameters are inputs of the compiled program (not constants in it).
    signature = by_method.lower(x).as_text().split("func.func public @main(")[1].split(")")[0]
    assert signature.count("%arg") == len(jax.tree_util.tree_leaves(nnx.state(model))) + 1


class Normalised(nnx.Module):
    """BatchNorm updates its running statistics: the update must reach the model."""

    def __init__(self, *, rngs: nnx.Rngs):
        self.norm = nnx.BatchNorm(3, momentum=0.5, rngs=rngs)
        self.calls = nnx.Variable(jnp.zeros((), jnp.int32))

    def __call__(self, x):
        self.calls[...] += 1
        y = self.norm(x)
        while y.sum() < 0.0:
            y = y + 1.0
        return y


def test_state_changed_inside_is_written_back_as_nnx_jit_does():
    eager, converted = Normalised(rngs=nnx.Rngs(0)), Normalised(rngs=nnx.Rngs(0))
    step = laxify.to_static(predict)
    for x in INPUTS:
        assert_close(eager(x), step(converted, x), what="BatchNorm forward")
    assert_close(nnx.state(eager), nnx.state(converted), what="running statistics and counter")
    assert int(converted.calls[...]) == len(INPUTS)


def test_gradients_match_eager_and_finite_differences(model, eager_grads):
    (x, target), eager = GRAD_INPUTS, eager_grads
    assert_close(eager, nnx.grad(laxify.to_static(loss_fn))(model, x, target), what="nnx.grad(to_static)", atol=1e-4)
    # jax.grad over the parameters (nnx.split), the model put back together inside.
    graphdef, params = nnx.split(model)
    by_params = lambda p: laxify.convert(loss_fn)(nnx.merge(graphdef, p), x, target)
    grads = jax.jit(jax.grad(by_params))(params)
    assert_close(nnx.state(eager), grads, what="jit(jax.grad(convert))", atol=1e-4)
    # Finite differences along a random direction (a step small enough to keep the trip count).
    direction = random_like(params)
    eager_loss = lambda p: loss_fn(nnx.merge(graphdef, p), x, target)
    fd = directional_fd(eager_loss, params, direction, eps=1e-3)
    assert abs(fd - dot(grads, direction)) <= 0.05 * abs(fd) + 1e-3


def test_training_with_optax_lowers_the_loss():
    model = AdaptiveMLP(3, 8, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(3e-2), wrt=nnx.Param)
    x = jax.random.normal(jax.random.key(7), (16, 3))
    target = jnp.sin(x.sum(axis=1))

    @nnx.jit
    def train_step(model, optimizer, x, target):
        loss, grads = nnx.value_and_grad(laxify.convert(loss_fn))(model, x, target)
        optimizer.update(model, grads)
        return loss

    losses = [float(train_step(model, optimizer, x, target)) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0], losses
    assert_close(loss_fn(model, x, target), laxify.to_static(loss_fn)(model, x, target), what="trained model")


def test_export_refuses_a_model_argument_and_says_what_to_do(model):
    with pytest.raises(ValueError, match="model object .* Export a function of the parameters"):
        laxify.to_static(predict).export(model, INPUTS[0])
