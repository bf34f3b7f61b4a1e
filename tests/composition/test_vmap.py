"""`jax.vmap` of converted functions whose predicates become batched, against a per-example
eager loop: a batched `if` becomes a select of both branches, a batched `while` runs until every
example is done (finished ones frozen). Also `in_axes=None` arguments, static arguments,
`donate_argnums`, and use inside an outer `jax.jit`.
"""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp

import laxify
from harness import assert_trees_close, primitive_counts

BATCH = jnp.array([[0.5, 2.0, 1.0], [-3.0, 1.0, 0.2], [4.0, -0.25, 1.0], [0.05, 0.1, 0.02]],
                  jnp.float32)


def stack(results):
    return jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *results)


def per_example(fn, *args, in_axes):
    """fn run eagerly on each example: args with axis None are shared."""
    size = next(a.shape[0] for a, axis in zip(args, in_axes) if axis == 0)
    return stack([fn(*(a[k] if axis == 0 else a for a, axis in zip(args, in_axes)))
                  for k in range(size)])


def grow_then_branch(x, limit):
    """A traced `while` (per-example trip counts) and a traced `if` on the result."""
    steps = 0
    while jnp.abs(x).sum() < limit:
        x = x * 1.5 + 0.1
        steps += 1
    if x[0] > 0:
        y = x / steps if steps > 0 else x
    else:
        y = -x
    return y, steps


def select_in_loop(x, w):
    acc = jnp.zeros_like(w)
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc = acc + w * x[i]
        elif x[i] < 0:
            acc = acc - w
    return acc


def test_batched_if_becomes_select_and_batched_while_runs_per_example():
    limits = jnp.array([4.0, 3.0, 30.0, 5.0], jnp.float32)
    expected = per_example(grow_then_branch, BATCH, limits, in_axes=(0, 0))
    assert len({int(s) for s in expected[1]}) > 2  # per-example trip counts differ
    for f in (laxify.convert(grow_then_branch), laxify.to_static(grow_then_branch)):
        assert_trees_close(expected, jax.vmap(f)(BATCH, limits), what="vmap")
        assert_trees_close(expected, jax.jit(jax.vmap(f))(BATCH, limits), what="jit(vmap)")
    counts = primitive_counts(jax.make_jaxpr(jax.vmap(laxify.convert(grow_then_branch)))(BATCH, limits))
    # Batched predicates: the `if`s become selects of both branches, the `while` stays a while.
    assert counts["while"] == 1 and counts["cond"] == 0 and counts["select_n"] >= 1, counts


def test_in_axes_none_argument_and_batched_threshold():
    shared_limit = jnp.float32(6.0)
    expected = per_example(grow_then_branch, BATCH, shared_limit, in_axes=(0, None))
    f = laxify.to_static(grow_then_branch)
    assert_trees_close(expected, jax.vmap(f, in_axes=(0, None))(BATCH, shared_limit), what="x batched")
    # The other way round: one x, a batch of limits.
    limits = jnp.array([1.0, 5.0, 20.0], jnp.float32)
    expected = per_example(grow_then_branch, BATCH[0], limits, in_axes=(None, 0))
    assert_trees_close(expected, jax.vmap(f, in_axes=(None, 0))(BATCH[0], limits), what="limit batched")


def test_in_axes_none_on_a_static_shaped_argument():
    w = jnp.array([1.0, -2.0], jnp.float32)
    expected = per_example(select_in_loop, BATCH, w, in_axes=(0, None))
    for f in (laxify.convert(select_in_loop), laxify.to_static(select_in_loop)):
        assert_trees_close(expected, jax.vmap(f, in_axes=(0, None))(BATCH, w), what="vmap")
    # Batched over the columns instead (in_axes=1), w shared.
    expected = per_example(select_in_loop, BATCH.T, w, in_axes=(0, None))
    assert_trees_close(expected, jax.vmap(laxify.to_static(select_in_loop), in_axes=(1, None))(BATCH, w),
                       what="in_axes=1")


def scaled_steps(x, n, scale):
    for _ in range(n):
        if x.sum() > 1:
            x = x * scale
        else:
            x = x + scale
    return x


def test_vmap_with_a_static_argument():
    f = laxify.to_static(scaled_steps, static_argnums=1)
    for n in (0, 2, 5):
        expected = stack([scaled_steps(x, n, 0.5) for x in BATCH])
        # The static argument is closed over, as with jax.jit's static_argnums.
        assert_trees_close(expected, jax.vmap(lambda x: f(x, n, 0.5))(BATCH), what=f"n={n}")
        assert_trees_close(expected, jax.vmap(functools.partial(f, n=n, scale=0.5))(BATCH),
                           what=f"partial n={n}")
    # Python scalars are static by default, without static_argnums.
    g = laxify.to_static(scaled_steps)
    assert_trees_close(stack([scaled_steps(x, 3, 2.0) for x in BATCH]),
                       jax.vmap(lambda x: g(x, 3, 2.0))(BATCH), what="default static")


def test_donate_argnums():
    f = laxify.to_static(grow_then_branch, donate_argnums=0)
    for x in BATCH:
        expected = grow_then_branch(x, 6.0)
        donated = jnp.array(x)
        with warnings.catch_warnings():
            # Backends without donation warn that the buffer was not usable; that is all.
            warnings.filterwarnings("ignore", message=".*[Dd]onat")
            got = f(donated, 6.0)
        assert_trees_close(expected, got, what="donated")
        assert donated.is_deleted()  # XLA reused its buffer (CPU implements donation too)
        # A non-donated argument stays usable.
        kept = jnp.array(x)
        laxify.to_static(grow_then_branch)(kept, 6.0)
        assert not kept.is_deleted()


def test_vmap_inside_outer_jit_with_other_work():
    f = laxify.to_static(grow_then_branch)

    @jax.jit
    def outer(xs, limit):
        ys, steps = jax.vmap(f, in_axes=(0, None))(xs, limit)
        return ys.sum(axis=1) * 2, steps.max()

    for limit in (jnp.float32(2.0), jnp.float32(12.0)):
        ys, steps = per_example(grow_then_branch, BATCH, limit, in_axes=(0, None))
        assert_trees_close((ys.sum(axis=1) * 2, steps.max()), outer(BATCH, limit), what="outer jit")


def test_per_example_gradients_vmap_of_grad():
    """vmap(grad(f)) through a bounded while with a branch: per-example gradients."""
    @laxify.loop_options(max_iters=20)
    def loss(x, limit):
        while jnp.abs(x).sum() < limit:
            x = x * 1.5 + 0.1
        if x[0] > 0:
            y = (x ** 2).sum()
        else:
            y = jnp.sin(x).sum()
        return y

    limits = jnp.array([4.0, 3.0, 30.0, 5.0], jnp.float32)
    expected = stack([jax.grad(loss)(x, l) for x, l in zip(BATCH, limits)])
    for f in (laxify.convert(loss), laxify.to_static(loss)):
        assert_trees_close(expected, jax.vmap(jax.grad(f))(BATCH, limits), what="vmap(grad)",
                           rtol=1e-5, atol=1e-5)
