"""A conditional expression on a traced condition whose sides a compiled program cannot hold as
one array: a Python string, ``None`` against a number, a tuple against an array. Python picks
one side with the condition's concrete value, so the line runs as Python (``to_static`` gives
eager's value with a ``FallbackWarning`` that names the sides; ``jax.jit(convert)`` a located
error at the line). A side that calls a function is a ``lax.cond`` branch (lazy), and a side
giving ``None`` there was taken for a side that raised: the other side's zeros came back where
Python gives ``None`` (silently wrong). Oracle: the function run eagerly, on both paths."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims, jaxpr_of, primitive_counts


def double(v):
    return v * 2


def none_or_call(x):
    return None if x > 1 else double(x)


def call_or_none_then_test(x):
    y = double(x) if x > 1 else None
    if y is None:
        return -1.0
    return y


def label_after_loop(x):
    for _ in range(100):
        x = x * 0.99 + 0.01
    label = "big" if x > 0.9 else "small"
    return x, label


def label_from_call(x):
    label = str(double(3)) if x > 0.9 else "small"
    return x, label


def tuple_or_array(x):
    return (x, x) if x > 1 else x


def none_or_number(x):
    return None if x > 1 else 3


def _same(want, got) -> bool:
    """Python values equal, arrays equal to float32 precision, in the same structure."""
    if want is None or isinstance(want, str):
        return got == want
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(map(_same, want, got))
    assert_trees_close(want, got, what="result")
    return True


CASES = [none_or_call, call_or_none_then_test, label_after_loop, label_from_call, tuple_or_array, none_or_number]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", [0.5, 2.5])
def test_eager_value_with_a_warning_naming_the_sides(fn, value):
    x = jnp.float32(value)
    with pytest.warns(laxify.FallbackWarning) as record:
        got = laxify.to_static(fn)(x)
    assert _same(fn(x), got)
    messages = [str(w.message) for w in record]
    assert any("sides of this conditional expression" in m for m in messages), messages
    assert not any("_where" in m or "0x" in m or "Tracer" in m for m in messages), messages
    assert record[0].filename == __file__


@pytest.mark.parametrize("fn", [none_or_call, label_after_loop, tuple_or_array], ids=lambda f: f.__name__)
def test_jit_of_convert_is_a_located_error(fn):
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(jnp.float32(2.5))
    message = str(info.value)
    assert "sides of this conditional expression" in message
    assert __file__ in message and " if x > " in message


def test_the_loop_before_a_string_valued_expression_stays_compiled():
    with pytest.warns(laxify.FallbackWarning) as record:
        laxify.to_static(label_after_loop)(jnp.float32(0.5))
    assert any("1 loop(s) run as compiled programs" in str(w.message) for w in record)


def same_text(x):
    return x * 2, ("ok" if x > 1 else "ok")


def numbers_and_arrays(x):
    return (1.0 if x > 0 else x), (x > 2 if x > 1 else True)


@pytest.mark.parametrize("fn", [same_text, numbers_and_arrays], ids=lambda f: f.__name__)
def test_sides_one_program_can_hold_still_convert(fn):
    for value in (-1.0, 1.5, 3.0):
        x = jnp.float32(value)
        with warnings.catch_warnings():
            warnings.simplefilter("error", laxify.FallbackWarning)
            got = laxify.to_static(fn)(x)
        want = fn(x)
        assert [str(v) if isinstance(v, str) else float(v) for v in got] == [
            str(v) if isinstance(v, str) else float(v) for v in want
        ]
    jaxpr = jaxpr_of(lambda x: [v for v in laxify.convert(fn)(x) if not isinstance(v, str)], jnp.float32(1.0))
    assert not control_flow_prims(jaxpr)
    if fn is numbers_and_arrays:
        assert primitive_counts(jaxpr)["select_n"] == 2


def test_messages_of_jax_refusals_are_said_in_laxify_words():
    def reads_item(x):
        y = x * 2
        v = y.item()
        return v + 1

    with pytest.warns(laxify.FallbackWarning) as record:
        assert laxify.to_static(reads_item)(jnp.float32(2.0)) == reads_item(jnp.float32(2.0))
    message = str(record[0].message)
    assert "ConcretizationTypeError" in message and "`.item()`" in message
    assert "Abstract tracer value" not in message and "Tracer" not in message.replace("ConcretizationTypeError", "")
