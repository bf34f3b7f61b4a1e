"""Helpers of the model tests: comparison with eager Python, jaxpr primitives, finite differences."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import jax
import jax.numpy as jnp
import numpy as np


def assert_close(expected: Any, actual: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """Same pytree structure, and every leaf close (the eager run is the oracle)."""
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    assert e_tree == a_tree, f"{what}: structure {a_tree} differs from eager {e_tree}"
    for e, a in zip(e_leaves, a_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol, err_msg=what)


def _sub_jaxprs(params: dict) -> Iterable[Any]:
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", None)
            if inner is not None:
                yield inner


def primitives(jaxpr: Any) -> set[str]:
    """Every primitive in ``jaxpr`` and in the jaxprs nested in its equations."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    found: set[str] = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for inner in _sub_jaxprs(eqn.params):
            found |= primitives(inner)
    return found


def directional_fd(loss: Callable[[Any], jax.Array], params: Any, direction: Any, eps: float = 1e-2) -> float:
    """Central difference of ``loss`` at ``params`` along ``direction``."""
    step = lambda sign: jax.tree_util.tree_map(lambda p, d: p + sign * eps * d, params, direction)
    return float((loss(step(1.0)) - loss(step(-1.0))) / (2 * eps))


def dot(a: Any, b: Any) -> float:
    return float(sum(jnp.vdot(x, y) for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))))


def random_like(tree: Any, seed: int = 0) -> Any:
    """A pytree of unit-scale normal values shaped like ``tree``."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    return jax.tree_util.tree_unflatten(
        treedef, [jax.random.normal(k, jnp.shape(leaf), jnp.result_type(leaf)) for k, leaf in zip(keys, leaves)])
