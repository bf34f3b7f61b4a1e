"""Two names (or two places) that refer to one list or dict, across a traced construct
(runtime/effects.py ``sharing``/``relink``, docs/semantics.md "Python objects"). A lax primitive
flattens its values, so the names would come out of a `cond`, a loop or a compiled segment of a
split run as separate lists, and a later change through one would not be seen through the other;
the sharing is restored after the construct. Oracle: the function run eagerly on the same
arrays, on inputs that take every path; ``to_static`` must agree (compiled, or falling back with
its warning), and ``jax.jit(convert)`` must agree or give a located error, never another value."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import control_flow_prims, jaxpr_of


# -- shared on every path: converted, one object after the construct -----------------------------
def shared_in_both_branches(x, a):
    if a > 0:
        lst = [x[0]]
        al = lst
    else:
        lst = [x[1]]
        al = lst
    al[0] = 7.0
    return lst[0]


def shared_through_a_while(x, k):
    lst = [x[0]]
    al = lst
    i = 0
    while i < k:
        lst = [lst[0] + 1.0]
        al = lst
        i += 1
    al[0] = al[0] * 10
    return lst[0]


def alias_changed_in_a_branch(x, a):
    lst = [x[0], x[1]]
    al = lst
    if a > 0:
        al[1] = al[1] * 3.0
    return lst[1]


def alias_changed_in_a_loop_in_a_branch(x, a, k):
    lst = [x[0], 0.5]
    al = lst
    if a > 0:
        for i in range(k):
            al[0] = al[0] + 1.0
    return lst[0]


# -- shared on one path only: Python (to_static's fallback), a located error under jit -----------
def shared_on_one_path(x, a):
    lst = [x[2]]
    al = [x[2]]
    if a > 0:
        lst = [x[0]]
        al = lst
    al[0] = 7.0
    return lst[0]


def shared_after_some_iterations(x, k):
    row = [x[0]]
    grid = [row, [x[1]]]
    for i in range(k):
        row = [x[0] + i]
        grid = [row, row]
    grid[0][0] = 9.0
    return grid[1][0]


def replaced_on_one_path(x, a):
    lst = [x[0]]
    al = lst
    if a > 0:
        lst = [x[1]]
    lst[0] = 9.0
    return al[0]


# -- a split run's compiled segments (a statement that must stay Python between them) ------------
def alias_across_a_python_statement(x, a):
    lst = [x[0], 0.5]
    al = lst
    label = str(int(a))  # stays Python: the code before and after are compiled segments
    al[0] = al[0] + 1.0
    return lst[0], label


def nested_list_across_a_python_statement(x, a):
    row = [x[0], x[1]]
    grid = [row, row]
    label = str(int(a))
    grid[0][0] = 5.0
    return grid[1][0], label


def dict_alias_across_a_python_statement(x, a):
    d = {"v": x[0]}
    e = d
    label = str(int(a))
    e["v"] = e["v"] + 1.0
    return d["v"], label


X = jnp.array([1.0, 2.0, 3.0])
SIGNS = (jnp.float32(1.0), jnp.float32(-1.0))
COUNTS = (jnp.int32(0), jnp.int32(1), jnp.int32(3))


def _same(expected, got):
    for e, g in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(got)):
        assert type(e) is type(g) if isinstance(e, str) else True
        np.testing.assert_allclose(np.asarray(g), np.asarray(e)) if not isinstance(e, str) else None
        assert not isinstance(e, str) or e == g


def _routes(fn, args, converts: bool, prims=()):
    """Both routes agree with eager (or fall back / give a located error where ``converts`` is
    false); a converted program holds the control-flow primitives ``prims``."""
    expected = fn(*args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(fn)(*args)
    _same(expected, got)
    fell_back = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert bool(fell_back) != converts, [str(w.message) for w in fell_back]
    if converts:
        _same(expected, jax.jit(laxify.convert(fn))(*args))
        assert set(prims) <= control_flow_prims(jaxpr_of(fn, *args))
    else:
        with pytest.raises(laxify.ConversionError) as info:
            jax.jit(laxify.convert(fn))(*args)
        assert info.value.location is not None and info.value.location.line > 0


@pytest.mark.parametrize("a", SIGNS)
def test_names_sharing_a_list_on_every_branch_share_it_after_the_if(a):
    _routes(shared_in_both_branches, (X, a), converts=True, prims=("cond",))


@pytest.mark.parametrize("k", COUNTS)
def test_names_sharing_a_list_through_a_while_share_it_after_the_loop(k):
    _routes(shared_through_a_while, (X, k), converts=True, prims=("while",))


@pytest.mark.parametrize("a", SIGNS)
def test_a_change_through_an_alias_in_a_branch_is_seen_through_the_other_name(a):
    # The cond carries `lst` too (its branch changes it through `al`) and writes it back.
    _routes(alias_changed_in_a_branch, (X, a), converts=True, prims=("cond",))


@pytest.mark.parametrize("a", SIGNS)
@pytest.mark.parametrize("k", COUNTS)
def test_a_change_through_an_alias_in_a_loop_inside_a_branch_is_not_lost(a, k):
    # It was silent: the loop wrote its change back into the branch's copy, and the alias check
    # happened in the loop, which returned the list.
    _routes(alias_changed_in_a_loop_in_a_branch, (X, a, k), converts=True, prims=("cond", "while"))


@pytest.mark.parametrize("a", SIGNS)
def test_names_sharing_a_list_on_one_path_only_run_as_python(a):
    _routes(shared_on_one_path, (X, a), converts=False)


@pytest.mark.parametrize("k", COUNTS)
def test_places_sharing_a_list_after_some_iterations_only_run_as_python(k):
    _routes(shared_after_some_iterations, (X, k), converts=False)


@pytest.mark.parametrize("a", SIGNS)
def test_a_list_replaced_on_one_path_while_another_name_holds_it_runs_as_python(a):
    _routes(replaced_on_one_path, (X, a), converts=False)


def replaced_on_one_path_alone(x, a):
    lst = [x[0]]
    if a > 0:
        lst = [x[1]]
    lst[0] = lst[0] * 2.0
    return lst[0]


@pytest.mark.parametrize("a", SIGNS)
def test_a_list_no_other_name_holds_may_be_replaced_on_one_path(a):
    _routes(replaced_on_one_path_alone, (X, a), converts=True)


@pytest.mark.parametrize("fn", [alias_across_a_python_statement, nested_list_across_a_python_statement,
                                dict_alias_across_a_python_statement])
@pytest.mark.parametrize("a", SIGNS)
def test_segments_of_a_split_run_keep_shared_objects_shared(fn, a):
    f = laxify.to_static(fn)
    for _ in range(2):  # the first run decides the split; the second runs its programs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _same(fn(X, a), f(X, a))


def validate_then_change_through_an_alias(x, a, k):
    lst = [x[0], 0.5]

    def check(v):
        if v < -1.0:
            raise ValueError(f"bad {v}")
        return v + 0.5

    s = check(a * 2.0)  # the code after it is the branch of a traced `if` (it did not raise)
    al = lst
    for i in range(k):
        al[0] = al[0] + 1.0
    return lst[0] + al[0] + s


@pytest.mark.parametrize("k", COUNTS)
def test_a_change_through_an_alias_after_a_validator_converts(k):
    # The list changes in place in the code after the call (a traced branch): the branch carries
    # the list and writes it back, with no fallback.
    _routes(validate_then_change_through_an_alias, (X, jnp.float32(1.0), k), converts=True)
    bad = (X, jnp.float32(-3.0), k)
    with pytest.raises(ValueError, match="bad -6.0"):
        validate_then_change_through_an_alias(*bad)
    with pytest.raises(ValueError, match="bad -6.0"):
        laxify.to_static(validate_then_change_through_an_alias)(*bad)
    with pytest.raises(ValueError, match="bad -6.0"):
        laxify.checked(jax.jit(laxify.convert(validate_then_change_through_an_alias)))(*bad)


def alias_made_and_changed_after_a_guard(x, k):
    d = {"p": x[0], "q": k}
    if x[1] > 100.0:
        raise ValueError("too large")
    al = d  # made in the code after the guard (a traced branch), with the loop that changes `d`
    for i in range(k):
        d["p"] = d["p"] * 2.0
    return d["p"] + al["p"]


@pytest.mark.parametrize("k", COUNTS)
def test_an_alias_made_in_a_branch_with_the_loop_that_changes_it_converts(k):
    # The loop carries both names, sharing the branch's copy; the alias note of the loop's change
    # reaches the branch, which must not report it (that would be a needless fallback).
    _routes(alias_made_and_changed_after_a_guard, (X, k), converts=True)
    with pytest.raises(ValueError, match="too large"):
        laxify.to_static(alias_made_and_changed_after_a_guard)(X.at[1].set(200.0), k)


def alias_made_in_the_code_after_a_guard_changed_by_a_static_if(x, k):
    d = {"p": x[0], "q": k}
    for i in range(k):
        raise ValueError("no rounds allowed")  # the code after it is a traced branch
    al = d  # bound in that branch: it holds the branch's copy, which the change reaches
    if len(x) % 2 == 0:
        d["p"] = jnp.clip(d["p"] * 2.0, -64, 64)
    return d["p"] + al["p"]


def alias_made_and_changed_in_a_branch(x, a):
    d = {"p": x[0]}
    if a > 0:
        al = d
        d["p"] = d["p"] * 2.0
        y = al["p"]
    else:
        y = x[1]
    return y


def alias_in_a_branch_and_one_outside(x, a):
    d = {"p": x[0]}
    e = d  # shares the object outside the branch: the branch must carry it out
    if a > 0:
        al = d
        d["p"] = d["p"] * 2.0
        y = al["p"]
    else:
        y = x[1]
    return e["p"] + y


def alias_outside_and_a_loop_in_a_branch(x, a, k):
    d = {"p": x[0]}
    e = d
    if a > 0:
        al = d
        for i in range(k):
            d["p"] = d["p"] + 1.0
        y = al["p"]
    else:
        y = x[1]
    return y + e["p"]


def list_appended_in_a_branch_with_an_alias_outside(x, a):
    lst = [x[0]]
    e = lst
    if a > 0:
        al = lst
        lst.append(x[1] * 2.0)
        y = al[-1]
    else:
        y = x[2]
    return e[-1] + y


def dict_held_by_a_list_changed_in_a_branch(x, a):
    d = {"p": x[0]}
    box = [d]
    if a > 0:
        al = d
        d["p"] = d["p"] * 2.0
        y = al["p"]
    else:
        y = x[1]
    return box[0]["p"] + y


@pytest.mark.parametrize("k", COUNTS)
def test_an_alias_bound_in_the_branch_with_the_change_converts(k):
    # `al` is bound in the code after the guard (a traced branch), so it holds the branch's copy
    # of `d` and sees the change; nothing outside does. The branch's check must not report `d`
    # as changed behind `al`'s back (that would be a needless fallback).
    fn = alias_made_in_the_code_after_a_guard_changed_by_a_static_if
    even = jnp.array([1.0, 2.0, 3.0, 4.0])  # the static `if` changes `d`
    for x in (X, even):
        _routes(fn, (x, jnp.int32(0)), converts=True)
        if int(k):
            with pytest.raises(ValueError, match="no rounds allowed"):
                laxify.to_static(fn)(x, k)
            with pytest.raises(ValueError, match="no rounds allowed"):
                laxify.checked(jax.jit(laxify.convert(fn)))(x, k)


@pytest.mark.parametrize("a", SIGNS)
def test_an_alias_made_and_changed_in_one_branch_converts(a):
    _routes(alias_made_and_changed_in_a_branch, (X, a), converts=True, prims=("cond",))


@pytest.mark.parametrize("fn", [alias_in_a_branch_and_one_outside, dict_held_by_a_list_changed_in_a_branch,
                                list_appended_in_a_branch_with_an_alias_outside])
@pytest.mark.parametrize("a", SIGNS)
def test_a_name_outside_the_branch_sharing_the_object_sees_the_change(fn, a):
    # Only the latest alias was named to the runtime (`al`, bound in the branch), so `e` (`box`)
    # outside must be named too: the branch carries it out (or the function runs as Python).
    _routes(fn, (X, a), converts=fn is not list_appended_in_a_branch_with_an_alias_outside)


@pytest.mark.parametrize("a", SIGNS)
@pytest.mark.parametrize("k", COUNTS)
def test_a_loop_in_a_branch_changing_an_object_a_name_outside_shares(a, k):
    # Silent before: the loop carried `al` (the alias it was told of) but not `e`, so `e["p"]`
    # was still `x[0]` after it where Python has `x[0] + k`.
    fn = alias_outside_and_a_loop_in_a_branch
    _routes(fn, (X, a, k), converts=True, prims=("cond", "while"))


# -- another name of the object that no assignment `b = a` shows ---------------------------------
def _same_object(v):
    return v


class _Box:
    pass


def alias_through_a_call(x, a):
    d = {"p": x[0]}
    e = _same_object(d)
    if a > 0:
        d["p"] = d["p"] * 2.0
    return e["p"]


def alias_through_unpacking(x, a):
    d = {"p": x[0]}
    e, _ = d, 1
    if a > 0:
        d["p"] = d["p"] * 2.0
    return e["p"]


def alias_through_a_walrus(x, a):
    d = {"p": x[0]}
    if (e := d) is None:
        return x[1]
    if a > 0:
        d["p"] = d["p"] * 2.0
    return e["p"]


def alias_through_an_attribute(x, a):
    box = _Box()
    d = {"p": x[0]}
    box.d = d
    if a > 0:
        d["p"] = d["p"] * 2.0
    return box.d["p"]


def alias_through_a_call_in_a_nested_if(x, a):
    d = {"p": x[0]}
    e = _same_object(d)
    if a > 0:
        if x[1] > 1.5:
            d["p"] = d["p"] * 2.0
    return e["p"]


def alias_through_a_call_after_a_guard(x, a):
    d = {"p": x[0]}
    e = _same_object(d)
    if x[2] > 100.0:
        raise ValueError("too large")
    d["p"] = d["p"] * a  # the code after the guard is a traced branch, reading `e` in it
    return e["p"]


def list_reversed_with_an_alias_through_a_call(x, a):
    lst = [x[0], x[1]]
    e = _same_object(lst)
    if a > 0:
        lst.reverse()
    return e[0]


def list_popped_with_an_alias_through_a_call(x, a):
    lst = [x[0], x[1]]
    e = _same_object(lst)
    if a > 0:
        lst.pop()
    return e[-1]


def alias_through_a_call_read_in_the_loop(x, k):
    d = {"p": x[0]}
    e = _same_object(d)
    s = 0.0
    for i in range(k):
        d["p"] = d["p"] + 1.0
        s = s + e["p"]
    return s


def holder_read_in_the_loop(x, k):
    d = {"p": x[0]}
    box = [d]
    s = 0.0
    for i in range(k):
        d["p"] = d["p"] + 1.0
        s = s + box[0]["p"]
    return s


def private_list_popped_after_an_early_return(x, k):
    lst = [x[0], 0.5]  # nothing else refers to it: its change after the loop needs no carrying
    n = 0
    while x[0] > 0 and n < 0:
        return lst[-1]
    lst.pop()
    return lst[0] + k


@pytest.mark.parametrize("fn", [alias_through_a_call, alias_through_unpacking, alias_through_a_walrus,
                                alias_through_an_attribute, alias_through_a_call_in_a_nested_if,
                                list_reversed_with_an_alias_through_a_call])
@pytest.mark.parametrize("a", SIGNS)
def test_a_change_in_a_branch_is_seen_through_a_name_no_assignment_shows(fn, a):
    # Silent before (the untaken value): the `if` carried `d` out only where a later statement
    # read `d` or an alias made by `e = d`; now every name the branch changes in place is
    # carried and written back into the object, whoever else refers to it.
    _routes(fn, (X, a), converts=True, prims=("cond",))


@pytest.mark.parametrize("a", SIGNS)
def test_a_change_after_a_guard_is_seen_through_a_name_the_code_after_it_reads(a):
    # The code after the guard read `e` from outside (the original dict) while it changed its
    # copy of `d`: it is now given `e` too, sharing the copy.
    _routes(alias_through_a_call_after_a_guard, (X, a), converts=True)
    with pytest.raises(ValueError, match="too large"):
        laxify.to_static(alias_through_a_call_after_a_guard)(X.at[2].set(200.0), a)


@pytest.mark.parametrize("fn, second", [
    # The two paths leave lists of different lengths for `e` (it gave the untaken path's list).
    *((list_popped_with_an_alias_through_a_call, a) for a in SIGNS),
    # The body changes its copy of `d` and reads the original through a list that holds it.
    *((holder_read_in_the_loop, k) for k in COUNTS),
])
def test_another_name_of_an_object_a_construct_cannot_carry_runs_as_python(fn, second):
    _routes(fn, (X, second), converts=False)


@pytest.mark.parametrize("k", COUNTS)
def test_a_loop_reading_another_name_of_the_object_it_changes_sees_the_change(k):
    # Silent before: the body changed its copy of `d` and read the original through `e` (the
    # sum of the values before each step). While the body is traced, `e` holds its copy.
    _routes(alias_through_a_call_read_in_the_loop, (X, k), converts=True, prims=("while",))


@pytest.mark.parametrize("k", COUNTS)
def test_a_private_list_changed_after_an_early_return_converts(k):
    _routes(private_list_popped_after_an_early_return, (X, k), converts=True)


def alias_read_in_a_static_loop(x, k):
    d = {"p": x[0]}
    e = _same_object(d)
    s = 0.0
    for i in range(3):  # a scan
        d["p"] = d["p"] + 1.0
        s = s + e["p"]
    return s + k


def alias_changed_and_the_original_read_in_a_while(x, k):
    d = {"p": x[0]}
    e, _ = d, 0
    s = 0.0
    i = 0
    while i < k:
        e["p"] = e["p"] * 2.0
        s = s + d["p"]
        i += 1
    return s + d["p"]


def alias_read_in_nested_loops(x, k):
    d = {"p": x[0]}
    e = _same_object(d)
    s = 0.0
    for i in range(k):
        for j in range(2):
            d["p"] = d["p"] + 1.0
            s = s + e["p"]
    return s


def row_changed_through_a_grid_a_call_made(x, k):
    row = [x[0], x[1]]
    grid = _same_object([row, [x[2]]])
    if k > 1:
        grid[0][1] = x[2] * 4.0
    return row[1]


@pytest.mark.parametrize("fn", [alias_read_in_a_static_loop, alias_changed_and_the_original_read_in_a_while,
                                alias_read_in_nested_loops, row_changed_through_a_grid_a_call_made])
@pytest.mark.parametrize("k", COUNTS)
def test_other_names_see_changes_in_loops_and_nested_lists(fn, k):
    # Each gave a wrong value on main at 283786e (the body read the original object, or the
    # `if` did not carry the grid whose row another name holds).
    _routes(fn, (X, k), converts=True)


def _unpacked_alias_with_a_raising_helper(x, a, k):
    lst = [x[0], 0.5]

    def check(v):
        if v < -1.0:
            raise ValueError(f"bad {v}")
        return v + 0.5

    s = check(a)
    al, _ = lst, 0  # another name of the list, by unpacking
    for _ in range(k):
        al[0] = al[0] + 1.0
    return s + lst[0] + al[0]


@pytest.mark.xfail(strict=True, reason=(
    "known spurious fallback (older than the Python-number work; found by the fuzzer): a list "
    "aliased by unpacking (`al, _ = lst, 0`) and changed in a traced loop, in a function that "
    "also calls a helper with a traced `if`, falls back with a warning about that `if` (the "
    "value agrees); `al = lst` or no helper converts"))
def test_an_unpacked_alias_changed_in_a_loop_converts_beside_a_raising_helper():
    args = (jnp.zeros(3), jnp.float32(0.0), jnp.int32(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = laxify.to_static(_unpacked_alias_with_a_raising_helper)(*args)
    assert float(got) == float(_unpacked_alias_with_a_raising_helper(*args))
