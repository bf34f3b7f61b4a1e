"""Pytrees carried through traced `if` / `while` / `for`: dicts with fixed keys, tuples,
namedtuples, registered dataclasses and classes, fixed-length lists; carry-type widening
(Python numbers widen as JAX promotes them); in-place container updates inside traced loops.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

import laxify
from harness import CASE_FIELDS, case, check

COND = {"cond"}
WHILE = {"while"}
SCAN = {"scan"}


def f32(*values):
    return jnp.array(values, jnp.float32)


def i32(*values):
    return jnp.array(values, jnp.int32)


POS = f32(1.0, 2.0, 3.0)
NEG = f32(-1.0, -2.0, -3.0)
SMALL = f32(0.25, 0.5, 0.25)


class Particle(NamedTuple):
    pos: jax.Array
    vel: jax.Array


@partial(jax.tree_util.register_dataclass, data_fields=["pos", "vel"], meta_fields=["tag"])
@dataclasses.dataclass
class Body:
    pos: jax.Array
    vel: jax.Array
    tag: str = "body"


class Pair:
    """A plain class registered with ``register_pytree_node``."""

    def __init__(self, a, b):
        self.a, self.b = a, b


jax.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))


# -- dicts with fixed keys ------------------------------------------------------------------

def tree_dict_through_if(x):
    d = {"v": x, "n": jnp.int32(0)}
    if x.sum() > 0:
        d = {"v": d["v"] * 2, "n": d["n"] + 1}
    else:
        d = {"v": -d["v"], "n": d["n"] - 1}
    return d


def tree_dict_through_while(x):
    d = {"v": x, "n": jnp.int32(0)}
    while d["v"].sum() < 40:
        d = {"v": d["v"] * 2, "n": d["n"] + 1}
    return d


def tree_dict_through_for_range(x):
    d = {"a": x, "b": x * 0}
    for i in range(4):
        d = {"a": d["a"] + i, "b": d["b"] + d["a"]}
    return d


def tree_dict_inplace_in_scan(x):
    d = {"k": x, "n": jnp.int32(0)}
    for v in x:
        d["k"] = d["k"] + v
        d["n"] = d["n"] + 1
    return d


def tree_dict_inplace_in_while(x):
    d = {"k": x, "n": 0}
    while d["k"].sum() < 50:
        d["k"] = d["k"] * 2
        d["n"] += 1
    return d


def tree_dict_inplace_in_if(x):
    d = {"k": x, "n": jnp.int32(0)}
    if x.sum() > 0:
        d["k"] = d["k"] + 1
    else:
        d["n"] = d["n"] + 1
    return d


def tree_dict_inplace_traced_range(x, n):
    d = {"k": x, "n": jnp.int32(0)}
    for i in range(n):
        d["k"] = d["k"] + 1
        d["n"] = d["n"] + i
    return d


def tree_nested_dict_of_tuples(x):
    s = {"p": (x, x * 0), "count": jnp.int32(0)}
    while s["count"] < 3:
        p, q = s["p"]
        s = {"p": (p + 1, q + p), "count": s["count"] + 1}
    return s


# -- tuples, namedtuples, dataclasses, registered classes ------------------------------------

def tree_tuple_through_while(x):
    state = (x, jnp.int32(0))
    while state[0].sum() < 30:
        state = (state[0] * 3, state[1] + 1)
    return state


def tree_tuple_unpacked_in_for(x):
    a, b = x, x * 0
    for i in range(5):
        a, b = b + 1, a * 2
    return a, b


def tree_namedtuple_through_while(x):
    p = Particle(x, x * 0 + 1)
    while p.pos.sum() < 20:
        p = Particle(p.pos + p.vel, p.vel * 2)
    return p


def tree_namedtuple_replace_in_if(x):
    p = Particle(x, x)
    if p.pos.sum() > 0:
        p = p._replace(vel=p.vel * 10)
    return p


def tree_namedtuple_in_scan(xs):
    p = Particle(xs[0] * 0, xs[0] * 0 + 1)
    for row in xs:
        p = Particle(p.pos + row * p.vel, p.vel * 0.5)
    return p


def tree_dataclass_through_while(x):
    b = Body(x, x * 0)
    while b.pos.sum() < 30:
        b = Body(b.pos + b.vel + 1, b.vel + 1)
    return b


def tree_dataclass_attribute_update_in_for(x):
    b = Body(x, x * 0)
    for i in range(3):
        b.vel = b.vel + 1
        b.pos = b.pos + b.vel
    return b


def tree_dataclass_attribute_update_in_if(x):
    b = Body(x, x * 0)
    if x.sum() > 0:
        b.vel = b.vel + 1
    return b


def tree_dataclass_replace_in_while(x):
    b = Body(x, x * 0, "fast")
    while b.pos.sum() < 30:
        b = dataclasses.replace(b, pos=b.pos * 2)
    return b


def tree_registered_class_in_scan(x):
    p = Pair(x, x)
    for v in x:
        p = Pair(p.a + v, p.b * 2)
    return p.a, p.b


def tree_registered_class_through_if(x):
    p = Pair(x, -x)
    if x.sum() > 0:
        p = Pair(p.b, p.a)
    return p.a, p.b


# -- fixed-length lists -----------------------------------------------------------------------

def tree_list_through_if(x):
    state = [x, x * 0]
    if x.sum() > 0:
        state = [state[0] + 1, state[1] + state[0]]
    return state


def tree_list_through_for_range(x):
    state = [x, x * 0]
    for i in range(3):
        state = [state[0] + 1, state[1] + state[0]]
    return state


def tree_list_through_while(x):
    state = [x, x * 0]
    while state[0].sum() < 10:
        state = [state[0] + 1, state[1] + state[0]]
    return state


def tree_list_item_assignment_in_for(x):
    state = [x, x * 0]
    for i in range(3):
        state[0] = state[0] + 1
        state[1] = state[1] + state[0]
    return state




CASES = [
    case(tree_dict_through_if, (POS,), (NEG,), prims=COND),
    case(tree_dict_through_while, (POS,), (f32(50.0),), prims=WHILE),
    case(tree_dict_through_for_range, (POS,), prims=SCAN),
    case(tree_dict_inplace_in_scan, (POS,), prims=SCAN),
    case(tree_dict_inplace_in_while, (POS,), (f32(60.0),), prims=WHILE),
    case(tree_dict_inplace_in_if, (POS,), (NEG,), prims=COND),
    case(tree_dict_inplace_traced_range, (POS, jnp.int32(0)), (POS, jnp.int32(4)), prims=WHILE),
    case(tree_nested_dict_of_tuples, (POS,), prims=None),
    case(tree_tuple_through_while, (POS,), (f32(100.0),), prims=WHILE),
    case(tree_tuple_unpacked_in_for, (POS,), prims=SCAN),
    case(tree_namedtuple_through_while, (POS,), (f32(30.0),), prims=WHILE),
    case(tree_namedtuple_replace_in_if, (POS,), (NEG,), prims=COND),
    case(tree_namedtuple_in_scan, (jnp.arange(6, dtype=jnp.float32).reshape(3, 2),), prims=SCAN),
    case(tree_dataclass_through_while, (POS,), (f32(40.0),), prims=WHILE),
    case(tree_dataclass_attribute_update_in_for, (POS,), prims=SCAN),
    case(tree_dataclass_attribute_update_in_if, (POS,), (NEG,), prims=COND),
    case(tree_dataclass_replace_in_while, (POS,), (f32(40.0),), prims=WHILE),
    case(tree_registered_class_in_scan, (POS,), prims=SCAN),
    case(tree_registered_class_through_if, (POS,), (NEG,), prims=COND),
    case(tree_list_through_if, (POS,), (NEG,), prims=COND),
    case(tree_list_through_for_range, (POS,), prims=SCAN),
    case(tree_list_through_while, (POS,), (f32(20.0),), prims=WHILE),
    case(tree_list_item_assignment_in_for, (POS,), prims=SCAN),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_pytree_carries_match_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_dataclass_meta_fields_survive():
    out = laxify.to_static(tree_dataclass_replace_in_while)(POS)
    assert isinstance(out, Body) and out.tag == "fast"
    out = jax.jit(laxify.convert(tree_namedtuple_through_while))(POS)
    assert isinstance(out, Particle)


# -- carry-type widening ------------------------------------------------------------------------

def widen_int_zero_with_float_array(x):
    acc = 0
    for i in range(3):
        acc = acc + x[i]
    return acc


def widen_python_float_with_int_array(x):
    acc = 0.5
    for i in range(3):
        acc = acc + x[i]
    return acc


def widen_int_zero_with_int_array(x):
    acc = 0
    for v in x:
        acc = acc + v
    return acc


def widen_in_traced_while(x, n):
    acc = 0
    i = 0
    while i < n:
        acc = acc * 2 + x[i]
        i += 1
    return acc


def widen_python_bool_flag_in_scan(x):
    found = False
    for v in x:
        found = found or v > 2
    return found


def widen_python_float_scaled_by_int(x):
    scale = 1.0
    for v in x:
        scale = scale * v
    return scale


def widen_dict_entries(x):
    d = {"sum": 0, "count": 0}
    for v in x:
        d = {"sum": d["sum"] + v, "count": d["count"] + 1}
    return d


def widen_int_array_carry_with_python_float(x):
    # A strongly typed float32 carry takes Python floats without changing dtype.
    acc = jnp.zeros((), jnp.float32)
    for v in x:
        acc = acc + 0.5 * v
    return acc


WIDEN_CASES = [
    case(widen_int_zero_with_float_array, (POS,), (NEG,), prims=SCAN),
    case(widen_python_float_with_int_array, (i32(1, 2, 3),), prims=SCAN),
    case(widen_int_zero_with_int_array, (i32(1, 2, 3),), prims=SCAN),
    case(widen_in_traced_while, (POS, jnp.int32(1)), (POS, jnp.int32(3)), prims=WHILE),
    case(widen_python_bool_flag_in_scan, (POS,), (SMALL,), prims=SCAN),
    case(widen_python_float_scaled_by_int, (i32(1, 2, 3),), prims=SCAN),
    case(widen_dict_entries, (POS,), (i32(4, 5),), prims=SCAN),
    case(widen_int_array_carry_with_python_float, (POS,), (i32(1, 2),), prims=SCAN),
]


@pytest.mark.parametrize(CASE_FIELDS, WIDEN_CASES)
def test_carry_widening_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_widened_carry_dtype_is_float32_from_the_start():
    # `acc = 0` then `acc + x[i]` with float32 x: the scan carries float32, not int32.
    jaxpr = jax.make_jaxpr(laxify.convert(widen_int_zero_with_float_array))(POS)
    scan = next(e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan")
    carry_avals = [v.aval for v in scan.outvars]
    assert any(a.dtype == jnp.float32 and a.shape == () for a in carry_avals), carry_avals
    assert jaxpr.out_avals[0].dtype == jnp.float32
