"""Differential harness: eager Python on concrete arrays is the oracle for converted code.

``check(fn, *inputs, expect_prims=...)`` runs ``fn`` three ways on every input tuple and
compares the results leaf by leaf (values, dtypes, shapes):

1. ``fn(*args)`` eagerly (data-dependent ``if``/``while`` work there: arrays are concrete);
2. ``laxify.to_static(fn)(*args)``;
3. ``jax.jit(laxify.convert(fn), static_argnums=...)(*args)``.

It also traces ``laxify.convert(fn)`` with ``jax.make_jaxpr`` and checks which control-flow
primitives (``cond``, ``while``, ``scan``) the program holds, nested jaxprs included: a traced
construct must become its primitive, a static one must stay Python and leave none.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import pytest

import laxify

__all__ = [
    "CONTROL_FLOW",
    "ROUTES",
    "outcome",
    "assert_trees_close",
    "CASE_FIELDS",
    "case",
    "check",
    "control_flow_prims",
    "eqn_count",
    "jaxpr_of",
    "primitive_counts",
    "static_positions",
]

CONTROL_FLOW = frozenset({"cond", "while", "scan"})


# -- jaxpr inspection ------------------------------------------------------------------

# The two routes a converted function runs by, each raising what a run raises (a fallback is an
# error here: the function must convert).
ROUTES = {
    "to_static": lambda fn: laxify.to_static(fn, fallback="error"),
    "jit": lambda fn: laxify.checked(jax.jit(laxify.convert(fn))),
}


def outcome(fn: Callable, *args) -> Any:
    """``fn(*args)``, or the exception it raised (the outcome an oracle compares)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return e


def _sub_jaxprs(value: Any) -> Iterable[Any]:
    """Jaxprs held by one equation parameter (a jaxpr, a closed jaxpr, or tuples of them)."""
    if hasattr(value, "eqns"):
        yield value
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        yield value.jaxpr
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _sub_jaxprs(item)


def _eqns(jaxpr: Any) -> Iterable[Any]:
    """Every equation of ``jaxpr`` and of the jaxprs nested in its equations, depth first."""
    jaxpr = jaxpr.jaxpr if hasattr(jaxpr, "jaxpr") and not hasattr(jaxpr, "eqns") else jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        for param in eqn.params.values():
            for sub in _sub_jaxprs(param):
                yield from _eqns(sub)


def primitive_counts(jaxpr: Any) -> Counter:
    """How often each primitive name occurs in ``jaxpr``, nested jaxprs included."""
    return Counter(eqn.primitive.name for eqn in _eqns(jaxpr))


def control_flow_prims(jaxpr: Any) -> frozenset[str]:
    """The control-flow primitives (``cond``/``while``/``scan``) anywhere in ``jaxpr``."""
    return frozenset(primitive_counts(jaxpr)) & CONTROL_FLOW


def eqn_count(jaxpr: Any) -> int:
    """The number of equations in ``jaxpr``, nested jaxprs included."""
    return sum(1 for _ in _eqns(jaxpr))


def scanned_operands(eqn: Any) -> int:
    """How many arrays a ``scan`` equation scans over (its ``xs``), from the shapes alone: the
    body sees a scanned array without its leading axis, a constant or carry as it is. (The
    equation's parameters that count them changed in JAX 0.12: ``num_consts``/``num_carry``
    became a tree of the operands.)"""
    body = eqn.params["jaxpr"]
    body = getattr(body, "jaxpr", body)
    return sum(tuple(outer.aval.shape) != tuple(inner.aval.shape)
               for outer, inner in zip(eqn.invars, body.invars))


def jaxpr_of(fn: Callable, *args, static_argnums: Sequence[int] | None = None):
    """The jaxpr of ``laxify.convert(fn)`` on ``args`` (non-array arguments static by default)."""
    if static_argnums is None:
        static_argnums = static_positions(args)
    return jax.make_jaxpr(laxify.convert(fn), static_argnums=tuple(static_argnums))(*args)


# -- comparison ------------------------------------------------------------------------

def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def static_positions(args: Sequence[Any]) -> tuple[int, ...]:
    """Positions of the arguments that are not arrays (Python scalars, strings, None...)."""
    return tuple(i for i, a in enumerate(args) if not jax.tree_util.tree_leaves(a)
                 or not any(_is_array(leaf) for leaf in jax.tree_util.tree_leaves(a)))


def _as_array(leaf: Any) -> np.ndarray:
    # Python scalars take JAX's default dtypes (int32/float32), as they would inside jit.
    return np.asarray(jnp.asarray(leaf))


def assert_trees_close(expected: Any, actual: Any, *, what: str, rtol: float = 1e-5,
                       atol: float = 1e-6) -> None:
    """Same pytree structure; per leaf: same shape, same dtype, allclose values."""
    exp_leaves, exp_def = jax.tree_util.tree_flatten(expected)
    act_leaves, act_def = jax.tree_util.tree_flatten(actual)
    assert exp_def == act_def, f"{what}: pytree structure differs: {exp_def} vs {act_def}"
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(expected)[0]]
    for path, e, a in zip(paths, exp_leaves, act_leaves):
        e_arr, a_arr = _as_array(e), _as_array(a)
        where = f"{what}, leaf {path or '<root>'}"
        assert e_arr.shape == a_arr.shape, f"{where}: shape {e_arr.shape} vs {a_arr.shape}"
        assert e_arr.dtype == a_arr.dtype, f"{where}: dtype {e_arr.dtype} vs {a_arr.dtype}"
        np.testing.assert_allclose(a_arr, e_arr, rtol=rtol, atol=atol, err_msg=where)


# -- the check -------------------------------------------------------------------------

def check(fn: Callable, *inputs_list: tuple, expect_prims: Iterable[str] | None = None,
          static_argnums: Sequence[int] | None = None, rtol: float = 1e-5,
          atol: float = 1e-6) -> None:
    """Compare eager ``fn`` with its to_static and jit(convert) forms on every input tuple.

    ``expect_prims``: the exact set of control-flow primitives (a subset of ``CONTROL_FLOW``)
    the converted program must hold on every input; ``()`` means all control flow stayed
    Python. ``None`` skips the jaxpr check. ``static_argnums`` defaults to the positions of
    the non-array arguments of each input tuple (``to_static`` then finds them itself).
    """
    assert inputs_list, "check() needs at least one input tuple"
    expected_prims = None if expect_prims is None else frozenset(expect_prims)
    if expected_prims is not None:
        assert expected_prims <= CONTROL_FLOW, f"unknown primitives {expected_prims - CONTROL_FLOW}"
    # One to_static object for all inputs: it must retrace per signature and static value.
    if static_argnums is None:
        static_fn = laxify.to_static(fn, fallback="error")
    else:
        static_fn = laxify.to_static(fn, static_argnums=tuple(static_argnums), fallback="error")
    for n, args in enumerate(inputs_list):
        assert isinstance(args, tuple), f"inputs must be tuples of arguments, got {type(args)}"
        statics = tuple(static_argnums) if static_argnums is not None else static_positions(args)
        label = f"{fn.__name__} on input #{n}"

        expected = fn(*args)

        assert_trees_close(expected, static_fn(*args), what=f"{label}: to_static", rtol=rtol, atol=atol)

        jitted = jax.jit(laxify.convert(fn), static_argnums=statics)
        assert_trees_close(expected, jitted(*args), what=f"{label}: jit(convert)", rtol=rtol, atol=atol)

        if expected_prims is not None:
            jaxpr = jaxpr_of(fn, *args, static_argnums=statics)
            found = control_flow_prims(jaxpr)
            assert found == expected_prims, (
                f"{label}: control-flow primitives {sorted(found)}, expected {sorted(expected_prims)}"
                f"\n{jaxpr}"
            )


def case(fn: Callable, *inputs: tuple, prims: Iterable[str] | None = None,
         static_argnums: Sequence[int] | None = None, marks=()) -> Any:
    """One row of a parametrize table: ``(fn, inputs, prims, static_argnums)``, named after ``fn``."""
    return pytest.param(fn, inputs, prims, static_argnums, id=fn.__name__, marks=marks)


CASE_FIELDS = "fn, inputs, prims, static_argnums"
