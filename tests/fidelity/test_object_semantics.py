"""Python's object semantics under conversion: identity, ``~``/``-`` on Python bools,
effects on Python objects under traced control flow, list operators after an append loop,
item-update dtypes, int overflow.

Each case runs eagerly (the oracle: on NumPy copies where the function changes an array in
place), through ``laxify.to_static`` and through ``jax.jit(laxify.convert(f))``. A case laxify
converts gives eager's result on every path and holds the ``cond``/``while``/``scan`` expected;
a case it cannot convert faithfully is never a silent wrong result: ``to_static`` runs it
eagerly with a ``FallbackWarning`` at the user's line, ``jit(convert)`` raises a located
``ConversionError``.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from fidelity_tools import assert_clean_error, line_of
from harness import assert_trees_close


def _eager_args(args, mutates: bool):
    """The arguments of the eager run: NumPy copies of arrays where the function mutates them."""
    if not mutates:
        return args
    return tuple(np.array(a) if isinstance(a, (jax.Array, np.ndarray)) else a for a in args)


def _primitives(jaxpr) -> set[str]:
    found = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for sub in jax.core.subjaxprs(eqn) if hasattr(jax.core, "subjaxprs") else ():
            found |= _primitives(sub)
        for value in eqn.params.values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                inner = getattr(item, "jaxpr", None)
                if inner is not None:
                    found |= _primitives(getattr(inner, "jaxpr", inner))
    return found


def converts(fn, *inputs, prims=(), mutates: bool = False):
    """Eager, ``to_static`` and ``jit(convert)`` agree on every input tuple, with no warning,
    and the traced program of the first input holds ``prims``."""
    static_fn = laxify.to_static(fn, fallback="error")
    jitted = jax.jit(laxify.convert(fn))
    for args in inputs:
        expected = fn(*_eager_args(args, mutates))
        with warnings.catch_warnings():
            warnings.simplefilter("error", laxify.FallbackWarning)
            assert_trees_close(expected, static_fn(*args), what=f"to_static{args}")
            assert_trees_close(expected, jitted(*args), what=f"jit(convert){args}")
    held = _primitives(jax.make_jaxpr(laxify.convert(fn))(*inputs[0]).jaxpr)
    for prim in prims:
        assert prim in held, f"no `{prim}` in the traced program: {sorted(held)}"


def falls_back(fn, *args, snippet: str, name: str | None = None, mutates: bool = False, at=None):
    """``to_static`` gives eager's result with a FallbackWarning at the line holding ``snippet``
    (in ``at``, a function ``fn`` calls, or in ``fn``); ``jit(convert)`` raises a
    ConversionError located there."""
    at = fn if at is None else at
    expected = fn(*_eager_args(args, mutates))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(fn)(*_eager_args(args, mutates))
    assert_trees_close(expected, got, what="to_static")
    fallbacks = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert fallbacks, "no FallbackWarning"
    assert fallbacks[0].lineno == line_of(at, snippet), (fallbacks[0].lineno, str(fallbacks[0].message))
    assert "_lx" not in str(fallbacks[0].message)
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(*args)
    assert_clean_error(info.value, at, name, snippet)
    return expected


# -- 1. identity on values that became traced ---------------------------------------------

def bubble_sort_done_is_false(xs):
    done = False
    while done is False:
        done = True
        for i in range(xs.shape[0] - 1):
            if xs[i] > xs[i + 1]:
                t = xs[i]
                xs[i] = xs[i + 1]
                xs[i + 1] = t
                done = False
    return xs


def test_bubble_sort_with_identity_flag():
    converts(bubble_sort_done_is_false, (jnp.array([5, 4, 3, 2, 1]),), (jnp.array([1, 2, 3, 4, 5]),),
             (jnp.array([2, 1, 2, 0, 7]),), prims=("while", "cond"), mutates=True)


def count_while_changed_is_true(x):
    changed = True
    n = 0
    while changed is True:
        changed = False
        if x[n] > 0:
            changed = True
        n = n + 1
    return n


def test_while_flag_is_true():
    converts(count_while_changed_is_true, (jnp.array([1.0, 1.0, -1.0, 1.0]),), (jnp.array([-1.0, 1.0]),),
             prims=("while",))


def flag_is_not_false(x):
    flag = False
    if x > 0:
        flag = True
    other = not flag
    return flag is not False, flag is True, other is False, True is flag


def test_identity_with_bool_literals_on_both_paths():
    converts(flag_is_not_false, (jnp.array(1.0),), (jnp.array(-1.0),), prims=("cond",))


def same_object_after_traced_if(x, c):
    y = x
    if c > 0:
        y = x * 2
    return y is x


def test_identity_of_arrays_that_may_differ_per_path_falls_back():
    for c in (1.0, -1.0):
        falls_back(same_object_after_traced_if, jnp.array(1.0), jnp.array(c), snippet="return y is x")


def bool_or_array(x):
    flag = False
    if x > 0:
        flag = x > 1
    return flag is False


def test_flag_that_is_an_array_on_some_path_falls_back():
    falls_back(bool_or_array, jnp.array(0.5), snippet="return flag is False", name=None)


def array_is_true(x):
    m = x + 1
    return m is True, m is None, m is not None


def test_array_is_never_a_python_constant():
    converts(array_is_true, (jnp.array(1.0),))


# -- 9. ~ and - on Python bools that became traced ----------------------------------------

def invert_and_negate_flag(x):
    flag = False
    if x > 0:
        flag = True
    return ~flag, -flag, +flag


def test_invert_and_negate_python_bool():
    converts(invert_and_negate_flag, (jnp.array(1.0),), (jnp.array(-1.0),), prims=("cond",))


def invert_bool_array(x):
    mask = x > 0
    return ~mask


def test_invert_of_a_boolean_array_stays_elementwise():
    converts(invert_bool_array, (jnp.array([1.0, -1.0]),))


# -- 7. effects inside conditional expressions and and/or operands --------------------------

def pop_in_conditional_expression(x):
    stack = [1.0, 2.0, 3.0]
    v = stack.pop() if x > 0 else 0.0
    return v, len(stack)


def append_in_and_operand(x):
    log = []
    ok = x > 0 and log.append(1) is None
    return ok, len(log)


def append_in_or_condition(x):
    log = []
    if x > 0 or log.append(1) is None:
        x = x + 1
    return x, len(log)


@pytest.mark.parametrize("fn, snippet", [
    (pop_in_conditional_expression, "v = stack.pop() if x > 0 else 0.0"),
    (append_in_and_operand, "ok = x > 0 and log.append(1) is None"),
    (append_in_or_condition, "if x > 0 or log.append(1) is None:"),
])
@pytest.mark.parametrize("x", [1.0, -1.0])
def test_effects_in_lazy_operands_happen_only_where_python_makes_them(fn, snippet, x):
    falls_back(fn, jnp.array(x), snippet=snippet)


def pure_call_in_conditional_expression(x):
    v = jnp.sin(x) if x > 0 else jnp.cos(x)
    return v


def test_lazy_operands_without_effects_still_convert():
    converts(pure_call_in_conditional_expression, (jnp.array(1.0),), (jnp.array(-1.0),), prims=("cond",))


# -- 6. effects of called helpers under traced control flow --------------------------------

def nonlocal_bump_under_traced_if(x):
    n = 0

    def bump():
        nonlocal n
        n += 1

    if x > 0:
        bump()
    return n


def nonlocal_bump_in_traced_loop(x):
    n = 0

    def bump():
        nonlocal n
        n += 1

    for i in range(3):
        if x > i:
            bump()
    return n


CALLS = 0


def count_call():
    global CALLS
    CALLS += 1


def global_bump_under_traced_if(x):
    if x > 0:
        count_call()
    return x * 2


def set_first(lst, v):
    lst[0] = v


def helper_sets_list_under_traced_if(x):
    box = [0.0]
    if x > 0:
        set_first(box, 1.0)
    return box[0]


def memo_square(k, memo={}):  # noqa: B006 - the mutable default is the point
    memo["calls"] = memo.get("calls", 0) + 1
    if k not in memo:
        memo[k] = k * k
    return memo[k]


def memo_under_traced_if(x):
    if x > 0:
        x = x + memo_square(2)
    return x


@pytest.mark.parametrize("fn, snippet", [
    (nonlocal_bump_under_traced_if, "if x > 0:"),
    (nonlocal_bump_in_traced_loop, "if x > i:"),
    (global_bump_under_traced_if, "if x > 0:"),
    (helper_sets_list_under_traced_if, "if x > 0:"),
    (memo_under_traced_if, "if x > 0:"),
])
@pytest.mark.parametrize("x", [1.5, -1.0, 5.0])
def test_helper_effects_under_traced_control_flow_fall_back(fn, snippet, x):
    global CALLS
    memo_square.__defaults__[0].clear()
    falls_back(fn, jnp.array(x), snippet=snippet)
    # The trace that stopped left nothing behind: the eager run counts (and memoizes) once.
    CALLS = 0
    memo_square.__defaults__[0].clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        laxify.to_static(fn)(jnp.array(x))
    converted = (CALLS, dict(memo_square.__defaults__[0]))
    CALLS = 0
    memo_square.__defaults__[0].clear()
    fn(jnp.array(x))
    assert converted == (CALLS, dict(memo_square.__defaults__[0]))


def helper_with_local_list(x):
    def squares(v):
        out = []
        out.append(v * v)
        out.append(v + 1)
        return out

    if x > 0:
        x = sum(squares(x))
    return x


def test_helper_changing_only_its_own_objects_converts():
    converts(helper_with_local_list, (jnp.array(2.0),), (jnp.array(-1.0),), prims=("cond",))


# -- 2./3. mutation through helpers and aliases --------------------------------------------

def swap_if_greater(arr, i, j):
    if arr[i] > arr[j]:
        arr[i], arr[j] = arr[j], arr[i]


def sort_through_helper(a):
    n = a.shape[0]
    for k in range(n):
        for i in range(n - 1):
            swap_if_greater(a, i, i + 1)
    return a


def test_array_changed_by_a_helper_is_a_located_error():
    """NumPy changes the caller's array; a JAX array cannot: never the unchanged array."""
    expected = sort_through_helper(np.array([4, 1, 3, 2]))
    assert list(expected) == [1, 2, 3, 4]
    for call in (laxify.to_static(sort_through_helper), jax.jit(laxify.convert(sort_through_helper))):
        with pytest.raises(laxify.ConversionError) as info:
            call(jnp.array([4, 1, 3, 2]))
        assert_clean_error(info.value, swap_if_greater, "arr", "arr[i], arr[j] = arr[j], arr[i]")


def sort_list_through_helper(xs):
    for k in range(len(xs)):
        for i in range(len(xs) - 1):
            swap_list_items(xs, i)
    return xs


def swap_list_items(xs, i):
    if xs[i] > xs[i + 1]:
        xs[i], xs[i + 1] = xs[i + 1], xs[i]


def test_python_list_changed_by_a_helper_under_traced_if_is_written_back():
    """The helper's parameter is read by its caller: the `if` carries it out and the change is
    written back into the caller's list (it used to fall back)."""
    values = [jnp.float32(v) for v in (5.0, 4.0, 1.0, 3.0, 2.0)]
    expected_list = list(values)
    expected = sort_list_through_helper(expected_list)
    for run in (laxify.to_static(sort_list_through_helper, fallback="error"),
                jax.jit(laxify.convert(sort_list_through_helper))):
        xs = list(values)
        assert_trees_close(expected, run(xs), what="result")
    xs = list(values)
    laxify.to_static(sort_list_through_helper, fallback="error")(xs)
    assert_trees_close(expected_list, xs, what="the caller's list")  # (jit: JAX's copies)
    assert "cond" in _primitives(jax.make_jaxpr(laxify.convert(sort_list_through_helper))(list(values)).jaxpr)


def list_alias_under_traced_if(x):
    a = [0.0]
    b = a
    if x > 0:
        a[0] = x
    return b[0]


def dict_alias_in_traced_loop(x):
    d = {"s": 0.0}
    e = d
    for i in range(3):
        if x > i:
            d["s"] = d["s"] + x
    return e["s"]


def test_alias_of_a_list_changed_in_a_traced_if_sees_the_change():
    """`a` is changed through `b`'s object in the branch: the cond carries `a` out (it was not
    carried, and fell back) and writes it back into the list `b` refers to."""
    converts(list_alias_under_traced_if, (jnp.array(3.0),), (jnp.array(-1.0),), prims=("cond",))


def test_alias_of_a_dict_carried_through_a_traced_loop_sees_the_change():
    """`d` is carried out of the `if` and the loop: written back into the dict `e` refers to."""
    converts(dict_alias_in_traced_loop, (jnp.array(3.0),), (jnp.array(1.5),), (jnp.array(-1.0),),
             prims=("scan", "cond"))


def dict_holds_array(arr, v):
    al = {"h": arr}
    al["h"][3] = v
    return arr


def row_view(M):
    row = M[1]
    row[0] = 100.0
    return M


@pytest.mark.parametrize("fn, args, name, snippet", [
    (dict_holds_array, (jnp.arange(5.0), jnp.float32(9.0)), "arr", 'al["h"][3] = v'),
    (row_view, (jnp.zeros((3, 3)),), "M", "row[0] = 100.0"),
])
def test_array_shared_with_a_container_or_view_is_a_located_error(fn, args, name, snippet):
    expected = fn(*_eager_args(args, True))
    assert not np.array_equal(expected, np.asarray(args[0]))  # NumPy changed it through the other name
    for call in (laxify.to_static(fn), jax.jit(laxify.convert(fn))):
        with pytest.raises(laxify.ConversionError) as info:
            call(*args)
        assert_clean_error(info.value, fn, name, snippet)


def numpy_row_view(M):
    row = M[1]
    row[0] = 100.0
    return M


def test_numpy_view_keeps_numpy_semantics():
    M = np.zeros((3, 3), np.float32)
    got = laxify.convert(numpy_row_view)(M.copy())
    np.testing.assert_array_equal(got, numpy_row_view(M.copy()))


# -- 4. updates counted once per trace -----------------------------------------------------

def nested_counter(n):
    p = [[0]]
    for i in range(n):
        p[0][0] += 1
    return p[0][0]


def two_bin_histogram(xs):
    h = [[0, 0]]
    for x in xs:
        if x > 0:
            h[0][1] += 1
        else:
            h[0][0] += 1
    return h[0]


def test_nested_list_updates_in_traced_loops_count_every_iteration():
    converts(nested_counter, (jnp.array(5),), (jnp.array(0),), prims=("while",))
    converts(two_bin_histogram, (jnp.array([-1.0, 1.0, 2.0]),), (jnp.array([3.0, -2.0]),), prims=("scan", "cond"))


# -- 5. a loop over an array sees the body's updates ---------------------------------------

def running_sum_in_place(a):
    for i, x in enumerate(a):
        if i + 1 < a.shape[0]:
            a[i + 1] += x
    return a


def running_sum_plain_for(a):
    i = 0
    for x in a:
        if i + 1 < a.shape[0]:
            a[i + 1] = a[i + 1] + x
        i += 1
    return a


def sieve_count(flags):
    count = 0
    for i, f in enumerate(flags):
        if i >= 2 and f > 0:
            count += 1
            for j in range(2 * i, flags.shape[0], i):
                flags[j] = 0
    return count


def test_loop_over_an_array_sees_the_updates_of_earlier_iterations():
    converts(running_sum_in_place, (jnp.array([1, 2, 3, 4]),), prims=("scan",), mutates=True)
    converts(running_sum_plain_for, (jnp.array([1.0, 2.0, 3.0]),), prims=("scan",), mutates=True)
    converts(sieve_count, (jnp.ones(20, jnp.int32),), (jnp.ones(30, jnp.int32),), prims=("scan", "while"),
             mutates=True)


# -- 8. a list appended to in a converted loop keeps list semantics ------------------------

def list_operators_after_append_loop(xs):
    out = []
    for i in range(3):
        out.append(xs[i] * 2)
    doubled = out * 2
    joined = out + out
    tail = out[1:]
    same = len(out[:]) == len(out)
    out.append(xs[0])
    out.extend([xs[1]])
    last = out.pop()
    return len(doubled), len(joined), len(tail), same, len(out), last, jnp.stack(out), jnp.stack(tail * 2)


def list_operators_after_scan(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x)
        else:
            out.append(-x)
    both = out + [xs[0]]
    return len(both), both[-1], jnp.stack(both), out[::2] == out[::2]


def test_list_operators_after_an_append_loop_are_the_lists():
    converts(list_operators_after_append_loop, (jnp.arange(3.0),), prims=("scan",))


def test_list_operators_after_a_scanned_append_loop():
    xs = jnp.array([1.0, -2.0, 3.0])
    expected = list_operators_after_scan(xs)
    for call in (laxify.to_static(list_operators_after_scan, fallback="error"),
                 jax.jit(laxify.convert(list_operators_after_scan))):
        got = call(xs)
        assert_trees_close(expected[:3], got[:3], what="list after scan")
        # `==` on two lists of traced rows compares rows: a Python bool eagerly, an array here
        assert bool(np.all(np.asarray(got[3])))


def stacked_then_array(xs):
    out = []
    for i in range(3):
        out.append(xs[i])
    out = jnp.stack(out)
    return out * 2


def test_a_name_rebound_to_an_array_keeps_array_arithmetic():
    converts(stacked_then_array, (jnp.arange(3.0),))


# -- 10. item updates keep the array's dtype -----------------------------------------------

def true_divide_item(a):
    a[0] /= 2
    return a


def add_float_to_int_item(a, x):
    if x > 0:
        a[1] += 0.75
    a[2] *= 1.5
    return a


def test_item_updates_keep_the_dtype_as_numpy_does():
    converts(true_divide_item, (jnp.array([9, 7, 5]),), mutates=True)
    converts(add_float_to_int_item, (jnp.array([9, 7, 5]), jnp.array(1.0)), (jnp.array([9, 7, 5]), jnp.array(-1.0)),
             prims=("cond",), mutates=True)


# -- 2. a Python list changed in place by a helper: the caller's object changes ----------------

def sort_without_return(xs):
    n = len(xs)
    for k in range(n):
        for i in range(n - 1):
            if xs[i] > xs[i + 1]:
                xs[i], xs[i + 1] = xs[i + 1], xs[i]


def sort_local_list_through_helper(x):
    xs = [x[0], x[1], x[2], x[3]]
    ys = xs
    sort_without_return(xs)
    return ys


def bump_nested(rows, x):
    for r in range(len(rows)):
        if x > r:
            rows[r][0] += x


def nested_rows_through_helper(x):
    inner = [0.0]
    rows = [inner, [1.0]]
    bump_nested(rows, x)
    return inner[0], rows[1][0]


def test_list_changed_in_place_under_traced_control_flow_is_the_callers_list():
    converts(sort_local_list_through_helper, (jnp.array([4.0, 1.0, 3.0, 2.0]),), (jnp.array([1.0, 2.0, 3.0, 4.0]),),
             prims=("cond",))
    converts(nested_rows_through_helper, (jnp.array(1.5),), (jnp.array(-1.0),), prims=("cond",))


def changed_or_replaced(a, x):
    if x > 0:
        a[0] = x
    else:
        a = [5.0]
    return a[0]


def list_identity_depends_on_path(x):
    a = [0.0]
    r = changed_or_replaced(a, x)
    return a[0], r


@pytest.mark.parametrize("x", [2.0, -1.0])
def test_list_changed_on_one_path_replaced_on_another_falls_back(x):
    falls_back(list_identity_depends_on_path, jnp.array(x), snippet="if x > 0:", at=changed_or_replaced)


def clip_rows(rows):
    for row in rows:
        for j in range(len(row)):
            if row[j] > 1.0:
                row[j] = 1.0
    return rows


def test_list_of_lists_argument_clipped_row_by_row():
    rows = [[jnp.float32(0.5), jnp.float32(2.0)], [jnp.float32(3.0), jnp.float32(-1.0)]]
    expected = clip_rows([list(r) for r in rows])
    for call in (laxify.to_static(clip_rows, fallback="error"), jax.jit(laxify.convert(clip_rows))):
        assert_trees_close(expected, call([list(r) for r in rows]), what="clip_rows")


def extend_under_traced_if(x):
    a = [1.0]
    if x > 0:
        a += [x]
    return len(a)


def test_list_growing_on_one_traced_path_is_a_located_error():
    for call in (laxify.to_static(extend_under_traced_if, fallback="error"),
                 jax.jit(laxify.convert(extend_under_traced_if))):
        with pytest.raises(laxify.ConversionError) as info:
            call(jnp.array(2.0))
        assert_clean_error(info.value, extend_under_traced_if, "a", "if x > 0:")


class Counter:
    def __init__(self):
        self.hits = 0

    def hit(self, v):
        self.hits += 1
        return v * 2


def method_changing_its_object_under_traced_if(x, counter):
    if x > 0:
        x = counter.hit(x)
    return x


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_method_changing_its_object_under_traced_if_falls_back(x):
    counter = Counter()
    expected = method_changing_its_object_under_traced_if(jnp.array(x), counter)
    eager_hits, counter.hits = counter.hits, 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = laxify.to_static(method_changing_its_object_under_traced_if)(jnp.array(x), counter)
    assert_trees_close(expected, got, what="to_static")
    assert counter.hits == eager_hits  # the trace changed nothing; the eager run counted once
    assert any(issubclass(w.category, laxify.FallbackWarning) and w.lineno == line_of(
        method_changing_its_object_under_traced_if, "if x > 0:") for w in caught)
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(method_changing_its_object_under_traced_if), static_argnums=1)(jnp.array(x), counter)
    assert_clean_error(info.value, method_changing_its_object_under_traced_if, None, "if x > 0:")


def alias_kept_through_a_loop_that_does_not_change_it(x):
    a = [0.0]
    b = a
    for i in range(3):
        if x > i:
            a = a
    a[0] = x
    return b[0]


def same_list_under_two_carried_names(x):
    a = [0.0, 1.0]
    b = a
    for i in range(3):
        if x > i:
            a[0] = a[0] + x
        b = b
    return a[0], b[0]


def test_a_carried_list_stays_the_same_object():
    converts(alias_kept_through_a_loop_that_does_not_change_it, (jnp.array(2.0),), (jnp.array(-1.0),),
             prims=("scan",))
    converts(same_list_under_two_carried_names, (jnp.array(2.0),), (jnp.array(-1.0),), prims=("scan", "cond"))


# -- 3b. a method or `+=` changing a list another name holds, under a traced `if` ----------------
# (the branch works on a copy of the list; `b` must still see the change made through `a`)

def append_through_an_alias(x):
    a = [0.0]
    b = a
    if x > 0:
        a.append(x)
    return len(b)


def extend_through_an_alias(x):
    a = [1.0]
    b = a
    if x > 0:
        a += [x]
    return len(b)


def reverse_through_an_alias(x):
    a = [0.0, 1.0]
    b = a
    if x > 0:
        a.reverse()
    return b[0]


def update_through_an_alias(x):
    d = {"k": 0.0}
    e = d
    if x > 0:
        d.update({"k": x})
    return e["k"]


def reverse_through_a_holder(x):
    a = [x, 2 * x]
    pair = [a, 5]
    if x > 0:
        a.reverse()
    return pair[0][0]


@pytest.mark.parametrize("x", [2.0, -1.0])
@pytest.mark.parametrize("fn, snippet", [
    (append_through_an_alias, "if x > 0:"), (extend_through_an_alias, "if x > 0:")])
def test_method_changing_an_aliased_lists_length_under_traced_if_falls_back(fn, snippet, x):
    # The two paths leave lists of different lengths, which one program cannot give `b`.
    falls_back(fn, jnp.array(x), snippet=snippet)


@pytest.mark.parametrize("fn", [reverse_through_an_alias, update_through_an_alias, reverse_through_a_holder])
def test_method_changing_an_aliased_list_under_traced_if_converts(fn):
    # The `if` carries out the list its branch changes in place (it fell back before), and
    # writes it back into the object the other name holds.
    converts(fn, (jnp.array(2.0),), (jnp.array(-1.0),), prims=("cond",))


def reverse_carried_out(x):
    a = [0.0, 1.0]
    b = a
    if x > 0:
        a.reverse()
    return a[0], b[0]  # `a` is carried out of the `if` and written back into the list `b` holds


def test_method_changing_an_aliased_list_that_the_if_carries_out_converts():
    converts(reverse_carried_out, (jnp.array(2.0),), (jnp.array(-1.0),), prims=("cond",))
