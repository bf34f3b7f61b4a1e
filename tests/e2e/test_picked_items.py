"""An item of a Python list or tuple at a traced index that one array cannot hold: functions
(`layers[i](x)`), or arrays of different shapes (`blocks[i].sum()`). Where the item is used in
place (called, given to a call, an operand, a method of it called) each item is used in a
branch of its own and the program picks the branch (a `lax.switch`, as an `if` chain's arms);
elsewhere (bound to a name, returned, compared with `is`), and where the branches give values
of different shapes, the line runs as Python with eager's value. Oracle: the function run
eagerly on the same values, on every index (negative and out of range too)."""

from __future__ import annotations

import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import ROUTES, control_flow_prims, jaxpr_of, outcome


def double(x):
    return x * 2


def shift(x):
    return x + 1


def clipped(x):
    if x > 5:  # a branch with a traced `if` of its own
        return x - 5
    return x


def refuses(x):
    raise ValueError("this layer refuses")


LAYERS = (double, shift)
MORE = [double, shift, clipped, jnp.sin]
CHECKED = (double, refuses)
BLOCKS = (jnp.ones(2), jnp.arange(3.0), jnp.full((2, 2), 0.5))


def call_a_layer(x, i):
    return LAYERS[i](x)


def call_one_of_four(x, i):
    return MORE[i](x) + 1


def maybe_refused(x, i):
    return CHECKED[i](x)


def given_to_a_call(x, i):
    return list(map(MORE[i], [x, x + 1]))


class Model:
    def __init__(self):
        self.layers = [double, clipped]

    def __call__(self, x, i):
        return self.layers[i](x)


MODEL = Model()


def a_method_of_the_model(x, i):
    return MODEL(x, i)


def block_sum(x, i):
    return BLOCKS[i].sum() * x


def block_test(x, i):
    if BLOCKS[i].max() > 0.75:
        return x
    return -x


def same_function(x, i):
    return x if MORE[i] == clipped else -x


def a_function_of_python(x, i):
    return x if isinstance(MORE[i], types.FunctionType) else -x  # (jnp.sin is no Python function)


CONVERTED = [
    call_a_layer,
    call_one_of_four,
    given_to_a_call,
    a_method_of_the_model,
    block_sum,
    block_test,
    same_function,
    a_function_of_python,
]
INDICES = (0, 1, 2, 3, -1, -4, -5, 4, 7)



def _agree(want, got):
    if isinstance(want, BaseException):
        assert type(got) is type(want) and str(got) == str(want), (want, got)
        return
    assert not isinstance(got, BaseException), got
    for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fn", CONVERTED, ids=lambda f: f.__name__)
def test_each_item_in_a_branch_gives_eagers_value_or_error(fn, route):
    run = ROUTES[route](fn)
    for i in INDICES:
        x = jnp.float32(7.0)
        _agree(outcome(fn, x, jnp.int32(i)), outcome(run, x, jnp.int32(i)))


@pytest.mark.parametrize("fn", CONVERTED, ids=lambda f: f.__name__)
def test_the_program_switches_on_the_index(fn):
    assert "cond" in control_flow_prims(jaxpr_of(fn, jnp.float32(7.0), jnp.int32(1)))


@pytest.mark.parametrize("route", ROUTES)
def test_a_raise_in_one_item_is_raised_where_the_index_picks_it(route):
    run = ROUTES[route](maybe_refused)
    np.testing.assert_allclose(run(jnp.float32(3.0), jnp.int32(0)), 6.0)
    with pytest.raises(ValueError, match="this layer refuses"):
        run(jnp.float32(3.0), jnp.int32(1))


def bound_to_a_name(x, i):
    layer = MORE[i]  # the very function: only a concrete index picks it
    return layer(x)


def compared_with_is(x, i):
    return x if MORE[i] is shift else -x


def returned(x, i):
    return x * 2, MORE[i]


def of_different_shapes(x, i):
    return (BLOCKS[i] * x).max()  # (each branch gives another shape)


def its_length(x, i):
    return len(BLOCKS[i]) * x


def its_type(x, i):
    return x if type(MORE[i]) is types.FunctionType else -x


def kept_in_a_list(x, i):
    out = []
    out.append(MORE[i])  # (the very function: a list method keeps what it is given)
    return x if out[0] is clipped else -x


def printed(x, i):
    print(MORE[i])
    return x


@pytest.mark.parametrize(
    "fn",
    [bound_to_a_name, compared_with_is, returned, of_different_shapes, its_length, its_type, kept_in_a_list, printed],
    ids=lambda f: f.__name__,
)
def test_where_one_program_cannot_hold_it_the_line_runs_as_python(fn):
    for i in (0, 1, -1):
        x = jnp.float32(7.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = laxify.to_static(fn)(x, jnp.int32(i))
        assert any(issubclass(w.category, laxify.FallbackWarning) for w in caught)
        want = fn(x, jnp.int32(i))
        if fn is returned:
            assert got[1] is want[1]
            got, want = got[0], want[0]
        _agree(want, got)
        assert not any("Picked" in str(w.message) or "_lx" in str(w.message) for w in caught)
    with pytest.raises(laxify.ConversionError):
        laxify.checked(jax.jit(laxify.convert(fn)))(jnp.float32(7.0), jnp.int32(1)) if fn is not returned else (
            laxify.to_static(fn, fallback="error")(jnp.float32(7.0), jnp.int32(1))
        )
