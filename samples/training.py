"""A training loop with early stopping: `while bad_epochs < patience` on the validation loss.

The whole loop is one function: each epoch runs `for xb, yb in zip(batches_x, batches_y)`
(a `lax.scan` over the minibatches), then `if val_loss < best:` keeps the best parameters or
counts a bad epoch (a `lax.cond`); the epoch loop is a `lax.while_loop` whose trip count
depends on the validation losses. The optimiser is a static argument: plain SGD written here,
and `optax.adam` too when optax is installed. Checked against eager Python on runs stopped by
patience and by `max_epochs`; the eager baseline is the usual Python loop calling a jitted
gradient function. Run: `python samples/training.py [--size N] [--diff]`
(N: training examples).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402


class Optimizer(NamedTuple):
    """The optax interface, so that an optax optimiser can stand in for `sgd`."""

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], tuple[Any, Any]]


def sgd(learning_rate: float) -> Optimizer:
    return Optimizer(lambda params: (),
                     lambda grads, state, params=None: (jax.tree.map(lambda g: -learning_rate * g, grads), state))


def predict(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return (h @ params["w2"] + params["b2"])[:, 0]


def mse(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


grad_mse = jax.jit(jax.grad(mse))  # jitted as usual: the eager loop below calls it per batch


@laxify.to_static
def train(params, optimizer, batches_x, batches_y, x_val, y_val, patience, max_epochs):
    """Train until the validation loss has not improved for `patience` epochs; return the best
    parameters, their validation loss, and the number of epochs run."""
    state = optimizer.init(params)
    best_params, best_loss = params, float("inf")
    bad_epochs, epoch = 0, 0
    while bad_epochs < patience and epoch < max_epochs:
        for xb, yb in zip(batches_x, batches_y):
            grads = grad_mse(params, xb, yb)
            updates, state = optimizer.update(grads, state, params)
            params = jax.tree.map(lambda p, u: p + u, params, updates)
        val_loss = mse(params, x_val, y_val)
        if val_loss < best_loss:
            best_params, best_loss, bad_epochs = params, val_loss, 0
        else:
            bad_epochs += 1
        epoch += 1
    return best_params, best_loss, epoch


def dataset(n: int, seed: int = 0):
    """Few noisy training points of a sine, many clean validation points: it overfits."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n, 1)).astype(np.float32)
    y = (np.sin(2 * x[:, 0]) + 0.3 * rng.normal(size=n)).astype(np.float32)
    x_val = np.linspace(-2, 2, 64, dtype=np.float32)[:, None]
    batch = 8
    n = n // batch * batch
    return (jnp.asarray(x[:n].reshape(-1, batch, 1)), jnp.asarray(y[:n].reshape(-1, batch)),
            jnp.asarray(x_val), jnp.asarray(np.sin(2 * x_val[:, 0])))


def init_params(hidden: int, seed: int = 1) -> dict[str, jax.Array]:
    rng = np.random.default_rng(seed)
    return {"w1": jnp.asarray(rng.normal(size=(1, hidden)), jnp.float32), "b1": jnp.zeros(hidden),
            "w2": jnp.asarray(rng.normal(size=(hidden, 1)) / np.sqrt(hidden), jnp.float32), "b2": jnp.zeros(1)}


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=32, size_help="training examples").parse_args(argv)
    result = Result("training")
    if args.diff:
        print(train.diff())
    data = dataset(args.size)
    params = init_params(32)
    i32 = jnp.int32
    sgd_015 = sgd(0.15)  # one object: a new optimiser is a new static argument, a new compile
    timed = (params, sgd_015, *data, i32(3), i32(40))
    result.first = seconds(lambda: train(*timed))  # conversion, tracing and compiling

    runs = [("SGD lr 0.15", sgd_015, 3, 40), ("SGD lr 0.15", sgd_015, 3, 5)]
    try:
        import optax
    except ImportError:
        print("optax is not installed: plain SGD only")
    else:
        runs.append(("optax.adam 0.05", optax.adam(0.05), 3, 5))
    stops = set()
    for name, optimizer, patience, max_epochs in runs:
        case = (params, optimizer, *data, i32(patience), i32(max_epochs))
        got = train(*case)
        want = train.python_function(*case)
        epochs = int(got[2])
        check(f"{name}, patience {patience}, max {max_epochs} epochs: stopped after {epochs}",
              got, want, rtol=1e-3, atol=1e-5)
        stops.add("max_epochs" if epochs == max_epochs else "patience")
    assert stops == {"max_epochs", "patience"}, stops
    _, best, _ = train(*timed)
    assert float(best) < float(mse(params, *data[2:])), "training improves the validation loss"

    result.constructs = count_constructs(train, *timed)
    note = try_plain_jit(lambda *a: train.python_function(a[0], timed[1], *a[1:]), params, *timed[2:])
    time_all(result, lambda: train.python_function(*timed), lambda: train(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
