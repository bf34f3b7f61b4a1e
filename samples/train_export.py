"""Train, export, reload: a small MLP trained until the validation loss is below a target
(`while val_loss > target and step < max_steps`, one compiled program), with gradients through
the model's converted loop, then its inference function exported with `jax.export` and run
again from the saved bytes with `laxify.load`.

The model applies one weight-tied residual block `depth` times (`for _ in range(depth)`: a
`lax.scan`, differentiated in reverse mode). Training is full-batch gradient descent in which a
step that makes the validation loss worse is undone and the learning rate halved (a `lax.cond`
inside the `lax.while_loop`). Checks: the converted gradient against `jax.grad` of the plain
Python function; the compiled training against the same loop run eagerly in Python, on a run
stopped by the target and one stopped by `max_steps`; the reloaded inference program (exported
with a symbolic batch dimension) against the in-process function on two batch sizes.
Run: `python samples/train_export.py [--size N] [--diff]` (N: training examples).
"""

from __future__ import annotations

import os
import sys
import tempfile

import jax
import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402

DEPTH = 4


def forward(params, x):
    h = jnp.tanh(x @ params["w_in"] + params["b_in"])
    for _ in range(DEPTH):  # a lax.scan: the same block applied DEPTH times
        h = h + 0.5 * jnp.tanh(h @ params["w_block"] + params["b_block"])
    return (h @ params["w_out"])[:, 0]


def loss(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


# Reverse mode through the converted scan of `forward` (jax.grad of the plain function would
# unroll the Python loop instead).
grad_loss = jax.jit(jax.grad(laxify.convert(loss)))


@laxify.to_static
def train(params, x, y, x_val, y_val, learning_rate, target, max_steps):
    """Gradient descent until the validation loss is below `target` (or `max_steps` steps); a
    step that makes the validation loss worse is undone and the learning rate halved."""
    val_loss = loss(params, x_val, y_val)
    step = 0
    while val_loss > target and step < max_steps:
        grads = grad_loss(params, x, y)
        candidate = jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)
        candidate_loss = loss(candidate, x_val, y_val)
        if candidate_loss < val_loss:
            params, val_loss = candidate, candidate_loss
        else:
            learning_rate = learning_rate * 0.5
        step += 1
    return params, val_loss, step, learning_rate


def dataset(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n, 1)).astype(np.float32)
    y = (np.sin(2 * x[:, 0]) + 0.05 * rng.normal(size=n)).astype(np.float32)
    x_val = np.linspace(-2, 2, 50, dtype=np.float32)[:, None]
    return jnp.asarray(x), jnp.asarray(y), jnp.asarray(x_val), jnp.asarray(np.sin(2 * x_val[:, 0]))


def init_params(hidden: int = 16, seed: int = 1) -> dict[str, jax.Array]:
    rng = np.random.default_rng(seed)

    def normal(*shape, scale):
        return jnp.asarray(rng.normal(size=shape) * scale, jnp.float32)

    return {"w_in": normal(1, hidden, scale=1.0), "b_in": normal(hidden, scale=0.5),
            "w_block": normal(hidden, hidden, scale=1 / np.sqrt(hidden)), "b_block": jnp.zeros(hidden),
            "w_out": normal(hidden, 1, scale=1 / np.sqrt(hidden))}


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=64, size_help="training examples").parse_args(argv)
    result = Result("train_export")
    if args.diff:
        print(train.diff())
    data = dataset(args.size)
    params = init_params()
    f32, i32 = jnp.float32, jnp.int32

    # 1. The gradient through the converted loop equals the eager one (plain Python loop).
    check("grad through the converted scan == eager jax.grad", grad_loss(params, *data[:2]),
          jax.grad(loss)(params, *data[:2]), rtol=1e-4, atol=1e-6)

    # 2. Training: compiled (one program) against the same loop in eager Python.
    timed = (params, *data, f32(0.5), f32(0.02), i32(300))
    result.first = seconds(lambda: train(*timed))  # conversion, tracing and compiling
    stops = set()
    for target, max_steps in ((0.02, 300), (0.0, 25)):
        case = (params, *data, f32(0.5), f32(target), i32(max_steps))
        got = train(*case)
        want = train.python_function(*case)
        steps = int(got[2])
        check(f"training to loss {target} (max {max_steps} steps): {steps} steps, "
              f"val loss {float(got[1]):.4f}", got, want, rtol=2e-3, atol=1e-4)
        stops.add("max_steps" if steps == max_steps else "target")
        assert float(got[3]) < 0.5, "some step was undone (the learning rate was halved)"
    assert stops == {"max_steps", "target"}, stops
    trained, best, _, _ = train(*timed)
    assert float(best) < 0.5 * float(loss(params, *data[2:])), "training improves the validation loss"

    # 3. Export the inference function with a symbolic batch size; reload it and compare.
    predict = laxify.to_static(forward)
    (batch,) = jax.export.symbolic_shape("batch")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "predict.jax")
        predict.export(trained, jax.ShapeDtypeStruct((batch, 1), jnp.float32), path=path)
        size = os.path.getsize(path)
        loaded = laxify.load(path)
    for n in (7, 50):
        x = jnp.linspace(-1.5, 1.5, n, dtype=jnp.float32)[:, None]
        check(f"exported predict ({size:,} bytes) reloaded, batch {n} == in-process",
              loaded(trained, x), predict(trained, x), rtol=1e-5, atol=1e-6)
        check(f"in-process predict, batch {n} == eager forward", predict(trained, x), forward(trained, x),
              rtol=1e-5, atol=1e-6)

    result.constructs = count_constructs(train, *timed)
    note = try_plain_jit(train.python_function, *timed)
    time_all(result, lambda: train.python_function(*timed), lambda: train(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
