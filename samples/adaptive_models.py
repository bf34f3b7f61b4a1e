"""Adaptive computation in Flax NNX and in Equinox: a model that thinks until it is sure.

The model refines a hidden state until a learned halting score passes 0.9 (a `while` on a
traced value) and then takes a traced `if`. laxify turns both into `lax` control flow; with
`loop_options(max_iters=8)` the loop is a bounded scan that reverse-mode differentiates, so the
model trains with optax inside the library's own jit (`nnx.jit`, `eqx.filter_jit`).
Run: `python samples/adaptive_models.py`.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

import laxify


# -- Flax NNX ----------------------------------------------------------------------------

class NNXAdaptive(nnx.Module):
    def __init__(self, din: int, dhidden: int, *, rngs: nnx.Rngs):
        self.embed = nnx.Linear(din, dhidden, rngs=rngs)
        self.step = nnx.Linear(dhidden, dhidden, rngs=rngs)
        self.halt = nnx.Linear(dhidden, 1, rngs=rngs)
        self.head = nnx.Linear(dhidden, 1, rngs=rngs)

    @laxify.loop_options(max_iters=8)
    def __call__(self, x):
        h = jnp.tanh(self.embed(x))
        score, n = jnp.zeros(()), 0
        while score < 0.9 and n < 8:
            h = h + jnp.tanh(self.step(h))
            score = score + jax.nn.sigmoid(self.halt(h)).mean()
            n += 1
        y = self.head(h)[:, 0]
        if y.mean() > 0:
            y = 2.0 * y
        else:
            y = y - 1.0
        return y


# -- Equinox -----------------------------------------------------------------------------

class EqxAdaptive(eqx.Module):
    embed: eqx.nn.Linear
    step: eqx.nn.Linear
    halt: eqx.nn.Linear
    head: eqx.nn.Linear
    activation: Callable  # a function beside the arrays: static under to_static

    def __init__(self, din: int, dhidden: int, *, key: jax.Array):
        k1, k2, k3, k4 = jax.random.split(key, 4)
        self.embed = eqx.nn.Linear(din, dhidden, key=k1)
        self.step = eqx.nn.Linear(dhidden, dhidden, key=k2)
        self.halt = eqx.nn.Linear(dhidden, 1, key=k3)
        self.head = eqx.nn.Linear(dhidden, 1, key=k4)
        self.activation = jnp.tanh

    @laxify.loop_options(max_iters=8)
    def __call__(self, x):
        h = self.activation(jax.vmap(self.embed)(x))
        score, n = jnp.zeros(()), 0
        while score < 0.9 and n < 8:
            h = h + self.activation(jax.vmap(self.step)(h))
            score = score + jax.nn.sigmoid(jax.vmap(self.halt)(h)).mean()
            n += 1
        y = jax.vmap(self.head)(h)[:, 0]
        if y.mean() > 0:
            y = 2.0 * y
        else:
            y = y - 1.0
        return y


def loss_fn(model, x, target):
    return jnp.mean((model(x) - target) ** 2)


def train_nnx(x, target, steps: int) -> list[float]:
    model = NNXAdaptive(3, 8, rngs=nnx.Rngs(0))
    # The model as an argument of a to_static function: its parameters are traced.
    np.testing.assert_allclose(laxify.to_static(loss_fn)(model, x, target), loss_fn(model, x, target), rtol=1e-5)
    optimizer = nnx.Optimizer(model, optax.adam(3e-2), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, target):
        loss, grads = nnx.value_and_grad(laxify.convert(loss_fn))(model, x, target)
        optimizer.update(model, grads)
        return loss

    return [float(train_step(model, optimizer, x, target)) for _ in range(steps)]


def train_equinox(x, target, steps: int) -> list[float]:
    model = EqxAdaptive(3, 8, key=jax.random.key(0))
    np.testing.assert_allclose(laxify.to_static(loss_fn)(model, x, target), loss_fn(model, x, target), rtol=1e-5)
    optimizer = optax.adam(3e-2)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def train_step(model, opt_state, x, target):
        loss, grads = eqx.filter_value_and_grad(laxify.convert(loss_fn))(model, x, target)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    losses = []
    for _ in range(steps):
        model, opt_state, loss = train_step(model, opt_state, x, target)
        losses.append(float(loss))
    return losses


def main() -> None:
    x = jax.random.normal(jax.random.key(7), (16, 3))
    target = jnp.sin(x.sum(axis=1))
    for name, train in (("Flax NNX", train_nnx), ("Equinox", train_equinox)):
        losses = train(x, target, steps=40)
        print(f"{name:9s} loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} adam steps")
        assert losses[-1] < 0.5 * losses[0], losses
    print("OK")


if __name__ == "__main__":
    main()
