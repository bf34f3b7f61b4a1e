"""k-means (Lloyd's algorithm) that iterates until the assignments stop changing.

`while True:` with a traced `break` when no point changes cluster becomes one `lax.while_loop`;
the per-cluster update `for j in range(k): if counts[j] > 0:` (an empty cluster keeps its centre)
becomes a `lax.scan` over a `lax.cond`. Checked against eager Python on data with an empty
cluster, on a run that converges, and on one stopped by `max_iter`.
Run: `python samples/kmeans.py [--size N] [--diff]` (N: points per cluster).
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402


@laxify.to_static
def kmeans(points, centres, max_iter):
    """Cluster centres, the cluster of each point, and the number of updates made."""
    k = centres.shape[0]
    assign = jnp.full(points.shape[0], -1)
    steps = 0
    while True:
        dist = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
        new_assign = jnp.argmin(dist, axis=1)
        if jnp.all(new_assign == assign) or steps == max_iter:
            break
        assign = new_assign
        counts = jnp.bincount(assign, length=k)
        sums = jax.ops.segment_sum(points, assign, num_segments=k)
        for j in range(k):
            if counts[j] > 0:  # an empty cluster keeps its centre
                centres = centres.at[j].set(sums[j] / counts[j])
        steps += 1
    return centres, assign, steps


def blobs(seed: int, per_cluster: int) -> jax.Array:
    means = np.array([[0.0, 0.0], [3.0, 2.0], [0.0, 3.5]], np.float32)
    noise = np.random.default_rng(seed).normal(size=(3, per_cluster, 2)).astype(np.float32)
    return jnp.asarray((means[:, None, :] + noise).reshape(-1, 2))


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=20, size_help="points per cluster").parse_args(argv)
    result = Result("kmeans")
    if args.diff:
        print(kmeans.diff())
    points = blobs(0, args.size)
    starts = {
        "three points of one blob": points[:3],
        "a far start (empty cluster)": jnp.array([[0.0, 0.0], [1.0, 1.0], [50.0, 50.0]]),
        "spread starts": jnp.array([[-1.0, 0.0], [6.0, 4.0], [1.0, 7.0]]),
    }
    start = starts["spread starts"]
    result.first = seconds(lambda: kmeans(points, start, jnp.int32(100)))  # conversion, tracing, compiling
    for label, start in starts.items():
        for max_iter in (jnp.int32(1), jnp.int32(100)):  # traced: one program for both
            got = kmeans(points, start, max_iter)
            want = kmeans.python_function(points, start, max_iter)
            check(f"k-means from {label}, max_iter {int(max_iter)}: {int(got[2])} updates", got, want,
                  rtol=1e-4, atol=1e-4)
    centres, assign, steps = kmeans(points, starts["spread starts"], jnp.int32(100))
    assert int(steps) < 100 and np.bincount(np.asarray(assign)).min() > 0.8 * args.size, (steps, assign)
    centres, assign, _ = kmeans(points, starts["a far start (empty cluster)"], jnp.int32(100))
    assert np.allclose(centres[2], 50.0), "the empty cluster keeps its centre"

    start, max_iter = starts["spread starts"], jnp.int32(100)
    result.constructs = count_constructs(kmeans, points, start, max_iter)
    note = try_plain_jit(kmeans.python_function, points, start, max_iter)
    time_all(result, lambda: kmeans.python_function(points, start, max_iter),
             lambda: kmeans(points, start, max_iter), jit_note=note)
    return result


if __name__ == "__main__":
    main()
