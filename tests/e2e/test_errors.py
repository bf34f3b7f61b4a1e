"""User-facing errors and fallback warnings (DESIGN §6, §5 last item): the text is tested,
not only the type. Each message names the construct and the variable, gives this file's
``file:line`` with the source line and a caret under the construct, shows both sides of a
mismatch (with pytree paths) and ends with the fix.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import check, jaxpr_of, control_flow_prims

X = jnp.array([1.0, 2.0, 3.0], jnp.float32)


def _line_of(fn, snippet: str) -> tuple[int, str]:
    """The absolute line number in this file, and the stripped text, of ``snippet`` in ``fn``."""
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if snippet in line:
            return start + k, line.strip()
    raise AssertionError(f"{snippet!r} not in {fn.__name__}")


def assert_located(message: str, fn, snippet: str, at: str | None = None) -> None:
    """``message`` points at the line of ``fn`` holding ``snippet``: this file, that line number,
    the source line, and a caret under ``at`` (the start of the statement by default)."""
    lineno, text = _line_of(fn, snippet)
    assert f'File "{__file__}", line {lineno}' in message, message
    lines = message.splitlines()
    assert "    " + text in lines, message
    caret = lines[lines.index("    " + text) + 1]
    assert caret.strip() == "^", message
    expected_col = text.index(at) if at is not None else 0
    assert caret.index("^") - 4 == expected_col, message


def conversion_error(fn, *args, **options) -> str:
    """The text of the located ConversionError of ``to_static(fn, fallback="error")(*args)``
    (where eager Python would run the function, the default ``to_static`` runs it eagerly with
    a FallbackWarning saying the same); also checked for ``jax.jit(laxify.convert(fn))`` where
    no options are given: the same reason, first line."""
    user_options = dict(options)
    options.setdefault("fallback", "error")
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fn, **options)(*args)
    message = str(info.value)
    if not user_options:
        statics = tuple(i for i, a in enumerate(args) if not isinstance(a, (jax.Array, np.ndarray)))
        with pytest.raises(laxify.ConversionError) as again:
            jax.jit(laxify.convert(fn), static_argnums=statics)(*args)
        assert str(again.value).splitlines()[0].rstrip(".:").lower() in message.lower()
    return message


# -- a name defined in only one branch of a traced `if` -----------------------------------------

def err_undefined_after_traced_if(x):
    if x.sum() > 0:
        y = x * 2
    return y


def err_undefined_in_elif_branch(x):
    s = x.sum()
    if s > 5:
        y = x
    elif s > 0:
        z = x + 1
    else:
        y = -x
    return y


def test_name_undefined_after_traced_branch():
    msg = conversion_error(err_undefined_after_traced_if, X)
    assert "`y`" in msg
    assert "`if` on a traced value" in msg
    assert "defined in the other branch" in msg and "not in the false branch" in msg
    assert "used after the `if`" in msg
    assert_located(msg, err_undefined_after_traced_if, "if x.sum() > 0:")
    assert msg.splitlines()[-1].startswith("Assign `y` before the `if` or in every branch")


def test_name_undefined_in_one_branch_of_elif_chain():
    msg = conversion_error(err_undefined_in_elif_branch, X)
    assert "`y`" in msg and "used after the `if`" in msg
    assert_located(msg, err_undefined_in_elif_branch, "elif s > 0:")
    assert "Assign `y`" in msg


def err_undefined_under_python_if_used(x, flag):
    if flag:
        y = x * 2
    return y + 1


def err_undefined_under_python_if_returned(x, flag):
    if flag:
        y = x * 2
    return y


def test_name_undefined_under_python_if_is_python_name_error():
    # docs/semantics.md: under a Python `if` the rule is Python's (NameError on that path).
    fn = laxify.to_static(err_undefined_under_python_if_used)
    np.testing.assert_allclose(fn(X, True), X * 2 + 1)
    with pytest.raises(NameError, match="'y'"):
        fn(X, False)


@pytest.mark.parametrize("run", ["convert", "to_static"])
def test_undefined_name_returned_under_python_if_is_name_error(run):
    fn = laxify.convert(err_undefined_under_python_if_returned) if run == "convert" else \
        laxify.to_static(err_undefined_under_python_if_returned)
    with pytest.raises(NameError, match="'y'"):
        fn(X, False)


# -- a name first assigned inside a traced loop -------------------------------------------------

def err_first_assigned_in_traced_while(x):
    while x.sum() < 10:
        y = x * 2
        x = x + 1
    return y


def err_first_assigned_in_traced_range(x, n):
    for i in range(n):
        last = x * i
    return last


def test_name_first_assigned_in_traced_while():
    """Python raises UnboundLocalError where the loop ran zero times: so does the program,
    at run time; otherwise the name has the loop's last value."""
    for route in (laxify.to_static(err_first_assigned_in_traced_while),
                  laxify.checked(jax.jit(laxify.convert(err_first_assigned_in_traced_while)))):
        np.testing.assert_allclose(route(X), err_first_assigned_in_traced_while(X))
        with pytest.raises(UnboundLocalError, match="^cannot access local variable 'y' where it is not "
                                                    "associated with a value"):
            route(X + 10)


def test_name_first_assigned_in_traced_range():
    f = laxify.to_static(err_first_assigned_in_traced_range)
    np.testing.assert_allclose(f(X, jnp.int32(3)), err_first_assigned_in_traced_range(X, 3))
    with pytest.raises(UnboundLocalError, match="'last'"):
        f(X, jnp.int32(0))


# -- loop carries whose shape, structure or dtype change ---------------------------------------

def err_carry_shape_grows_in_while(x):
    while x.sum() < 100:
        x = jnp.concatenate([x, x])
    return x


def err_carry_shape_shrinks_in_traced_range(x, n):
    for i in range(n):
        x = x[1:] * 2
    return x


def err_carry_dict_gains_key_in_while(x, n):
    d = {"a": x}
    i = 0
    while i < n:
        d = {"a": d["a"] + 1, "b": x}
        i += 1
    return d


def err_carry_int_array_becomes_float(x, n):
    acc = jnp.zeros(3, jnp.int32)
    i = 0
    while i < n:
        acc = acc + x * 0.5
        i += 1
    return acc


def err_carry_int_array_divided_in_traced_range(x, n):
    for i in range(n):
        x = x / 2
    return x


def test_carry_shape_change_in_while():
    msg = conversion_error(err_carry_shape_grows_in_while, X)
    assert "`x` has a different shape on the two sides of this `while` loop" in msg
    assert "before the loop" in msg and "after one iteration" in msg
    assert "x: float32[3]  vs  float32[6]  <- differs" in msg
    assert_located(msg, err_carry_shape_grows_in_while, "while x.sum() < 100:")
    assert "Revise the code so that `x` keeps one shape" in msg


def test_carry_shape_change_in_traced_range():
    msg = conversion_error(err_carry_shape_shrinks_in_traced_range, X, jnp.int32(2))
    assert "`x` has a different shape on the two sides of this `for` loop" in msg
    assert "float32[3]  vs  float32[2]" in msg
    assert_located(msg, err_carry_shape_shrinks_in_traced_range, "for i in range(n):")


def test_carry_structure_change_shows_pytree_paths():
    msg = conversion_error(err_carry_dict_gains_key_in_while, X, jnp.int32(2))
    assert "`d` has a different structure on the two sides of this `while` loop" in msg
    assert "before the loop" in msg and "after one iteration" in msg
    assert "d['a']: float32[3]  vs  float32[3]" in msg
    assert "d['b']: (absent)  vs  float32[3]  <- differs" in msg
    assert_located(msg, err_carry_dict_gains_key_in_while, "while i < n:")
    assert "keeps one structure" in msg


def test_carry_dtype_that_cannot_be_widened():
    msg = conversion_error(err_carry_int_array_becomes_float, X, jnp.int32(2))
    assert "`acc` is int32[3] before this `while` loop and float32[3] after one iteration" in msg
    assert "only Python numbers are widened" in msg
    assert_located(msg, err_carry_int_array_becomes_float, "while i < n:")
    assert "acc = jnp.asarray(acc, jnp.float32)" in msg


@pytest.mark.parametrize("fn, args, line", [
    (err_carry_shape_grows_in_while, (X,), "while x.sum() < 100:"),
    (err_carry_int_array_becomes_float, (X, jnp.int32(2)), "while i < n:"),
    (err_carry_dict_gains_key_in_while, (X, jnp.int32(2)), "while i < n:"),
])
def test_carry_change_falls_back_with_eager_value(fn, args, line):
    # Python's variables take any value: eager Python runs the loop, so to_static does, with
    # one FallbackWarning at the loop's line (fallback="error" is the located text above).
    expected = fn(*args)
    with pytest.warns(laxify.FallbackWarning, match="one iteration") as caught:
        got = laxify.to_static(fn)(*args)
    jax.tree_util.tree_map(np.testing.assert_allclose, got, expected)
    w = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)][0]
    assert w.filename == __file__ and line in open(__file__).read().splitlines()[w.lineno - 1]


def test_carry_dtype_change_in_traced_range():
    msg = conversion_error(err_carry_int_array_divided_in_traced_range,
                           jnp.arange(3, dtype=jnp.int32), jnp.int32(2))
    assert "`x` is int32[3] before this `for` loop and float32[3] after one iteration" in msg
    assert_located(msg, err_carry_int_array_divided_in_traced_range, "for i in range(n):")


def test_carry_error_is_a_conversion_error_subclass():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(err_carry_shape_grows_in_while, fallback="error")(X)
    assert info.value.location is not None and info.value.location.filename == __file__
    assert info.value.fix and "Revise" in info.value.fix


# -- branch outputs that cannot be joined ---------------------------------------------------------

def err_branch_dict_keys_differ(x):
    if x.sum() > 0:
        d = {"a": x, "b": x}
    else:
        d = {"a": x, "c": x}
    return d


def err_branch_tuple_vs_array(x):
    if x.sum() > 0:
        r = (x, x)
    else:
        r = x
    return r


def err_branch_shapes_differ(x):
    if x.sum() > 0:
        r = x
    else:
        r = x[:2]
    return r


def err_branch_python_string(x):
    if x.sum() > 0:
        label = "positive"
    else:
        label = "negative"
    return x, label


def test_branch_dict_keys_mismatch():
    msg = conversion_error(err_branch_dict_keys_differ, X)
    assert "`d` has a different structure on the two sides of this `if` on a traced value" in msg
    assert "true branch" in msg and "false branch" in msg
    assert "d['b']: float32[3]  vs  (absent)  <- differs" in msg
    assert "d['c']: (absent)  vs  float32[3]  <- differs" in msg
    assert_located(msg, err_branch_dict_keys_differ, "if x.sum() > 0:")
    assert "Revise the code so that `d` keeps one structure on every path" in msg


def test_branch_tuple_vs_array_mismatch():
    msg = conversion_error(err_branch_tuple_vs_array, X)
    assert "`r` has a different structure" in msg
    assert "r[0]: float32[3]  vs  (absent)" in msg
    assert "r: (absent)  vs  float32[3]" in msg
    assert_located(msg, err_branch_tuple_vs_array, "if x.sum() > 0:")


def test_branch_shape_mismatch():
    msg = conversion_error(err_branch_shapes_differ, X)
    assert "`r` has a different shape" in msg
    assert "r: float32[3]  vs  float32[2]  <- differs" in msg
    assert_located(msg, err_branch_shapes_differ, "if x.sum() > 0:")


def test_branch_python_string_value():
    msg = conversion_error(err_branch_python_string, X)
    assert "`label` is a Python str in the true branch" in msg
    assert_located(msg, err_branch_python_string, "if x.sum() > 0:")
    assert "make it an array" in msg


@partial(jax.tree_util.register_dataclass, data_fields=["pos"], meta_fields=["tag"])
@dataclasses.dataclass
class Tagged:
    pos: jax.Array
    tag: str = "a"


def err_branch_meta_field_differs(x):
    t = Tagged(x, "start")
    if x.sum() > 0:
        t = Tagged(x * 2, "moved")
    return t.pos


def test_branch_meta_field_mismatch_is_located():
    msg = conversion_error(err_branch_meta_field_differs, X)
    assert "`t` has a different structure" in msg
    assert_located(msg, err_branch_meta_field_differs, "if x.sum() > 0:")


def test_branch_meta_field_mismatch_shows_the_difference():
    msg = conversion_error(err_branch_meta_field_differs, X)
    assert "<- differs" in msg or ("start" in msg and "moved" in msg), msg


# -- lists appended in a traced-length loop -------------------------------------------------------

def err_list_in_traced_while(x):
    outs = []
    while x.sum() < 100:
        x = x * 2
        outs.append(x)
    return jnp.stack(outs)


def test_list_appended_in_traced_length_loop():
    msg = conversion_error(err_list_in_traced_while, X)
    assert "the list `outs` is appended to in this loop" in msg
    assert "number of iterations is traced" in msg
    assert_located(msg, err_list_in_traced_while, "while x.sum() < 100:")
    assert "with laxify.loop_options(max_iters=N):" in msg.splitlines()[-1]


# -- traced values where Python needs concrete ones -----------------------------------------------

def err_int_of_traced(x):
    n = int(x.sum().item())  # int() of a traced float converts; .item() needs a concrete value
    return x * n


def err_range_of_item(x):
    t = x
    for i in range(x.sum().item()):
        t = t + 1
    return t


def err_numpy_on_traced(x):
    y = x + 1
    return np.sin(y)


def err_item_in_traced_branch(x):
    if x.sum() > 0:
        x = x * x[0].item()
    return x


@pytest.mark.parametrize("fn, args, snippet, error", [
    (err_int_of_traced, (X,), "n = int(x.sum().item())", "ConcretizationTypeError"),
    (err_range_of_item, (jnp.arange(3),), "for i in range(x.sum().item()):", "ConcretizationTypeError"),
    (err_numpy_on_traced, (X,), "return np.sin(y)", "TracerArrayConversionError"),
    (err_item_in_traced_branch, (X,), "x = x * x[0].item()", "ConcretizationTypeError"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_traced_value_where_python_needs_concrete(fn, args, snippet, error):
    # Eager Python runs it: the default to_static runs it eagerly, with a FallbackWarning at
    # that line; fallback="error" refuses it there with the same text.
    with pytest.warns(laxify.FallbackWarning) as caught:
        laxify.to_static(fn)(*args)
    assert "A traced value is used where Python needs a concrete one" in str(caught[0].message)
    assert caught[0].lineno == fn.__code__.co_firstlineno + [
        k for k, line in enumerate(inspect.getsource(fn).splitlines()) if snippet in line][0]
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fn, fallback="error")(*args)
    msg = str(info.value)
    assert msg.startswith("A traced value is used where Python needs a concrete one")
    assert error in msg
    assert_located(msg, fn, snippet)
    assert "static_argnums" in msg and "jax.numpy / jax.lax" in msg


# -- conditions that are arrays, not scalars ------------------------------------------------------

def err_array_condition_in_if(x):
    if x > 0:
        x = x + 1
    return x


def err_array_condition_in_while(x):
    while x < 10:
        x = x + 1
    return x


def err_array_condition_in_ifexp(x):
    return x if x > 0 else -x


def test_array_condition_in_if():
    msg = conversion_error(err_array_condition_in_if, X)
    assert "The condition of this `if` is an array of shape (3,), not a scalar." in msg
    assert_located(msg, err_array_condition_in_if, "if x > 0:")
    assert "`.any()` or `.all()`" in msg


def test_array_condition_in_while():
    msg = conversion_error(err_array_condition_in_while, X)
    assert "The condition of this `while` is an array of shape (3,)" in msg
    assert_located(msg, err_array_condition_in_while, "while x < 10:")


def test_array_condition_in_conditional_expression():
    msg = conversion_error(err_array_condition_in_ifexp, X)
    assert "shape (3,)" in msg and "jnp.where" in msg
    assert_located(msg, err_array_condition_in_ifexp, "return x if x > 0 else -x", at="x if")


# -- returning on some traced paths only -----------------------------------------------------------

def err_return_on_one_traced_path(x):
    if x.sum() > 0:
        return x * 2


def test_return_on_one_traced_path_only():
    msg = conversion_error(err_return_on_one_traced_path, X)
    assert "fall off its end" in msg and "traced value" in msg
    assert_located(msg, err_return_on_one_traced_path, "def err_return_on_one_traced_path")
    assert "Add a `return` at the end of the function" in msg


# -- fallback: Python kept for a `try`/`except*` that meets a traced value ---------------------------

def fallback_try_with_traced_if(x):
    y = x
    try:
        if x.sum() > 0:
            y = x * 2
    except* ValueError:
        y = x
    return y


def fallback_static_try_rest_converted(x):
    try:
        k = 2
    except ValueError:
        k = 3
    if x.sum() > 0:
        x = x * k
    return x


def test_fallback_warning_at_the_try_line_and_right_result():
    fn = laxify.to_static(fallback_try_with_traced_if)
    lineno, _ = _line_of(fallback_try_with_traced_if, "try:")
    with pytest.warns(laxify.FallbackWarning) as record:
        out = fn(X)
    np.testing.assert_allclose(out, X * 2)
    assert len(record) == 1
    w = record[0]
    assert w.filename == __file__ and w.lineno == lineno
    text = str(w.message)
    assert "`try`" in text and "fallback_try_with_traced_if" in text
    assert "traced value" in text and "eagerly" in text
    assert "Rewrite" in text or "static_argnums" in text
    # Other path, same object: correct and no second warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        np.testing.assert_allclose(fn(-X), -X)


def test_fallback_error_mode_raises():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fallback_try_with_traced_if, fallback="error")(X)
    msg = str(info.value)
    assert "`try`" in msg and "cannot be one XLA program" in msg
    assert_located(msg, fallback_try_with_traced_if, "try:")
    with pytest.raises(laxify.ConversionError):
        laxify.to_static(fallback_try_with_traced_if, strict=True)(X)


def test_fallback_silent_mode_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = laxify.to_static(fallback_try_with_traced_if, fallback="silent")(-X)
    np.testing.assert_allclose(out, -X)


@pytest.mark.parametrize("outer", ["jit", "grad", "vmap"])
def test_fallback_inside_outer_transformation_is_an_error(outer):
    fn = laxify.to_static(fallback_try_with_traced_if)
    with pytest.raises(laxify.ConversionError) as info:
        if outer == "jit":
            jax.jit(fn)(X)
        elif outer == "grad":
            jax.grad(lambda v: fn(v).sum())(X)
        else:
            jax.vmap(fn)(jnp.stack([X, -X]))
    msg = str(info.value)
    assert "`try`" in msg and "outer jax transformation" in msg
    assert_located(msg, fallback_try_with_traced_if, "try:")


def test_fallback_under_jit_of_convert_is_a_conversion_error():
    with pytest.raises(laxify.ConversionError, match="`try`"):
        jax.jit(laxify.convert(fallback_try_with_traced_if))(X)


def test_static_try_keeps_the_rest_converted():
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        check(fallback_static_try_rest_converted, (X,), (-X,), expect_prims={"cond"})
    assert control_flow_prims(jaxpr_of(fallback_static_try_rest_converted, X)) == {"cond"}


def test_invalid_fallback_mode():
    with pytest.raises(ValueError, match="fallback"):
        laxify.to_static(fallback_try_with_traced_if, fallback="loud")


# -- errors from the user's own code keep the user's lines ----------------------------------------

def err_bad_reshape_in_traced_branch(x):
    if x.sum() > 0:
        x = x.reshape(5)
    return x


def test_python_error_in_converted_code_points_at_user_line():
    import traceback

    with pytest.raises(TypeError, match="reshape") as info:
        laxify.to_static(err_bad_reshape_in_traced_branch)(X)
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(info.value.__traceback__)]
    lineno, _ = _line_of(err_bad_reshape_in_traced_branch, "x = x.reshape(5)")
    assert (__file__, lineno) in frames, frames
