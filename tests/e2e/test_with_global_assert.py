"""`with` blocks, `global`/`nonlocal` writes, `assert` on traced values, generator functions
called from converted code, and loop carries that change shape.

Eager Python is the oracle: every function runs eagerly, through ``laxify.to_static`` and
through ``jax.jit(laxify.convert(f))`` on inputs that take every path; the jaxpr proves what
was converted. Warnings and errors are checked by type, text and file:line.

PYTEST_DONT_REWRITE: the functions here use `assert`, whose bytecode pytest's rewriting would
change (laxify then refuses the source, which no longer matches the code that runs).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import laxify
from harness import assert_trees_close, check, control_flow_prims, jaxpr_of

X = jnp.array([1.0, 2.0, 3.0], jnp.float32)
POS, NEG = X, -X


def line_of(fn, snippet: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if snippet in line:
            return start + k
    raise AssertionError(f"{snippet!r} not in {fn.__name__}")


def assert_at(message: str, fn, snippet: str) -> None:
    """``message`` (a ConversionError's text) points at the line of ``fn`` holding ``snippet``,
    with the source line and a caret, and names no variable laxify made up."""
    line = line_of(fn, snippet)
    assert f'File "{fn.__code__.co_filename}", line {line}' in message, message
    lines = message.splitlines()
    text = "    " + snippet.strip()
    assert any(ln.startswith(text) for ln in lines), message
    assert "_lx" not in message, message


def fallback_warnings(call, category=laxify.FallbackWarning):
    """``call()``'s result and the warnings of ``category`` (FallbackWarnings) it issued."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = call()
        jax.block_until_ready(result)
    return result, [w for w in record if issubclass(w.category, category)]


def assert_warned_at(found, fn, snippet: str, *words: str) -> None:
    assert len(found) == 1, [str(w.message) for w in found]
    (w,) = found
    assert (w.filename, w.lineno) == (fn.__code__.co_filename, line_of(fn, snippet)), (w.filename, w.lineno)
    text = str(w.message)
    assert "_lx" not in text, text
    for word in words:
        assert word in text, text


# -- with: the statement stays Python, its body is converted -----------------------------------

def with_nullcontext_if(x):
    with contextlib.nullcontext():
        if x.sum() > 0:
            x = x + 1
        else:
            x = x - 1
    return x


def with_named_scope_while(x):
    with jax.named_scope("grow"):
        while x.sum() < 20:
            x = x * 2
    return x


def with_as_names(x):
    with contextlib.nullcontext(2.0) as k, jax.named_scope("scaled") as scope:
        y = x * k
        if y.sum() > 0:
            y = y + 1
    return y, scope is None


def with_nested_and_one_line(x):
    with contextlib.nullcontext():
        with jax.named_scope("inner"): y = x * 3
        if y.sum() > 0:
            y = y - 1
    return y


def with_inside_traced_branch(x):
    if x.sum() > 0:
        with jax.named_scope("positive"):
            y = x * 2
    else:
        y = -x
    return y


def with_in_loop_with_break(x):
    i = 0
    while i < 10:
        with jax.named_scope("step"):
            if x.sum() > 30:
                break
            x = x * 2
        i += 1
    return x, i


def with_return_inside_traced_loop(x):
    with jax.named_scope("search"):
        while x.sum() < 100:
            x = x * 2
            if x.sum() > 50:
                return x - 1
    return x


def with_return_in_body(x):
    with jax.named_scope("only"):
        return x + 1


def with_continue_in_for(x):
    acc = jnp.zeros_like(x)
    for row in jnp.stack([x, -x, x * 2]):
        with contextlib.nullcontext():
            if row.sum() < 0:
                continue
            acc = acc + row
    return acc


def with_matmul_precision(a, b):
    with jax.default_matmul_precision("highest"):
        if a.sum() > 0:
            c = a @ b
        else:
            c = b @ a
    return c


def with_compile_time_eval(x):
    with jax.ensure_compile_time_eval():
        n = int(jnp.arange(4).sum())  # concrete while tracing: 6
    acc = x
    for i in range(n):
        if acc.sum() > 50:
            acc = acc - 1
        else:
            acc = acc * 2
    return acc


WITH_CASES = [
    (with_nullcontext_if, [(POS,), (NEG,)], {"cond"}),
    (with_named_scope_while, [(POS,), (X * 10,)], {"while"}),
    (with_as_names, [(POS,), (NEG,)], {"cond"}),
    (with_nested_and_one_line, [(POS,), (NEG,)], {"cond"}),
    (with_inside_traced_branch, [(POS,), (NEG,)], {"cond"}),
    (with_in_loop_with_break, [(POS,), (X * 20,)], {"while", "cond"}),
    (with_return_inside_traced_loop, [(POS,), (X * 30,)], {"while", "cond"}),
    (with_return_in_body, [(POS,)], ()),
    (with_continue_in_for, [(POS,), (NEG,)], {"scan", "cond"}),
    (with_compile_time_eval, [(POS,), (X * 40,)], {"scan", "cond"}),
]


@pytest.mark.parametrize("fn, inputs, prims", WITH_CASES, ids=[c[0].__name__ for c in WITH_CASES])
def test_with_body_is_converted(fn, inputs, prims):
    check(fn, *inputs, expect_prims=prims)


def test_with_matmul_precision_applies_while_tracing():
    a = jnp.arange(4.0).reshape(2, 2)
    check(with_matmul_precision, (a, a + 1), (-a, a), expect_prims={"cond"})
    jaxpr = str(jaxpr_of(with_matmul_precision, a, a + 1))
    assert "HIGHEST" in jaxpr, jaxpr


def test_named_scope_names_the_converted_ops():
    text = laxify.to_static(with_named_scope_while).lower(X).as_text(debug_info=True)
    assert "grow" in text


def test_with_statement_is_kept_in_the_source():
    source = laxify.to_static(with_as_names).source
    # Each manager as the user wrote it, wrapped so that it cannot suppress an error that only
    # tracing raises (see docs/semantics.md, "`try` statements").
    assert (
        'with _lx.unsuppressing(contextlib.nullcontext(2.0)) as k, _lx.unsuppressing(jax.named_scope("scaled")) as scope:'
        in source
    )
    assert "_lx.cond(" in source


def test_explain_lists_the_with_and_its_converted_body():
    text = str(laxify.to_static(with_nullcontext_if).explain())
    assert "with" in text and "entered and left while tracing" in text
    assert "lax.cond" in text


def with_try_inside(x):
    with jax.named_scope("guarded"):
        try:
            if x.sum() > 0:
                x = x + 1
        except* ValueError:
            pass
    return x


def test_construct_kept_inside_a_with_falls_back_at_its_own_line():
    got, found = fallback_warnings(lambda: laxify.to_static(with_try_inside)(POS))
    assert_trees_close(with_try_inside(POS), got, what="to_static")
    assert_warned_at(found, with_try_inside, "try:", "`try`")


class Recorder:
    """A context manager that records when it is entered and left, and with what exception."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.events.append(("exit", None if kind is None else kind.__name__))
        return False


def test_manager_enters_once_and_exits_after_the_converted_construct():
    rec = Recorder()

    def fn(x):
        with rec:
            while x.sum() < 100:
                x = x * 2
                if x.sum() > 50:
                    x = x - 1
                    break
            rec.events.append("after loop")
        return x

    got = jax.jit(laxify.convert(fn))(POS)
    assert rec.events == ["enter", "after loop", ("exit", None)]
    assert_trees_close(fn(POS), got, what="jit(convert)")


def test_effect_after_a_traced_return_happens_only_where_python_makes_it():
    """After a `return` under a traced condition the rest of the block is a traced branch:
    an append there would be traced (and made) also on the path that returned. `to_static`
    runs eagerly with a warning at the append; `jit(convert)` raises a located error."""
    rec = Recorder()

    def fn(x):
        with rec:
            while x.sum() < 100:
                x = x * 2
                if x.sum() > 50:
                    return x - 1
            rec.events.append("after loop")
        return x

    expected = fn(POS)
    assert rec.events == ["enter", ("exit", None)]
    rec.events.clear()
    got, found = fallback_warnings(lambda: laxify.to_static(fn)(POS))
    assert_trees_close(expected, got, what="to_static")
    assert rec.events[-2:] == ["enter", ("exit", None)] and "after loop" not in rec.events
    # (at the construct whose traced branch holds the append: the code after a `return`
    # inside the loop is guarded by the loop's return flag)
    assert_warned_at(found, fn, "while x.sum() < 100", "`rec`")
    with pytest.raises(laxify.ConversionError, match="`rec`"):
        jax.jit(laxify.convert(fn))(POS)


def test_manager_exits_with_the_exception_raised_while_tracing():
    rec = Recorder()

    def fn(x):
        with rec:
            if x.sum() > 0:
                y = x
        return y

    with pytest.raises(laxify.ConversionError):
        laxify.to_static(fn)(POS)
    assert rec.events == ["enter", ("exit", "ConversionError")]


def test_with_loop_options_as_name_still_bounds_the_loop():
    def fn(x):
        with laxify.loop_options(max_iters=3) as opts:
            while x.sum() < 40:
                x = x * 2
        return x

    np.testing.assert_allclose(laxify.to_static(fn)(POS), POS * 8)
    assert "while" not in control_flow_prims(jaxpr_of(fn, POS))  # max_iters: a bounded scan


def test_with_loop_options_block_still_converts():
    def fn(x):
        with laxify.loop_options(max_iters=2):
            while x.sum() < 20:
                x = x * 2
        return x

    np.testing.assert_allclose(laxify.to_static(fn)(POS), POS * 4)


class Box:
    value = None


BOX = Box()


def with_attribute_target(x):
    with contextlib.nullcontext(2.0) as BOX.value:
        if x.sum() > 0:
            x = x + 1
    return x


def test_with_whose_target_is_not_a_name_falls_back_at_its_line():
    got, found = fallback_warnings(lambda: laxify.to_static(with_attribute_target)(POS))
    assert_trees_close(with_attribute_target(POS), got, what="to_static")
    assert_warned_at(found, with_attribute_target, "with contextlib.nullcontext(2.0) as BOX.value:",
                     "`as` target is not a plain name")


def err_shape_change_in_with(x):
    with jax.named_scope("grow"):
        while x.sum() < 100:
            x = jnp.concatenate([x, x])
    return x


def test_located_errors_inside_with():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(err_shape_change_in_with, fallback="error")(POS)
    assert_at(str(info.value), err_shape_change_in_with, "while x.sum() < 100:")


# -- global and nonlocal writes under traced control flow ------------------------------------------

FLAG = 0
COUNT = 0


def set_global_in_traced_branch(x):
    global FLAG
    if x.sum() > 0:
        FLAG = 1
    return x * 2


def increment_global_in_traced_loop(x):
    global COUNT
    while x.sum() < 20:
        x = x * 2
        COUNT = COUNT + 1
    return x


def set_global_under_static_condition(x):
    global FLAG
    if x.ndim == 1:
        FLAG = 1
    if x.sum() > 0:
        x = x + 1
    return x


@pytest.fixture()
def fresh_globals():
    global FLAG, COUNT
    FLAG, COUNT = 0, 0
    yield
    FLAG, COUNT = 0, 0


def _globals():
    return FLAG, COUNT


def _reset():
    global FLAG, COUNT
    FLAG, COUNT = 0, 0


@pytest.mark.usefixtures("fresh_globals")
@pytest.mark.parametrize("fn, x, snippet", [
    (set_global_in_traced_branch, POS, "if x.sum() > 0:"),
    (set_global_in_traced_branch, NEG, "if x.sum() > 0:"),
    (increment_global_in_traced_loop, POS, "while x.sum() < 20:"),
], ids=["branch-taken", "branch-not-taken", "loop"])
def test_global_write_in_traced_construct_runs_eagerly_with_a_warning(fn, x, snippet):
    expected = fn(x)
    expected_globals = _globals()
    _reset()
    got, found = fallback_warnings(lambda: laxify.to_static(fn)(x))
    assert_trees_close(expected, got, what="to_static")
    assert _globals() == expected_globals
    name = "FLAG" if fn is set_global_in_traced_branch else "COUNT"
    assert_warned_at(found, fn, snippet, f"`{name}`", "`global`", "return the new value")


def count_then_set_in_traced_branch(x):
    global COUNT, FLAG
    COUNT = COUNT + 1  # runs while tracing, before the construct that falls back
    if x.sum() > 0:
        FLAG = 1
    return x


def nonlocal_count_then_branch():
    calls = 0

    def fn(x):
        nonlocal calls
        calls += 1
        if x.sum() > 0:
            calls = calls + 10
        return x

    return fn, lambda: calls


@pytest.mark.usefixtures("fresh_globals")
def test_fallback_assigns_globals_once_as_python_does():
    _, found = fallback_warnings(lambda: laxify.to_static(count_then_set_in_traced_branch)(POS))
    assert len(found) == 1
    assert _globals() == (1, 1)  # not COUNT == 2: the aborted trace's assignment is undone


def test_fallback_assigns_nonlocals_once_as_python_does():
    fn, calls = nonlocal_count_then_branch()
    got, found = fallback_warnings(lambda: laxify.to_static(fn)(POS))
    assert len(found) == 1
    assert calls() == 11  # not 12: the aborted trace's `calls += 1` is undone
    np.testing.assert_allclose(got, POS)


@pytest.mark.usefixtures("fresh_globals")
def test_global_write_in_traced_construct_under_jit_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(set_global_in_traced_branch))(POS)
    message = str(info.value)
    assert_at(message, set_global_in_traced_branch, "if x.sum() > 0:")
    assert "`FLAG`" in message and "outer jax transformation" in message
    assert _globals() == (0, 0)  # nothing was assigned a traced value


@pytest.mark.usefixtures("fresh_globals")
def test_global_write_in_traced_construct_strict_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(increment_global_in_traced_loop, strict=True)(POS)
    assert_at(str(info.value), increment_global_in_traced_loop, "while x.sum() < 20:")
    assert "outer jax transformation" not in str(info.value)
    assert _globals() == (0, 0)


@pytest.mark.usefixtures("fresh_globals")
def test_global_write_under_static_condition_converts():
    check(set_global_under_static_condition, (POS,), (NEG,), expect_prims={"cond"})
    assert FLAG == 1


def nonlocal_write_in_called_closure(x):
    c = 0.0

    def bump(v):
        nonlocal c
        if v.sum() > 0:
            c = c + 1.0
        return v

    y = bump(x)
    return y + c


@pytest.mark.parametrize("x", [POS, NEG], ids=["taken", "not-taken"])
def test_nonlocal_write_in_called_function_falls_back_in_the_caller(x):
    got, found = fallback_warnings(lambda: laxify.to_static(nonlocal_write_in_called_closure)(x))
    assert_trees_close(nonlocal_write_in_called_closure(x), got, what="to_static")
    bump_if = next(line for line in inspect.getsource(nonlocal_write_in_called_closure).splitlines()
                   if "if v.sum() > 0:" in line)
    (w,) = found
    assert w.lineno == line_of(nonlocal_write_in_called_closure, bump_if.strip())
    assert "`c`" in str(w.message) and "`nonlocal`" in str(w.message)
    assert "nonlocal_write_in_called_closure cannot be one XLA program" in str(w.message)


def test_nonlocal_write_in_called_function_under_jit_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(nonlocal_write_in_called_closure))(POS)
    assert_at(str(info.value), nonlocal_write_in_called_closure, "if v.sum() > 0:")


def read_global_in_traced_branch(x):
    if x.sum() > 0:
        x = x + FLAG + 1
    return x


def test_global_read_in_traced_branch_converts():
    check(read_global_in_traced_branch, (POS,), (NEG,), expect_prims={"cond"})


# -- assert ----------------------------------------------------------------------------------------

def assert_on_python_values(x, n):
    assert n > 0, "n must be positive"
    assert x.ndim == 1
    if x.sum() > n:
        x = x * n
    return x


def test_assert_on_python_values_is_python():
    check(assert_on_python_values, (POS, 2), (NEG, 3), expect_prims={"cond"})
    for way, call in (("eager", lambda: assert_on_python_values(POS, 0)),
                      ("to_static", lambda: laxify.to_static(assert_on_python_values)(POS, 0)),
                      ("jit(convert)", lambda: jax.jit(laxify.convert(assert_on_python_values),
                                                       static_argnums=1)(POS, 0))):
        with pytest.raises(AssertionError) as info:
            call()
        # (JAX adds a note about its filtered traceback frames to exceptions raised in a trace.)
        assert str(info.value).splitlines()[0] == "n must be positive", (way, str(info.value))


def assert_traced(x):
    assert x.sum() > 0, "sum must be positive"
    return x + 1


def assert_traced_no_message(x):
    assert x.sum() > 0
    return x + 1


LAXIFY_ROOTS = tuple(
    os.path.dirname(module.__file__) + os.sep
    for module in (laxify, laxify.runtime, laxify.transpiler, laxify.ir)
)


def raised_at(info) -> tuple[str, int]:
    """The file and line of the last frame of a raised exception's traceback."""
    entry = info.tb
    while entry.tb_next is not None:
        entry = entry.tb_next
    return entry.tb_frame.f_code.co_filename, entry.tb_lineno


@pytest.mark.parametrize("fn", [assert_traced, assert_traced_no_message], ids=lambda f: f.__name__)
def test_an_assert_on_a_traced_value_is_checked_by_default(fn):
    """As Python checks asserts: a failing one raises Python's AssertionError (its message, no
    other text) at the assert's line, after the call; a passing one returns the value, and the
    program holds no host callback (the check is the report's)."""
    got, found = fallback_warnings(lambda: laxify.to_static(fn)(POS))
    assert found == []
    assert_trees_close(fn(POS), got, what="to_static")
    for way, call in (("to_static", laxify.to_static(fn)), ("checked", laxify.checked(jax.jit(laxify.convert(fn))))):
        with pytest.raises(AssertionError) as eager:
            fn(NEG)
        with pytest.raises(AssertionError) as info:
            call(NEG)
        assert str(info.value) == str(eager.value), (way, str(info.value))
        assert raised_at(info) == (fn.__code__.co_filename, line_of(fn, "assert x.sum() > 0")), way
        frames = [str(entry.frame.code.path) for entry in info.traceback]
        assert not any(path.startswith(LAXIFY_ROOTS) for path in frames), (way, frames)


def test_checks_false_turns_asserts_on_traced_values_off():
    got, found = fallback_warnings(lambda: laxify.to_static(assert_traced, checks=False)(NEG))
    assert found == []  # asked for: no warning
    np.testing.assert_allclose(got, NEG + 1)
    got, found = fallback_warnings(lambda: jax.jit(laxify.convert(assert_traced, checks=False))(NEG))
    assert found == []
    np.testing.assert_allclose(got, NEG + 1)


def assert_traced_jit(x):
    assert x.sum() > 0
    return x + 1


def test_under_a_plain_jit_of_convert_an_assert_warns_that_nothing_checks_it():
    """Nothing reports a failed check there (as for `raise`, docs/semantics.md): a warning at
    the assert's line says so and names laxify.checked, which checks it."""
    got, found = fallback_warnings(lambda: jax.jit(laxify.convert(assert_traced_jit))(NEG), Warning)
    np.testing.assert_allclose(got, NEG + 1)
    # an UncheckedWarning: nothing falls back (no FallbackWarning)
    assert [w.category for w in found] == [laxify.UncheckedWarning]
    assert_warned_at(found, assert_traced_jit, "assert x.sum() > 0", "laxify.checked")
    with pytest.raises(AssertionError):
        laxify.checked(jax.jit(laxify.convert(assert_traced_jit)))(NEG)


def test_an_assert_in_a_loop_the_split_fallback_compiles_is_checked_in_python():
    def loop_with_assert(x, names):
        for name in names:  # a Python loop over strings: the function is split there
            assert x.sum() > 0, f"{name}: sum {x.sum()} not positive"
            x = x - 1.5
        return x

    for x in (POS * 3, POS):
        try:
            expected = loop_with_assert(x, ["a", "b", "c"])
        except AssertionError as e:
            with pytest.raises(AssertionError) as info:
                laxify.to_static(loop_with_assert, static_argnums=1)(x, ("a", "b", "c"))
            assert str(info.value) == str(e)
            continue
        assert_trees_close(expected, laxify.to_static(loop_with_assert, static_argnums=1)(x, ("a", "b", "c")),
                           what="to_static")


def checked_asserts(x, n):
    assert x.sum() > n, f"sum {x.sum():.1f} is not above {n}"
    if x.sum() > 10:
        assert x.max() < 8, "too big"
    i = 0
    while x.sum() < 40:
        assert i < 3
        x = x * 2
        i += 1
    return x


@pytest.mark.parametrize("x, n", [(POS, 1), (X * 3, 2), (X * 0.5, 1), (X * 20, 1)],
                         ids=["passes", "branch-passes", "loop-fails", "branch-fails"])
def test_checked_asserts_raise_what_python_raises(x, n):
    fn = laxify.to_static(checked_asserts)
    try:
        expected = checked_asserts(x, n)
    except AssertionError as e:
        with pytest.raises(AssertionError) as info:
            fn(x, n)
        assert str(info.value) == str(e), str(info.value)
        # the exception is raised at the failing assert's line, as Python's
        entry = e.__traceback__
        while entry.tb_next is not None:
            entry = entry.tb_next
        assert raised_at(info) == (checked_asserts.__code__.co_filename, entry.tb_lineno)
        return
    got, found = fallback_warnings(lambda: fn(x, n))
    assert found == []
    assert_trees_close(expected, got, what="to_static")
    jaxpr = jax.make_jaxpr(laxify.convert(checked_asserts, checks=True), static_argnums=1)(x, n)
    assert {"cond", "while"} <= control_flow_prims(jaxpr)


def test_checked_assert_message_is_formatted_with_the_run_values():
    fn = laxify.to_static(checked_asserts)
    with pytest.raises(AssertionError, match=r"^sum 6\.0 is not above 7$"):
        fn(POS, 7)


def test_convert_with_checks_under_checkify():
    fn = jax.jit(checkify.checkify(laxify.convert(checked_asserts, checks=True)), static_argnums=1)
    error, out = fn(POS, 1)
    assert error.get() is None
    assert_trees_close(checked_asserts(POS, 1), out, what="checkify(convert(checks=True))")
    error, _ = fn(POS, 7)
    assert "sum 6.0 is not above 7" in error.get()


def assert_on_a_vector(x):
    assert x > 0
    return x


def test_assert_on_a_traced_vector_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(assert_on_a_vector)(POS)
    assert_at(str(info.value), assert_on_a_vector, "assert x > 0")
    assert "shape (3,)" in str(info.value) and ".all()" in str(info.value)


# -- generator functions called from converted code -----------------------------------------------

def traced_generator(x):
    for i in range(3):
        if x.sum() > i:
            yield x * i


def collects_traced_generator(x):
    return jnp.stack(list(traced_generator(x)))


def static_generator(n):
    for i in range(n):
        yield i * 2


def collects_static_generator(x):
    total = x
    for k in static_generator(3):
        if total.sum() > k:
            total = total + k
    return total


def test_generator_on_traced_value_falls_back_at_its_line():
    got, found = fallback_warnings(lambda: laxify.to_static(collects_traced_generator)(POS))
    assert_trees_close(collects_traced_generator(POS), got, what="to_static")
    assert_warned_at(found, traced_generator, "if x.sum() > i:", "`traced_generator`", "generator function",
                     "collects_traced_generator cannot be one XLA program")


def test_generator_on_traced_value_strict_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(collects_traced_generator, strict=True)(POS)
    assert_at(str(info.value), traced_generator, "if x.sum() > i:")


def test_generator_on_traced_value_under_jit_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(collects_traced_generator))(POS)
    message = str(info.value)
    assert_at(message, traced_generator, "if x.sum() > i:")
    assert "outer jax transformation" in message


def test_generator_on_python_values_runs_as_python_while_tracing():
    check(collects_static_generator, (POS,), (NEG,), expect_prims={"cond"})


# -- loop carries that change shape --------------------------------------------------------------

def err_carry_grows(x):
    while x.sum() < 100:
        x = jnp.concatenate([x, x])
    return x


def static_loop_carry_grows(x):
    for i in range(3):
        x = jnp.concatenate([x, x])
    return x


@pytest.mark.parametrize("way", ["to_static", "jit(convert)"])
def test_carry_that_changes_shape_is_a_located_two_sided_error(way):
    call = (lambda: laxify.to_static(err_carry_grows, fallback="error")(POS)) if way == "to_static" else (
        lambda: jax.jit(laxify.convert(err_carry_grows))(POS))
    with pytest.raises(laxify.ConversionError) as info:
        call()
    message = str(info.value)
    assert_at(message, err_carry_grows, "while x.sum() < 100:")
    assert "before the loop" in message and "after one iteration" in message
    assert "float32[3]" in message and "float32[6]" in message
    assert message.rstrip().splitlines()[-1].startswith("Revise the code so that `x` keeps one shape")


def test_static_loop_whose_carry_changes_shape_stays_python():
    check(static_loop_carry_grows, (POS,), expect_prims=())


def test_python_dash_o_removes_asserts_on_traced_values(tmp_path):
    """`python -O` removes asserts before laxify sees them, as Python does: nothing checked."""
    script = tmp_path / "optimized.py"
    script.write_text(
        "import sys\n"
        "import jax.numpy as jnp\n"
        "import laxify\n"
        "def f(x):\n"
        "    assert x.sum() > 0, 'sum must be positive'\n"
        "    return x + 1\n"
        "print(sys.flags.optimize, float(laxify.to_static(f)(-jnp.ones(2)).sum()))\n"
    )
    done = subprocess.run([sys.executable, "-O", str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0.0"], done.stdout
