"""`to_static` where a JAX user reaches for `jax.jit`: abstract arguments (`ShapeDtypeStruct`,
symbolic shapes) in `lower`/`trace`/`eval_shape`/`export`, `clear_cache`, export options,
Python's own messages for calls that do not fit, warnings at the user's line, type hints.

Values are compared with eager Python and with `jax.jit` of the converted function; messages
with what Python itself says for the same call.
"""

from __future__ import annotations

import functools
import inspect
import sys
import traceback
import typing
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify

X = jnp.array([0.5, -1.0, 2.0], jnp.float32)
SPEC = jax.ShapeDtypeStruct((3,), jnp.float32)


def doubling(x):
    while x.sum() < 10.0:
        x = x * 2.0
    return x


def scaled(x, n, scale=1.0):
    acc = jnp.zeros_like(x)
    for i in range(n):
        if acc.sum() > 4.0:
            acc = acc - x
        else:
            acc = acc + x * scale
    return acc


def smooth(x):
    acc = 0.0
    for i in range(3):
        acc = acc + jnp.sin(x[i]) * x[i]
    if acc > 0:
        acc = acc * 2.0
    return acc


CALLS_SEEN = 0


def falls_back(x):
    global CALLS_SEEN
    if x.sum() > 0:
        CALLS_SEEN += 1  # a global written under a traced `if`: kept as Python
        x = x * 2
    return x


# -- 1. abstract arguments: lower, trace, eval_shape ------------------------------------

@pytest.mark.parametrize("stage", ["lower", "trace"])
def test_shape_dtype_struct_stands_for_an_array(stage):
    fn = laxify.to_static(doubling)
    staged = getattr(fn, stage)(SPEC)
    lowered = staged if stage == "lower" else staged.lower()
    assert lowered.as_text() == fn.lower(jnp.zeros(3, jnp.float32)).as_text()
    np.testing.assert_allclose(lowered.compile()(X), doubling(X))


def test_trace_gives_the_jaxpr_of_jax_jit():
    fn = laxify.to_static(doubling)
    traced = fn.trace(SPEC)
    assert isinstance(traced, jax.stages.Traced)
    assert str(traced.jaxpr) == str(jax.jit(laxify.convert(doubling)).trace(SPEC).jaxpr)
    assert "while" in str(traced.jaxpr)


def test_eval_shape_as_jax_jit():
    fn = laxify.to_static(scaled)
    got = fn.eval_shape(SPEC, 4, scale=2.0)
    assert got == jax.jit(laxify.convert(scaled), static_argnums=1).eval_shape(SPEC, 4, scale=2.0)
    assert got == jax.ShapeDtypeStruct(scaled(X, 4, 2.0).shape, scaled(X, 4, 2.0).dtype)
    # A pytree of specs and arrays, as jax.jit takes it.
    both = laxify.to_static(lambda pair: {"a": pair[0] * 2, "b": pair[1].sum()})
    assert both.eval_shape((SPEC, X)) == {
        "a": jax.ShapeDtypeStruct((3,), jnp.float32), "b": jax.ShapeDtypeStruct((), jnp.float32)}


def test_specs_with_static_arguments_and_keywords():
    fn = laxify.to_static(scaled)
    lowered = fn.lower(x=SPEC, n=3, scale=0.5)
    np.testing.assert_allclose(lowered.compile()(x=X), scaled(X, 3, 0.5), rtol=1e-6)


def test_symbolic_shape():
    fn = laxify.to_static(doubling)
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), jnp.float32)
    assert "tensor<?xf32>" in fn.lower(spec).as_text()
    assert fn.eval_shape(spec).shape == spec.shape
    loaded = laxify.load(fn.export(spec))
    for x in (X, jnp.arange(5, dtype=jnp.float32) - 1.0):
        np.testing.assert_allclose(loaded(x), doubling(x))


def test_ir_and_explain_take_specs():
    fn = laxify.to_static(scaled)
    assert fn.ir(SPEC, 3) == fn.ir(X, 3)
    assert str(fn.explain(SPEC, 3)) == str(fn.explain(X, 3))


def test_a_function_that_runs_eagerly_has_no_program_to_lower():
    fn = laxify.to_static(falls_back)
    for stage in (fn.lower, fn.trace, fn.eval_shape, fn.export):
        with pytest.raises(laxify.ConversionError) as info:
            stage(SPEC)
        text = str(info.value)
        assert "cannot be one XLA program" in text and "falls_back" in text
        assert "CALLS_SEEN" in text and "if x.sum() > 0:" in text


def test_clear_cache_traces_again_as_jax_jit_does():
    traces = []

    def counted(x):
        traces.append(1)  # Python runs once per trace
        if x.sum() > 0:
            x = x + 1.0
        return x

    fn = laxify.to_static(counted)
    expected = counted(X)
    traces.clear()
    for _ in range(2):
        np.testing.assert_allclose(fn(X), expected)
    assert len(traces) == 1
    fn.clear_cache()
    np.testing.assert_allclose(fn(X), expected)
    assert len(traces) == 2

    # The same as jax.jit's wrapped function.
    jitted = jax.jit(laxify.convert(counted))
    traces.clear()
    jitted(X), jitted(X)
    jitted.clear_cache()
    jitted(X)
    assert len(traces) == 2


def test_clear_cache_with_checks_and_static_arguments():
    fn = laxify.to_static(scaled, checks=True)
    first = fn(X, 3)
    fn.clear_cache()
    np.testing.assert_allclose(fn(X, 3), first)
    np.testing.assert_allclose(fn(X, 3), scaled(X, 3))


def test_jit_methods_are_all_there():
    jitted = jax.jit(doubling)
    fn = laxify.to_static(doubling)
    for name in ("lower", "trace", "eval_shape", "clear_cache"):
        assert callable(getattr(jitted, name)) and callable(getattr(fn, name))


# -- 2. export: derivatives and platforms -------------------------------------------------

def test_export_with_vjp_order_is_differentiable(tmp_path):
    fn = laxify.to_static(smooth)
    path = tmp_path / "smooth.bin"
    fn.export(SPEC, path=path, vjp_order=1)
    loaded = laxify.load(path)
    np.testing.assert_allclose(loaded(X), smooth(X), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(loaded)(X), jax.grad(smooth)(X), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(loaded)(X), jax.grad(laxify.convert(smooth))(X), rtol=1e-6)


def test_export_without_vjp_order_cannot_be_differentiated():
    loaded = laxify.load(laxify.to_static(smooth).export(SPEC))
    with pytest.raises(ValueError, match="No VJP"):
        jax.grad(loaded)(X)


def test_export_for_several_platforms():
    data = laxify.to_static(doubling).export(SPEC, platforms=("cpu", "cuda"))
    assert jax.export.deserialize(bytearray(data)).platforms == ("cpu", "cuda")
    np.testing.assert_allclose(laxify.load(data)(X), doubling(X))  # runs on this machine's CPU


@laxify.loop_options(max_iters=20)
def bounded_doubling(x):
    while x.sum() < 100:
        x = x * 2
    return x


def test_export_of_a_bounded_loop_leaves_out_its_run_time_warning():
    """The cut-short warning of a `max_iters` loop is a host callback, which a serialized
    program cannot hold: the exported program has none, and still agrees and differentiates."""
    fn = laxify.to_static(bounded_doubling)
    fn(X)  # traced once with the warning: export must not reuse that trace
    loaded = laxify.load(fn.export(SPEC, vjp_order=1))
    np.testing.assert_allclose(loaded(X), bounded_doubling(X))
    np.testing.assert_allclose(jax.grad(lambda x: loaded(x).sum())(X),
                               jax.grad(lambda x: fn(x).sum())(X))


# -- 3. calls that do not fit: Python's own TypeError -------------------------------------

def fits(x, n=2, *, scale=1.0):
    return x * n * scale


def python_error(call) -> str:
    with pytest.raises(TypeError) as info:
        call()
    return str(info.value)


CALLS = {
    "unknown keyword, static": lambda f: f(X, z=1),
    "unknown keyword, array": lambda f: f(X, z=X),
    "unknown keyword with others": lambda f: f(X, scale=2.0, z="a"),
    "too many, static": lambda f: f(X, 1, 2),
    "too many, arrays": lambda f: f(X, X, X),
    "missing": lambda f: f(),
    "missing with keyword": lambda f: f(n=3),
    "twice": lambda f: f(X, x=1),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_call_that_does_not_fit_says_what_python_says(call):
    expected = python_error(lambda: call(fits))
    assert expected.startswith("fits()")
    assert python_error(lambda: call(laxify.to_static(fits))) == expected


@pytest.mark.parametrize("stage", ["lower", "trace", "eval_shape", "ir", "explain"])
def test_stages_say_what_python_says(stage):
    expected = python_error(lambda: fits(X, z=1))
    assert python_error(lambda: getattr(laxify.to_static(fits), stage)(X, z=1)) == expected


def test_methods_and_static_argnames_say_what_python_says():
    class Model:
        def apply(self, x, n=2):
            return x * n

        fast = laxify.to_static(apply)

    expected = python_error(lambda: Model().apply(X, 1, 2))
    assert expected.startswith("test_methods_and_static_argnames_say_what_python_says.<locals>.Model.apply()")
    assert python_error(lambda: Model().fast(X, 1, 2)) == expected
    assert python_error(lambda: laxify.to_static(Model().apply)(X, 1, 2)) == expected
    named = laxify.to_static(fits, static_argnames="n")
    assert python_error(lambda: named(X, m=3)) == python_error(lambda: fits(X, m=3))


def test_calls_that_fit_still_run():
    fn = laxify.to_static(fits)
    np.testing.assert_allclose(fn(X, 3, scale=2.0), fits(X, 3, scale=2.0))
    np.testing.assert_allclose(fn(x=X), fits(x=X))


# -- 4. FallbackWarnings at the user's line ----------------------------------------------

def _no_source(name: str = "no_source"):
    namespace: dict = {}
    exec(f"def {name}(x):\n    return x * 2\n", namespace)  # not in linecache: no source
    return namespace[name]


def _warnings_of(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    return [w for w in record if issubclass(w.category, laxify.FallbackWarning)]


def _this_line() -> int:
    return inspect.currentframe().f_back.f_lineno


@pytest.mark.parametrize("outer", ["call", "jit", "vmap", "lower"])
def test_no_source_warning_is_at_the_calling_line(outer):
    fn = laxify.to_static(_no_source())
    wrap = {"call": fn, "jit": jax.jit(fn), "vmap": jax.vmap(fn), "lower": fn.lower}[outer]
    line = _this_line() + 1
    found = _warnings_of(lambda: wrap(X))
    assert len(found) == 1
    assert (found[0].filename, found[0].lineno) == (__file__, line)
    assert "no source" in str(found[0].message) and "no_source" in str(found[0].message)


def test_no_source_warning_under_grad_is_at_the_line_that_calls_it():
    fn = laxify.to_static(_no_source())

    def loss(v):
        return fn(v).sum()

    line = _this_line() - 2
    (found,) = _warnings_of(lambda: jax.grad(loss)(X))
    assert (found.filename, found.lineno) == (__file__, line)


def test_async_and_generator_warnings_are_at_the_users_def():
    async def waits(x):
        return x

    def yields(x):
        yield x * 2

    line = _this_line()
    (found,) = _warnings_of(lambda: laxify.to_static(waits)(X).close())
    assert (found.filename, found.lineno) == (__file__, line - 6)
    (found,) = _warnings_of(lambda: list(laxify.to_static(yields)(X)))
    assert (found.filename, found.lineno) == (__file__, line - 2)


# -- 7. an error raised inside a converted loop body -----------------------------------------

def loop_body_fails(x):
    for i in range(3):
        if x.sum() > 0:
            x = x + jnp.ones(4)  # shapes (3,) and (4,) do not broadcast
    return x


def test_error_in_a_loop_body_is_raised_once_in_the_users_words():
    with pytest.raises(TypeError, match="incompatible shapes") as info:
        laxify.to_static(loop_body_fails)(X)
    error = info.value
    assert error.__context__ is None and error.__cause__ is None  # not again, chained
    names = [frame.name for frame in traceback.extract_tb(error.__traceback__)]
    assert not any(name.startswith("_lx") for name in names)
    assert names.count("loop_body_fails") == 3  # the def, the loop body, the branch


def _frames_of_loop_body_error() -> list[str]:
    with pytest.raises(TypeError, match="incompatible shapes") as info:
        laxify.to_static(loop_body_fails)(X)
    return [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]


def test_error_in_converted_code_shows_the_users_frames_only():
    files = _frames_of_loop_body_error()
    assert files.count(__file__) == len(files) >= 4  # this test, the def, the loop body, the branch


def test_laxify_frames_are_kept_when_jax_keeps_its_own():
    previous = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    try:
        files = _frames_of_loop_body_error()
    finally:
        jax.config.update("jax_traceback_filtering", previous)
    package = Path(laxify.__file__).resolve().parent.parent
    assert any(Path(f).resolve().is_relative_to(package / "runtime") for f in files)


def test_reverse_mode_error_of_a_loop_whose_function_is_gone_still_names_it():
    """A backward pass kept after its function and conversion were freed (the loop's site is
    held weakly) still says which loop and how to fix it."""
    import gc
    import linecache

    from laxify import conversion

    src = "def gone(x):\n    while x.sum() > 1:\n        x = x / 2\n    return x\n"
    filename = "<test_ergonomics gone>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(src, filename, "exec"), namespace)
    _, backward = jax.vjp(laxify.convert(namespace.pop("gone")), X * 4)
    conversion.clear_cache()
    gc.collect()
    with pytest.raises(laxify.ConversionError, match="cannot go through this `while` loop") as info:
        backward(X)
    assert info.value.location.filename == filename and info.value.location.line == 2
    assert "while x.sum() > 1" in str(info.value) and "max_iters" in info.value.fix


# -- 6. type hints ---------------------------------------------------------------------------

@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads is Python 3.11+")
def test_to_static_overloads_say_what_it_returns():
    bare, with_options = typing.get_overloads(laxify.to_static)
    assert typing.get_type_hints(bare)["return"] is laxify.StaticFunction
    returns = typing.get_type_hints(with_options)["return"]
    assert typing.get_origin(returns) is typing.get_origin(typing.Callable)
    assert typing.get_args(returns)[-1] is laxify.StaticFunction
    options = inspect.signature(with_options).parameters
    assert {"static_argnums", "static_argnames", "fallback", "strict", "donate_argnums", "checks"} <= set(options)
    assert all(options[name].kind is inspect.Parameter.KEYWORD_ONLY for name in ("fallback", "strict"))


def test_static_function_methods_are_annotated():
    hints = {name: typing.get_type_hints(getattr(laxify.StaticFunction, name))
             for name in ("lower", "trace", "eval_shape", "clear_cache", "export", "ir", "explain", "diff")}
    assert hints["lower"]["return"] is jax.stages.Lowered
    assert hints["trace"]["return"] is jax.stages.Traced
    assert hints["export"]["return"] is bytes
    assert hints["clear_cache"]["return"] is type(None)


def clipped(x, limit):
    if x.sum() > limit:
        x = x / 2
    return x


class Scaler:
    def scale(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_converting_a_converted_function_converts_the_users_function():
    # Not "the source text ... is not the source of the function that runs" (the converted
    # function's code is laxify's, not the file's).
    routes = [
        lambda x: laxify.to_static(laxify.convert(clipped))(x, 1.0),
        lambda x: jax.jit(laxify.convert(laxify.convert(clipped)))(x, 1.0),
        lambda x: laxify.to_static(functools.partial(laxify.convert(clipped), limit=1.0))(x),
        lambda x: laxify.to_static(laxify.convert(Scaler().scale))(x),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        for x in (X, -X):
            for k, route in enumerate(routes):
                want = Scaler().scale(x) if k == 3 else clipped(x, 1.0)
                np.testing.assert_allclose(route(x), want)
    # A wrapper that copies the converted function's attributes (jax.vmap, functools.wraps) is
    # the wrapper still: its batch is mapped, not given whole to the user's function.
    batch = jnp.stack([X, -X, 3 * X])
    mapped = laxify.to_static(jax.vmap(laxify.convert(clipped), in_axes=(0, None)))
    np.testing.assert_allclose(mapped(batch, 1.0), jnp.stack([clipped(x, 1.0) for x in batch]))
