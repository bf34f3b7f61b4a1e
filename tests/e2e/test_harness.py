"""The differential harness itself: it finds primitives in nested jaxprs and catches mismatches."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from harness import assert_trees_close, check, control_flow_prims, eqn_count, primitive_counts


def _nested_lax(x):
    def body(carry, row):
        carry = lax.cond(row.sum() > 0, lambda c: c + row, lambda c: c - row, carry)
        return carry, None

    carry, _ = lax.scan(body, jnp.zeros(x.shape[1]), x)
    return jax.jit(lambda c: lax.while_loop(lambda v: v.sum() < 10, lambda v: v + 1, c))(carry)


def test_finds_primitives_nested_in_scan_cond_and_pjit():
    jaxpr = jax.make_jaxpr(_nested_lax)(jnp.ones((3, 2)))
    assert control_flow_prims(jaxpr) == {"scan", "cond", "while"}
    assert primitive_counts(jaxpr)["cond"] == 1
    assert eqn_count(jaxpr) > len(jaxpr.jaxpr.eqns)


def test_straight_line_code_has_no_control_flow():
    assert control_flow_prims(jax.make_jaxpr(lambda x: jnp.where(x > 0, x, -x))(jnp.ones(2))) == set()


@pytest.mark.parametrize("expected, actual, message", [
    (jnp.ones(2, jnp.float32), jnp.ones(2, jnp.int32), "dtype"),
    (jnp.ones(2), jnp.ones(3), "shape"),
    (jnp.ones(2), jnp.zeros(2), "Not equal to tolerance"),
    ((jnp.ones(2),), [jnp.ones(2)], "structure"),
    ({"a": jnp.ones(2)}, {"a": jnp.ones(2, jnp.int32)}, "['a']"),
])
def test_tree_comparison_catches_mismatches(expected, actual, message):
    with pytest.raises(AssertionError, match=None) as info:
        assert_trees_close(expected, actual, what="self-test")
    assert message in str(info.value)


def test_python_scalars_compare_with_jax_default_dtypes():
    assert_trees_close((1, 2.0, True), (jnp.int32(1), jnp.float32(2.0), jnp.bool_(True)), what="scalars")


def _relu_sum(x):
    if x.sum() > 0:
        y = x
    else:
        y = x * 0
    return y


def test_check_rejects_wrong_primitive_expectation():
    with pytest.raises(AssertionError, match="control-flow primitives"):
        check(_relu_sum, (jnp.ones(2),), expect_prims={"while"})
