"""``try`` statements: the statement stays Python, its blocks are converted.

The oracle is the function run eagerly; each case runs on inputs that take every path through
the traced control flow inside the blocks, and the program must hold the lax ops expected
(no eager fallback: a FallbackWarning is an error in this suite)."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import CASE_FIELDS, case, check, control_flow_prims, jaxpr_of

POS, NEG = jnp.array([1.0, 2.0]), jnp.array([-1.0, -2.0])


def try_around_traced_if(x):
    y = x
    try:
        if x.sum() > 0:
            y = x * 2
    except ValueError:
        y = x
    while jnp.abs(y).sum() < 10:
        y = y * 2
    return y


def handler_converted_and_finally_reads_its_names(x, key):
    y = x * 0.0
    try:
        y = x * 2
        if x.sum() > 0:
            y = y + 1
        y = y + {"a": 1.0}[key]
    except KeyError as e:
        if x.sum() > 1:  # the handler starts from the `if` result above
            y = y - 100
        note = str(e)
    else:
        y = y + 1000
    finally:
        z = y * 2
    return z


def name_first_assigned_in_try(x):
    try:
        w = x + 1
    finally:
        pass
    return w


def try_in_traced_branch(x):
    if x.sum() > 0:
        try:
            y = x * 2
        except ValueError:
            y = x
    else:
        y = -x
    return y


def try_in_scanned_loop_with_break(x):
    for v in x:
        try:
            if v > 1:
                break
        finally:
            x = x + 1
    return x


def return_inside_try(x):
    try:
        if x.sum() > 0:
            return x
    except ValueError:
        pass
    return -x


def error_while_tracing_is_handled_as_in_python(x):
    try:
        y = x.reshape(3, 3)
    except TypeError:
        y = x * 0
    if y.sum() >= 0:
        y = y + 1
    return y


CASES = [
    case(try_around_traced_if, (POS,), (NEG,), prims={"cond", "while"}),
    case(handler_converted_and_finally_reads_its_names, (POS, "a"), (POS, "b"), (NEG, "b"), (NEG, "a"),
         prims={"cond"}, static_argnums=(1,)),
    case(name_first_assigned_in_try, (POS,), prims=()),
    case(try_in_traced_branch, (POS,), (NEG,), prims={"cond"}),
    case(try_in_scanned_loop_with_break, (jnp.array([0.5, 2.0, 3.0]),), (jnp.array([0.5, 0.2]),),
         prims={"scan", "cond"}),
    case(return_inside_try, (POS,), (NEG,), prims={"cond"}),
    case(error_while_tracing_is_handled_as_in_python, (POS,), (NEG,), prims={"cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_try_blocks_convert_and_agree_with_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def broad_handler_around_a_concrete_read(x):
    try:
        total = x.sum().item()  # needs a concrete value: fine eagerly, not while tracing
    except Exception:
        total = 0.0
    return x + total


def broad_handler_around_a_python_index(x):
    items = [1.0, 2.0, 3.0]
    total = 0.0
    for i in range(3):
        try:
            total = total + items[i]  # needs a Python `i`: the loop runs as Python
        except Exception:
            total = total - 100
    return x + total


def test_a_broad_handler_does_not_swallow_what_only_tracing_raises():
    """JAX's "traced value where Python needs a concrete one" and laxify's own signals are not
    the user's exceptions: `except Exception` must not turn them into a wrong value (here it
    would give x + 0.0); they reach laxify, which says where and why."""
    # Eager Python runs it: to_static runs it eagerly (the handler does not run), with a warning
    # at the line; fallback="error" refuses it there.
    with pytest.warns(laxify.FallbackWarning):
        out = laxify.to_static(broad_handler_around_a_concrete_read)(POS)
    np.testing.assert_allclose(out, broad_handler_around_a_concrete_read(POS))
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(broad_handler_around_a_concrete_read, fallback="error")(POS)
    assert "total = x.sum().item()" in str(info.value)
    with pytest.raises((laxify.ConversionError, jax.errors.ConcretizationTypeError)):
        jax.jit(laxify.convert(broad_handler_around_a_concrete_read))(POS)
    check(broad_handler_around_a_python_index, (POS,), expect_prims=set())


def test_the_try_stays_python_in_the_transformed_source():
    source = laxify.to_static(handler_converted_and_finally_reads_its_names, static_argnums=1).source
    for header in ("try:", "except KeyError as e:", "else:", "finally:"):
        assert header in source, source
    assert source.index("try:") < source.index("except KeyError as e:") < source.index("finally:")
    # Inside the handler, its `if` is converted like any other.
    handler = source[source.index("except KeyError as e:"):source.index("else:")]
    assert ".cond(" in handler, source


def test_explain_lists_the_try():
    text = str(laxify.to_static(try_around_traced_if).explain(POS))
    row = next(line for line in text.splitlines() if " try " in line)
    assert "blocks are converted" in row, text


def test_under_jit_of_convert_the_program_has_the_blocks_control_flow():
    jaxpr = jax.make_jaxpr(laxify.convert(try_around_traced_if))(POS)
    assert control_flow_prims(jaxpr) == {"cond", "while"}
    assert control_flow_prims(jaxpr_of(try_in_traced_branch, POS)) == {"cond"}


def try_assigns_a_name_a_closure_captures(x, scale):
    # As statistics.fmean: `n` is assigned in the `try` and captured by a generator of the
    # `except`; a traced branch reads it later.
    try:
        n = len(x)
    except TypeError:
        n = 0

        def count(items):
            nonlocal n
            for n, v in enumerate(items, start=1):
                yield v
        x = jnp.asarray(list(count(x)))
    total = x.sum() * scale
    if total > 0:
        total = total / n
    return total - n


def test_a_name_assigned_in_a_try_and_captured_by_a_closure_has_its_value_after():
    for x in (POS, NEG):
        check(try_assigns_a_name_a_closure_captures, (x, 2.0), expect_prims={"cond"})


# -- What only tracing raises never reaches the user's handlers, `finally` or managers -----------
#
# Each function below needs, somewhere in a block of a `try` or `with`, Python's answer on a
# traced value that laxify does not convert there (an `if` in a `try` kept as Python because its
# `finally` returns, a NumPy conversion): JAX refuses it while tracing. Eager Python takes the
# path; `to_static` must fall back with a warning and give eager's answer, never run the user's
# handler (or a `return` in `finally`, or a manager that suppresses) on JAX's refusal.


def finally_returns_after_a_traced_if(x):
    try:
        if x.sum() > 0:
            x = x + 1
    finally:
        return x


def finally_returns_after_a_traced_while(x):
    try:
        while x.sum() < 5:
            x = x + 1
    finally:
        return x


def finally_returns_under_a_static_if(x, leave):
    try:
        if x.sum() > 0:
            x = x + 1
    finally:
        if leave:
            return x
    return x * 10


def finally_returns_after_a_concrete_read(x):
    try:
        x = x + float(np.asarray(x).sum())
    finally:
        return x


def finally_raises_its_own_error(x):
    try:
        x = x + float(np.asarray(x).sum())
    finally:
        if x.shape[0] > 5:
            raise KeyError("never")  # (a static test: Python's error, raised while tracing)
    return x


def handlers_of_a_kept_try_after_a_traced_if(x):
    try:
        if x.sum() > 0:
            x = x + 1
    except Exception:
        x = x - 100
    finally:
        return x


def bare_except_around_a_concrete_read(x):
    try:
        y = x + float(np.asarray(x).sum())
    except:  # noqa: E722
        y = x - 100
    return y


def suppress_around_a_concrete_read(x):
    y = x - 100
    with contextlib.suppress(Exception):
        y = x + float(np.asarray(x).sum())
    return y


class Swallowing:
    """A context manager whose ``__exit__`` suppresses every exception and counts its exits."""

    exits = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        Swallowing.exits += 1
        return True


def manager_that_suppresses_around_a_concrete_read(x):
    y = x - 100
    with Swallowing():
        y = x + float(np.asarray(x).sum())
    return y


REFUSED = [
    pytest.param(fn, id=fn.__name__)
    for fn in (
        finally_returns_after_a_traced_if,
        finally_returns_after_a_traced_while,
        finally_returns_after_a_concrete_read,
        finally_raises_its_own_error,
        handlers_of_a_kept_try_after_a_traced_if,
        bare_except_around_a_concrete_read,
        suppress_around_a_concrete_read,
        manager_that_suppresses_around_a_concrete_read,
    )
]


@pytest.mark.parametrize("fn", REFUSED)
def test_a_refusal_while_tracing_is_not_the_users_exception(fn):
    for x in (POS, NEG):
        with pytest.warns(laxify.FallbackWarning):
            got = laxify.to_static(fn)(x)
        np.testing.assert_allclose(got, fn(x))
        # Under an outer jit no eager run is possible: a located error, not a value.
        with pytest.raises(laxify.ConversionError) as info:
            jax.jit(laxify.convert(fn))(x)
        assert "_lx" not in str(info.value)


def test_a_return_under_a_static_if_in_finally_does_not_drop_a_refusal():
    for x in (POS, NEG):
        for leave in (True, False):
            with pytest.warns(laxify.FallbackWarning):
                got = laxify.to_static(finally_returns_under_a_static_if, static_argnums=1)(x, leave)
            np.testing.assert_allclose(got, finally_returns_under_a_static_if(x, leave))


def test_a_manager_still_exits_when_a_refusal_goes_past_it():
    Swallowing.exits = 0
    with pytest.raises(laxify.ConversionError):
        jax.jit(laxify.convert(manager_that_suppresses_around_a_concrete_read))(POS)
    assert Swallowing.exits == 1  # entered while tracing, and left (what it holds is released)


# What Python's own code raises while tracing is the user's: handlers, `finally` and managers
# that suppress see it as in eager Python, and the blocks are still converted.


def finally_return_drops_a_python_error(x, key):
    try:
        x = x + {"a": 1.0}[key]
    finally:
        return x * 2


def suppress_of_a_python_error_around_a_traced_if(x, key):
    y = x
    with contextlib.suppress(KeyError):
        if x.sum() > 0:
            y = x + 1
        y = y + {"a": 1.0}[key]
    return y


def manager_that_suppresses_a_python_error(x, key):
    y = x
    with Swallowing():
        if x.sum() > 0:
            y = x + 1
        y = y + {"a": 1.0}[key]
    return y


@pytest.mark.parametrize(
    "fn, prims",
    [
        (finally_return_drops_a_python_error, set()),
        (suppress_of_a_python_error_around_a_traced_if, {"cond"}),
        (manager_that_suppresses_a_python_error, {"cond"}),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_python_errors_while_tracing_still_reach_the_users_handlers(fn, prims):
    check(fn, (POS, "a"), (NEG, "a"), (POS, "b"), (NEG, "b"), expect_prims=prims)
