"""A recurrent cell unrolled over time: `for t in range(n)` becomes one `lax.scan`.

With a Python int `n` the trip count is static: laxify emits a scan (compile time does not
grow with `n`, and the loop is reverse-mode differentiable). With a traced `n` the same code
becomes a `fori_loop`. Run: `python samples/rnn.py`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import laxify


@laxify.to_static
def rnn(params, xs, n):
    """Run an Elman cell over the first n steps of xs; return the last hidden state."""
    W, U, b = params
    h = jnp.zeros(W.shape[0])
    for t in range(n):
        h = jnp.tanh(W @ h + U @ xs[t] + b)
    return h


def main() -> None:
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    hidden, features, steps = 16, 4, 50
    params = (
        jax.random.normal(k1, (hidden, hidden)) / np.sqrt(hidden),
        jax.random.normal(k2, (hidden, features)),
        jnp.zeros(hidden),
    )
    xs = jax.random.normal(k3, (steps, features))

    print(rnn.diff())
    print()
    eager = rnn.python_function
    for n in (0, 1, steps):  # static trip counts (Python ints): lax.scan
        assert np.allclose(rnn(params, xs, n), eager(params, xs, n), atol=1e-5), n
        print(f"rnn(n={n:2d})           matches eager Python   OK")
    n = jnp.int32(7)  # a traced trip count: lax.fori_loop
    assert np.allclose(rnn(params, xs, n), eager(params, xs, 7), atol=1e-5)
    print("rnn(n=jnp.int32(7)) matches eager Python   OK")

    # The static loop is differentiable in reverse mode (it is a scan).
    loss = lambda p: jnp.sum(rnn(p, xs, steps) ** 2)
    grads = jax.grad(loss)(params)
    assert all(np.all(np.isfinite(g)) for g in jax.tree_util.tree_leaves(grads))
    print("jax.grad through the loop                       OK")


if __name__ == "__main__":
    main()
