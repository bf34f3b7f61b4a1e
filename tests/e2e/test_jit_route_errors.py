"""Under ``jax.jit(laxify.convert(f))`` nothing can run eagerly: where ``to_static`` would fall
back, the call is the located ``ConversionError`` that ``to_static(f, fallback="error")`` gives,
with the same text, never JAX's raw error, and never a frame of laxify's in its traceback. Each
class below was met in the real-code corpus (tests/realcode) in a converted function that
holds no construct kept as Python and calls no user function (so it had no handler around it).
The oracle: eager Python runs each function on concrete values."""

from __future__ import annotations

import os
import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify.conversion import convert_function


def count_upto(n):
    return len(list(range(n)))  # a traced int where Python needs an index


def position(x):
    return [3, 1, 2].index(x)  # == on a traced value, decided by Python's list.index


def ramp_total(n):
    return jnp.arange(n).sum()  # a traced length


def window_total(x, i, j):
    return x[i:j].sum()  # traced slice bounds: JAX's IndexError names the tracers


def leaves(items):
    out = []
    for item in items:
        if hasattr(item, "__iter__"):  # a Python int has none; a traced scalar has one
            out.extend(leaves(item))  # iterating a traced 0-d array: JAX's TypeError names no tracer
        else:
            out.append(item)
    return out


def blank_total(n):
    return jnp.zeros(n).sum()  # a traced shape: JAX's TypeError says "concrete"


def helper_calls(n):
    k = count_upto(n)  # the helper meets it: located at the helper's line, as to_static does
    return k + 1


CASES = [
    (count_upto, (jnp.int32(3),), "TracerIntegerConversionError", "return len(list(range(n)))"),
    (position, (jnp.int32(1),), "TracerBoolConversionError", "return [3, 1, 2].index(x)"),
    (ramp_total, (jnp.int32(3),), "ConcretizationTypeError", "return jnp.arange(n).sum()"),
    (window_total, (jnp.arange(4.0), jnp.int32(1), jnp.int32(3)), "with IndexError: ",  # (JAX's words differ between versions)
     "return x[i:j].sum()"),
    (leaves, ([1, [2, 3]],), "TypeError: iteration over a 0-d array", "for item in items:"),
    (blank_total, (jnp.int32(2),), "TypeError: Shapes must be", "return jnp.zeros(n).sum()"),
    (helper_calls, (jnp.int32(3),), "TracerIntegerConversionError", "return len(list(range(n)))"),
]
IDS = [c[0].__name__ for c in CASES]

_LAXIFY_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(laxify.__file__))) + os.sep
_OWN = tuple(_LAXIFY_ROOT + d + os.sep for d in ("laxify", "runtime", "ir", "transpiler"))


def _strict_error(fn, args) -> laxify.ConversionError:
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fn, fallback="error")(*args)
    return info.value


def _jit_error(fn, args) -> laxify.ConversionError:
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(*args)
    return info.value


@pytest.mark.parametrize("fn, args, names, line", CASES, ids=IDS)
def test_eager_python_runs_it(fn, args, names, line):
    # The oracle runs on concrete values, and to_static (default) falls back to give its value.
    expected = fn(*args)
    with pytest.warns(laxify.FallbackWarning):
        actual = laxify.to_static(fn)(*args)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected))


@pytest.mark.parametrize("fn, args, names, line", CASES, ids=IDS)
def test_the_jit_route_gives_the_strict_text(fn, args, names, line):
    strict, jitted = _strict_error(fn, args), _jit_error(fn, args)
    assert str(jitted) == str(strict)
    assert names in str(jitted) and line in str(jitted) and "_lx" not in str(jitted)
    assert jitted.location is not None and jitted.location.text.strip().startswith(line)


@pytest.mark.parametrize("fn, args, names, line", CASES, ids=IDS)
def test_no_frame_of_laxify_and_no_raw_error_shown(fn, args, names, line):
    error = _jit_error(fn, args)
    frames = traceback.extract_tb(error.__traceback__)
    assert not [f for f in frames if f.filename.startswith(_OWN)], frames
    assert frames[-1].filename == __file__  # the converted function, at its `def` line
    assert error.__cause__ is None and error.__suppress_context__
    shown = "".join(traceback.format_exception(error))
    assert "jax.errors" not in shown and "_lx" not in shown


def test_traceback_filtering_off_keeps_jax_s_error_as_the_cause():
    jax.config.update("jax_traceback_filtering", "off")
    try:
        error = _jit_error(count_upto, (jnp.int32(3),))
    finally:
        jax.config.update("jax_traceback_filtering", "auto")
    assert isinstance(error.__cause__, jax.errors.TracerIntegerConversionError)


def test_the_converted_function_is_its_own_code_object():
    # The handler is in the generated code, not a wrapper: convert(f).__code__ is the
    # converted code, named and placed as the user's function.
    fn = laxify.convert(count_upto)
    assert fn.__code__ is convert_function(count_upto).code
    assert fn.__code__.co_filename == __file__ and fn.__name__ == "count_upto"


def test_eager_calls_and_static_arguments_are_unchanged():
    # Concrete values: Python's own results and errors, as written.
    assert laxify.convert(count_upto)(3) == 3
    assert laxify.convert(position)(2) == 2
    with pytest.raises(ValueError, match="is not in list"):
        laxify.convert(position)(7)
    assert jax.jit(laxify.convert(count_upto), static_argnums=0)(4) == 4
    np.testing.assert_allclose(jax.jit(laxify.convert(window_total), static_argnums=(1, 2))(jnp.arange(4.0), 1, 3),
                               3.0)


def mean_of_first(x, n):
    total = 0.0
    for i in range(n):  # a traced bound: lax.fori_loop, one program
        total = total + x[i]
    return total / n


def test_a_function_that_converts_runs_under_jit():
    x = jnp.arange(5.0)
    assert float(jax.jit(laxify.convert(mean_of_first))(x, jnp.int32(3))) == pytest.approx(1.0)
    assert float(mean_of_first(x, 3)) == pytest.approx(1.0)


def test_a_users_own_error_under_jit_stays_the_users():
    def checked(x):
        if x.shape[0] < 2:  # a static test: Python's raise, while tracing
            raise ValueError("need two values")
        return x[0] + x[1]

    with pytest.raises(ValueError, match="need two values") as info:
        jax.jit(laxify.convert(checked))(jnp.ones(1))
    # Its line, not the handler's: JAX rebuilds the traceback from each frame's last
    # instruction, which is then the handler's (it has no source position of its own).
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (last.filename, last.line) == (__file__, 'raise ValueError("need two values")')


def unbound_in_a_python_loop(x):
    out = []
    for v in [0, 1]:
        out.append(acc is None)  # noqa: F821 - Python's UnboundLocalError, at this line
        acc = v
    return out


@pytest.mark.parametrize("route", ["to_static", "jit(convert)"])
def test_python_s_own_error_keeps_its_line(route):
    fn = (laxify.to_static(unbound_in_a_python_loop, fallback="error") if route == "to_static"
          else jax.jit(laxify.convert(unbound_in_a_python_loop)))
    with pytest.raises(UnboundLocalError) as info:
        fn(jnp.ones(3))
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and last.line.startswith("out.append(acc is None)")


def test_a_shape_error_of_the_users_stays_jax_s_own():
    # Eager Python raises it too: it is not about a traced value, so no "eager decides" text.
    def mismatched(x, y):
        return x + y

    with pytest.raises(TypeError, match="incompatible shapes") as info:
        jax.jit(laxify.convert(mismatched))(jnp.ones(3), jnp.ones(4))
    assert not isinstance(info.value, laxify.ConversionError)
    with pytest.raises(TypeError, match="incompatible shapes"):
        mismatched(jnp.ones(3), jnp.ones(4))
