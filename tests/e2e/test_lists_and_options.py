"""`list.append` in loops and `laxify.loop_options` end to end.

In a loop with a static trip count, appends become the stacked output of one `scan` and the
name behaves as the Python list would (`jnp.stack`, `[-1]`, `len`, iteration), without
unrolling. In a loop with a traced trip count they need `loop_options(max_iters=N)`: the list
then holds N rows and a traced count, and reads back as Python's list (`len` is the count,
`outs[-1]`/`outs[k]` the item Python reads; a use whose shape depends on the count falls back).
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import CASE_FIELDS, assert_trees_close, case, check, eqn_count, jaxpr_of, primitive_counts

SCAN = {"scan"}
STATIC = ()


def f32(*values):
    return jnp.array(values, jnp.float32)


X = f32(0.5, -1.0, 2.0)


# -- appends in loops with a static trip count: one scan ------------------------------------

def lists_append_then_stack(x):
    outs = []
    h = x
    for i in range(6):
        h = jnp.tanh(h) + i
        outs.append(h)
    return jnp.stack(outs)


def lists_append_then_last_and_len(x):
    outs = []
    h = x
    for i in range(5):
        h = h * 0.5 + 1.0
        outs.append(h * i)
    return outs[-1], len(outs), outs[0]


def lists_append_then_iterate(x):
    outs = []
    h = x
    for i in range(4):
        h = h + i
        outs.append(h.sum())
    total = jnp.float32(0)
    for o in outs:
        total = total * 2 + o
    return total


def lists_with_earlier_items(x):
    outs = [x, x * 2]
    h = x
    for i in range(3):
        h = h - 1
        outs.append(h)
    return jnp.stack(outs), len(outs)


def lists_append_over_array_rows(m):
    outs = []
    for row in m:
        outs.append(row * row.sum())
    return jnp.stack(outs)


def lists_append_over_enumerate(x):
    outs = []
    for i, v in enumerate(x):
        outs.append(v * i)
    return jnp.stack(outs)


def lists_two_lists_one_loop(x):
    evens, odds = [], []
    h = x
    for i in range(4):
        h = h * 1.5
        evens.append(h)
        odds.append(-h)
    return jnp.stack(evens) + jnp.stack(odds) * 2


def lists_append_under_traced_if(x):
    outs = []
    h = x
    for i in range(5):
        if h.sum() > 2:
            h = h - 1
        else:
            h = h + 2
        outs.append(h)
    return jnp.stack(outs)


def lists_append_in_negative_step_range(x):
    outs = []
    for i in range(6, 0, -2):
        outs.append(x * i)
    return jnp.stack(outs)


def lists_append_static_count_arg(x, n):
    outs = []
    h = x
    for i in range(n):
        h = jnp.sin(h) + 0.1
        outs.append(h)
    return jnp.stack(outs)


CASES = [
    case(lists_append_then_stack, (X,), prims=SCAN),
    case(lists_append_then_last_and_len, (X,), prims=SCAN),
    case(lists_append_then_iterate, (X,), prims=SCAN),
    case(lists_with_earlier_items, (X,), prims=SCAN),
    case(lists_append_over_array_rows, (jnp.arange(12, dtype=jnp.float32).reshape(4, 3),), prims=SCAN),
    case(lists_append_over_enumerate, (X,), prims=SCAN),
    case(lists_two_lists_one_loop, (X,), prims=SCAN),
    case(lists_append_under_traced_if, (X,), (f32(5.0, 5.0),), prims={"scan", "cond"}),
    case(lists_append_in_negative_step_range, (X,), prims=SCAN),
    case(lists_append_static_count_arg, (X, 1), (X, 7), prims=SCAN),
]


@pytest.mark.parametrize(CASE_FIELDS, CASES)
def test_append_in_static_loop_matches_python(fn, inputs, prims, static_argnums):
    check(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)


def test_append_loop_is_one_scan():
    counts = primitive_counts(jaxpr_of(lists_append_then_stack, X))
    assert counts["scan"] == 1, counts
    assert counts["tanh"] == 1, counts  # the body is traced once, not unrolled


def test_append_program_size_does_not_grow_with_trip_count():
    small = jaxpr_of(lists_append_static_count_arg, X, 10)
    large = jaxpr_of(lists_append_static_count_arg, X, 1000)
    assert eqn_count(small) == eqn_count(large), (small, large)
    assert jax.jit(laxify.convert(lists_append_static_count_arg), static_argnums=1)(X, 1000).shape == (1000, 3)


def lists_append_tuple_then_stack_parts(x):
    outs = []
    h = x
    for i in range(4):
        h = h * 2
        outs.append((h, h.sum()))
    hs = jnp.stack([o[0] for o in outs])
    ss = jnp.stack([o[1] for o in outs])
    return hs, ss


def lists_append_tuple_then_last(x):
    outs = []
    h = x
    for i in range(4):
        h = h * 2
        outs.append((h, h.sum()))
    return outs[-1], len(outs)


def lists_append_tuple_then_unpack_loop(x):
    outs = []
    h = x
    for i in range(4):
        h = h * 2
        outs.append((h, h.sum()))
    t = jnp.float32(0)
    for a, s in outs:
        t = t + a[0] * s
    return t




@pytest.mark.parametrize("fn", [
    pytest.param(lists_append_tuple_then_stack_parts),
    pytest.param(lists_append_tuple_then_last),
    pytest.param(lists_append_tuple_then_unpack_loop),
], ids=lambda f: f.__name__)
def test_append_tuple_in_static_loop(fn):
    check(fn, (X,))


# -- a static loop that only appends Python values stays Python -------------------------------

def lists_python_values_only(x, n):
    squares = []
    for i in range(n):
        squares.append(i * i)
    return squares


def lists_python_values_then_used(x, n):
    weights = []
    for i in range(n):
        weights.append(1.0 / (i + 1))
    return x * sum(weights), len(weights)


def test_python_only_append_returns_python_list():
    out = laxify.convert(lists_python_values_only)(X, 4)
    assert out == [0, 1, 4, 9]
    assert type(out) is list and all(type(v) is int for v in out)
    counts = primitive_counts(jaxpr_of(lists_python_values_only, X, 4))
    assert not counts, counts


def test_python_only_append_values():
    check(lists_python_values_then_used, (X, 0), (X, 3), expect_prims=STATIC)


# -- traced trip count: an error without loop_options -----------------------------------------

def lists_append_in_traced_while(x):
    outs = []
    while x.sum() < 100:
        x = x * 2
        outs.append(x)
    return jnp.stack(outs)


def lists_append_in_traced_range(x, n):
    outs = []
    for i in range(n):
        outs.append(x * i)
    return outs


def test_append_in_traced_length_while_is_an_error():
    # Eager Python runs it: to_static runs it eagerly with a FallbackWarning; refused here.
    with pytest.warns(laxify.FallbackWarning, match="traced"):
        laxify.to_static(lists_append_in_traced_while)(f32(1.0, 2.0))
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(lists_append_in_traced_while, fallback="error")(f32(1.0, 2.0))
    msg = str(info.value)
    assert "`outs`" in msg
    assert "traced" in msg and "number of iterations" in msg
    assert "loop_options(max_iters=" in msg
    assert __file__ in msg and "while x.sum() < 100:" in msg


def test_append_in_traced_range_is_an_error():
    with pytest.raises(laxify.ConversionError, match=r"(?s)`outs`.*loop_options\(max_iters="):
        jax.jit(laxify.convert(lists_append_in_traced_range))(X, jnp.int32(3))


# -- loop_options(max_iters=N) -----------------------------------------------------------------

MAX_ITERS = 8


def lists_bounded_while_with_block(x):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        while x.sum() < 100:
            x = x * 2
            outs.append(x)
    return x, outs


@laxify.loop_options(max_iters=MAX_ITERS)
def lists_bounded_while_decorated(x):
    outs = []
    while x.sum() < 100:
        x = x * 2
        outs.append(x)
    return x, outs


@laxify.loop_options(max_iters=MAX_ITERS)
@laxify.to_static
def lists_bounded_while_options_over_to_static(x):
    outs = []
    while x.sum() < 100:
        x = x * 2
        outs.append(x)
    return x, outs


@laxify.to_static
@laxify.loop_options(max_iters=MAX_ITERS)
def lists_bounded_while_to_static_over_options(x):
    outs = []
    while x.sum() < 100:
        x = x * 2
        outs.append(x)
    return x, outs


def lists_bounded_traced_range(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            x = x + i
            outs.append(x)
    return x, outs


def _rows(outs, like):
    """Python's list after the loop as the stacked array of its items (none: zero rows)."""
    if not outs:
        return np.zeros((0, *like.shape), like.dtype)
    return np.stack([np.asarray(o) for o in outs])


def _assert_list(expected_outs, actual, like, what):
    """``actual`` (what `jax.jit(laxify.convert(f))` returns for the list: its count and rows,
    read back outside the program) holds exactly Python's items."""
    assert isinstance(actual, laxify.runtime.lists.BoundedList), (what, type(actual))
    assert len(actual) == len(expected_outs), (what, len(actual), len(expected_outs))
    np.testing.assert_allclose(np.asarray(actual), _rows(expected_outs, like), rtol=1e-6, err_msg=what)
    for k, item in enumerate(actual):
        np.testing.assert_allclose(item, expected_outs[k], rtol=1e-6, err_msg=f"{what} item {k}")


@pytest.mark.parametrize("fn", [lists_bounded_while_with_block, lists_bounded_while_decorated],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("start", [f32(200.0, 1.0), f32(30.0, 40.0), f32(1.0, 2.0)],
                         ids=["zero_trips", "one_trip", "six_trips"])
def test_bounded_while_list_is_pythons_list(fn, start):
    """Returned from `to_static`, the list is the stacked array of the items Python appended
    (what a static trip count gives); from `jax.jit(laxify.convert(f))`, a value that reads
    back as that list (`len`, iteration, `np.asarray`). The loop is one scan of conds."""
    eager_x, eager_outs = fn(start)
    expected = (eager_x, _rows(eager_outs, start))
    assert_trees_close(expected, laxify.to_static(fn, fallback="error")(start), what="to_static")
    x, outs = jax.jit(laxify.convert(fn))(start)
    assert_trees_close(eager_x, x, what="jit(convert) x")
    _assert_list(eager_outs, outs, start, "jit(convert)")
    counts = primitive_counts(jaxpr_of(fn, start))
    assert counts["scan"] == 1 and counts["while"] == 0 and counts["cond"] >= 1, counts


@pytest.mark.parametrize("fn", [lists_bounded_while_options_over_to_static,
                                lists_bounded_while_to_static_over_options], ids=lambda f: f.__name__)
def test_bounded_while_decorator_stacked_with_to_static(fn):
    start = f32(1.0, 2.0)
    eager_x, eager_outs = fn.python_function(start)
    expected = (eager_x, _rows(eager_outs, start))
    assert_trees_close(expected, fn(start), what="decorated to_static")
    x, outs = jax.jit(laxify.convert(fn))(start)
    _assert_list(eager_outs, outs, start, "jit(convert)")


@pytest.mark.parametrize("n", [0, 1, 3, MAX_ITERS - 1, MAX_ITERS])
def test_bounded_traced_range_list_is_pythons_list(n):
    eager_x, eager_outs = lists_bounded_traced_range(X, n)
    expected = (eager_x, _rows(eager_outs, X))
    assert_trees_close(expected, laxify.to_static(lists_bounded_traced_range, fallback="error")(X, jnp.int32(n)),
                       what=f"to_static n={n}")
    x, outs = jax.jit(laxify.convert(lists_bounded_traced_range))(X, jnp.int32(n))
    assert_trees_close(eager_x, x, what=f"jit(convert) n={n}")
    _assert_list(eager_outs, outs, X, f"jit(convert) n={n}")


# Reads of a bounded loop's list inside the function: `len(outs)` is the traced count (an int32
# array), `outs[-1]`, `outs[k]` read the item Python reads, never the padding.
def lists_bounded_range_len_and_last(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            outs.append(x * 2.0 + i)
    return len(outs), outs[-1], outs[0]


LEN_AND_LAST_LINE = lists_bounded_range_len_and_last.__code__.co_firstlineno + 5


@pytest.mark.parametrize("n", [1, 3, MAX_ITERS - 1, MAX_ITERS])
def test_bounded_list_len_and_last_item_match_python(n):
    expected = lists_bounded_range_len_and_last(X, n)
    for what, fn in (("to_static", laxify.to_static(lists_bounded_range_len_and_last, fallback="error")),
                     ("jit(convert)", jax.jit(laxify.convert(lists_bounded_range_len_and_last))),
                     ("checked", laxify.checked(laxify.convert(lists_bounded_range_len_and_last)))):
        actual = fn(X, jnp.int32(n))
        assert_trees_close((jnp.int32(expected[0]), *expected[1:]), actual, what=f"{what} n={n}")
        assert actual[0].dtype == jnp.int32, what


def test_bounded_list_len_and_reads_stay_one_scan_of_conds():
    counts = primitive_counts(jaxpr_of(lists_bounded_range_len_and_last, X, jnp.int32(3)))
    assert counts["scan"] == 1 and counts["while"] == 0 and counts["cond"] >= 1, counts


def test_bounded_list_last_item_of_empty_list_raises_index_error():
    """n = 0: Python's `outs[-1]` raises IndexError; so do `to_static` and `laxify.checked`,
    after the call, at the user's line (the run-time error channel), never the padding."""
    with pytest.raises(IndexError, match="list index out of range"):
        lists_bounded_range_len_and_last(X, 0)
    for fn in (laxify.to_static(lists_bounded_range_len_and_last, fallback="error"),
               laxify.checked(laxify.convert(lists_bounded_range_len_and_last))):
        with pytest.raises(IndexError, match="list index out of range") as info:
            fn(X, jnp.int32(0))
        assert info.traceback[-1].lineno + 1 == LEN_AND_LAST_LINE, info.traceback[-1]


def lists_bounded_read_at(x, n, k):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            outs.append(x * 2.0 + i)
    return outs[k], outs[-2], len(outs) * 2


@pytest.mark.parametrize("n,k", [(3, 0), (3, 2), (3, -1), (3, -3), (5, 1), (5, -4), (MAX_ITERS, MAX_ITERS - 1),
                                 (MAX_ITERS, -MAX_ITERS)])
def test_bounded_list_traced_index_matches_python(n, k):
    expected = lists_bounded_read_at(X, n, k)
    f = laxify.to_static(lists_bounded_read_at, fallback="error")
    actual = f(X, jnp.int32(n), jnp.int32(k))
    assert_trees_close((expected[0], expected[1], jnp.int32(expected[2])), actual, what=f"n={n} k={k}")


@pytest.mark.parametrize("n,k", [(3, 3), (3, -4), (1, 0), (MAX_ITERS, MAX_ITERS), (2, 5)])
def test_bounded_list_index_past_count_raises_index_error(n, k):
    """An index the list does not have (within the buffer of N rows, or past it) raises
    Python's IndexError after the call, where Python raises it (`outs[-2]` of a one-item list too)."""
    with pytest.raises(IndexError, match="list index out of range"):
        lists_bounded_read_at(X, n, k)
    with pytest.raises(IndexError, match="list index out of range"):
        laxify.to_static(lists_bounded_read_at, fallback="error")(X, jnp.int32(n), jnp.int32(k))


def lists_bounded_then_stacked(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            outs.append(x * 2.0 + i)
    return jnp.stack(outs).mean(axis=0)


def lists_bounded_then_iterated(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            outs.append(x * 2.0 + i)
    total = x * 0
    for row in outs:
        total = total * 0.5 + row
    return total


def lists_bounded_then_sliced(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            outs.append(x * 2.0 + i)
    return jnp.asarray(outs[1:]).sum()


SHAPE_USES = [
    (lists_bounded_then_stacked, "jnp.stack(outs).mean(axis=0)", 5),
    (lists_bounded_then_iterated, "for row in outs:", 6),
    (lists_bounded_then_sliced, "return jnp.asarray(outs[1:]).sum()", 5),
]


@pytest.mark.parametrize("fn,text,offset", SHAPE_USES, ids=lambda v: getattr(v, "__name__", "_"))
def test_bounded_list_use_of_unknown_shape_falls_back_under_to_static(fn, text, offset):
    """A use whose result's shape is the number of items (stacking, iteration, a slice) is
    not one program: `to_static` runs eagerly (Python's exact value) with a FallbackWarning at
    the user's line."""
    line = fn.__code__.co_firstlineno + offset
    for n in (1, 3, MAX_ITERS):
        expected = fn(X, n)
        f = laxify.to_static(fn)
        with pytest.warns(laxify.FallbackWarning, match=r"(?s)`outs`.*max_iters") as record:
            actual = f(X, jnp.int32(n))
        assert_trees_close(expected, actual, what=f"{fn.__name__} n={n}")
        warning = next(w for w in record if issubclass(w.category, laxify.FallbackWarning))
        assert (warning.filename, warning.lineno) == (__file__, line), (warning.filename, warning.lineno)


@pytest.mark.parametrize("fn,text,offset", SHAPE_USES, ids=lambda v: getattr(v, "__name__", "_"))
def test_bounded_list_use_of_unknown_shape_is_located_error_under_jit(fn, text, offset):
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(X, jnp.int32(3))
    error = info.value
    assert error.location.line == fn.__code__.co_firstlineno + offset, str(error)
    assert text in str(error) and "`outs`" in error.message and "len(outs)" in error.fix, str(error)
    assert "_lx" not in str(error), str(error)


def lists_bounded_sum_of_items(x, n):
    outs = []
    with laxify.loop_options(max_iters=MAX_ITERS):
        for i in range(n):
            x = jnp.sin(x) * 1.5 + i
            outs.append(x)
    total = outs[0] * 0
    for k in range(MAX_ITERS):
        if k < len(outs):
            total = total + outs[k] * (k + 1)
    return (total * outs[-1]).sum()


@pytest.mark.parametrize("n", [1, 4, MAX_ITERS])
def test_grad_through_bounded_list_reads_matches_eager(n):
    """Reads of a max_iters list (traced count, `outs[k]`, `outs[-1]`) differentiate in
    reverse mode as eager Python does (the loop is a scan)."""
    expected = jax.grad(lists_bounded_sum_of_items)(X, n)
    for what, f in (("convert", laxify.convert(lists_bounded_sum_of_items)),
                    ("to_static", laxify.to_static(lists_bounded_sum_of_items, fallback="error"))):
        assert_trees_close(expected, jax.grad(f)(X, jnp.int32(n)), what=f"grad {what} n={n}", rtol=1e-4)


def lists_bounded_while_without_list(x):
    with laxify.loop_options(max_iters=20):
        while x.sum() < 100:
            x = x * 2
    return x


def test_bounded_while_without_list_matches_python():
    check(lists_bounded_while_without_list, (f32(200.0),), (f32(60.0),), (f32(1.0, 2.0),),
          expect_prims={"scan", "cond"})


def test_bounded_while_stops_at_max_iters():
    # More iterations needed than allowed: the loop stops after max_iters steps.
    out = laxify.to_static(lists_bounded_while_without_list)(f32(1e-6))
    np.testing.assert_allclose(out, f32(1e-6 * 2 ** 20), rtol=1e-6)


def lists_bounded_smooth_while(x):
    with laxify.loop_options(max_iters=10):
        while x < 10.0:
            x = x * 1.5 + jnp.sin(x)
    return x


def test_grad_through_bounded_while_matches_eager_and_finite_differences():
    for x0 in (0.5, 2.0, 20.0):
        x = jnp.float32(x0)
        eager = jax.grad(lists_bounded_smooth_while)(x)
        converted = jax.grad(laxify.convert(lists_bounded_smooth_while))(x)
        static = jax.grad(laxify.to_static(lists_bounded_smooth_while))(x)
        np.testing.assert_allclose(converted, eager, rtol=1e-5)
        np.testing.assert_allclose(static, eager, rtol=1e-5)
        eps = 1e-3
        xd = np.float64(x0)
        fd = (float(lists_bounded_smooth_while(jnp.float32(xd + eps)))
              - float(lists_bounded_smooth_while(jnp.float32(xd - eps)))) / (2 * eps)
        np.testing.assert_allclose(converted, fd, rtol=2e-2)


def lists_unbounded_while_for_grad(x):
    while x < 10.0:
        x = x * 1.5
    return x


UNBOUNDED_LINE = lists_unbounded_while_for_grad.__code__.co_firstlineno + 1


@pytest.mark.parametrize("transform", [jax.grad, jax.jacrev, lambda f: (lambda x: jax.vjp(f, x)[1](1.0))],
                         ids=["grad", "jacrev", "vjp"])
@pytest.mark.parametrize("api", [laxify.convert, laxify.to_static], ids=["convert", "to_static"])
def test_reverse_mode_through_unbounded_while_says_add_max_iters(transform, api):
    with pytest.raises(laxify.ConversionError) as info:
        transform(api(lists_unbounded_while_for_grad))(jnp.float32(1.0))
    message = str(info.value)
    assert "laxify.loop_options(max_iters=N)" in message, message
    assert f'File "{__file__}", line {UNBOUNDED_LINE}' in message, message
    assert "while x < 10.0:" in message, message


def lists_unbounded_while_of_two(x, w):
    while x < 10.0:
        x = x * w
    return x


def test_forward_mode_through_unbounded_while_is_unchanged():
    """jvp, jacfwd, linearize and vmap of the converted loop give what they give on the
    hand-written lax.while_loop; the lowered program holds no trace of the reverse-mode check."""
    def by_hand(x, w):
        return jax.lax.while_loop(lambda c: c < 10.0, lambda c: c * w, x)

    x, w = jnp.float32(1.0), jnp.float32(1.5)
    for f in (laxify.convert(lists_unbounded_while_of_two), laxify.to_static(lists_unbounded_while_of_two)):
        for tangents in ((1.0, 0.0), (0.0, 1.0)):
            assert_trees_close(jax.jvp(by_hand, (x, w), tangents), jax.jvp(f, (x, w), tangents), what="jvp")
        assert_trees_close(jax.jacfwd(by_hand, argnums=(0, 1))(x, w), jax.jacfwd(f, argnums=(0, 1))(x, w),
                           what="jacfwd")
        assert_trees_close(jax.linearize(by_hand, x, w)[1](1.0, 1.0), jax.linearize(f, x, w)[1](1.0, 1.0),
                           what="linearize")
        xs, ws = jnp.array([1.0, 2.0, 3.0]), jnp.array([1.5, 2.0, 3.0])
        assert_trees_close(jax.vmap(by_hand)(xs, ws), jax.vmap(f)(xs, ws), what="vmap")
    lowered = jax.jit(laxify.convert(lists_unbounded_while_of_two)).lower(x, w).as_text()
    assert "laxify" not in lowered and lowered.count("stablehlo.while") == 1


def lists_bounded_while_with_traced_counter(x, n):
    i = 0
    with laxify.loop_options(max_iters=6):
        while i < n:
            x = x * 2.0
            i += 1
    return x, i


def test_bounded_while_python_counter_traced_bound():
    check(lists_bounded_while_with_traced_counter, (X, jnp.int32(0)), (X, jnp.int32(4)),
          (X, jnp.int32(6)), expect_prims={"scan", "cond"})


# -- unroll and checkpoint ----------------------------------------------------------------------

def lists_scan_rolled(x):
    acc = x
    for i in range(10):
        acc = jnp.sin(acc) + i
    return acc


def lists_scan_unrolled(x):
    acc = x
    with laxify.loop_options(unroll=2):
        for i in range(10):
            acc = jnp.sin(acc) + i
    return acc


@laxify.loop_options(unroll=5)
def lists_scan_unrolled_decorated(x):
    outs = []
    acc = x
    for i in range(10):
        acc = jnp.sin(acc) + i
        outs.append(acc)
    return jnp.stack(outs)


def lists_scan_checkpointed(x):
    acc = x
    with laxify.loop_options(checkpoint=True):
        for i in range(10):
            acc = jnp.sin(acc) * 1.1
    return acc


def _scan_params(fn, *args):
    jaxpr = jaxpr_of(fn, *args)
    return [e.params for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]


def test_unroll_gives_same_numbers_and_sets_scan_unroll():
    check(lists_scan_unrolled, (X,), expect_prims=SCAN)
    np.testing.assert_allclose(laxify.to_static(lists_scan_unrolled)(X),
                               laxify.to_static(lists_scan_rolled)(X), rtol=1e-6)
    assert [p["unroll"] for p in _scan_params(lists_scan_unrolled, X)] == [2]
    assert [p["unroll"] for p in _scan_params(lists_scan_rolled, X)] == [1]


def test_unroll_decorator_with_appends():
    check(lists_scan_unrolled_decorated, (X,), expect_prims=SCAN)
    assert [p["unroll"] for p in _scan_params(lists_scan_unrolled_decorated, X)] == [5]


def test_checkpoint_gives_same_values_and_gradients():
    check(lists_scan_checkpointed, (X,), expect_prims=SCAN)
    g = jax.grad(lambda v: laxify.convert(lists_scan_checkpointed)(v).sum())(X)
    g_eager = jax.grad(lambda v: lists_scan_checkpointed(v).sum())(X)
    np.testing.assert_allclose(g, g_eager, rtol=1e-5)
    counts = primitive_counts(jax.make_jaxpr(jax.grad(
        lambda v: laxify.convert(lists_scan_checkpointed)(v).sum()))(X))
    assert any("remat" in name or "checkpoint" in name for name in counts), counts


# -- invalid options ----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, text", [
    ({"max_iters": -1}, "max_iters"),
    ({"max_iters": 1.5}, "max_iters"),
    ({"max_iters": "10"}, "max_iters"),
    ({"max_iters": True}, "max_iters"),
    ({"unroll": 1.5}, "unroll"),
    ({"unroll": "2"}, "unroll"),
])
def test_invalid_loop_options_raise_value_error(kwargs, text):
    with pytest.raises(ValueError) as info:
        laxify.loop_options(**kwargs)
    msg = str(info.value)
    assert text in msg
    assert repr(next(iter(kwargs.values()))) in msg  # shows the value given


def test_loop_options_do_not_leak_out_of_the_block():
    # After a bounded block, a later traced while with appends is again an error.
    fn = laxify.to_static(lists_bounded_while_with_block)
    fn(f32(1.0, 2.0))
    with pytest.raises(laxify.ConversionError, match="max_iters"):
        laxify.to_static(lists_append_in_traced_while, fallback="error")(f32(1.0, 2.0))


def lists_bounded_while_last_or_start(x):
    outs = []
    with laxify.loop_options(max_iters=10):
        while x.sum() < 20:
            x = x * 2
            outs.append(x)
    last = outs[-1] if len(outs) > 0 else x
    grew = len(outs) > 1 and outs[1].sum() > 10
    return last, len(outs), grew


def test_bounded_list_read_on_an_untaken_side_raises_nothing():
    """`outs[-1] if len(outs) > 0 else x` and `len(outs) > 1 and outs[1]...`: both sides are
    computed, but the read's IndexError is Python's only where the condition picks it."""
    for start in (f32(30.0), f32(15.0), f32(1.0, 2.0)):
        expected = lists_bounded_while_last_or_start(start)
        for what, f in (("to_static", laxify.to_static(lists_bounded_while_last_or_start, fallback="error")),
                        ("checked", laxify.checked(laxify.convert(lists_bounded_while_last_or_start)))):
            actual = f(start)
            assert_trees_close((expected[0], jnp.int32(expected[1]), jnp.asarray(expected[2])), actual,
                               what=f"{what} {start}")


def lists_bounded_tuples(x, n):
    outs = [(x, jnp.int32(7))]
    with laxify.loop_options(max_iters=6):
        for i in range(n):
            outs.append((x * i, jnp.int32(i)))
    return outs[-1], len(outs), outs[0]


@pytest.mark.parametrize("n", [0, 2, 6])
def test_bounded_list_of_tuples_with_items_before_the_loop(n):
    expected = lists_bounded_tuples(X, n)
    actual = laxify.to_static(lists_bounded_tuples, fallback="error")(X, jnp.int32(n))
    assert_trees_close(jax.tree_util.tree_map(jnp.asarray, expected), actual, what=f"n={n}")


def test_bounded_list_under_vmap():
    ns = jnp.array([0, 2, 5], jnp.int32)
    last, count, first = jax.vmap(laxify.convert(lists_bounded_tuples), in_axes=(None, 0))(X, ns)
    for j, n in enumerate([0, 2, 5]):
        expected = lists_bounded_tuples(X, n)
        assert_trees_close(jax.tree_util.tree_map(jnp.asarray, expected),
                           (jax.tree_util.tree_map(lambda a: a[j], last), count[j],
                            jax.tree_util.tree_map(lambda a: a[j], first)), what=f"vmap n={n}")


def test_bounded_list_returned_from_an_exported_program():
    """The list's type is registered for jax.export: a program that returns it exports, and
    the loaded program gives its first `count` rows, as `to_static` does."""
    loaded = laxify.load(laxify.to_static(lists_bounded_traced_range).export(X, jnp.int32(0)))
    for n in (0, 3, MAX_ITERS):
        eager_x, eager_outs = lists_bounded_traced_range(X, n)
        assert_trees_close((eager_x, _rows(eager_outs, X)), loaded(X, jnp.int32(n)), what=f"loaded n={n}")


def counting_generator(x):
    for i in range(3):
        yield x + i


def test_results_that_are_no_pytree_pass_through_after_a_bounded_list_was_made():
    """Once a process has made a bounded list, results are looked through for one: a generator
    that a generator function's eager run returns must pass as it is (JAX warned that it treats
    a generator as a leaf; the full suite found it after the bounded-list tests)."""
    laxify.to_static(lists_bounded_range_len_and_last, fallback="error")(X, jnp.int32(2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = list(laxify.to_static(counting_generator)(X))
    assert [w.category for w in caught] == [laxify.FallbackWarning]
    assert_trees_close(list(counting_generator(X)), got, what="generator")
