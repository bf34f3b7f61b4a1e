"""The raising-calls converter alone: golden tests (source before, source after), and the
functions it converts run eagerly and converted on inputs that pass and inputs that raise.

The golden functions see this module's globals: ``validate`` holds a ``raise``,
``validate_twice`` calls it by name, ``scale`` raises nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import libcst as cst
import pytest

import laxify
from golden import check, check_unchanged
from harness import assert_trees_close, check as check_equivalent, control_flow_prims, jaxpr_of
from laxify.transpiler.converters import raising_calls
from laxify.transpiler.converters.base import Context


def validate(v):
    if v.sum() < 0:
        raise ValueError(f"negative sum {v.sum():.1f}")
    return v


def validate_twice(v):
    return validate(validate(v))


def scale(v):
    return v * 2


def golden(before: str, after: str) -> Context:
    return check(raising_calls, before, after, globals())


def golden_unchanged(before: str) -> Context:
    return check_unchanged(raising_calls, before, globals())


# -- golden: calls that may raise, bracketed in loops -------------------------------------------

def test_a_call_that_may_raise_in_a_loop_is_bracketed_and_one_outside_loops_is_not():
    """`validate` holds a `raise`, `validate_twice` calls it (two calls deep); `scale` raises
    nothing."""
    ctx = golden("""
    def f(x, n):
        y = validate(x)
        for i in range(n):
            x = scale(x)
            x = validate(x)
            z = validate_twice(x)
        return x
    """, """
    def f(x, n):
        y = validate(x)
        for i in range(n):
            x = scale(x)
            _lx.expect_raise()
            x = validate(x)
            _lx_raised = _lx.raised_or(_lx_raised)
            _lx.expect_raise()
            z = validate_twice(x)
            _lx_raised = _lx.raised_or(_lx_raised)
        return x
    """)
    assert ctx.loop_raises and not ctx.raises


def test_calls_laxify_cannot_see_before_the_call_are_bracketed():
    """A function passed as an argument, a method of `self`/`cls` (parameters); another
    object's method and an unknown global are not."""
    golden("""
    def f(self, x, n, check_fn):
        for i in range(n):
            x = check_fn(x)
            x = self.step(x)
            x = other.step(x)
            x = unknown(x)
        return x
    """, """
    def f(self, x, n, check_fn):
        for i in range(n):
            _lx.expect_raise()
            x = check_fn(x)
            _lx_raised = _lx.raised_or(_lx_raised)
            _lx.expect_raise()
            x = self.step(x)
            _lx_raised = _lx.raised_or(_lx_raised)
            x = other.step(x)
            x = unknown(x)
        return x
    """)


def test_a_nested_def_that_raises_is_watched_wherever_it_is_defined():
    golden("""
    def f(x, n):
        for i in range(n):
            x = g(x)
        def g(v):
            raise ValueError
        return x
    """, """
    def f(x, n):
        for i in range(n):
            _lx.expect_raise()
            x = g(x)
            _lx_raised = _lx.raised_or(_lx_raised)
        def g(v):
            raise ValueError
        return x
    """)


def test_in_a_try_with_handlers_the_bracket_says_the_error_may_be_handled():
    golden("""
    def f(x, n):
        for i in range(n):
            try:
                x = validate(x)
            except ValueError:
                x = -x
            try:
                x = validate(x)
            finally:
                x = x + 1
        return x
    """, """
    def f(x, n):
        for i in range(n):
            try:
                _lx.expect_raise(True)
                x = validate(x)
                _lx_raised = _lx.raised_or(_lx_raised)
            except ValueError:
                x = -x
            try:
                _lx.expect_raise()
                x = validate(x)
                _lx_raised = _lx.raised_or(_lx_raised)
            finally:
                x = x + 1
        return x
    """)


def test_a_returned_call_is_kept_in_a_name_until_the_flag_is_updated():
    golden("""
    def f(x, n):
        for i in range(n):
            y = scale(x); return validate(y)
        return x
    """, """
    def f(x, n):
        for i in range(n):
            _lx.expect_raise()
            y = scale(x); _lx_value_1 = validate(y)
            _lx_raised = _lx.raised_or(_lx_raised)
            return _lx_value_1
        return x
    """)


def test_a_one_line_loop_body_with_a_call_that_may_raise_becomes_a_block():
    golden("""
    def f(x, n):
        for i in range(n): x = validate(x); x = x + 1
        return x
    """, """
    def f(x, n):
        for i in range(n):
            _lx.expect_raise()
            x = validate(x)
            _lx_raised = _lx.raised_or(_lx_raised)
            x = x + 1
        return x
    """)
    golden_unchanged("""
    def f(x, n):
        for i in range(n): x = scale(x); x = x + 1
        return x
    """)


# -- golden: guards `if test: raise E(...)` in loops ---------------------------------------------

def test_a_guard_on_values_the_loop_does_not_assign_becomes_raise_where():
    """The test on the `if`'s line, the error made lazily with the run's values; a cause gets
    its own thunk, a bare class is passed as it is."""
    ctx = golden("""
    def f(x, ys):
        for i in range(ys.shape[0]):
            if ys[i] > 5:
                raise ValueError(f"row {i} is {ys[i]:.1f}")
            if ys[i] < -5:
                raise ValueError("small") from KeyError("k")
            if ys[i] == 0: raise ZeroDivisionError
            x = x + ys[i]
        return x
    """, """
    def f(x, ys):
        for i in range(ys.shape[0]):
            _lx_test_1 = ys[i] > 5
            _lx_raised = _lx.raise_where(_lx_test_1, lambda: _lx.exception_(ValueError, _lx.printing.format_("row {0} is {1:.1f}", i, ys[i])), _lx_raised)
            _lx_test_2 = ys[i] < -5
            _lx_raised = _lx.raise_where(_lx_test_2, lambda: _lx.exception_(ValueError, "small"), _lx_raised, lambda: _lx.exception_(KeyError, "k"))
            _lx_test_3 = ys[i] == 0
            _lx_raised = _lx.raise_where(_lx_test_3, lambda: ZeroDivisionError, _lx_raised)
            x = x + ys[i]
        return x
    """)
    assert ctx.raises and ctx.loop_raises


def test_a_guard_on_a_value_the_loop_assigns_is_left_to_the_raise_converter_in_one_loop_only():
    """In one loop the test keeps its `cond` (a value the body updates); in a loop inside
    another the guard becomes `raise_where` even so."""
    golden("""
    def f(x, n):
        for i in range(n):
            if x.sum() > 5:
                raise ValueError("big")
            x = x + 1
            for j in range(n):
                if x.sum() > 7:
                    raise ValueError("bigger")
                x = x * 2
        return x
    """, """
    def f(x, n):
        for i in range(n):
            if x.sum() > 5:
                raise ValueError("big")
            x = x + 1
            for j in range(n):
                _lx_test_1 = x.sum() > 7
                _lx_raised = _lx.raise_where(_lx_test_1, lambda: _lx.exception_(ValueError, "bigger"), _lx_raised)
                x = x * 2
        return x
    """)


def test_ifs_that_are_not_a_lone_guard_are_left_as_written():
    """An `else`, another statement, a bare `raise`, a guard inside a `try` with handlers or
    inside `while True:`, or outside loops: the raise converter's."""
    ctx = golden_unchanged("""
    def f(x, n):
        if n > 5:
            raise ValueError("outside")
        for i in range(n):
            if n > 5:
                raise ValueError("else")
            else:
                pass
            if n > 6:
                x = 1
                raise ValueError("two statements")
            if n > 7:
                raise
            try:
                if n > 8:
                    raise ValueError("handled")
            except ValueError:
                pass
        while True:
            if n > 9:
                raise ValueError("forever")
            break
        return x
    """)
    assert not ctx.loop_raises and not ctx.raises


# -- golden: what follows a loop that may raise -----------------------------------------------------

def test_after_such_a_loop_prints_are_left_out_and_while_loops_stop_where_it_raised():
    """Also inside that loop; `while True:` (left by its own `break`) and nested defs are not
    touched, and a later loop is only quieted (not bracketed)."""
    golden("""
    def f(x, n):
        for i in range(n):
            x = validate(x)
            while x.sum() < 3:
                x = x + 1
        print(x)
        print()
        while x.sum() < 10:
            x = x * 2
        while True:
            print(x, end="")
            break
        for i in range(n):
            x = validate(x)
        def g():
            print(x)
        return x
    """, """
    def f(x, n):
        for i in range(n):
            _lx.expect_raise()
            x = validate(x)
            _lx_raised = _lx.raised_or(_lx_raised)
            while _lx.and_(_lx.not_(_lx_raised), lambda: x.sum() < 3, condition=True):
                x = x + 1
        print(x, unless_raised=_lx_raised)
        print(unless_raised=_lx_raised)
        while _lx.and_(_lx.not_(_lx_raised), lambda: x.sum() < 10, condition=True):
            x = x * 2
        while True:
            print(x, end="", unless_raised=_lx_raised)
            break
        for i in range(n):
            x = validate(x)
        def g():
            print(x)
        return x
    """)


def test_a_function_without_calls_that_may_raise_in_loops_is_the_same_tree():
    fn = cst.parse_module("def f(x, n):\n    y = validate(x)\n    for i in range(n):\n        x = x + 1\n"
                          "    return x\n").body[0]
    assert raising_calls.transform(fn, Context({}, namespace=globals())) is fn


# -- equivalence ----------------------------------------------------------------------------------

X = jnp.array([4.0, 3.0, 2.0], jnp.float32)


def validated_steps(x, n):
    for i in range(n):
        x = validate(x - i)
        x = x * 0.5
    print("validated")
    return x


def guarded_rows(x, ys):
    for i in range(ys.shape[0]):
        if ys[i] > 5:
            raise ValueError(f"row {i} is {ys[i]:.1f}")
        x = x + ys[i]
    return x


def with_a_callback(x, n, check_fn):
    for i in range(n):
        x = check_fn(x) - 1
    return x


def raises_as_python(fn, *args):
    """``fn`` raises a ValueError on ``args``, and ``to_static(fn)`` raises the same error with the
    same message (its effects flushed before the comparison)."""
    with pytest.raises(ValueError) as python:
        fn(*args)
    with pytest.raises(ValueError) as converted:
        laxify.to_static(fn)(*args)
        jax.effects_barrier()
    assert type(converted.value) is type(python.value)
    assert str(converted.value).splitlines()[0] == str(python.value), (str(converted.value), str(python.value))


def test_a_call_that_raises_in_a_loop_raises_pythons_error_and_prints_nothing_after(capsys):
    check_equivalent(validated_steps, (X * 10, 3), expect_prims={"scan", "cond"})
    jax.effects_barrier()
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["validated"] * 3, printed  # eager, to_static, jit(convert): once each
    raises_as_python(validated_steps, X, 3)
    raises_as_python(validated_steps, X * 0.1, 3)
    jax.effects_barrier()
    assert capsys.readouterr().out == ""


def test_a_guard_in_a_loop_raises_pythons_error_with_no_cond():
    ys = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    check_equivalent(guarded_rows, (X, ys), (X, -ys), expect_prims={"scan"})
    raises_as_python(guarded_rows, X, jnp.array([1.0, 7.5, 3.0], jnp.float32))
    raises_as_python(guarded_rows, X, jnp.array([9.0, 1.0, 3.0], jnp.float32))


def test_a_callback_argument_that_raises_is_bracketed_and_raises_as_python():
    expected = with_a_callback(X, 3, validate)
    assert_trees_close(expected, laxify.to_static(with_a_callback)(X, 3, validate), what="to_static")
    assert_trees_close(with_a_callback(X, 3, scale), laxify.to_static(with_a_callback)(X, 3, scale),
                       what="to_static, a callback that does not raise")
    raises_as_python(with_a_callback, X * 0.3, 3, validate)
    assert "_lx.expect_raise()" in laxify.to_static(with_a_callback).source
    assert "scan" in control_flow_prims(jaxpr_of(with_a_callback, X, 3, validate, static_argnums=(1, 2)))
