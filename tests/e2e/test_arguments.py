"""DESIGN §1: which arguments are traced and which are static."""

from __future__ import annotations

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify


@dataclasses.dataclass  # eq=True and not frozen: instances are unhashable
class Model:
    w: float

    @laxify.to_static
    def __call__(self, x):
        if x.sum() > 0:
            return x * self.w
        return x


def test_an_unhashable_self_is_static_by_identity():
    m = Model(2.0)
    np.testing.assert_allclose(m(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(m(-jnp.ones(2)), [-1.0, -1.0])
    np.testing.assert_allclose(Model(3.0)(jnp.ones(2)), [3.0, 3.0])


def scaled_sum(xs, factor):
    total = 0.0
    for v in xs:
        total = total + v * factor
    return total


def test_a_list_of_floats_is_traced_and_a_float_is_static():
    f = laxify.to_static(scaled_sum)
    assert float(f([1.0, 2.0, 3.0], 2.0)) == 12.0
    assert float(f(jnp.arange(3.0), 0.5)) == 1.5


def grows(x, n):
    for _ in range(n):
        x = x + 1
    return x


def test_many_static_values_warn_once_at_the_def_line():
    f = laxify.to_static(grows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(12):
            f(jnp.zeros(()), n)
    found = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert len(found) == 1
    assert "distinct static argument values" in str(found[0].message)
    assert "`n` took 9 of them" in str(found[0].message), found[0].message
    assert found[0].filename == __file__
    assert found[0].lineno == grows.__code__.co_firstlineno


def test_static_argnums_forces_a_static_argument():
    f = laxify.to_static(grows, static_argnums=1)
    assert float(f(jnp.zeros(()), 3)) == 3.0
    jaxpr = str(jax.make_jaxpr(laxify.convert(grows), static_argnums=1)(jnp.zeros(()), 3))
    assert "while[" not in jaxpr and "scan[" in jaxpr


def test_bad_fallback_option_is_refused():
    with pytest.raises(ValueError, match="fallback must be one of"):
        laxify.to_static(grows, fallback="sometimes")
