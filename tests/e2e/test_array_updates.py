"""Array updates written the Python way (`x[i] = v`, `x[i] += v`, slices, masks, containers)
end to end.

The oracle is the same function run eagerly on NumPy arrays (which change in place); the
converted function runs on JAX arrays through `to_static` and `jax.jit(laxify.convert(f))`,
where each update is JAX's functional `x.at[i].set(v)` (docs/semantics.md, "Array updates").
"""

from __future__ import annotations

import copy
import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close, control_flow_prims, jaxpr_of, primitive_counts, static_positions

UPDATES = ("scatter", "dynamic_update_slice", "select_n")


def numpy_copy(args):
    """The inputs as the NumPy user has them: arrays become (fresh) NumPy arrays."""
    return jax.tree_util.tree_map(
        lambda a: np.array(a) if isinstance(a, (jax.Array, np.ndarray)) else copy.deepcopy(a), args)


def update_prims(jaxpr) -> set[str]:
    return {p for p in primitive_counts(jaxpr) if p.startswith(UPDATES)}


def check(fn, *args, prims=(), updates=True):
    """``fn`` on NumPy arrays eagerly vs to_static and jit(convert) on JAX arrays; the program
    holds exactly the control-flow primitives ``prims`` and (``updates``) an indexed update."""
    expected = fn(*numpy_copy(args))
    statics = static_positions(args)
    got = laxify.to_static(fn, fallback="error")(*copy.deepcopy(args))
    assert_trees_close(expected, got, what=f"{fn.__name__}: to_static")
    jitted = jax.jit(laxify.convert(fn), static_argnums=statics)
    assert_trees_close(expected, jitted(*copy.deepcopy(args)), what=f"{fn.__name__}: jit(convert)")
    jaxpr = jaxpr_of(fn, *copy.deepcopy(args), static_argnums=statics)
    assert control_flow_prims(jaxpr) == frozenset(prims), jaxpr
    if updates:
        assert update_prims(jaxpr), f"no indexed update in\n{jaxpr}"
    return jaxpr


def f32(*values):
    return jnp.array(values, jnp.float32)


X = f32(0.5, -1.0, 2.0, 3.0)
G = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) - 5.0
I32 = jnp.arange(1, 7, dtype=jnp.int32)


# -- index kinds ------------------------------------------------------------------------------

def set_int(x):
    x[1] = 7.0
    x[-1] = x[0] * 2
    return x


def set_traced_int(x, i):
    x[i] = 7.0
    x[i - 1] += 1.0
    return x


def set_slices(x, g):
    x[1:3] = 0.0
    g[1:, :2] += 1.0
    g[::2, 1] = x[:2]
    return x, g


def set_tuple(g, i, j):
    g[i, j] += 1.0
    g[0, 1] = g[i, j] * 3
    return g


def set_ellipsis(g):
    g[..., 0] = 5.0
    g[...] *= 2.0
    return g


def set_integer_array_with_repeats(x):
    idx = jnp.array([0, 0, 2])
    x[idx] += 1.0  # NumPy adds once per distinct index
    return x


@pytest.mark.parametrize("fn, args", [
    (set_int, (X,)),
    (set_traced_int, (X, jnp.int32(2))),
    (set_traced_int, (X, jnp.int32(-1))),
    (set_slices, (X, G)),
    (set_tuple, (G, jnp.int32(1), jnp.int32(2))),
    (set_ellipsis, (G,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_index_kinds(fn, args):
    check(fn, *args)


def test_repeated_integer_array_index_updates_once_as_numpy():
    def oracle(x):
        x = np.array(x)
        x[np.array([0, 0, 2])] += 1.0
        return x
    assert_trees_close(oracle(X), laxify.to_static(set_integer_array_with_repeats)(X), what="repeats")


def set_mask(x):
    x[x > 1.0] = 0.0
    x[x < 0.0] += 5.0
    return x


def set_row_mask(g, row):
    g[g[:, 0] > 0.0] = row
    return g


def test_boolean_mask_with_one_value_is_a_where():
    jaxpr = check(set_mask, X)
    assert "select_n" in primitive_counts(jaxpr)
    check(set_row_mask, G, f32(1.0, 2.0, 3.0, 4.0))


def test_boolean_mask_with_values_per_element_is_a_located_error():
    def f(x):
        x[x > 1.0] = jnp.array([1.0, 2.0])
        return x
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(f)(X)
    text = str(info.value)
    assert "traced boolean mask `bool[4]`" in text and "float32[2]" in text
    assert 'x[x > 1.0] = jnp.array([1.0, 2.0])' in text and "jnp.where" in text
    assert "_lx" not in text


def test_out_of_bounds_python_int_index_raises_as_numpy():
    def f(x):
        x[5] = 1.0
        return x
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 4"):
        laxify.to_static(f)(X)


# -- every augmented operator -------------------------------------------------------------------

FLOAT_OPS = ["+", "-", "*", "/", "**", "//", "%"]
INT_OPS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_augmented_operators_on_floats(op, tmp_path):
    fn = _write_function(tmp_path, f"x[i] {op}= v\n    x[0] {op}= v")
    check(fn, X + 4.0, jnp.int32(2), jnp.float32(1.5))


@pytest.mark.parametrize("op", INT_OPS)
def test_augmented_operators_on_ints(op, tmp_path):
    fn = _write_function(tmp_path, f"x[i] {op}= v\n    x[0] {op}= v")
    check(fn, I32, jnp.int32(3), jnp.int32(2))


def test_matmul_augmented_on_a_row(tmp_path):
    fn = _write_function(tmp_path, "x[i] @= v")
    check(fn, G[:, :3], jnp.int32(1), jnp.eye(3, dtype=jnp.float32) * 2.0)


def _write_function(tmp_path, body: str):
    """A function ``upd(x, i, v)`` with ``body``, from a real file (laxify reads its source)."""
    import importlib.util
    path = tmp_path / f"upd_{abs(hash(body))}.py"
    path.write_text(f"def upd(x, i, v):\n    {body}\n    return x\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.upd


# -- containers: dict items and attributes ---------------------------------------------------

def dict_item(state, i):
    state["h"][i] = 2.0
    state["h"][0] += state["c"]
    return state


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Buffer:
    buf: jax.Array


def attribute_item(s, i):
    if i > 0:
        s.buf[i] *= 3.0
    s.buf[0] = 7.0
    return s.buf


def test_dict_item_and_attribute_containers():
    check(dict_item, {"h": X, "c": jnp.float32(1.5)}, jnp.int32(1))
    s = Buffer(X)
    expected = attribute_item(Buffer(np.array(X)), np.int32(1))
    assert_trees_close(expected, laxify.to_static(attribute_item)(Buffer(X), jnp.int32(1)), what="attr")
    assert_trees_close(expected, jax.jit(laxify.convert(attribute_item))(s, jnp.int32(1)), what="attr jit")
    assert "cond" in control_flow_prims(jaxpr_of(attribute_item, s, jnp.int32(1)))


def test_dict_item_in_a_traced_branch_is_carried():
    def f(state, c):
        if c > 0:
            state["h"][1] = c
        return state["h"]
    check(f, {"h": X}, jnp.float32(4.0), prims={"cond"})
    check(f, {"h": X}, jnp.float32(-4.0), prims={"cond"})


# -- inside converted control flow -------------------------------------------------------------

def in_traced_if(x, c):
    if c > 0:
        x[0] = c
    else:
        x[1:] += c
    return x


def in_traced_while(x, n):
    k = 0
    while k < n:
        x[k] *= 2.0
        k += 1
    return x


def in_scanned_for(x):
    for i in range(3):
        x[i + 1] += x[i]
    return x


def in_traced_for(x, n):
    for i in range(n):
        x[i] = i * 1.5
    return x


def nested(x, g, n, c):
    k = 0
    while k < n:
        if c > k:
            for j in range(4):
                g[k % 3, j] += x[j]
        else:
            g[0, k] = -1.0
        k += 1
    return g


@pytest.mark.parametrize("fn, args, prims", [
    (in_traced_if, (X, jnp.float32(2.0)), {"cond"}),
    (in_traced_if, (X, jnp.float32(-2.0)), {"cond"}),
    (in_traced_while, (X, jnp.int32(3)), {"while"}),
    (in_traced_while, (X, jnp.int32(0)), {"while"}),
    (in_scanned_for, (X,), {"scan"}),
    (in_traced_for, (X, jnp.int32(2)), {"while"}),
    (nested, (X, G, jnp.int32(3), jnp.float32(1.5)), {"while", "cond", "scan"}),
], ids=lambda v: getattr(v, "__name__", ""))
def test_updates_inside_traced_control_flow(fn, args, prims):
    check(fn, *args, prims=prims)


def test_numpy_array_made_inside_takes_traced_values():
    def f(x):
        out = np.zeros(4, np.float32)
        for i in range(4):
            out[i] = x[i] ** 2
        out[0] = 1.0
        return out
    check(f, X, prims={"scan"})


def test_parameter_updated_and_returned_is_no_error():
    def f(x, i):
        x[i] = 0.0
        return x
    check(f, X, jnp.int32(3))
    x = jnp.array(X)
    laxify.to_static(f)(x, jnp.int32(0))
    assert float(x[0]) == 0.5  # the caller's array is a value: unchanged, as with `.at[]`


def fill_for_the_caller(buf):
    buf[0] = 1.0
    buf[1] = 2.0  # nothing reads `buf` after this: only the caller would see the change


def fill_a_container_for_the_caller(state):
    state["h"][0] = 1.0  # the dict is changed in place: the caller sees the new array


def test_parameter_updated_for_the_caller_only_is_a_located_error():
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(fill_for_the_caller)(jnp.zeros(3))
    message = str(info.value)
    assert "`buf`, a parameter of the function" in message and "return buf" in message
    assert f'File "{__file__}"' in message and "buf[1] = 2.0" in message
    assert "_lx" not in message
    # NumPy arrays keep Python's in-place semantics eagerly; a dict holding a JAX array is
    # changed in place, as the caller of the NumPy version sees.
    state = {"h": jnp.zeros(3)}
    laxify.convert(fill_a_container_for_the_caller)(state)
    assert float(state["h"][0]) == 1.0


def clip_for_the_caller(arr):
    for i in range(arr.shape[0]):
        if arr[i] < 0:  # reads the items, but only to decide further updates of `arr`
            arr[i] = 0


def clip_by_enumerate_for_the_caller(arr):
    for i, v in enumerate(arr):
        if v < 0:
            arr[i] = 0


def sum_after_clip(a):
    clip_for_the_caller(a)  # NumPy: the caller's `a` is clipped; a functional update is lost
    return a.sum()


def sum_after_enumerate_clip(a):
    clip_by_enumerate_for_the_caller(a)
    return a.sum()


def sum_after_nested_clip(a):
    def clip(arr):
        for i in range(arr.shape[0]):
            if arr[i] < 0:
                arr[i] = 0
    clip(a)
    return a.sum()


def clip_and_count(arr):
    count = 0
    for i in range(arr.shape[0]):
        if arr[i] < 0:
            arr[i] = 0
            count += 1  # the loop's reads reach `count`: the function's own result
    return count


@pytest.mark.parametrize("fn", [sum_after_clip, sum_after_nested_clip, sum_after_enumerate_clip])
def test_parameter_updated_in_a_loop_for_the_caller_only_is_a_located_error(fn):
    # The loop reads `arr` again, but only to decide its own updates: the new items reach only
    # the caller, which NumPy would change (eager on a NumPy copy sums 4, a lost update 2).
    a = jnp.array([-1, -2, 3, 1])
    assert fn(np.array(a)) == 4
    for route in (laxify.to_static(fn), jax.jit(laxify.convert(fn))):
        with pytest.raises(laxify.ConversionError) as info:
            route(a)
        message = str(info.value)
        assert "`arr`, a parameter of the function" in message and "arr[i] = 0" in message
        assert "_lx" not in message


def test_parameter_updated_in_a_loop_that_reads_it_for_its_result_is_no_error():
    a = jnp.array([-1, -2, 3, 1])
    assert int(laxify.to_static(clip_and_count)(a)) == clip_and_count(np.array(a)) == 2
    assert control_flow_prims(jaxpr_of(clip_and_count, a)) & {"scan", "while"}
    assert control_flow_prims(jaxpr_of(clip_and_count, a)) >= {"cond"}


# -- Python lists keep Python's semantics ---------------------------------------------------

def test_python_list_is_changed_in_place_aliases_included():
    def f(x, xs):
        ys = xs
        xs[0] = x[0]
        xs[1] += 1.0
        return ys, xs
    expected = f(np.array(X), [0.0, 1.0])
    assert_trees_close(expected, laxify.to_static(f)(X, [0.0, 1.0]), what="list")
    assert_trees_close(expected, jax.jit(laxify.convert(f))(X, [0.0, 1.0]), what="list jit")

    def g(n):
        xs = [0, 0, 0]
        alias = xs
        xs[n] = 5
        return alias, alias is xs
    assert laxify.to_static(g)(1) == ([0, 5, 0], True)


def test_dict_of_python_values_changed_in_place():
    def f(x, d):
        d["a"] = x.sum()
        return d
    got = laxify.to_static(f)(X, {"a": 0.0})
    assert_trees_close({"a": X.sum()}, got, what="dict")


# -- aliasing of JAX arrays ----------------------------------------------------------------------

def test_alias_read_after_an_update_is_a_located_error_with_both_names():
    def f(x, i):
        y = x
        x[i] = 1.0
        return y
    for run in (laxify.to_static(f), jax.jit(laxify.convert(f))):
        with pytest.raises(laxify.ConversionError) as info:
            run(X, jnp.int32(1))
        text = str(info.value)
        assert "updates the JAX array `x`, and `y` refers to the same array" in text
        assert re.search(r'File ".*test_array_updates\.py", line \d+\n    x\[i\] = 1\.0\n    \^', text), text
        assert "`y = x.copy()`" in text
        assert "_lx" not in text
    # NumPy arrays and lists alias as in Python.
    assert laxify.to_static(f)([0.0, 0.0], 1) == [0.0, 1.0]


def test_alias_with_copy_is_fine():
    def f(x, i):
        y = x.copy()
        x[i] = 1.0
        return x, y
    check(f, X, jnp.int32(1))


# -- explain and diff ---------------------------------------------------------------------------

def test_explain_lists_each_update_and_diff_shows_it():
    static = laxify.to_static(in_traced_if)
    text = str(static.explain())
    assert "update  converted  `x[0] = c` → `x = x.at[0].set(c)` on a JAX array" in text
    assert "`x[1:] += c` → `x = x.at[1:].add(c)`" in text
    diff = str(static.diff())
    assert "-        x[0] = c" in diff and "_lx.setitem(x, 0, c)" in diff
    assert '_lx.setitem_op(x, _lx.at[1:], "+", c)' in static.source


def test_explain_shows_the_users_code_not_the_converted_one():
    def f(x, a):
        x[0] = a or 2.0
        return x
    text = str(laxify.to_static(f).explain())
    assert "`x[0] = a or 2.0` → `x = x.at[0].set(a or 2.0)`" in text
    assert "_lx" not in text


def test_user_names_that_start_like_laxifys_stay_the_users():
    def f(_lx_x, i):
        _lx_y = _lx_x
        _lx_x[i] = 1.0
        return _lx_y
    static = laxify.to_static(f)
    assert "`_lx_x[i] = 1.0` → `_lx_x = _lx_x.at[i].set(1.0)`" in str(static.explain())
    with pytest.raises(laxify.ConversionError, match="updates the JAX array `_lx_x`, and `_lx_y` refers"):
        static(X, jnp.int32(1))


def test_row_of_a_2d_array_through_two_subscripts():
    def f(g, i):
        g[0][i] = 9.0
        g[1][1:3] += 1.0
        return g
    check(f, G, jnp.int32(2))


def test_item_of_an_array_in_a_tuple_is_changed_in_place_for_numpy():
    def f(n):
        t = (np.zeros(3), np.ones(2))
        t[0][n] = 5.0
        return t[0]
    np.testing.assert_array_equal(laxify.to_static(f)(1), [0.0, 5.0, 0.0])


def test_update_of_a_for_target_over_an_array_read_after_is_a_located_error():
    def f(grid):
        for row in grid:
            row[0] = 0.0
        return grid
    with pytest.raises(laxify.ConversionError) as info:
        laxify.to_static(f)(G)
    text = str(info.value)
    assert "updates `row`, the target of a `for` loop over the JAX array `grid`" in text
    assert "row[0] = 0.0" in text and "`grid[i][...] = ...`" in text and "_lx" not in text

    def by_index(grid):
        for i in range(len(grid)):
            grid[i][0] = 0.0
        return grid
    check(by_index, G, prims={"scan"})

    def local_use(grid):
        t = 0.0
        for row in grid:
            row[0] = 0.0
            t = t + row.sum()
        return t
    check(local_use, G, prims={"scan"})


class _Model:
    def __init__(self):
        self.__buf = jnp.zeros(3)

    def step(self, i):
        self.__buf[i] = 2.0
        return self.__buf


def test_private_attribute_container_in_a_method():
    out = laxify.to_static(_Model().step)(jnp.int32(1))
    np.testing.assert_array_equal(out, [0.0, 2.0, 0.0])
