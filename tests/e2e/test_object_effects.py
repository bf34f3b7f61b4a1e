"""Effects through any object a converted function reaches, and NumPy array arguments changed
in place: exactly Python's (converted, or the function runs as Python with a warning at the
user's line), never once at trace time (docs/semantics.md, "Effects through any object" and
"NumPy array arguments").

Each case runs the function eagerly on concrete inputs that take every path (both branches,
loops of 0, 1 and several iterations), then ``to_static`` and ``jax.jit(laxify.convert(f))``
on the same inputs, with the global state reset between the runs."""

import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims, jaxpr_of


def line_of(fn, snippet: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if snippet in line:
            return start + k
    raise AssertionError(f"{snippet!r} not in {fn.__name__}")


def run_warned(fn, *args):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = fn(*args)
        jax.block_until_ready(result)
    return result, [w for w in record if issubclass(w.category, laxify.FallbackWarning)]


# -- the objects ---------------------------------------------------------------------------------


class Tally:
    hits = 0


class Box:
    def __init__(self):
        self.n = 0


BOX = Box()
CFG = {"n": 0}
LOG = []


class Counter:
    total = 0

    def add(self, v):
        type(self).total += 1
        return v


COUNTER = Counter()


def _bump_class(v):
    Tally.hits += 1
    return v * 2


def _bump_box(v):
    BOX.n += 1
    return v * 2


def _bump_dict(v):
    CFG["n"] += 1
    return v * 2


def _bump_function(v):
    _bump_function.calls += 1
    return v * 2


_bump_function.calls = 0


def _log(v):
    LOG.append(float(v) if not isinstance(v, jax.core.Tracer) else v)
    return v * 2


def _bump_type(v):
    return COUNTER.add(v) * 2


def state():
    return (Tally.hits, BOX.n, CFG["n"], _bump_function.calls, len(LOG), Counter.total)


def reset():
    Tally.hits = 0
    BOX.n = 0
    CFG["n"] = 0
    _bump_function.calls = 0
    LOG.clear()
    Counter.total = 0


HELPERS = {
    "class attribute": _bump_class,
    "module-level object": _bump_box,
    "module-level dict item": _bump_dict,
    "function attribute": _bump_function,
    "global list": _log,
    "class through type(self)": _bump_type,
}


def branch_of(helper):
    def f(x):
        if x > 0:
            x = helper(x)
        return x

    return f


def loop_of(helper):
    def f(xs):
        s = jnp.float32(0.0)
        for v in xs:
            s = s + helper(v)
        return s

    return f


def _compare(fn, inputs, snippet):
    """``to_static(fn)`` gives eager's results and effects on each input (twice: the second call
    takes the cached decision), with one FallbackWarning at the construct's line; under
    ``jax.jit(laxify.convert(fn))`` a located ConversionError, never a silent result."""
    static = laxify.to_static(fn)
    for args in inputs:
        reset()
        expected = [fn(*args), fn(*args)]
        expected_state = state()
        reset()
        first, found = run_warned(static, *args)
        second, _ = run_warned(static, *args)
        assert_trees_close(expected, [first, second], what=f"to_static on {args}")
        assert state() == expected_state, (state(), expected_state)
    # (the warning is issued once per function, at the first call that falls back)
    reset()
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(*inputs[-1])
    message = str(info.value)
    assert f"line {line_of(fn, snippet)}" in message, message
    assert "_lx" not in message and "Tracer" not in message, message
    assert state() == (0, 0, 0, 0, 0, 0), state()


@pytest.mark.parametrize("helper", list(HELPERS.values()), ids=list(HELPERS))
def test_effect_in_a_helper_under_a_traced_if_happens_only_on_the_taken_path(helper):
    fn = branch_of(helper)
    _compare(fn, [(jnp.float32(-1.0),), (jnp.float32(2.0),)], "if x > 0:")
    reset()
    _, found = run_warned(laxify.to_static(fn), jnp.float32(-1.0))
    assert len(found) == 1 and found[0].lineno == line_of(fn, "if x > 0:"), [str(w.message) for w in found]
    assert "_lx" not in str(found[0].message)


@pytest.mark.parametrize("helper", list(HELPERS.values()), ids=list(HELPERS))
def test_effect_in_a_helper_in_a_traced_loop_happens_once_per_iteration(helper):
    fn = loop_of(helper)
    inputs = [(jnp.zeros((0,), jnp.float32),), (jnp.array([3.0], jnp.float32),), (jnp.arange(4.0, dtype=jnp.float32),)]
    _compare(fn, inputs, "for v in xs:")


def test_the_warning_names_the_attribute_and_the_object():
    fn = branch_of(_bump_class)
    reset()
    _, found = run_warned(laxify.to_static(fn), jnp.float32(1.0))
    text = str(found[0].message)
    assert "the attribute `hits` of the class `Tally`" in text, text
    fn = branch_of(_bump_function)
    _, found = run_warned(laxify.to_static(fn), jnp.float32(1.0))
    assert "the attribute `calls` of the function `_bump_function`" in str(found[0].message)


def make_nonlocal_counter():
    n = 0

    def bump(v):
        nonlocal n
        n += 1
        return v * 2

    def f(x):
        if x > 0:
            x = bump(x)
        return x, n

    return f


def test_a_closure_cell_assigned_by_a_helper_under_a_traced_if():
    for x in (jnp.float32(-1.0), jnp.float32(2.0)):
        expected = make_nonlocal_counter()(x)
        got, found = run_warned(laxify.to_static(make_nonlocal_counter()), x)
        assert_trees_close(expected, got, what="to_static")
        assert len(found) == 1
    with pytest.raises(laxify.ConversionError):
        jax.jit(laxify.convert(make_nonlocal_counter()))(jnp.float32(-1.0))


def read_class_attribute(x):
    if x > 0:
        x = x * Tally.hits + _bump_function.calls
    return x


def test_reading_classes_and_function_attributes_still_converts():
    reset()
    Tally.hits, _bump_function.calls = 3, 1
    static = laxify.to_static(read_class_attribute, fallback="error")
    for x in (jnp.float32(-1.0), jnp.float32(2.0)):
        assert_trees_close(read_class_attribute(x), static(x), what="to_static")
        assert_trees_close(read_class_attribute(x), jax.jit(laxify.convert(read_class_attribute))(x), what="jit")
    assert "cond" in control_flow_prims(jaxpr_of(read_class_attribute, jnp.float32(1.0)))
    assert (Tally.hits, _bump_function.calls) == (3, 1)


def append_to_global_in_loop(x):
    for v in x:
        LOG.append(v)
    return len(LOG)


def test_a_loop_over_an_array_appending_to_a_global_list_runs_as_python():
    static = laxify.to_static(append_to_global_in_loop)
    for x in (jnp.zeros((0,)), jnp.array([1.0]), jnp.array([1.0, 2.0, 3.0])):
        reset()
        expected = [append_to_global_in_loop(x), append_to_global_in_loop(x)]
        expected_log = [float(v) for v in LOG]
        reset()
        got = [run_warned(static, x)[0], run_warned(static, x)[0]]
        assert got == expected
        assert [float(v) for v in LOG] == expected_log  # values, not tracers of a trace
    reset()
    _, found = run_warned(laxify.to_static(append_to_global_in_loop), jnp.array([1.0]))
    assert len(found) == 1 and found[0].lineno == line_of(append_to_global_in_loop, "for v in x:")
    assert "`LOG`" in str(found[0].message)
    reset()
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(append_to_global_in_loop))(jnp.array([1.0]))
    assert "`LOG`" in str(info.value) and "_lx" not in str(info.value)
    assert LOG == []


# -- NumPy array arguments ------------------------------------------------------------------------


def np_iadd(x):
    x += 1
    return x


def np_alias_iadd(x):
    a = x
    a += 1
    return x


def np_setitem(x):
    x[0] = 5
    return x.sum()


def np_slice_imul(x):
    x[1:] *= 2
    return x.sum()


def np_out(x):
    np.add(x, 1, out=x)
    return x.sum()


def np_if(x):
    if x.sum() > 0:
        x += 1
    return x.sum()


def np_loop(x):
    for i in range(x.shape[0]):
        if x[i] > 1:
            x[i] = 0
    return x.sum()


def np_view(x):
    a = x[1:]
    a += 1
    return x.sum()


def np_rows(x):
    for row in x:
        row *= 2
    return x.sum()


def _halve(v):
    v /= 2


def np_helper(x):
    _halve(x)
    return x


def np_in_list(xs):
    xs[0] += 1
    return xs[0].sum()


def np_in_dict(d):
    d["w"][0] = 7
    return d["w"].sum()


NUMPY_CASES = [
    (np_iadd, [np.array([1.0, 2.0], np.float32)], "x += 1"),
    (np_alias_iadd, [np.array([1.0, 2.0], np.float32)], "a += 1"),
    (np_setitem, [np.array([1.0, 2.0], np.float32)], "x[0] = 5"),
    (np_slice_imul, [np.array([1.0, 2.0, 3.0], np.float32)], "x[1:] *= 2"),
    (np_out, [np.array([1.0, 2.0], np.float32)], "np.add(x, 1, out=x)"),
    (np_if, [np.array([1.0, 2.0], np.float32), np.array([-1.0, -2.0], np.float32)], "x += 1"),
    (np_loop, [np.array([1.0, 2.0, 3.0], np.float32), np.array([0.0], np.float32)], "x[i] = 0"),
    (np_view, [np.array([1.0, 2.0], np.float32)], "a += 1"),
    (np_rows, [np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)], "row *= 2"),
    (np_helper, [np.array([2.0, 4.0], np.float32)], "v /= 2"),
]


@pytest.mark.parametrize("fn, inputs, snippet", NUMPY_CASES, ids=[c[0].__name__ for c in NUMPY_CASES])
def test_a_numpy_argument_changed_in_place_is_changed_as_numpy_changes_it(fn, inputs, snippet):
    static = laxify.to_static(fn)
    where = _halve if fn is np_helper else fn
    for x in inputs:
        eager_x, static_x = x.copy(), x.copy()
        expected = fn(eager_x)
        got, found = run_warned(static, static_x)
        assert_trees_close(expected, got, what=f"{fn.__name__}: to_static")
        np.testing.assert_array_equal(static_x, eager_x)  # the caller's array, changed in place
        assert all(w.lineno == line_of(where, snippet) for w in found), [(w.lineno, str(w.message)) for w in found]
        assert all("_lx" not in str(w.message) and "NumPy" in str(w.message) for w in found)
        again_x = x.copy()
        assert_trees_close(fn(x.copy()), run_warned(static, again_x)[0], what=f"{fn.__name__}: to_static, cached")
        np.testing.assert_array_equal(again_x, eager_x)


@pytest.mark.parametrize("fn, inputs, snippet", NUMPY_CASES, ids=[c[0].__name__ for c in NUMPY_CASES])
def test_a_jax_array_argument_keeps_jax_semantics_and_converts(fn, inputs, snippet):
    if fn is np_out:
        pytest.skip("`out=` needs a NumPy array")
    # A JAX array first, then a NumPy array of the same shape: the NumPy call still runs as
    # NumPy's (its programs are not the JAX array's).
    static = laxify.to_static(fn)
    for x in inputs:
        try:
            expected = fn(jnp.asarray(x))  # a JAX array is never changed in place
        except TypeError:  # (`x[i] = v`: on a JAX array laxify's `.at[]` update, as on a copy)
            expected = fn(x.copy())
        got, found = run_warned(static, jnp.asarray(x))
        assert_trees_close(expected, got, what=f"{fn.__name__}: to_static on a JAX array")
        assert not found, [str(w.message) for w in found]
        assert_trees_close(expected, jax.jit(laxify.convert(fn))(x), what=f"{fn.__name__}: jit(convert)")
        mine, eager_x = x.copy(), x.copy()
        got, _ = run_warned(static, mine)
        assert_trees_close(fn(eager_x), got, what=f"{fn.__name__}: to_static on NumPy after JAX")
        np.testing.assert_array_equal(mine, eager_x)


def test_containers_of_numpy_arrays_are_changed_in_place():
    xs = [np.array([1.0, 2.0], np.float32)]
    held = xs[0]
    got, found = run_warned(laxify.to_static(np_in_list), xs)
    assert float(got) == 5.0 and xs[0] is held and held.tolist() == [2.0, 3.0]
    assert len(found) == 1
    d = {"w": np.array([1.0, 2.0], np.float32)}
    held = d["w"]
    got, _ = run_warned(laxify.to_static(np_in_dict), d)
    assert float(got) == 9.0 and d["w"] is held and held.tolist() == [7.0, 2.0]


def np_pure(x):
    s = 0.0
    y = x * 2
    y += 1
    n = x.shape[0]
    n -= 1
    for v in x:
        if v > 1:
            s += v
    return s + y.sum() + n


def test_a_numpy_argument_the_function_does_not_change_converts():
    static = laxify.to_static(np_pure, fallback="error")
    for x in (np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5], np.float32)):
        before = x.copy()
        assert_trees_close(np_pure(x.copy()), static(x), what="to_static")
        np.testing.assert_array_equal(x, before)
    assert {"scan", "cond"} <= control_flow_prims(jaxpr_of(np_pure, np.array([1.0, 2.0], np.float32)))


def test_staging_with_a_numpy_argument_stages_the_jax_array_program():
    static = laxify.to_static(np_alias_iadd, fallback="error")
    x = np.array([1.0, 2.0], np.float32)
    assert "tensor<2xf32>" in static.lower(x).as_text()
    assert static.eval_shape(x).shape == (2,)
    np.testing.assert_array_equal(x, [1.0, 2.0])


def count_in_own_loop(x):
    for v in x:
        Tally.hits += 1
        BOX.n += 1
    return x.sum()


def count_in_own_if(x):
    if x > 0:
        _bump_function.calls += 1
    return x


def count_in_own_while(x):
    i = 0
    while i < x.shape[0] and x[i] > 0:
        CFG["n"] += 1
        i += 1
    return i


@pytest.mark.parametrize(
    "fn, inputs, snippet",
    [
        (count_in_own_loop, [(jnp.zeros((0,)),), (jnp.array([1.0]),), (jnp.array([1.0, -2.0, 3.0]),)], "for v in x:"),
        (count_in_own_if, [(jnp.float32(-1.0),), (jnp.float32(2.0),)], "if x > 0:"),
        (count_in_own_while, [(jnp.array([-1.0, 2.0]),), (jnp.array([1.0, 2.0, -3.0]),)], "while i < x.shape[0]"),
    ],
    ids=["for", "if", "while"],
)
def test_effects_written_in_the_function_itself_under_traced_control_flow(fn, inputs, snippet):
    _compare(fn, inputs, snippet)
