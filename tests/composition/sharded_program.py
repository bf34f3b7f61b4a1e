"""Run by test_many_devices.py in a subprocess with 8 host CPU devices (XLA_FLAGS=
--xla_force_host_platform_device_count=8): converted functions with traced `while`/`if` under
jax.jit with NamedSharding inputs over a Mesh, and inside shard_map, against the single-device
result and eager Python. Prints one `ok <what>` line per check; any mismatch raises."""

from __future__ import annotations

import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import laxify


def shard_maps():
    """shard_map as this jax has it: `jax.shard_map` (newer) and/or
    `jax.experimental.shard_map.shard_map` (older; removed in later releases)."""
    found = []
    if hasattr(jax, "shard_map"):
        found.append(("jax.shard_map", jax.shard_map))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from jax.experimental.shard_map import shard_map
    except ImportError:
        pass
    else:
        found.append(("jax.experimental.shard_map", shard_map))
    assert found, "this jax has no shard_map"
    return found


def grow_then_branch(x):
    """Per example: grow until the norm passes 4, then flip if it took more than 2 steps."""
    steps = 0
    while (x ** 2).sum() < 16.0:
        x = x * 1.5 + 0.1
        steps += 1
    if steps > 2:
        x = -x
    return x, steps


def block_until_large(x):
    """Per block of rows (inside shard_map each device has its own trip count)."""
    while x.sum() < 100.0:
        x = x * 2.0
    if x[0, 0] > 10.0:
        x = x - 10.0
    return x


@laxify.loop_options(max_iters=20)
def loss(w, xs):
    h = xs @ w
    while jnp.abs(h).sum() < 50.0:
        h = jnp.tanh(h) * 2.0 + h
    return (h ** 2).mean()


def close(expected, actual, what):
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-5, atol=1e-6, err_msg=what)
    print("ok", what, flush=True)


def main() -> None:
    assert jax.device_count() == 8, jax.devices()
    rng = np.random.default_rng(0)
    xs = jnp.asarray(rng.uniform(0.01, 1.2, (16, 4)), jnp.float32)
    eager = [grow_then_branch(x) for x in xs]
    eager = (jnp.stack([e[0] for e in eager]), jnp.stack([jnp.asarray(e[1]) for e in eager]))
    assert len({int(s) for s in eager[1]}) > 1 and {bool(s > 2) for s in eager[1]} == {True, False}

    batched = laxify.to_static(jax.vmap(laxify.convert(grow_then_branch)))
    single = batched(jax.device_put(xs, jax.devices()[0]))
    close(eager, single, "single device == eager")

    mesh = Mesh(np.array(jax.devices()), ("data",))
    data = NamedSharding(mesh, P("data"))
    xs_sharded = jax.device_put(xs, data)
    assert len(xs_sharded.addressable_shards) == 8

    # Data parallel: the batch axis split over the mesh; XLA partitions the program.
    for name, fn in (("to_static", batched), ("jit(vmap(convert))", jax.jit(jax.vmap(laxify.convert(grow_then_branch))))):
        out = fn(xs_sharded)
        for leaf in out:
            assert leaf.sharding.is_equivalent_to(data, leaf.ndim), (name, leaf.sharding)
        close(single, out, f"{name} with NamedSharding inputs == single device")
    pinned = jax.jit(jax.vmap(laxify.convert(grow_then_branch)), in_shardings=data, out_shardings=data)
    close(single, pinned(xs), "jit(in_shardings, out_shardings) == single device")

    # Gradients, data parallel: replicated weights, sharded batch.
    w = jnp.asarray(rng.normal(size=(4, 3)) * 0.3, jnp.float32)
    w_replicated = jax.device_put(w, NamedSharding(mesh, P()))
    grad_single = jax.grad(laxify.to_static(loss))(w, xs)
    close(jax.grad(loss)(w, xs), grad_single, "grad single device == eager grad")
    grad_sharded = jax.jit(jax.grad(laxify.convert(loss)))(w_replicated, xs_sharded)
    assert grad_sharded.sharding.is_fully_replicated
    close(grad_single, grad_sharded, "grad with a sharded batch == single device")

    # shard_map: each device runs the converted program on its own block of rows.
    blocks = jnp.asarray(rng.uniform(0.1, 2.0, (16, 3)), jnp.float32)
    expected = jnp.concatenate([block_until_large(blocks[2 * k:2 * k + 2]) for k in range(8)])
    for name, shard_map in shard_maps():
        for api in (laxify.to_static, laxify.convert):
            mapped = jax.jit(shard_map(api(block_until_large), mesh=mesh, in_specs=P("data"),
                                       out_specs=P("data")))
            out = mapped(jax.device_put(blocks, data))
            assert out.sharding.is_equivalent_to(data, out.ndim), out.sharding
            close(expected, out, f"{name}({api.__name__}) == per-block eager")
        per_example = jax.jit(shard_map(jax.vmap(laxify.convert(grow_then_branch)), mesh=mesh,
                                        in_specs=P("data"), out_specs=P("data")))
        close(single, per_example(xs_sharded), f"{name}(vmap(convert)) == single device")
    print("done", flush=True)


if __name__ == "__main__":
    sys.exit(main())
