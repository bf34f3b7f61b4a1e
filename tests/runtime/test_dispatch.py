"""The runtime dispatcher (``_lx``): Python control flow for Python values, ``jax.lax`` for
traced ones, and the located two-sided errors where branches or carries disagree."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify.runtime import dispatch
from laxify.runtime.dispatch import Undefined
from laxify.runtime.lowering import Site

with open(__file__) as _fh:
    FILE_LINES = _fh.read().splitlines()


def line_of(marker: str) -> int:
    found = [k for k, text in enumerate(FILE_LINES, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


# The lines the sites below point at, as if this were the user's code.
def _user_code(x, xs):
    if x.sum() > 0:  # <if>
        y = x
    while x.sum() < 10:  # <while>
        x = x * 2
    for v in xs:  # <for>
        y = v
    return y


def site(construct: str, *names: str) -> Site:
    line = line_of(f"<{construct}>")
    return Site(construct, __file__, line, 4, names)


def primitives(fn, *args) -> set[str]:
    """Names of the top-level primitives of ``fn``'s jaxpr."""
    return {eqn.primitive.name for eqn in jax.make_jaxpr(fn)(*args).jaxpr.eqns}


# -- cond -------------------------------------------------------------------------------------

def test_cond_with_a_python_predicate_runs_only_the_taken_branch():
    calls = []

    def true_branch(a):
        calls.append("true")
        return (a + 1,)

    def false_branch(a):
        calls.append("false")
        return (a - 1,)

    assert dispatch.cond(True, (true_branch, false_branch), (10,), site("if", "y")) == (11,)
    assert dispatch.cond(0, (true_branch, false_branch), (10,), site("if", "y")) == (9,)
    assert calls == ["true", "false"]


def test_cond_with_a_python_index_picks_that_branch():
    branches = tuple((lambda k: lambda: (k,))(k) for k in range(3))
    assert dispatch.cond(2, branches, (), site("if", "y")) == (2,)
    assert dispatch.cond(np.int32(1), branches, (), site("if", "y")) == (1,)


def test_cond_with_a_python_predicate_keeps_python_values():
    out = dispatch.cond(True, (lambda: ("text", [1]), lambda: (None, None)), (), site("if", "a", "b"))
    assert out == ("text", [1])


def test_cond_with_a_traced_predicate_is_lax_cond():
    def f(x):
        return dispatch.cond(x.sum() > 0, (lambda a: (a * 2,), lambda a: (a - 1,)), (x,), site("if", "x"))

    assert "cond" in primitives(f, jnp.ones(2))
    np.testing.assert_allclose(jax.jit(f)(jnp.ones(2))[0], [2.0, 2.0])
    np.testing.assert_allclose(jax.jit(f)(-jnp.ones(2))[0], [-2.0, -2.0])


def test_cond_with_a_traced_index_is_lax_switch_and_clamps():
    def f(k):
        branches = tuple((lambda j: lambda: (jnp.float32(j),))(j) for j in range(3))
        return dispatch.cond(k, branches, (), site("if", "y"))[0]

    assert "cond" in primitives(f, 1)
    assert [float(jax.jit(f)(k)) for k in (0, 1, 2, 7, -3)] == [0.0, 1.0, 2.0, 2.0, 0.0]


def test_cond_joins_an_int_branch_and_a_float_branch_as_float32():
    def f(x):
        return dispatch.cond(x > 0, (lambda: (jnp.int32(1),), lambda: (jnp.float32(2.5),)), (), site("if", "y"))

    (out,) = jax.jit(f)(1.0)
    assert out.dtype == jnp.float32 and float(out) == 1.0
    (out,) = jax.jit(f)(-1.0)
    assert out.dtype == jnp.float32 and float(out) == 2.5


def test_cond_joins_a_python_number_with_an_array():
    def f(x):
        return dispatch.cond(x > 0, (lambda: (0,), lambda: (jnp.float32(2.5),)), (), site("if", "y"))

    (out,) = jax.jit(f)(1.0)
    assert out.dtype == jnp.float32 and float(out) == 0.0


def test_cond_branch_shape_mismatch_is_a_located_error():
    def f(x):
        return dispatch.cond(x.sum() > 0, (lambda: (jnp.zeros(2),), lambda: (jnp.zeros(3),)), (),
                             site("if", "y"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(jnp.ones(2))
    line = line_of("<if>")
    assert str(info.value) == "\n".join([
        "`y` has a different shape on the two sides of this `if` on a traced value:",
        "  true branch   vs  false branch",
        "    y: float32[2]  vs  float32[3]  <- differs",
        f'  File "{__file__}", line {line}',
        "    if x.sum() > 0:  # <if>",
        "    ^",
        "Revise the code so that `y` keeps one shape on every path (pad or reshape it, or give it "
        "its final shape before the control flow).",
    ])


def test_cond_pytree_mismatch_names_the_leaf_path():
    def f(x):
        return dispatch.cond(x > 0, (lambda: ({"a": jnp.zeros(2), "b": jnp.zeros(())},),
                                     lambda: ({"a": jnp.zeros(4), "b": jnp.zeros(())},)), (),
                             site("if", "state"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(1.0)
    message = str(info.value)
    assert "    state['a']: float32[2]  vs  float32[4]  <- differs" in message
    assert "    state['b']: float32[]  vs  float32[]\n" in message


def test_cond_output_undefined_in_one_branch_is_a_located_error():
    def f(x):
        return dispatch.cond(x.sum() > 0, (lambda: (x,), lambda: (Undefined("y"),)), (), site("if", "y"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(jnp.ones(2))
    message = str(info.value)
    assert message.startswith(
        "`y` is defined in the other branch of this `if` on a traced value, but not in the false "
        "branch, and it is used after the `if`.")
    assert f'line {line_of("<if>")}' in message
    assert message.endswith("Assign `y` before the `if` or in every branch, so that it has a value "
                            "whichever branch runs.")


def test_cond_python_object_output_on_a_traced_predicate_is_an_error():
    def f(x):
        return dispatch.cond(x > 0, (lambda: ("a",), lambda: ("b",)), (), site("if", "label"))

    with pytest.raises(laxify.ConversionError, match="`label` is a Python str in the true branch"):
        jax.jit(f)(1.0)


def test_cond_on_a_non_scalar_traced_predicate_is_an_error():
    def f(x):
        return dispatch.cond(x > 0, (lambda: (x,), lambda: (-x,)), (), site("if", "y"))

    with pytest.raises(laxify.ConversionError, match=r"is an array of shape \(2,\), not a scalar"):
        jax.jit(f)(jnp.ones(2))


def test_cond_branches_do_not_share_mutated_containers():
    def true_branch(d):
        d["k"] = d["k"] + 1
        return (d,)

    def f(x):
        return dispatch.cond(x > 0, (true_branch, lambda d: (d,)), ({"k": x},), site("if", "d"))

    assert float(jax.jit(f)(1.0)[0]["k"]) == 2.0
    assert float(jax.jit(f)(-1.0)[0]["k"]) == -1.0


# -- while ------------------------------------------------------------------------------------

def test_while_with_python_values_is_a_python_loop():
    calls = []

    def body(i, acc):
        calls.append(i)
        return i + 1, acc + [i]

    out = dispatch.while_loop(lambda i, acc: i < 3, body, (0, []), (0,), site("while", "i", "acc"))
    assert out == (3, [0, 1, 2])
    assert calls == [0, 1, 2]
    assert type(out[0]) is int


def test_while_with_a_traced_predicate_is_lax_while_loop():
    def f(x):
        return dispatch.while_loop(lambda v: v.sum() < 10, lambda v: (v * 2,), (x,), (x,), site("while", "x"))

    assert "while" in primitives(f, jnp.ones(2))
    np.testing.assert_allclose(jax.jit(f)(jnp.ones(2))[0], [8.0, 8.0])


def test_while_whose_python_counter_meets_a_traced_exit_becomes_traced():
    # `deps` are Python values, but the condition reads a traced closure value.
    def f(limit):
        return dispatch.while_loop(lambda i: i < limit, lambda i: (i + 1,), (0,), (0,), site("while", "i"))

    assert "while" in primitives(f, 5)
    (out,) = jax.jit(f)(5)
    assert int(out) == 5


def test_while_carry_shape_change_is_a_located_error():
    def f(x):
        return dispatch.while_loop(lambda v: v.sum() < 10, lambda v: (jnp.concatenate([v, v]),), (x,), (x,),
                                   site("while", "x"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(jnp.ones(2))
    message = str(info.value)
    assert message.startswith("`x` has a different shape on the two sides of this `while` loop:")
    assert "  before the loop      vs  after one iteration" in message
    assert "    x: float32[2]  vs  float32[4]  <- differs" in message
    assert f'line {line_of("<while>")}' in message
    assert "Revise the code so that `x` keeps one shape on every path" in message


def test_while_carry_dtype_change_of_an_array_is_a_located_error():
    def f(x):
        return dispatch.while_loop(lambda v: v < 10, lambda v: (v * 1.5,), (x,), (x,), site("while", "x"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(jnp.int32(1))
    message = str(info.value)
    assert message.startswith("`x` is int32[] before this `while` loop and weak float32[] after one "
                              "iteration; a carried array keeps the dtype it enters the loop with")
    assert "`x = jnp.asarray(x, jnp.float32)`" in message


def test_while_python_number_carry_is_widened():
    def f(x):
        return dispatch.while_loop(lambda a: a < 10.0, lambda a: (a + x,), (0,), (0,), site("while", "a"))

    (out,) = jax.jit(f)(jnp.float32(2.5))
    assert out.dtype == jnp.float32 and float(out) == 10.0


def test_while_undefined_carry_is_unbound_when_the_loop_runs_zero_times():
    def f(x):
        return dispatch.while_loop(lambda v, y: v.sum() < 10, lambda v, y: (v * 2, v), (x, Undefined("y")),
                                   (x,), site("while", "x", "y"))

    run = laxify.checked(f)
    v, y = run(jnp.ones(2))  # 1, 2, 4, 8: y is the last v before the doubling that ends it
    np.testing.assert_array_equal(y, [4.0, 4.0])
    with pytest.raises(UnboundLocalError, match="^cannot access local variable 'y' where it is not"):
        run(jnp.full(2, 20.0))


# -- for_range --------------------------------------------------------------------------------

@pytest.mark.parametrize("bounds", [(0, 5, 1), (2, 9, 3), (5, 0, -2), (3, 3, 1), (4, 0, 1)])
def test_for_range_static_bounds_python_carries_stays_python(bounds):
    seen = []

    def body(i, acc):
        seen.append(i)
        return (acc + i,)

    out = dispatch.for_range(*bounds, body, (0,), (0,), site("for", "acc"))
    assert out == (sum(range(*bounds)),)
    assert type(out[0]) is int
    assert seen == list(range(*bounds))


@pytest.mark.parametrize("bounds", [(0, 5, 1), (2, 9, 3), (5, 0, -2), (3, 3, 1)])
def test_for_range_static_bounds_array_carries_is_scan(bounds):
    def f(x):
        return dispatch.for_range(*bounds, lambda i, a: (a + i,), (x,), (x,), site("for", "acc"))[0]

    if len(range(*bounds)):
        assert "scan" in primitives(f, 0.0)
    assert float(jax.jit(f)(0.5)) == 0.5 + sum(range(*bounds))


@pytest.mark.parametrize("bounds", [(0, 5, 1), (2, 9, 3), (5, 0, -2), (3, 3, 1), (4, 0, 1)])
def test_for_range_traced_bounds_is_fori_loop(bounds):
    def f(start, stop, step):
        return dispatch.for_range(start, stop, step, lambda i, a: (a + i,), (0,), (0,), site("for", "acc"))[0]

    assert "while" in primitives(f, *bounds)
    assert int(jax.jit(f)(*bounds)) == sum(range(*bounds))


def test_for_range_python_index_keeps_a_python_loop_over_arrays():
    indexes = []

    def body(i, a):
        indexes.append(type(i))
        return (a + a[:i].sum(),)

    def f(x):
        return dispatch.for_range(0, 3, 1, body, (x,), (x,), site("for", "x"),
                                  python_index="the index `i` is a slice bound")[0]

    assert "scan" not in primitives(f, jnp.ones(3))
    assert set(indexes) == {int}
    x = np.ones(3, np.float32)
    expected = x.copy()
    for i in range(3):
        expected = expected + expected[:i].sum()
    np.testing.assert_allclose(jax.jit(f)(x), expected)


def test_for_range_python_index_with_traced_bounds_is_a_located_error():
    def f(n):
        return dispatch.for_range(0, n, 1, lambda i, a: (a,), (0.0,), (), site("for", "x"),
                                  python_index="the index `i` is a slice bound")

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(3)
    message = str(info.value)
    assert message.startswith("This loop's bounds are traced, but its index must be a Python int "
                              "because the index `i` is a slice bound.")
    assert "lax.dynamic_slice" in message


def test_for_range_static_bounds_carry_shape_change_unrolls_in_python():
    # DESIGN §5: a static loop whose carried shapes change per iteration stays a Python loop.
    def f(x):
        return dispatch.for_range(0, 3, 1, lambda i, a: (jnp.append(a, i),), (x,), (x,), site("for", "acc"))[0]

    assert "scan" not in primitives(f, jnp.zeros(1))
    np.testing.assert_allclose(jax.jit(f)(jnp.zeros(1)), [0.0, 0.0, 1.0, 2.0])


def test_for_range_traced_bounds_carry_shape_change_is_a_located_error():
    def f(n, x):
        return dispatch.for_range(0, n, 1, lambda i, a: (jnp.append(a, i),), (x,), (x,), site("for", "acc"))

    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(f)(3, jnp.zeros(1))
    message = str(info.value)
    assert message.startswith("`acc` has a different shape on the two sides of this `for` loop:")
    assert "  before the loop      vs  after one iteration" in message
    assert "    acc: float32[1]  vs  float32[2]  <- differs" in message
    assert f'line {line_of("<for>")}' in message
    assert "Revise the code so that `acc` keeps one shape on every path" in message


def test_for_range_traced_bounds_undefined_carry_is_unbound_when_the_loop_runs_zero_times():
    def f(n):
        return dispatch.for_range(0, n, 1, lambda i, a, last: (a + i, i), (0, Undefined("i")), (),
                                  site("for", "acc", "i"))

    run = laxify.checked(f)
    assert [int(v) for v in run(jnp.int32(3))] == [3, 2]
    with pytest.raises(UnboundLocalError, match="^cannot access local variable 'i' where it is not"):
        run(jnp.int32(0))


def test_for_range_static_nonempty_loop_target_carried_after_the_loop():
    # `for i in range(3): x = x + i` then `return x, i`: `i` enters the loop undefined.
    def f(x):
        return dispatch.for_range(0, 3, 1, lambda i, a, last: (a + i, i), (x, Undefined("i")), (x,),
                                  site("for", "x", "i"))

    x, i = jax.jit(f)(jnp.zeros(2))
    assert int(i) == 2
    np.testing.assert_allclose(x, [3.0, 3.0])


# -- for_each ---------------------------------------------------------------------------------

def test_for_each_nonempty_array_loop_target_carried_after_the_loop():
    def f(xs):
        return dispatch.for_each(xs, lambda v, s, last: (s + v, v), (0.0, Undefined("v")), (0.0,),
                                 site("for", "s", "v"))

    s, last = jax.jit(f)(jnp.arange(3.0))
    assert (float(s), float(last)) == (3.0, 2.0)


def test_for_each_over_a_list_is_a_python_loop():
    seen = []

    def body(item, acc):
        seen.append(item)
        return (acc + [item],)

    assert dispatch.for_each(["a", "b"], body, ([],), (), site("for", "acc")) == (["a", "b"],)
    assert seen == ["a", "b"]


def test_for_each_over_an_array_is_scan():
    def f(xs):
        init = jnp.zeros(2)
        return dispatch.for_each(xs, lambda row, acc: (acc + row,), (init,), (init,), site("for", "acc"))[0]

    assert "scan" in primitives(f, jnp.ones((3, 2)))
    np.testing.assert_allclose(jax.jit(f)(jnp.arange(6.0).reshape(3, 2)), [6.0, 9.0])


def test_for_each_over_a_numpy_array_is_scan_too():
    def f(acc):
        return dispatch.for_each(np.arange(4.0), lambda v, a: (a + v,), (acc,), (acc,), site("for", "acc"))[0]

    assert "scan" in primitives(f, 0.0)


def test_for_each_over_an_empty_array_returns_the_initial_carries():
    assert dispatch.for_each(jnp.zeros((0, 2)), lambda v, a: (a + 1,), (5,), (), site("for", "acc")) == (5,)


def test_for_each_over_a_zero_d_array_raises_like_python():
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        dispatch.for_each(jnp.float32(1.0), lambda v, a: (a,), (0,), (), site("for", "acc"))


def test_for_each_carry_shape_change_unrolls_in_python():
    def f(xs):
        return dispatch.for_each(xs, lambda v, a: (jnp.concatenate([a, v[None]]),), (jnp.zeros(1),), (),
                                 site("for", "acc"))[0]

    assert "scan" not in primitives(f, jnp.ones(3))
    np.testing.assert_allclose(jax.jit(f)(jnp.arange(1.0, 4.0)), [0.0, 1.0, 2.0, 3.0])


# -- Undefined --------------------------------------------------------------------------------

@pytest.mark.parametrize("use", [
    lambda u: u + 1,
    lambda u: 1 - u,
    lambda u: bool(u),
    lambda u: u[0],
    lambda u: u.shape,
    lambda u: list(u),
    lambda u: u(),
    lambda u: u < 2,
    lambda u: jnp.asarray(u),
    lambda u: u == 1,
    lambda u: u != 1,
    lambda u: str(u),
], ids=["add", "rsub", "bool", "index", "attribute", "iterate", "call", "compare", "asarray", "eq", "ne",
        "str"])
def test_undefined_raises_unbound_local_error_on_use(use):
    u = Undefined("z", site("if", "z"))
    with pytest.raises(UnboundLocalError, match=r"cannot access local variable 'z' where it is not associated"):
        use(u)


def test_undefined_has_a_readable_repr():
    assert repr(Undefined("z")) == "<undefined z>"


# -- and / or / not ---------------------------------------------------------------------------

def test_or_of_traced_numbers_selects_the_operand():
    f = jax.jit(lambda x: dispatch.or_(x, lambda: 5.0))
    assert f(jnp.float32(0.0)) == 5.0 and f(jnp.float32(2.0)) == 2.0
    assert f(jnp.float32(0.0)).dtype == jnp.float32


def test_and_of_traced_booleans_is_logical_and():
    f = lambda a, b: dispatch.and_(a > 0, lambda: b > 0)  # noqa: E731
    assert primitives(f, 1.0, 2.0) >= {"and"} and "select_n" not in primitives(f, 1.0, 2.0)


def test_and_chain_with_a_python_operand_in_a_condition_stops_there():
    def f(x):
        return dispatch.and_(x > 0, lambda: None, lambda: 1 > None, condition=True)

    assert jax.jit(f)(jnp.float32(1.0)) == False  # noqa: E712 - a traced boolean


def test_python_operand_decides_a_nested_test_as_a_python_bool():
    out = []
    jax.jit(lambda x: out.append(dispatch.or_(x > 0, lambda: True, truth_only=True)) or x)(1.0)
    assert out == [True] and type(out[0]) is bool


def test_and_of_a_traced_value_and_none_as_a_value_is_a_located_error():
    with pytest.raises(laxify.ConversionError, match=r"`and`.*`None`"):
        jax.jit(lambda x: dispatch.and_(x, lambda: None))(1.0)


def test_not_of_a_size1_array_is_a_scalar_and_a_larger_one_an_error():
    assert jax.jit(dispatch.not_)(jnp.zeros(1)).shape == ()
    with pytest.raises(laxify.ConversionError, match=r"shape \(2,\)"):
        jax.jit(dispatch.not_)(jnp.zeros(2))


# -- print ------------------------------------------------------------------------------------

def test_format_of_python_values_is_the_string():
    assert dispatch.printing.format_("{0:.2f}|{1!r}", 1.5, "a") == "1.50|'a'"


def test_print_runs_python_print_with_its_arguments_on_every_run(capsys):
    import io
    buffer = io.StringIO()

    @jax.jit
    def f(x):
        dispatch.print_("a", dispatch.printing.format_("{0:.1f}", x), x, sep="|", end="!\n")
        dispatch.print_("to file", file=buffer, end="")
        return x

    f(jnp.float32(1.5))
    f(jnp.float32(2.0))
    jax.effects_barrier()
    assert capsys.readouterr().out == "a|1.5|1.5!\na|2.0|2.0!\n"
    assert buffer.getvalue() == "to fileto file"


def test_print_checks_sep_and_end_as_python_does():
    with pytest.raises(TypeError, match="sep must be None or a string, not int"):
        dispatch.print_("a", sep=1)


# -- `elif` chains ----------------------------------------------------------------------------

def _arms(*conditions):
    """Arms of ``elif_chain`` (first condition a value, later ones thunks, then the else) whose
    branches return their index; ``seen`` records which later conditions were evaluated."""
    seen = []

    def thunk(k, value):
        def run():
            seen.append(k)
            return value() if callable(value) else value
        return run

    arms = [(conditions[0], lambda: (0,))]
    arms += [(thunk(k, c), (lambda k=k: (k,))) for k, c in enumerate(conditions[1:], 1)]
    arms.append((None, lambda: (len(conditions),)))
    return tuple(arms), seen


def chain_site() -> Site:
    s = site("if", "y")
    return Site(s.construct, s.filename, s.line, s.col, s.names,
                tuple(f"arm {k}" for k in range(4)), (s.line,) * 4)


def test_elif_chain_of_python_conditions_stops_at_the_first_true_one():
    arms, seen = _arms(False, True, False)
    assert dispatch.elif_chain(arms, (), chain_site()) == (1,)
    assert seen == [1]
    arms, seen = _arms(False, False, False)
    assert dispatch.elif_chain(arms, (), chain_site()) == (3,)
    assert seen == [1, 2]


@pytest.mark.parametrize(("values", "expected"), [
    ((True, True, True), 0), ((False, True, True), 1), ((False, False, True), 2), ((False, False, False), 3),
])
def test_elif_chain_of_traced_conditions_is_one_switch(values, expected):
    def f(p):
        arms, _ = _arms(p[0], lambda: p[1], lambda: p[2])
        return dispatch.elif_chain(arms, (), chain_site())[0]

    assert int(jax.jit(f)(jnp.asarray(values))) == expected
    assert "cond" in primitives(f, jnp.asarray(values))


def test_elif_chain_leaves_python_false_arms_out_and_stops_at_a_python_true_one():
    traced = []

    def f(p):
        arms, seen = _arms(p[0], False, True, lambda: p[1])
        traced.append(seen)
        out = dispatch.elif_chain(arms, (), chain_site())[0]
        return out

    jaxpr = jax.make_jaxpr(f)(jnp.asarray([False, True]))
    (switch,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "cond"]
    assert len(switch.params["branches"]) == 2  # arm 0 (traced) and arm 2 (Python true)
    assert traced == [[1, 2]]  # the condition after the Python true one is not evaluated
    assert int(jax.jit(f)(jnp.asarray([False, True]))) == 2
    assert int(jax.jit(f)(jnp.asarray([True, True]))) == 0


def test_iterable_is_laxify_s_only_for_the_builtin():
    import builtins

    from laxify.runtime import iterables

    assert dispatch.iterable(builtins.enumerate) is iterables.enumerate_
    assert dispatch.iterable(builtins.zip) is iterables.zip_
    assert dispatch.iterable(builtins.reversed) is iterables.reversed_
    mine = lambda xs: [xs]  # noqa: E731
    assert dispatch.iterable(mine) is mine


def test_for_range_with_a_shadowed_range_iterates_it_as_written():
    calls = []

    def my_range(*args):
        calls.append(args)
        return [5, 7]

    out = dispatch.for_range(0, jnp.int32(3), 1, lambda i, a: (a + i,), (jnp.float32(0),), (), site("for", "acc"),
                             range_fn=my_range, range_args=1)
    assert float(out[0]) == 12.0 and len(calls) == 1 and len(calls[0]) == 1


def test_reverse_gate_error_after_its_site_is_freed():
    # JAX's caches may keep a jaxpr (and the gate's parameter) after the converted function
    # and its sites are gone: reverse mode still gets the located error, with its fix.
    import gc

    from laxify.runtime.dispatch import loops, reverse_gate

    site = Site("while", "user_module.py", 7, 4, names=("x",))
    loop = reverse_gate._Loop(site, "while", loops._no_reverse_error)
    expected = str(loop.error())
    del site
    gc.collect()
    error = loop.error()
    assert isinstance(error, reverse_gate.ReverseModeError)
    assert (error.location.filename, error.location.line, error.location.col) == ("user_module.py", 7, 4)
    assert "max_iters" in error.fix
    assert str(error) == expected
