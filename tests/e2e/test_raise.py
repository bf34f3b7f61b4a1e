"""``raise`` under traced control flow: raised exactly when Python raises, after the call,
through the run-time error channel (runtime/error_channel.py); eager Python is the oracle."""

from __future__ import annotations

import traceback
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import laxify
from harness import assert_trees_close, control_flow_prims, jaxpr_of, primitive_counts


class NegativeError(Exception):
    def __init__(self, value):
        super().__init__(f"bad value {value}")
        self.value = value


def _outcome(fn, args):
    try:
        return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - the oracle's exception is the expected one
        return ("error", type(e), str(e))


def _routes(fn):
    return {
        "to_static": laxify.to_static(fn),
        "checked jit(convert)": laxify.checked(jax.jit(laxify.convert(fn))),
    }


def check_like_python(fn, *inputs, prims=()):
    """Every route gives eager Python's value, or its exception type and message; the traced
    program holds ``prims``."""
    kinds = set()
    for args in inputs:
        expected = _outcome(fn, args)
        kinds.add(expected[0])
        for name, route in _routes(fn).items():
            got = _outcome(route, args)
            assert got[0] == expected[0], f"{name} on {args}: {got} vs eager {expected}"
            if expected[0] == "value":
                assert_trees_close(expected[1], got[1], what=f"{name} on {args}")
            else:
                assert got[1:] == expected[1:], f"{name} on {args}: {got} vs eager {expected}"
        # Valid inputs run under a plain jax.jit(convert) too, never rejected.
        if expected[0] == "value":
            assert_trees_close(expected[1], jax.jit(laxify.convert(fn))(*args), what="plain jit")
    assert kinds == {"value", "error"}, "the inputs must take both the valid and the raising path"
    counts = primitive_counts(jaxpr_of(fn, *inputs[0]))
    for prim in prims:
        assert counts[prim] >= 1, f"expected a {prim} in the program: {counts}"


def fib(n):
    if n < 0:
        raise ValueError("n is negative")
    a, b = 0, 1
    for _ in range(10):
        a, b = b, a + b
    return a + n


def test_guard_at_the_top():
    check_like_python(fib, (jnp.int32(3),), (jnp.int32(0),), (jnp.int32(-2),), prims=("cond",))


def positive(n):
    if n <= 0:
        raise ValueError(f"Number {n} must be positive (got {n + 1} after one)")
    return n * 2


def test_fstring_message_has_the_values_of_the_run():
    check_like_python(positive, (jnp.int32(4),), (jnp.int32(-7),), (jnp.int32(0),))
    with pytest.raises(ValueError, match=r"^Number -7 must be positive \(got -6 after one\)$"):
        laxify.to_static(positive)(jnp.int32(-7))


def in_for(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] < 0:
            raise ValueError(f"negative at {i}: {a[i]}")
        s = s + a[i]
    return s


def test_raise_in_a_scanned_for_body():
    check_like_python(in_for, (jnp.array([1.0, 2.0, 3.0]),), (jnp.array([1.0, -2.0, -3.0]),),
                      (jnp.array([-1.0, 2.0, 3.0]),), prims=("scan",))
    # A guard on an input (the loop does not assign `a`): a check and a flag, no lax.cond.
    assert primitive_counts(jaxpr_of(in_for, jnp.array([1.0, 2.0, 3.0])))["cond"] == 0


def collatz(n):
    k = 0
    while n != 1:
        if n <= 0:
            raise ValueError(f"not positive: {n}")
        n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        k += 1
    return k


def test_raise_in_a_while_body_stops_the_loop():
    # With 0 the loop would never end if the raise did not stop it.
    # The guard reads `n`, which the body updates: it keeps its lax.cond in one loop (without
    # it XLA would copy a large updated array each iteration).
    check_like_python(collatz, (jnp.int32(6),), (jnp.int32(0),), (jnp.int32(-3),), prims=("while", "cond"))


def traced_range(n, x):
    for i in range(n):
        if x[i] > 5:
            raise IndexError(f"item {i} is too big")
    return x.sum()


def test_raise_in_a_traced_range():
    x = jnp.arange(4.0) * 3
    check_like_python(traced_range, (jnp.int32(2), x), (jnp.int32(3), x), (jnp.int32(0), x), prims=("while",))


def elif_arm(x):
    if x > 10:
        y = x - 10
    elif x < 0:
        raise ArithmeticError("x is negative")
    else:
        y = x
    return y


def test_raise_in_an_elif_arm_needs_no_value_there():
    check_like_python(elif_arm, (jnp.float32(12.0),), (jnp.float32(3.0),), (jnp.float32(-1.0),))


def custom(x):
    if x < 0:
        raise NegativeError(x)
    return x + 1


def test_custom_exception_class_made_with_the_values_of_the_run():
    check_like_python(custom, (jnp.int32(3),), (jnp.int32(-4),))
    with pytest.raises(NegativeError) as info:
        laxify.to_static(custom)(jnp.int32(-4))
    assert int(info.value.value) == -4


def validate(v):
    if v < 0:
        raise NegativeError(v)
    return v * 2


def calls_helper(x):
    if x > 100:
        return x
    return validate(x) + 1


def fails_unconditionally(v):
    raise KeyError("always")


def calls_failing_helper(x):
    if x > 0:
        return x
    fails_unconditionally(x)
    return -x


def test_raise_in_a_called_helper():
    check_like_python(calls_helper, (jnp.int32(3),), (jnp.int32(200),), (jnp.int32(-4),))
    check_like_python(calls_failing_helper, (jnp.int32(3),), (jnp.int32(-1),))


def chained(x):
    if x < 0:
        raise ValueError("bad input") from KeyError("cause")
    return x


def test_raise_from_keeps_the_cause():
    check_like_python(chained, (jnp.int32(1),), (jnp.int32(-1),))
    with pytest.raises(ValueError) as info:
        laxify.to_static(chained)(jnp.int32(-1))
    assert isinstance(info.value.__cause__, KeyError)


def test_traceback_ends_at_the_users_raise_line():
    def user_frames(route):
        try:
            route(jnp.int32(-2))
        except ValueError as e:
            return traceback.extract_tb(e.__traceback__)
        raise AssertionError("no error")

    for route in _routes(fib).values():
        frames = user_frames(route)
        assert frames[-1].filename == __file__
        assert frames[-1].name == "fib"
        assert frames[-1].line == 'raise ValueError("n is negative")'
        assert not [f for f in frames if "/laxify/" in f.filename or "/runtime/" in f.filename], frames


def shape_check(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got {x.ndim} dimensions")
    return x * 2


def test_raise_under_a_static_condition_stays_python():
    f = laxify.to_static(shape_check)
    with pytest.raises(ValueError, match="expected a vector, got 2 dimensions"):
        f(jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="expected a vector, got 2 dimensions"):
        jax.jit(laxify.convert(shape_check))(jnp.ones((2, 2)))
    np.testing.assert_allclose(f(jnp.ones(3)), 2 * np.ones(3))
    # No run-time check in the program: nothing to carry, nothing to pay.
    assert "check" not in primitive_counts(jaxpr_of(shape_check, jnp.ones(3)))


def test_a_plain_program_holds_no_check():
    # Under plain jax.jit nothing would report it, and a check's effect alone would send every
    # call through JAX's slow dispatch path: the plain program has none.
    closed = jax.make_jaxpr(laxify.convert(fib))(jnp.int32(3))
    assert not closed.effects and "check" not in primitive_counts(closed)
    assert primitive_counts(closed)["cond"] >= 1


def guarded_collatz(n):
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def guarded_with_a_builtin_check(x):
    if x < 0:
        raise ValueError("x is negative")
    return int(x) + 1  # int() of a float: NaN and infinities are checks of Python's own


def test_the_report_keeps_checkify_out_of_a_program_with_a_while():
    """A program's checks (a `raise` of the user's, a check of Python's own such as `int()` of
    NaN) come out of it as its report (an int32 code and the payloads), never by functionalizing
    it with checkify, whose rule for `while` sends every call down JAX's slow dispatch path; the
    exception is built from the report of the call that raised."""
    check_like_python(guarded_collatz, (jnp.int32(27),), (jnp.int32(-3),), prims=("while",))
    static_fn = laxify.to_static(guarded_collatz)
    assert int(static_fn(jnp.int32(6))) == 8
    programs = list(static_fn._programs.values())
    assert len(programs) == 1 and programs[0].checked is None
    assert not programs[0].trace(jnp.int32(6)).jaxpr.effects
    for _ in range(2):  # the first failing call (makes the checked program) and a later one
        with pytest.raises(ValueError, match="^n must be positive, got -3$"):
            static_fn(jnp.int32(-3))
    assert int(static_fn(jnp.int32(7))) == 16
    # A check of Python's own (int() of NaN) is in the report too: no checkify.
    with_builtin = laxify.to_static(guarded_with_a_builtin_check)
    assert int(with_builtin(jnp.float32(2.5))) == 3
    program = next(iter(with_builtin._programs.values()))
    assert program.checked is None and not program.trace(jnp.float32(2.5)).jaxpr.effects
    with pytest.raises(ValueError, match="NaN"):
        with_builtin(jnp.float32(jnp.nan))
    with pytest.raises(ValueError, match="^x is negative$"):
        with_builtin(jnp.float32(-1.0))


def raises_always(v):
    raise ValueError(f"bad {v}")


def helper_in_a_conditional_expression(x):
    y = raises_always(x) if x > 0 else x
    return y + 1.0


def test_a_helper_that_always_raises_in_a_conditional_expression_raises():
    # It returned the other side's value: the check went into the probe of the side's shape.
    check_like_python(helper_in_a_conditional_expression, (jnp.float32(-1.0),), (jnp.float32(1.0),))


def test_checked_after_a_plain_call_of_the_same_jit():
    plain = jax.jit(laxify.convert(fib))
    plain(jnp.int32(-1))  # unchecked: a value, never read (documented)
    with pytest.raises(ValueError, match="^n is negative$"):
        laxify.checked(plain)(jnp.int32(-1))


def test_vmap_any_invalid_element_is_the_error():
    batched = laxify.checked(jax.vmap(laxify.convert(positive)))
    np.testing.assert_array_equal(batched(jnp.array([1, 2, 3])), [2, 4, 6])
    with pytest.raises(ValueError, match="^Number -5 must be positive"):
        batched(jnp.array([1, -5, 3]))
    # Several invalid elements: checkify reduces the batch to one error, the last element's.
    with pytest.raises(ValueError, match="^Number -7 must be positive"):
        batched(jnp.array([-2, -5, 3, -7, 4]))
    # checkify cannot functionalize a batched while loop (checkify of vmap of while): a
    # traced `while` under vmap works, as long as its program holds no check.
    loops = jax.vmap(laxify.convert(collatz))
    np.testing.assert_array_equal(loops(jnp.array([1, 6, 3])), [collatz(1), collatz(6), collatz(3)])


def smooth(x):
    if x < 0:
        raise ValueError(f"negative input {x}")
    return jnp.sin(x) * x


def test_grad_under_checked():
    grad = laxify.checked(jax.grad(laxify.convert(smooth)))
    np.testing.assert_allclose(grad(jnp.float32(0.5)), jax.grad(smooth)(jnp.float32(0.5)), rtol=1e-6)
    with pytest.raises(ValueError, match="^negative input -0.5$"):
        grad(jnp.float32(-0.5))


def test_scan_under_checked():
    body = laxify.convert(positive)

    def total(xs):
        return lax.scan(lambda c, x: (c + body(x), None), jnp.int32(0), xs)[0]

    run = laxify.checked(total)
    assert int(run(jnp.array([1, 2]))) == 6
    with pytest.raises(ValueError, match="^Number -1 must be positive"):
        run(jnp.array([1, -1, 2]))


def test_to_static_inside_an_outer_jit():
    inner = laxify.to_static(fib)
    outer = jax.jit(lambda n: inner(n) * 2)
    assert int(outer(jnp.int32(3))) == 2 * fib(3)  # valid: never rejected
    checked = laxify.checked(outer)
    assert int(checked(jnp.int32(3))) == 2 * fib(3)
    with pytest.raises(ValueError, match="^n is negative$"):
        checked(jnp.int32(-1))


def test_the_result_of_a_call_that_raised_is_never_returned():
    f = laxify.to_static(fib)
    for _ in range(3):  # cached calls too, and the hot path
        assert int(f(jnp.int32(2))) == fib(2)
        with pytest.raises(ValueError, match="^n is negative$"):
            f(jnp.int32(-1))



# -- exceptions Python raises by itself on a path the data may not take ------------------------

def static_division_in_a_branch(x, k=0):
    r = 1
    if x > 0:
        r = 10 // k
    return r


def missing_key_in_a_conditional_expression(x):
    d = {"b": 1.0}
    v = d.pop("a") if x > 0 else -1.0
    return v


def index_of_a_short_list_in_an_elif(x):
    items = [1.0, 2.0]
    if x > 10:
        y = items[5]
    elif x > 0:
        y = items[1] * x
    else:
        y = x
    return y


def test_implicit_errors_wait_for_the_path_that_raises_them():
    check_like_python(static_division_in_a_branch, (jnp.int32(-1),), (jnp.int32(1),), prims=("cond",))
    check_like_python(missing_key_in_a_conditional_expression, (jnp.float32(-1.0),), (jnp.float32(1.0),),
                      prims=("cond",))
    check_like_python(index_of_a_short_list_in_an_elif, (jnp.float32(-1.0),), (jnp.float32(3.0),),
                      (jnp.float32(11.0),), prims=("cond",))


def test_implicit_error_is_raised_at_the_users_line():
    with pytest.raises(ZeroDivisionError) as info:
        laxify.to_static(static_division_in_a_branch)(jnp.int32(1))
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.filename == __file__ and last.line == "r = 10 // k"


def try_around_a_traced_raise(a, b):
    try:
        if b == 0:
            raise ZeroDivisionError("division by zero")
        r = a / b
    except ZeroDivisionError:
        r = 0.0
    return r


def test_traced_raise_that_its_except_catches_is_the_handlers_branch():
    # The handler runs where the data raises, in one program (transpiler/converters/caught_raises.py).
    for route in (laxify.to_static(try_around_a_traced_raise), jax.jit(laxify.convert(try_around_a_traced_raise))):
        for b in (3.0, 0.0):
            args = (jnp.float32(6.0), jnp.float32(b))
            with warnings.catch_warnings():
                warnings.simplefilter("error", laxify.FallbackWarning)
                np.testing.assert_allclose(route(*args), try_around_a_traced_raise(*args))
    assert "cond" in control_flow_prims(jaxpr_of(try_around_a_traced_raise, jnp.float32(6.0), jnp.float32(3.0)))


def try_around_a_traced_raise_reading_it(a, b):
    try:
        if b == 0:
            raise ZeroDivisionError("division by zero")
        r = a / b
    except ZeroDivisionError as e:
        r = 0.0 if str(e) else 1.0
    return r


def test_traced_raise_whose_exception_the_handler_reads_runs_eagerly():
    # Never the handler's value for every input (which tracing the raise would give): the
    # handler depends on the data and reads the exception, so to_static runs the function
    # eagerly, with a warning.
    fn = try_around_a_traced_raise_reading_it
    f = laxify.to_static(fn)
    for b in (3.0, 0.0):
        args = (jnp.float32(6.0), jnp.float32(b))
        with pytest.warns(laxify.FallbackWarning, match="inside a `try` whose `except` clauses may catch"):
            np.testing.assert_allclose(f(*args), fn(*args))
        f.clear_cache()
    # Where eager execution is impossible it is a located error, the text of fallback="error".
    with pytest.raises(laxify.ConversionError, match="inside a `try` whose `except` clauses may catch") as jitted:
        jax.jit(laxify.convert(fn))(jnp.float32(6.0), jnp.float32(3.0))
    with pytest.raises(laxify.ConversionError, match="cannot be one XLA program") as strict:
        laxify.to_static(fn, fallback="error")(jnp.float32(6.0), jnp.float32(3.0))
    assert str(jitted.value) == str(strict.value)


def try_around_a_static_raise(a, n):
    try:
        if n == 0:
            raise ZeroDivisionError("division by zero")
        r = a / n
    except ZeroDivisionError:
        r = a * 0.0
    return r


def test_raise_under_a_static_condition_in_a_try_is_pythons():
    f = laxify.to_static(try_around_a_static_raise)
    for n in (0, 2):
        np.testing.assert_allclose(f(jnp.float32(6.0), n), try_around_a_static_raise(jnp.float32(6.0), n))


# -- a name a traced loop may not have assigned ------------------------------------------------

def first_assigned_in_a_traced_loop(n):
    for i in range(n):
        y = i * 2
    return y


def test_name_from_a_loop_that_ran_zero_times_is_unbound_at_run_time():
    check_like_python(first_assigned_in_a_traced_loop, (jnp.int32(3),), (jnp.int32(0),), prims=("while",))


def test_export_leaves_the_checks_out_and_says_so():
    f = laxify.to_static(fib)
    with pytest.warns(laxify.UncheckedWarning, match="not checked by the exported program"):
        data = f.export(jnp.int32(3))
    loaded = laxify.load(data)
    assert int(loaded(jnp.int32(3))) == fib(3)
    loaded(jnp.int32(-3))  # a value: the serialized program holds no checks
    with pytest.raises(ValueError, match="^n is negative$"):
        f(jnp.int32(-3))  # the function itself still raises


def prints_around_a_guard(x):
    print("start", x)
    if x < 0:
        raise ValueError(f"negative {x}")
    print("end", x)
    return x


def test_prints_are_pythons_on_a_run_that_raises(capsys):
    for route in _routes(prints_around_a_guard).values():
        route(jnp.float32(1.0))
        with pytest.raises(ValueError, match="^negative -1.0$"):
            route(jnp.float32(-1.0))
        jax.effects_barrier()
        assert capsys.readouterr().out == "start 1.0\nend 1.0\nstart -1.0\n"


def always_raises_with_a_value(x):
    n = 0
    while n < 0:
        n += 1
    raise ValueError(f"x is {x}")


def test_unconditional_raise_with_a_traced_value_has_the_runs_value():
    for route in _routes(always_raises_with_a_value).values():
        with pytest.raises(ValueError, match=r"^x is 2\.5$"):
            route(jnp.float32(2.5))
    # Under plain jax.jit nothing reports run-time values, and a raise while tracing would show
    # JAX's placeholder for x in the message: a located error that names laxify.checked.
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(always_raises_with_a_value))(jnp.float32(2.5))
    message = str(info.value)
    assert 'raise ValueError(f"x is {x}")' in message and "laxify.checked" in message, message
    assert "Tracer" not in message and "_lx" not in message, message


def raise_in_a_scan_inside_a_traced_range(x, k):
    s = 0.0
    for i in range(k):
        for e in x:
            raise ValueError(f"fuzz: {len(x)}")
    s = 1.0
    raise KeyError("fuzz end")


def test_fuzz_regression_every_path_raises():
    # Every path raises: the function's value is never made (it was an error while tracing).
    for route in _routes(raise_in_a_scan_inside_a_traced_range).values():
        with pytest.raises(ValueError, match="^fuzz: 3$"):
            route(jnp.ones(3), jnp.int32(2))
        with pytest.raises(KeyError, match="fuzz end"):
            route(jnp.ones(3), jnp.int32(0))


def raise_in_a_scanned_body(x, a):
    for e in x:
        raise ValueError(f"fuzz: {a}")
    return 0.0


def returns_or_raises(x, a):
    if a > 0:
        return x
    raise ValueError(f"fuzz: {a}")


def test_fuzz_regression_raise_with_a_value_in_a_scan_body_and_after_a_return():
    check_like_python(raise_in_a_scanned_body, (jnp.ones(0), jnp.float32(2.5)), (jnp.ones(3), jnp.float32(2.5)))
    check_like_python(returns_or_raises, (jnp.ones(2), jnp.float32(1.0)), (jnp.ones(2), jnp.float32(-1.0)))


# -- a helper that raises whenever it is called stops its caller -------------------------------

def always_raises(x):
    raise ValueError(f"bad {x}")


def uses_a_helper_that_always_raises_in_a_branch(x):
    y = x * 2.0
    if x > 0:
        y = always_raises(x) + 1.0  # the helper's value would be None: never used
    return y + 1.0


def uses_a_helper_that_always_raises(x):
    y = always_raises(x) * 2.0
    return y


def test_fuzz_regression_helper_that_always_raises_with_a_traced_message():
    # It returned None to its caller while tracing: TypeError where Python raises ValueError.
    check_like_python(uses_a_helper_that_always_raises_in_a_branch, (jnp.float32(-1.0),), (jnp.float32(2.0),),
                      prims=("cond",))
    for route in _routes(uses_a_helper_that_always_raises).values():
        with pytest.raises(ValueError, match=r"^bad 1\.5$"):
            route(jnp.float32(1.5))


def elif_whose_condition_always_raises(x, a):
    c = 0
    if 0.0 < x[0]:
        c = 1
    elif a > 5.0:
        c = 3
    elif 0.0 < always_raises(a):
        c = 2
    else:
        c = 4
    return a + c


def elif_whose_condition_raises_python_error(x, k):
    c = 0.0
    if x > 0:
        c = 1.0
    elif 10 // k > 1:
        c = 2.0
    return x + c


def test_fuzz_regression_an_elif_condition_that_always_raises_is_the_chains_raise():
    # Tracing stopped at the helper's `raise` and the function ran eagerly (a FallbackWarning):
    # the raise is the chain's where no earlier condition holds, in the one program.
    inputs = ((jnp.array([0.5, 0.0]), jnp.float32(1.0)), (jnp.array([0.0, 0.0]), jnp.float32(7.0)),
              (jnp.array([0.0, 0.0]), jnp.float32(1.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        check_like_python(elif_whose_condition_always_raises, *inputs, prims=("cond",))
        # (`k` a Python int: static under to_static, as jax.jit's static_argnums keeps it)
        raises_python_error = laxify.to_static(elif_whose_condition_raises_python_error)
        assert float(raises_python_error(jnp.float32(1.0), 0)) == 2.0
        with pytest.raises(ZeroDivisionError):
            raises_python_error(jnp.float32(-1.0), 0)
        assert float(raises_python_error(jnp.float32(-1.0), 4)) == 1.0
        assert "cond" in str(jax.make_jaxpr(laxify.convert(elif_whose_condition_raises_python_error),
                                            static_argnums=1)(jnp.float32(-1.0), 0))
    with pytest.raises(ValueError, match=r"^bad 1\.0$") as info:
        laxify.to_static(elif_whose_condition_always_raises)(*inputs[2])
    assert info.traceback[-1].path.name == "test_raise.py"


def raises_on_both_sides(x):
    if x > 0:
        raise ValueError("positive")
    raise KeyError("not positive")


def adds_a_helper_that_raises_on_every_path(x):
    return 1 + raises_on_both_sides(x)


def validates_then_always_raises(q):
    def check(v):
        if v < -1.0:
            raise ValueError(f"below: {v}")
        return v + 0.5

    check(q[0])
    raise ValueError("always")
    return 0  # (dead: after the raise)


def adds_a_helper_that_validates_then_always_raises(x):
    return len(x) + validates_then_always_raises(x)


@pytest.mark.filterwarnings("error::laxify.FallbackWarning")
def test_fuzz_regression_a_helper_that_raises_on_every_path_stops_its_caller():
    # Every path of the helper raises under a traced condition (or after a call that may
    # raise): it returned None, and `1 + None` raised TypeError under jax.jit(convert) (and
    # ran the function eagerly under to_static).
    for route in _routes(adds_a_helper_that_raises_on_every_path).values():
        with pytest.raises(ValueError, match="^positive$"):
            route(jnp.float32(1.0))
        with pytest.raises(KeyError, match="not positive"):
            route(jnp.float32(-1.0))
    for route in _routes(adds_a_helper_that_validates_then_always_raises).values():
        with pytest.raises(ValueError, match="^always$"):
            route(jnp.zeros(3))
        with pytest.raises(ValueError, match=r"^below: -2\.0$"):
            route(jnp.full(3, -2.0))


def counter_whose_helper_always_raises(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + always_raises(x)
        i += 1
    return s + x


def test_helper_that_always_raises_in_a_traced_loop_body_raises_when_the_body_runs():
    check_like_python(counter_whose_helper_always_raises, (jnp.float32(1.0), jnp.int32(0)),
                      (jnp.float32(1.0), jnp.int32(3)), prims=("cond",))


def raises_in_its_scanned_loop(q):
    t = 0.0
    for v in q:  # a scan over rows: it runs at least once
        t = t + v
        raise ValueError(f"first {t}")
    return t


def raises_in_its_static_range(q):
    for _ in range(3):
        q = q * 2.0
        raise KeyError(f"doubled {q[0]}")
    return q


def helper_in_a_traced_branch(helper):
    def f(x):
        if x[0] < 100.0:
            r = helper(x)
        else:
            r = x[1]
        return r
    return f


def helper_returned_from_a_traced_loop(helper):
    def f(x):
        for i in range(2):
            if x[i] < 100.0:
                return helper(x)
        return x[0]
    return f


@pytest.mark.parametrize("helper", [raises_in_its_scanned_loop, raises_in_its_static_range])
@pytest.mark.parametrize("caller", [helper_in_a_traced_branch, helper_returned_from_a_traced_loop])
def test_helper_whose_scanned_loop_always_raises_raises_in_a_traced_caller(helper, caller):
    # The scan's first iteration raises while an abstract probe of its carries traces it: the
    # check must not stay in that thrown-away probe, or the caller would return its other value.
    check_like_python(caller(helper), (jnp.array([1.0, 2.0, 3.0]),), (jnp.array([200.0, 2.0, 3.0]),),
                      (jnp.array([200.0, 300.0, 3.0]),), prims=("cond",))


# -- Python's own errors directly in a traced loop body: eager Python's result ----------------

def next_greater(a):
    n = a.shape[0]
    res = jnp.full(n, -1.0)
    stack = []
    for i in range(n):
        while stack and a[stack[-1]] < a[i]:
            res = res.at[stack.pop()].set(a[i])
        stack.append(i)
    return res


def missing_key_in_a_while_body(x, n):
    d = {"a": 1.0}
    i = 0
    s = x
    while i < n:
        s = s + d["b"]
        i += 1
    return s


def test_pythons_error_in_a_traced_loop_body_falls_back_to_eagers_result():
    a = jnp.array([2.0, 1.0, 3.0, 0.5])
    with pytest.warns(laxify.FallbackWarning, match="IndexError"):
        got = laxify.to_static(next_greater)(a)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(next_greater(a)))
    f = laxify.to_static(missing_key_in_a_while_body)
    with pytest.warns(laxify.FallbackWarning, match="KeyError"):
        assert float(f(jnp.float32(1.0), jnp.int32(0))) == 1.0
    with pytest.raises(KeyError):
        f(jnp.float32(1.0), jnp.int32(2))
    with pytest.raises(laxify.ConversionError, match="KeyError"):
        jax.jit(laxify.convert(missing_key_in_a_while_body))(jnp.float32(1.0), jnp.int32(0))


def for_else_raise_in_a_while_in_a_while_true(x, k, limit=0):
    s0 = 0.0
    n1 = 0
    while True:
        n1 += 1
        if n1 > limit:
            break
        n2 = 0
        while n2 < k:
            n2 += 1
            for i3 in range(2):
                s0 = s0 + x
            else:
                raise ValueError(f"fuzz r4 {s0}")
        return s0 + 1.0
    return s0


def test_fuzz_regression_for_else_raise_in_a_traced_while_inside_a_while_true():
    # The inner loop's return value came out of its body as "never observed" where the outer
    # loop carries an array: UnboundLocalError while tracing, where Python returns.
    breaks_at_once = for_else_raise_in_a_while_in_a_while_true
    for k in (0, 2):
        for route in _routes(breaks_at_once).values():
            assert float(route(jnp.float32(1.0), jnp.int32(k))) == breaks_at_once(jnp.float32(1.0), jnp.int32(k))
    check_like_python(lambda x, k: for_else_raise_in_a_while_in_a_while_true(x, k, 1),
                      (jnp.float32(1.5), jnp.int32(0)), (jnp.float32(1.5), jnp.int32(2)), prims=("while",))


# -- a helper that raises under a traced condition stops its caller ----------------------------

def positive_step(v):
    if v <= 0:
        raise ValueError(f"step must be positive, got {v}")
    return v


def steps_to_ten(x):
    step = positive_step(x)
    print("step", step)
    y = 0.0
    n = 0
    while y < 10.0:  # on the raising path the step is never observed: zeros would loop forever
        y = y + step
        n += 1
    return n


def steps_through_two_callers(x):
    return steps_to_ten(x) + 1


def test_a_helper_that_raises_stops_its_caller(capsys):
    check_like_python(steps_to_ten, (jnp.float32(2.5),), (jnp.float32(-1.0),), prims=("cond", "while"))
    check_like_python(steps_through_two_callers, (jnp.float32(4.0),), (jnp.float32(0.0),), prims=("cond", "while"))
    capsys.readouterr()
    with pytest.raises(ValueError, match=r"^step must be positive, got -1\.0$"):
        laxify.to_static(steps_to_ten)(jnp.float32(-1.0))
    assert capsys.readouterr().out == ""  # the caller's print after the call is not reached


def doubles_until_too_big(x, n):
    i = 0
    s = x
    while i < n:
        if s > 10.0:
            raise ValueError(f"too big {s}")
        s = s * 2.0
        i += 1
    return s


def test_checked_vmap_of_a_function_whose_while_holds_a_check():
    # checkify cannot functionalize a batched while loop holding a check (checkify of vmap of
    # while): `vmap_in_axes` maps outside the checks (vmap of checkify).
    f = laxify.checked(laxify.convert(doubles_until_too_big), vmap_in_axes=0)
    xs = jnp.array([1.0, 3.0, 0.5])
    good = jnp.array([2, 1, 1])
    expected = [float(doubles_until_too_big(x, n)) for x, n in zip(xs, good)]
    np.testing.assert_allclose(np.asarray(f(xs, good)), expected)
    with pytest.raises(ValueError) as info:
        f(xs, jnp.array([2, 3, 1]))
    assert_failed_element(info.value, "too big 12.0", 1)
    g = laxify.checked(laxify.convert(doubles_until_too_big), vmap_in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(g(xs, jnp.int32(1))), np.asarray(xs) * 2.0)
    with pytest.raises(ValueError) as info:
        g(xs, jnp.int32(4))
    assert_failed_element(info.value, "too big 12.0", 1)


def assert_failed_element(error: Exception, message: str, index: int):
    """The first failing element's exception; where JAX can batch the checks (0.11 on), with a
    note naming its index (JAX 0.10 maps the elements one after the other: no note)."""
    assert str(error) == message
    assert getattr(error, "__notes__", []) in ([], [f"(raised for the element at mapped index {index})"])


def nonzero(b):
    if b == 0:
        raise ZeroDivisionError("b is zero")
    return b


def raises_on_every_call(b):
    raise ZeroDivisionError(f"b is {b}")


def try_around_a_validator(a, b):
    try:
        nonzero(b)
        r = a / b
    except ZeroDivisionError:
        r = 0.0
    return r


def try_around_a_helper_that_always_raises_in_a_branch(a, b):
    r = a
    if a > 0:
        try:
            raises_on_every_call(b)
        except ZeroDivisionError:
            r = 0.0
    return r


def test_a_call_that_raises_where_an_except_may_catch_it_runs_eagerly():
    # A validator called in a `try`: never the handler's value for every input.
    for fn in (try_around_a_validator, try_around_a_helper_that_always_raises_in_a_branch):
        f = laxify.to_static(fn)
        for a, b in ((6.0, 3.0), (6.0, 0.0), (-1.0, 2.0)):
            args = (jnp.float32(a), jnp.float32(b))
            with pytest.warns(laxify.FallbackWarning, match="the function it calls raises"):
                np.testing.assert_allclose(f(*args), fn(*args))
            f.clear_cache()
        with pytest.raises(laxify.ConversionError, match="the function it calls raises"):
            jax.jit(laxify.convert(fn))(jnp.float32(6.0), jnp.float32(3.0))


# -- a caller with a bracketed call, whose every path raises ------------------------------------

def non_negative(v):
    if v < 0.0:
        raise NegativeError(v)
    return v + 0.5


def rejects_long_inputs(x):
    raise ValueError(f"too long: {x.shape[0]}")  # a static message: no traced value in it


def validates_then_rejects_long_inputs(x, a):
    u = 0.0
    if a > 0:
        u = non_negative(x[1])  # bracketed: the rest of the function runs under its flag
    if x.shape[0] > 3:
        rejects_long_inputs(x)
    return u + a


def test_a_bracketed_caller_whose_every_path_raises_returns_no_fillable():
    fn = validates_then_rejects_long_inputs
    short_bad, long_bad = jnp.array([1.0, -3.0, 2.0]), jnp.array([1.0, -3.0, 2.0, 4.0])
    short_good, long_good = jnp.array([1.0, 3.0, 2.0]), jnp.array([1.0, 3.0, 2.0, 4.0])
    one, minus_one = jnp.float32(1.0), jnp.float32(-1.0)
    # Before: checked(jit(convert)) raised "cannot access local variable '_lx_retval'" and
    # to_static fell back (the bracketed caller returned its never-set return value).
    check_like_python(fn, (short_good, one), (short_bad, one), (short_good, minus_one),
                      (long_bad, one), (long_good, one), (long_bad, minus_one), prims=("cond",))
    for route in _routes(fn).values():
        with pytest.raises(NegativeError, match=r"^bad value -3\.0$"):
            route(long_bad, one)
        with pytest.raises(ValueError, match=r"^too long: 4$"):
            route(long_good, one)


def validates_in_a_loop_then_handles_a_raise(x, a):
    u = 0.0
    for i in range(2):
        if a > 0:
            u = u + non_negative(x[i])
    try:
        rejects_long_inputs(x)
    except ValueError:
        u = u - 1.0
    return u + a


def test_a_raise_every_run_makes_after_a_check_is_still_caught_by_its_try():
    good, bad = jnp.array([1.0, 3.0]), jnp.array([1.0, -3.0])
    check_like_python(validates_in_a_loop_then_handles_a_raise, (good, jnp.float32(1.0)),
                      (bad, jnp.float32(1.0)), (bad, jnp.float32(-1.0)), prims=("cond",))


# -- a helper that raises, called inside a loop of its caller ----------------------------------

def check_sign(v):
    if v < 0:
        raise ValueError(f"bad {v}")
    return v


def sums_checked_items(x):
    s = 0.0
    for i in range(4):
        check_sign(x[i])
        print("checked", i, x[i])
        s = s + x[i]
    return s


def test_a_helper_that_raises_in_a_loop_stops_the_loop(capsys):
    good, bad, worse = jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([1.0, -2.0, 3.0, -4.0]), jnp.array([-5.0, 2.0, -3.0, 4.0])
    check_like_python(sums_checked_items, (good,), (bad,), (worse,), prims=("scan", "cond"))
    for route in _routes(sums_checked_items).values():
        capsys.readouterr()
        with pytest.raises(ValueError, match=r"^bad -2\.0$"):  # the first one Python raises
            route(bad)
        # The caller's print after the call does not happen from the iteration that raised on.
        assert capsys.readouterr().out == "checked 0 1.0\n"
    # The call is followed without a lax.cond in the loop body: the helper's own `raise` is
    # the only one (the code after it, under its return flag, is computed on every run).
    counts = primitive_counts(jaxpr_of(sums_checked_items, good))
    assert counts["cond"] == 1, counts


def validates_a_grid(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            for k in range(2):
                check_sign(x[i, j] + k)
                if x[i, j] > 1:
                    total = total + x[i, j]
                else:
                    total = total - 1.0
            if total > 100:
                total = total * 0.5
    return total


def test_a_helper_that_raises_in_three_nested_loops():
    # Following such a call with the return flag took 16 s to trace (0.08 s without it).
    good = jnp.arange(12.0).reshape(3, 4)
    bad = good.at[1, 2].set(-3.0).at[2, 0].set(-7.0)
    check_like_python(validates_a_grid, (good,), (bad,), prims=("scan",))


def counts_down_checked(x, n):
    i = 0
    s = x
    while i < n:
        check_sign(s)
        print("step", i)
        s = s - 1.0
        i += 1
    return s


def halves_until_small(x):
    steps = 0
    while x > 1.0:
        x = check_sign(x - 3.0) / 2.0  # where it raised, x is never observed: the loop must stop
        steps += 1
    return steps


def test_a_helper_that_raises_in_a_while_loop_stops_it(capsys):
    check_like_python(counts_down_checked, (jnp.float32(5.0), jnp.int32(3)), (jnp.float32(1.0), jnp.int32(4)),
                      prims=("while",))
    capsys.readouterr()
    for route in _routes(counts_down_checked).values():
        with pytest.raises(ValueError, match=r"^bad -1\.0$"):
            route(jnp.float32(1.0), jnp.int32(4))
        assert capsys.readouterr().out == "step 0\nstep 1\n"
    check_like_python(halves_until_small, (jnp.float32(20.0),), (jnp.float32(4.0),), prims=("while",))


def appends_checked_items(x):
    out = []
    for i in range(3):
        out.append(check_sign(x[i]) * 2.0)
    return jnp.stack(out)


def returns_first_big_checked(x):
    for i in range(3):
        if x[i] > 10.0:
            return check_sign(x[i] - 20.0)
    return x[0]


def test_a_helper_that_raises_in_a_loop_that_appends_or_returns():
    check_like_python(appends_checked_items, (jnp.array([1.0, 2.0, 3.0]),), (jnp.array([1.0, -2.0, 3.0]),))
    check_like_python(returns_first_big_checked, (jnp.array([1.0, 2.0, 3.0]),), (jnp.array([1.0, 22.0, 3.0]),),
                      (jnp.array([1.0, 12.0, 30.0]),))


def always_rejects(x):
    raise ValueError("rejected")  # a static message: raised while tracing where nothing came before


def validates_in_a_python_loop_then_always_rejects(x, a):
    u = 0.0
    for i in range(2):
        if a > 0:
            u = u + non_negative(x[i])
    always_rejects(x)
    return u + a


def test_a_raise_every_run_makes_after_a_check_in_a_loop_comes_second():
    # Python raises the validator's exception; the jit route must too, although the helper's
    # raise is met while tracing, before any run.
    fn = validates_in_a_python_loop_then_always_rejects
    good, bad = jnp.array([1.0, 3.0]), jnp.array([1.0, -3.0])
    for route in _routes(fn).values():
        with pytest.raises(NegativeError, match=r"^bad value -3\.0$"):
            route(bad, jnp.float32(1.0))
        with pytest.raises(ValueError, match=r"^rejected$"):
            route(good, jnp.float32(1.0))
        with pytest.raises(ValueError, match=r"^rejected$"):
            route(bad, jnp.float32(-1.0))


# -- a guard in a loop inside another loop: no lax.cond ----------------------------------------

def guards_each_item(x, n):
    for j in range(2):
        for i in range(4):
            if x[i] < 0:
                raise ValueError(f"item {i} is negative: {x[i]}")
            print("item", j, i)
            x = x * n
    return x


def guards_in_a_while(x):
    steps = 0
    for _ in range(2):
        while x > 1.0:
            if x > 100.0:
                raise OverflowError(f"too big after {steps} steps: {x}")
            x = x * 1.5 - 2.0  # where it raised, x is never observed: the loop must stop on the flag
            steps += 1
        x = x + 3.0
    return steps


def grid_guard(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            for k in range(2):
                if x[i, j] + k < 0:
                    raise ValueError(f"bad {x[i, j]} at {i}, {j}")
                total = total + x[i, j]
    return total


def test_a_guard_in_nested_loops_is_no_cond(capsys):
    # Its return flag made every enclosing loop trace its body again: 56 s to trace grid_guard's
    # like in three nested loops (0.28 s as a check and a flag).
    good, bad = jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([1.0, 2.0, 3.0, -4.0])
    check_like_python(guards_each_item, (good, jnp.float32(2.0)), (bad, jnp.float32(2.0)),
                      (good, jnp.float32(-1.0)), prims=("scan",))
    for route in _routes(guards_each_item).values():
        capsys.readouterr()
        with pytest.raises(ValueError, match=r"^item 3 is negative: -32\.0$"):  # the first failure's values
            route(bad, jnp.float32(2.0))
        assert capsys.readouterr().out == "item 0 0\nitem 0 1\nitem 0 2\n"
    counts = primitive_counts(jaxpr_of(guards_each_item, good, jnp.float32(2.0)))
    assert counts["cond"] == 0, counts
    check_like_python(guards_in_a_while, (jnp.float32(30.0),), (jnp.float32(90.0),), (jnp.float32(0.5),),
                      prims=("while",))
    assert primitive_counts(jaxpr_of(guards_in_a_while, jnp.float32(30.0)))["cond"] == 0
    grid = jnp.arange(12.0).reshape(3, 4)
    check_like_python(grid_guard, (grid,), (grid.at[1, 2].set(-3.0).at[2, 0].set(-7.0),), prims=("scan",))


class Checker:
    def check(self, v):
        if v < 0:
            raise ValueError(f"bad item {v}")
        return v

    def total(self, x):
        s = 0.0
        for i in range(3):
            self.check(x[i])
            print("method", i)
            s = s + x[i]
        return s


def applies_to_each(fn, x):
    s = 0.0
    for i in range(3):
        s = s + fn(x[i])
        print("value", i)
    return s


def applies_check_sign(x):
    return applies_to_each(check_sign, x)


def test_a_method_or_a_function_passed_as_a_value_that_raises_in_a_loop(capsys):
    good, bad = jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, -2.0, -3.0])
    checker = Checker()
    check_like_python(checker.total, (good,), (bad,), prims=("scan",))
    check_like_python(applies_check_sign, (good,), (bad,), prims=("scan",))
    for fn, text in ((checker.total, "method 0\n"), (applies_check_sign, "value 0\n")):
        for route in _routes(fn).values():
            capsys.readouterr()
            with pytest.raises(ValueError, match=r"^bad (item )?-2\.0$"):
                route(bad)
            assert capsys.readouterr().out == text
    # A function passed as a value that cannot raise leaves the loop as it was: no flag.
    closed = jax.make_jaxpr(laxify.convert(applies_to_each), static_argnums=0)(jnp.sin, good)
    scan = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
    assert [v.aval.dtype for v in scan.outvars].count(jnp.bool_) == 0


def halves_checked_sum_until_small(x):
    s = 0.0
    for i in range(3):
        s = s + check_sign(x[i])
    n = 0
    while True:  # left only by its return: not stopped by the flag, so still "always returns"
        n += 1
        s = s * 0.5
        if s < 1.0:
            return n


def guard_in_loops_in_a_while_true(x):
    n = 0
    while True:
        for i in range(2):
            for j in range(2):
                if x[i] < 0:  # keeps its return: the flag would not end the `while True`
                    raise ValueError(f"bad {x[i]}")
        n += 1
        x = x * 2.0
        if x[0] > 10.0:
            return n


def test_while_true_loops_with_a_call_or_guard_that_raises_in_loops():
    good, bad = jnp.array([4.0, 5.0, 6.0]), jnp.array([4.0, -5.0, 6.0])
    check_like_python(halves_checked_sum_until_small, (good,), (bad,), prims=("while",))
    check_like_python(guard_in_loops_in_a_while_true, (good,), (bad,), prims=("while",))


def validated_rnn(x, W, h):
    if jnp.any(jnp.isnan(x)):
        raise ValueError("the input holds NaN")
    for t in range(6):
        h = jnp.tanh(h @ W + x[t])
        if jnp.linalg.norm(h) > 1.5:
            raise FloatingPointError(f"diverged at step {t}")
        if jnp.linalg.norm(h) > 1.2:
            raise OverflowError(f"grew at step {t}")
    return h * 2


def test_the_code_after_a_raise_is_no_cond():
    # Only `raise`s set the return flag: the rest of the function and of each iteration after
    # a `raise` is computed on every run (nothing observes it where a check failed), so the
    # program holds the three `if`s the user wrote and no `lax.cond` around what follows them.
    x, W, h = jnp.full((6, 4), 0.1), jnp.eye(4) * 0.1, jnp.zeros(4)
    check_like_python(
        validated_rnn,
        (x, W, h),
        (x.at[1, 1].set(jnp.nan), W, h),
        (x.at[2].set(10.0), W, h),  # both checks fail at step 2: the first one is raised
        (x.at[3].set(0.75), W, h),  # only the second one fails, at step 3
        prims=("scan",),
    )
    assert primitive_counts(jaxpr_of(validated_rnn, x, W, h))["cond"] == 3
    assert "_lx.not_raised(" in laxify.to_static(validated_rnn).source
    with pytest.raises(FloatingPointError, match="^diverged at step 2$"):
        laxify.to_static(validated_rnn)(x.at[2].set(10.0).at[4].set(10.0), W, h)


def countdown(n):
    if n < 0:
        raise ValueError("n is negative")
    k = 0
    while n != 0:
        n = n - 1
        k += 1
    return k


def test_the_code_after_a_raise_keeps_its_cond_around_a_while():
    # Past the `raise`, `n` counts down from -2 for about 2**32 iterations: the `while` after
    # it keeps its guard.
    check_like_python(countdown, (jnp.int32(3),), (jnp.int32(-2),), prims=("while",))
    assert primitive_counts(jaxpr_of(countdown, jnp.int32(3)))["cond"] == 2


def early_return_and_raise(x):
    if x.sum() > 10:
        return x
    if jnp.any(x < 0):
        raise ValueError("negative")
    return x * 2


def test_a_function_with_an_early_return_keeps_its_guards():
    # A real `return` sets the flag too: what follows it must not be computed into the result.
    check_like_python(early_return_and_raise, (jnp.ones(3),), (jnp.full(3, 5.0),), (-jnp.ones(3),))
    assert "_lx.not_raised(" not in laxify.to_static(early_return_and_raise).source
