"""Whatever eager Python runs, to_static runs: errors that stop the trace where eager
Python runs on concrete values fall back with one FallbackWarning at the user's line and eager's
value; where eager Python raises too, its own error (no warning); fallback="error" and
jax.jit(laxify.convert(f)) give the located text."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify

HERE = __file__


def _line(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def traced_slice(x, a):
    b = a + 2
    return x[a:b] * 2  # a traced slice bound: JAX's IndexError while tracing


def pow_mod(a, b, m):
    return pow(int(a), int(b), int(m))


def sorted_pairs(x):
    return sorted((v, -i) for i, v in enumerate(x))[0][0]


def count_in_append_loop(xs, n):
    result = []
    for v in xs:
        if result.count(v) < n:
            result.append(v)
    return result


def digits(n):
    out = ""
    if n > 0:
        out = out + "p"
    else:
        out = out + "n"
    return len(out) + n


def shape_error(x):
    return x + jnp.ones(4)  # eager JAX raises too


def _fallback(fn, args, line_text, where=None):
    expected = fn(*args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(fn)(*args)
    found = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert len(found) == 1, [str(w.message) for w in found]
    assert found[0].filename == HERE and found[0].lineno == _line(where or fn, line_text)
    assert "laxify/" not in str(found[0].message).replace("laxify runs", "")
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(np.asarray(a), np.asarray(b)), got, expected)
    return str(found[0].message)


def test_a_traced_slice_bound_falls_back_with_eager_value():
    x = jnp.arange(6.0)
    for a in (0, 3):
        message = _fallback(traced_slice, (x, jnp.int32(a)), "x[a:b]")
        assert "IndexError" in message
    with pytest.raises(laxify.ConversionError, match="IndexError") as info:
        laxify.to_static(traced_slice, fallback="error")(x, jnp.int32(1))
    assert info.value.location.line == _line(traced_slice, "x[a:b]")


def test_an_error_eager_python_raises_too_is_its_own_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        with pytest.raises(TypeError) as info:
            laxify.to_static(shape_error)(jnp.ones(3))
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_pow_with_a_modulus_of_traced_ints_falls_back():
    message = _fallback(pow_mod, (jnp.int32(7), jnp.int32(23), jnp.int32(143)), "return pow(")
    assert "pow(a, b, m)" in message
    # two arguments: the builtin itself, converted
    two = laxify.to_static(lambda a, b: pow(a, b))
    np.testing.assert_allclose(two(jnp.float32(2.0), jnp.float32(3.0)), 8.0)


def test_sorted_of_tuples_of_traced_values_falls_back():
    _fallback(sorted_pairs, (jnp.array([3, 1, 2], jnp.int32),), "return sorted(")


def test_count_of_a_list_appended_in_its_loop():
    xs = jnp.array([1, 2, 3, 1, 2, 1, 2, 3], jnp.int32)
    # The list's count changes per iteration: the loop runs as Python, where the count of
    # traced items needs concrete values: eager Python decides, at that line.
    _fallback(count_in_append_loop, (xs, 2), "if result.count(v) < n:")


def test_a_python_str_differing_between_branches_falls_back():
    for n in (3, -3):
        _fallback(digits, (jnp.int32(n),), "if n > 0:")


def pick(x):
    return ["a", "b", "c", "d"][x] * 2  # a traced index into a Python list of strings


def uses_pick(x):
    return len(pick(x)) + 1


def test_the_jit_route_gives_the_located_text_of_to_static():
    with pytest.raises(laxify.ConversionError) as by_static:
        laxify.to_static(uses_pick, fallback="error")(jnp.int32(2))
    with pytest.raises(laxify.ConversionError) as by_jit:
        jax.jit(laxify.convert(uses_pick))(jnp.int32(2))
    for info in (by_static, by_jit):
        assert "TracerIntegerConversionError" in str(info.value)
        assert info.value.location.filename == HERE
        assert info.value.location.line == _line(pick, 'return ["a"')
    _fallback(uses_pick, (jnp.int32(2),), 'return ["a"', where=pick)


def test_messages_name_functions_without_their_address():
    from laxify.runtime.messages import describe

    def helper(v):
        return v

    assert describe(helper) == "Python function `test_messages_name_functions_without_their_address.<locals>.helper`"
    assert "0x" not in describe(lambda v: v) and "0x" not in describe(print)
    assert describe("ab") == "Python str 'ab'"


def function_or_array(x):
    if x.sum() > 0:
        y = jnp.sin
    else:
        y = x
    return y


def test_a_function_on_one_traced_path_is_named_in_the_message():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(function_or_array, fallback="error")(jnp.ones(2))
    assert " at 0x" not in str(info.value)
