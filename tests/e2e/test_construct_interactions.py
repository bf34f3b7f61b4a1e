"""Small programs in which several constructs interact (loops and branches writing lists,
closures over loop targets, flags left by compiled loops, validators called in loops): eager
Python, ``to_static`` and ``jax.jit(convert)`` agree, and the traced constructs become lax
primitives."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from harness import CASE_FIELDS, case, check

X = jnp.array([1.0, 2.0, 3.0], jnp.float32)


def index_write_in_scanned_loop_with_break(x, a):
    lst = [a, 0.5]
    for i in range(3):
        lst[0] = x[i]
        if x[i] > a:
            break
    return lst[0]


def branch_assigns_a_name_the_loop_body_assigns_later(x, k):
    s0 = 0.0
    acc = []
    for v in x:
        acc.append(v)
        if k == 0:
            s0 = 1.0
        s0 = 0.0
    return jnp.stack(acc) + s0


def print_order_across_a_traced_branch(x, a):
    if a > 0:
        print("in", a)
    print("after", x)
    return x


def closure_over_loop_target_under_traced_if(x, a):
    if 0.0 < a:
        for e in x:
            def g(z):
                return z + e
    return x * 2


def list_index_write_in_inner_loop_of_appending_loop(x, a):
    lst = [x[0], 0.5]
    acc = []
    for _ in x:
        acc.append(a)
        if a < 0.0:
            for j, e in enumerate(x):
                lst[0] = e * 0.0
    return jnp.stack(acc), lst[0]


def list_index_write_after_break_in_inner_while(x):
    s = 0.0
    lst = [x[0], 0.5]
    for e in x:
        s = s + e
        n = 0
        while True:
            n += 1
            if n > 0:
                break
            lst[0] = 0.0
            return x
    return x * s


def closure_over_the_target_of_a_traced_range_loop(x, k):
    acc = x
    for i1 in range(k):
        g2 = lambda z: jnp.float32(i1)  # noqa: E731 (the closure makes `i1` a cell)
        acc = acc + g2(0)
    return acc


def list_method_call_in_a_branch_keeps_the_lists_traced_items(x, k):
    # `lst.pop()` is a statement that changes `lst`: what `lst` holds after it is known
    # while tracing only when its items are (it was taken for a Python value, so the
    # traced comparison of `lst[0]` stayed a Python `if`).
    lst = [x[0], 0.5]
    n3 = 0
    while x[0] > 0 and n3 < 0:
        return lst[-1]
    lst.pop()
    n4 = 0
    while n4 < k:
        if -4.0 < (-2.5 - lst[0]) <= -1.0:
            return x[-1]
        n4 += 1
    return x[0]


def validator_in_a_loop_then_a_bare_tuple_return(x, a):
    s = 0.0
    for v in x:
        def check(u):
            if u < -1.0:
                raise ValueError(f"bad {u}")
            return u + 0.5
        s = s + check(v * a)
    return s, x  # a tuple without parentheses: the raised flag's wrapper must keep it one value


CASES = [
    case(list_method_call_in_a_branch_keeps_the_lists_traced_items,
         (X, jnp.int32(2)), (jnp.array([-2.0, 1.0, 0.5], jnp.float32), jnp.int32(2)),
         (jnp.array([2.0, 1.0, 0.5], jnp.float32), jnp.int32(0)), prims={"cond", "while"}),
    case(closure_over_the_target_of_a_traced_range_loop, (X, jnp.int32(3)), (X, jnp.int32(0)),
         prims={"while"}),
    case(closure_over_loop_target_under_traced_if, (X, jnp.float32(1.0)), (X, jnp.float32(-1.0)),
         prims={"cond", "scan"}),
    case(list_index_write_in_inner_loop_of_appending_loop, (X, jnp.float32(1.0)), (X, jnp.float32(-1.0)),
         prims={"cond", "scan"}),
    case(list_index_write_after_break_in_inner_while, (X,), prims={"cond", "scan", "while"}),
    case(index_write_in_scanned_loop_with_break, (X, jnp.float32(0.5)), (X, jnp.float32(9.0)),
         prims={"scan", "cond"}),
    case(branch_assigns_a_name_the_loop_body_assigns_later, (X, jnp.int32(0)), (X, jnp.int32(1)),
         prims={"scan", "cond"}),
    case(print_order_across_a_traced_branch, (X, jnp.float32(1.0)), (X, jnp.float32(-1.0)),
         prims={"cond"}),
    # `return s, x` without parentheses stays one tuple when the raised flag's wrapper takes it
    case(validator_in_a_loop_then_a_bare_tuple_return, (X, jnp.float32(1.0)), (X, jnp.float32(0.0)),
         prims={"scan", "cond"}),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_interacting_constructs_agree_with_eager_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


# -- a name read in a branch that never runs, before the enclosing function assigns it ---------

def read_before_the_function_assigns_it_in_an_untaken_branch(x):
    if x.sum() > 100:
        y = s0 + 1  # noqa: F821, F841 (eager Python never runs this line on these inputs)
    s0 = x
    return s0 * 2


def closure_variable_read_in_a_branch_of_a_scanned_loop(x, n):
    t = 0.0
    for i in range(n):
        for v in x:
            if v > 5:
                if v > 6:
                    s0 = s0 + v  # noqa: F821
            t = t + v
        s0 = t
        g = lambda: s0  # noqa: E731 (the closure makes `s0` a cell of the function)
        t = t + g()
    return t


@pytest.mark.parametrize("fn, args", [
    (read_before_the_function_assigns_it_in_an_untaken_branch, (X,)),
    (closure_variable_read_in_a_branch_of_a_scanned_loop, (X, jnp.int32(2))),
])
def test_a_branch_reading_a_name_with_no_value_is_a_located_unbound_local_error(fn, args):
    """A traced branch (all branches are traced) reads a name the function assigns only later:
    the name's stand-in says, at the user's line, that it has no value there (not a
    `NameError: cannot access free variable` from generated code)."""
    import laxify

    with pytest.raises(UnboundLocalError) as info:
        laxify.to_static(fn)(*args)
    message = str(info.value)
    assert "cannot access local variable 's0'" in message and "free variable" not in message
    assert f'File "{__file__}"' in message and "s0 + " in message


# -- `-flag` after a loop that the split fallback compiled -----------------------------------------

def negated_flag_after_a_compiled_loop_in_a_split_run(a, k):
    grown = []
    w = 0
    while w < k:  # a list grown to a traced length: the function runs split, eagerly
        grown.append(a)
        w += 1
    done = False
    n = 0
    while done is False and n < 1:  # compiled by the split run: `done` is a concrete bool array
        n += 1
        if 0.0 < a:
            done = True
    return len(grown) + (-done) + (~done)


@pytest.mark.parametrize("a, k", [(0.0, 0), (1.0, 0), (1.0, 2), (-1.0, 3)])
def test_negated_flag_after_a_compiled_loop_in_a_split_run_is_pythons_int(a, k):
    """`-done` on the bool array that a loop compiled by the split fallback left in `done` gives
    Python's int (`-True == -1`, `~True == -2`), not JAX's `neg does not accept dtype bool`."""
    import warnings

    import laxify

    args = (jnp.float32(a), jnp.int32(k))
    expected = negated_flag_after_a_compiled_loop_in_a_split_run(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        actual = laxify.to_static(negated_flag_after_a_compiled_loop_in_a_split_run)(*args)
    assert int(actual) == expected


# -- `flag is not False` after a loop that the split fallback compiled -----------------------------

def identity_of_a_flag_after_a_compiled_loop_in_a_split_run(y, k):
    c0 = 0
    for _ in range(k):  # traced bounds, and a comprehension over an array: the run is split
        kept = [v for v in y if v > 1]
        done = False
        n = 0
        while done is False and n < 1:  # compiled by the split run: `done` is a concrete bool array
            n += 1
            if k % 2 == 0:
                done = True
        c0 = n + int(done is not False) + len(kept)
    return c0


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_identity_of_a_flag_after_a_compiled_loop_in_a_split_run_is_pythons(k):
    """`done is not False` on the bool array that a loop compiled by the split fallback left in
    `done` is the Python bool's identity (an array is never the False singleton, which would give
    2 where Python returns 1, a wrong value under the FallbackWarning)."""
    import warnings

    import laxify

    args = (jnp.array([0, 2, 0, 3], jnp.int32), jnp.int32(k))
    expected = identity_of_a_flag_after_a_compiled_loop_in_a_split_run(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        actual = laxify.to_static(identity_of_a_flag_after_a_compiled_loop_in_a_split_run)(*args)
    assert int(actual) == expected


def test_a_validator_in_a_loop_before_a_bare_tuple_return_raises_as_python():
    """The same function on an input Python rejects: the user's ValueError, with its value."""
    import laxify

    args = (X, jnp.float32(-1.0))
    with pytest.raises(ValueError, match="bad -2.0"):
        validator_in_a_loop_then_a_bare_tuple_return(*args)
    with pytest.raises(ValueError, match="bad -2.0"):
        laxify.to_static(validator_in_a_loop_then_a_bare_tuple_return)(*args)


# -- a helper that raises on every input, called after a call that may raise ----------------------
# (the helper's scan is traced again in the program, so that its check is not lost with a probe)

def raises_in_its_loop(q):
    for _ in q:
        raise ValueError("always")
    return 0.0


def validator_then_a_helper_that_always_raises(x):
    def check(v):
        if v < -1.0:
            raise ValueError(f"bad {v}")
        return v + 0.5
    check(x[0])
    return raises_in_its_loop(x)


def test_a_helper_that_always_raises_after_a_validator_raises_as_python():
    import laxify

    x = jnp.zeros(4, jnp.float32)
    with pytest.raises(ValueError, match="always"):
        validator_then_a_helper_that_always_raises(x)
    with pytest.raises(ValueError, match="always"):
        laxify.to_static(validator_then_a_helper_that_always_raises)(x)
    with pytest.raises(ValueError, match="always"):
        laxify.checked(jax.jit(laxify.convert(validator_then_a_helper_that_always_raises)))(x)


# -- the lines of the statements after a call that may raise in a loop --------------------------
# (the loop is rebuilt to stop on the raised flag; its statements keep their positions, so a
# FallbackWarning names the statement's line, not the loop's)

def validator_then_a_string_in_a_loop(x):
    c0 = 0
    for _ in x:
        def check(v):
            if v < -1.0:
                raise ValueError(f"bad {v}")
            return v + 0.5
        check(0.0)
        c0 = c0 + len(str(jnp.sum(x)))
    return c0


def test_a_statement_after_a_validator_in_a_loop_keeps_its_line():
    import inspect
    import warnings

    import laxify

    lines, first = inspect.getsourcelines(validator_then_a_string_in_a_loop)
    line = first + next(k for k, text in enumerate(lines) if "len(str(" in text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert laxify.to_static(validator_then_a_string_in_a_loop)(jnp.ones(3)) == 9
    assert [w.lineno for w in caught if issubclass(w.category, laxify.FallbackWarning)] == [line]
