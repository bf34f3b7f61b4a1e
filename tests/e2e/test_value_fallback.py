"""Value-dependent Python on traced values (a string built from one, `int` of a traced float, a
traced index into a Python list): what eager Python runs, `to_static` runs, eagerly, with one
FallbackWarning at the user's line; `fallback="error"` refuses it there. The eager run is the
converted code's, so laxify's meaning of the user's code holds (`x[i] = v` on a JAX array)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify


def binary_digits(n):
    out = ""
    while n > 0:
        out = str(n % 2) + out  # a string built from a traced value
        n = n // 2
    return out


def pick_from_python_list(i, x):
    weights = [0.5, 2.0, -1.0]
    return x * weights[i]  # a traced index into a Python list


def updates_then_python(x, k):
    y = jnp.zeros(4)
    for i in range(4):
        if x[i] > 0:
            y[i] = x[i] * 2
        else:
            y[i] = -1.0
    scale = [1.0, 2.0, 3.0][len(str(int(k))) % 3]  # a string made from a traced value
    return y * scale


def _calls(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]


def test_a_string_built_from_a_traced_value_runs_eagerly_with_one_warning():
    f = laxify.to_static(binary_digits)
    result, caught = _calls(f, jnp.int32(5))
    assert result == binary_digits(jnp.int32(5)) == "101"
    # At the line that makes the string.
    assert len(caught) == 1 and caught[0].lineno == binary_digits.__code__.co_firstlineno + 3
    message = str(caught[0].message)
    assert "`str()` of a traced value" in message and "eagerly" in message and "_lx" not in message
    assert "Tracer" not in message
    # The same input signature runs eagerly again, without a second warning.
    result, caught = _calls(f, jnp.int32(6))
    assert (result, caught) == ("110", [])


def test_a_traced_index_into_a_python_list():
    f = laxify.to_static(pick_from_python_list)
    for i in range(3):
        result, _ = _calls(f, jnp.int32(i), jnp.float32(3.0))
        assert float(result) == float(pick_from_python_list(i, np.float32(3.0)))


def test_the_eager_run_keeps_array_item_updates():
    # The oracle: the same function on a NumPy array (what `y[i] = v` means to its author).
    def oracle(x, k):
        y = np.zeros(4, np.float32)
        for i in range(4):
            y[i] = x[i] * 2 if x[i] > 0 else -1.0
        return y * [1.0, 2.0, 3.0][len(str(int(k))) % 3]
    f = laxify.to_static(updates_then_python)
    warned = []
    for x, k in [([1.0, -2.0, 3.0, 0.0], 2.7), ([-1.0, 5.0, 0.5, 2.0], -1.5)]:
        result, caught = _calls(f, jnp.asarray(x), jnp.float32(k))
        np.testing.assert_allclose(result, oracle(np.asarray(x, np.float32), k))
        warned += caught
    assert [w.lineno for w in warned] == [updates_then_python.__code__.co_firstlineno + 7]  # the string


def test_the_eager_run_raises_what_python_raises():
    f = laxify.to_static(updates_then_python)
    with pytest.warns(laxify.FallbackWarning), pytest.raises(ValueError, match="NaN"):
        f(jnp.ones(4), jnp.float32(np.nan))


def test_fallback_error_refuses_at_the_users_line():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(binary_digits, fallback="error")(jnp.int32(5))
    message = str(info.value)
    assert "out = str(n % 2) + out" in message and "_lx" not in message


def test_silent_fallback_says_nothing_and_agrees():
    result, caught = _calls(laxify.to_static(binary_digits, fallback="silent"), jnp.int32(9))
    assert (result, caught) == ("1001", [])


def digit_sum(n):
    return sum(int(c) for c in str(n))  # the digits of a traced value


def test_str_of_a_traced_value_is_never_the_tracers_name():
    result, caught = _calls(laxify.to_static(digit_sum), jnp.int32(38276))
    assert int(result) == digit_sum(jnp.int32(38276)) == 26
    assert len(caught) == 1 and "`str()` of a traced value" in str(caught[0].message)
    with pytest.raises(laxify.ConversionError, match="str"):
        laxify.to_static(digit_sum, fallback="error")(jnp.int32(1))


def carried_python_string(n):
    out = ""
    while n > 0:
        out = out + "1"  # a Python str changed in a traced loop
        n = n - 1
    return len(out)


def test_a_python_string_changed_in_a_traced_loop():
    result, caught = _calls(laxify.to_static(carried_python_string), jnp.int32(3))
    assert result == 3 and len(caught) == 1
    message = str(caught[0].message)
    assert "`out` is a Python str changed in this `while` loop" in message and "Tracer" not in message


def test_a_list_argument_only_read_stays_one_program():
    def total(xs, x):
        return xs[0] * x + xs[1]
    result, caught = _calls(laxify.to_static(total), [jnp.float32(2.0), jnp.float32(1.0)], jnp.float32(3.0))
    assert (float(result), caught) == (7.0, [])


def labelled(x, tag):
    total = 0.0
    for v in x:  # a traced loop: the function is one program
        if v > 0:
            total = total + v
    return total, tag + ":" + str(x.shape[0])  # a string made from Python values only


def size_name(x):
    return "long" if x.shape[0] > 2 else "short"  # decided by the shape: a new trace per shape


def formatted(x):
    return f"value {x}"  # eager Python writes the digits; a trace would write the tracer


def test_a_string_made_from_python_values_is_returned_by_the_program():
    f = laxify.to_static(labelled)
    for x, tag in [([1.0, -2.0, 3.0], "a"), ([4.0, 5.0, -1.0], "a"), ([2.0, 2.0], "b")]:
        result, caught = _calls(f, jnp.asarray(x), tag)
        expected = labelled(jnp.asarray(x), tag)
        assert caught == [] and result[1] == expected[1] and type(result[1]) is str
        assert float(result[0]) == float(expected[0])
    program = jax.make_jaxpr(lambda x: laxify.convert(labelled)(x, "a")[0])(jnp.ones(3))
    assert "scan" in str(program) and "cond" in str(program)


def test_each_program_returns_its_own_string():
    f = laxify.to_static(size_name)
    for n in (3, 2, 3, 1, 5):  # programs reused across calls: never another shape's string
        result, caught = _calls(f, jnp.ones(n))
        assert (result, caught) == (size_name(jnp.ones(n)), [])


def test_a_string_that_shows_a_traced_value_runs_eagerly():
    result, caught = _calls(laxify.to_static(formatted), jnp.float32(2.5))
    assert result == formatted(jnp.float32(2.5)) == "value 2.5"
    assert len(caught) == 1 and "made from a traced value" in str(caught[0].message)
    assert "Tracer" not in str(caught[0].message)
