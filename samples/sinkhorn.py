"""Entropy-regularised optimal transport: Sinkhorn iterations until the marginal error < tol.

`while err > tol and n < max_iter` on a traced error becomes one `lax.while_loop` (the error
starts as a Python float, `inf`, and is carried as an array). The transport plan it finds is
checked against the same code run eagerly, for a run that converges, one stopped by `max_iter`,
and one that needs no iteration; and its marginals against the targets.
Run: `python samples/sinkhorn.py [--size N] [--diff]` (N: points on each side).
"""

from __future__ import annotations

import sys

import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402


@laxify.to_static
def sinkhorn(a, b, cost, eps, tol, max_iter=2000):
    """The plan P >= 0 with row sums a and column sums b minimising <P, cost> - eps * H(P),
    its transport cost, and the iterations taken."""
    kernel = jnp.exp(-cost / eps)
    u, v = jnp.ones_like(a), jnp.ones_like(b)
    err = float("inf")
    n = 0
    while err > tol and n < max_iter:
        u = a / (kernel @ v)
        v = b / (kernel.T @ u)
        err = jnp.sum(jnp.abs(u * (kernel @ v) - a))  # the row marginals; columns are exact
        n += 1
    plan = u[:, None] * kernel * v[None, :]
    return plan, jnp.sum(plan * cost), n


def problem(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (rng.normal(size=(n, 2)) + [2.0, 0.0]).astype(np.float32)
    a = rng.uniform(0.5, 1.5, n).astype(np.float32)
    b = rng.uniform(0.5, 1.5, n).astype(np.float32)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    return jnp.asarray(a / a.sum()), jnp.asarray(b / b.sum()), jnp.asarray(cost / cost.max())


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=24, size_help="points on each side").parse_args(argv)
    result = Result("sinkhorn")
    if args.diff:
        print(sinkhorn.diff())
    a, b, cost = problem(args.size)
    f32, i32 = jnp.float32, jnp.int32  # tol and max_iter traced: one program for every case
    eps = f32(0.05)
    cases = [
        ("tol 1e-6 (converges)", (a, b, cost, eps, f32(1e-6), i32(2000))),
        ("tol 1e-9, max_iter 5 (stopped)", (a, b, cost, eps, f32(1e-9), i32(5))),
        ("tol inf (no iteration)", (a, b, cost, eps, f32(float("inf")), i32(2000))),
    ]
    timed = cases[0][1]
    result.first = seconds(lambda: sinkhorn(*timed))  # conversion, tracing and compiling
    for label, case in cases:
        got = sinkhorn(*case)
        want = sinkhorn.python_function(*case)
        check(f"{label}: {int(got[2])} iterations", got, want, rtol=1e-4, atol=1e-6)
    plan, transport, n = sinkhorn(*cases[0][1])
    assert 5 < int(n) < 2000, n
    check("the plan's marginals are a and b", (plan.sum(1), plan.sum(0)), (a, b), rtol=1e-3, atol=1e-5)

    result.constructs = count_constructs(sinkhorn, *timed)
    note = try_plain_jit(sinkhorn.python_function, *timed)
    time_all(result, lambda: sinkhorn.python_function(*timed), lambda: sinkhorn(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
