"""A ``to_static`` function's own list and dict arguments changed in place: the
caller's objects get the new contents after the compiled call, keeping their identity, as
Python gives them; a function that changes none of its arguments returns its result as it is.

The oracle is the same function run eagerly on a deep copy of the arguments; each case checks
the result, the caller's argument afterwards, and the identity of the caller's lists and dicts.
"""

from __future__ import annotations

import copy
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import assert_trees_close
from laxify.runtime.writeback import Changes, writing_back


def _same_values(expected, actual, what: str) -> None:
    if isinstance(expected, (list, dict)):
        assert type(expected) is type(actual), f"{what}: {type(expected).__name__} vs {type(actual).__name__}"
    if isinstance(expected, list):
        assert len(expected) == len(actual), what
        for a, b in zip(expected, actual):
            _same_values(a, b, what)
    elif isinstance(expected, dict):
        assert list(expected) == list(actual), what
        for k in expected:
            _same_values(expected[k], actual[k], f"{what}[{k!r}]")
    else:
        assert_trees_close(expected, actual, what=what)


def _nodes(value) -> list:
    """The lists and dicts in ``value``, depth first."""
    found = []
    if isinstance(value, (list, dict)):
        found.append(value)
        for item in (value if isinstance(value, list) else value.values()):
            found += _nodes(item)
    return found


def _numpy_copies(value):
    """A deep copy, JAX arrays as NumPy arrays (what `a[i] = v` means eagerly), dict order kept."""
    if isinstance(value, (list, tuple)):
        return type(value)(_numpy_copies(v) for v in value)
    if isinstance(value, dict):
        return {k: _numpy_copies(v) for k, v in value.items()}
    return np.array(value) if isinstance(value, jax.Array) else copy.deepcopy(value)


def agrees(fn, *args, converted: bool = True):
    """``to_static(fn)(*args)`` gives eager's result and leaves the arguments as eager leaves
    them, in the very objects the caller holds (nested ones too, where eager keeps them)."""
    eager_args = _numpy_copies(args)
    expected = fn(*eager_args)
    ids = sorted(id(n) for a in args for n in _nodes(a))
    with warnings.catch_warnings():
        if converted:
            warnings.simplefilter("error", laxify.FallbackWarning)
        actual = laxify.to_static(fn)(*args)
    for k, (e, a) in enumerate(zip(eager_args, args)):
        _same_values(e, a, f"argument {k} after the call")
    assert ids == sorted(id(n) for a in args for n in _nodes(a))  # the caller's lists and dicts
    return expected, actual


def rotate(mat):
    """Rotate a square matrix a quarter turn clockwise, in place (the real-code case)."""
    if not mat:
        return mat
    mat.reverse()
    for i in range(len(mat)):
        for j in range(i):
            mat[i][j], mat[j][i] = mat[j][i], mat[i][j]
    return mat


def test_rotate_changes_the_callers_matrix_and_returns_it():
    mat = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    rows = list(mat)
    out = laxify.to_static(rotate)(mat)
    assert mat == [[7, 4, 1], [8, 5, 2], [9, 6, 3]]
    assert out is mat  # Python returns the argument itself
    assert all(type(v) is int for row in mat for v in row)  # the caller's Python ints
    assert sorted(map(id, mat)) == sorted(map(id, rows))  # the rows are the caller's rows


def test_rotate_of_an_array_matrix_and_of_a_float_list():
    agrees(rotate, [[1.0, 2.0], [3.0, 4.0]])
    agrees(rotate, [list(jnp.arange(3.0) + 3 * k) for k in range(3)])


def _bubble(a, x):
    for i in range(len(a)):
        for j in range(len(a) - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    a[0] = a[0] + x


@pytest.mark.parametrize("xs", [[5, 3, 4, 1], [1, 2, 3, 4], [2.5, -1.0, 0.0]])
def test_sorting_a_list_argument_under_traced_ifs(xs):
    agrees(_bubble, xs, jnp.int32(2) if type(xs[0]) is int else jnp.float32(0.5))
    program = jax.make_jaxpr(laxify.convert(_bubble))(list(xs), 1)
    assert "cond" in str(program)


def _count(bins, xs):
    for x in xs:
        if x > 0:
            bins["pos"] += 1
        else:
            bins["neg"] += 1


def test_dict_of_counters_changed_in_a_scanned_loop():
    bins = {"pos": 0, "neg": 0}
    agrees(_count, bins, jnp.array([1.0, -2.0, 3.0, 0.0, 5.0]))
    assert bins == {"pos": 3, "neg": 2}  # (computed counts are JAX scalars)
    assert "scan" in str(jax.make_jaxpr(laxify.convert(_count))({"pos": 0, "neg": 0}, jnp.ones(3)))


def _state_step(state, x, n):
    for i in range(n):
        state["h"][i] = state["h"][i] + x
    return state["h"].sum()


def test_the_state_idiom_stays_compiled_and_the_caller_sees_the_new_array():
    state = {"h": jnp.zeros(4), "t": jnp.float32(0.0)}
    t = state["t"]
    expected, actual = agrees(_state_step, state, jnp.float32(2.0), jnp.int32(3))
    assert_trees_close(expected, actual, what="result")
    np.testing.assert_allclose(state["h"], [2.0, 2.0, 2.0, 0.0])
    assert float(state["t"]) == float(t)  # (carried through the loop: the same value)


def _rebind_entry(state, x):
    state["h"] = state["h"] * x
    state["steps"] = state.get("steps", 0) + 1
    return state


def test_dict_entries_rebound_and_added_and_the_dict_returned():
    state = {"h": jnp.ones(3)}
    out = laxify.to_static(_rebind_entry)(state, jnp.float32(3.0))
    assert out is state and list(state) == ["h", "steps"] and state["steps"] == 1
    np.testing.assert_allclose(state["h"], [3.0, 3.0, 3.0])
    # jax.jit of the converted function: JAX hands the function copies; the caller's dict is
    # unchanged, and the returned dict holds the new values (JAX's rule for jitted functions).
    state = {"h": jnp.ones(3)}
    out = jax.jit(laxify.convert(_rebind_entry))(state, jnp.float32(3.0))
    assert list(state) == ["h"] and float(state["h"][0]) == 1.0
    np.testing.assert_allclose(out["h"], [3.0, 3.0, 3.0])


def _push_pop(stack, x):
    stack.append(x * 2)
    stack.append(x + 1)
    top = stack.pop()
    stack.insert(0, top)
    return len(stack)


def test_appends_pops_and_inserts_on_a_list_argument():
    stack = [1.0, 2.0]
    agrees(_push_pop, stack, jnp.float32(5.0))
    assert stack == [6.0, 1.0, 2.0, 10.0]


def _nested(grid, k):
    grid[1].reverse()
    grid[0], grid[1] = grid[1], grid[0]
    grid[2][0] = grid[2][0] * k


def test_nested_rows_keep_their_identity_when_moved():
    grid = [[1, 2], [3, 4], [5, 6]]
    rows = [id(r) for r in grid]
    laxify.to_static(_nested)(grid, jnp.int32(10))
    assert grid == [[4, 3], [1, 2], [50, 6]]
    assert [id(r) for r in grid] == [rows[1], rows[0], rows[2]]


def _pure(xs, ys):
    return xs[0] + ys["a"]


def test_a_function_that_changes_nothing_returns_its_result_as_it_is():
    traced = writing_back(_pure)
    out = traced([1.0, 2.0], {"a": 3.0})
    assert type(out) is not Changes
    xs, ys = [1.0, 2.0], {"a": 3.0}
    before = (list(xs), dict(ys))
    assert float(laxify.to_static(_pure)(xs, ys)) == 4.0
    assert (xs, ys) == before and all(type(v) is float for v in xs)


def test_repeated_calls_reuse_the_program_and_write_back_each_time():
    fn = laxify.to_static(_bubble)
    for xs in ([3, 2, 1], [9, 8, 7], [1, 3, 2]):
        expected = sorted(xs)
        expected[0] += 1
        fn(xs, jnp.int32(1))
        assert xs == expected


def test_inside_an_outer_jit_the_outer_functions_list_changes():
    sort = laxify.to_static(_bubble)

    def outer(a, b, c):
        xs = [a, b, c]
        sort(xs, 0.0)
        return xs[0], xs[2]

    lo, hi = jax.jit(outer)(3.0, 1.0, 2.0)
    assert (float(lo), float(hi)) == (1.0, 3.0)


# -- Python ints beyond int32 given out by a traced construct ----------------------------

def _big_in_branch(x):
    y = 0
    if x > 0:
        y = 3000000000
    return y


def _big_in_loop(x, n):
    y = 1
    i = 0
    while i < n:
        y = 3000000000
        i += 1
    return y


@pytest.mark.parametrize("fn, args, line", [
    (_big_in_branch, (jnp.float32(1.0),), "if x > 0:"),
    (_big_in_loop, (jnp.float32(1.0), jnp.int32(2)), "while i < n:"),
])
def test_a_python_int_beyond_int32_in_a_traced_construct_is_located(fn, args, line):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    where = start + next(k for k, text in enumerate(lines) if line in text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert laxify.to_static(fn)(*args) == fn(*args) == 3000000000  # eager's unbounded int
    fallbacks = [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    assert fallbacks and fallbacks[0].lineno == where and "3000000000" in str(fallbacks[0].message)
    with pytest.raises(laxify.ConversionError) as info:
        jax.jit(laxify.convert(fn))(*args)
    text = str(info.value)
    assert "`y`" in text and "int32" in text and "jax_enable_x64" in text and f"line {where}" in text
    assert "_lx" not in text


def test_x64_route_gives_exact_products_in_a_traced_range(tmp_path):
    """Under x64 a traced range's index has its bounds' dtype: 13! is exact (own process: x64
    is a global switch)."""
    import subprocess
    import sys
    script = tmp_path / "x64.py"
    script.write_text(
        "import jax\n"
        "jax.config.update('jax_enable_x64', True)\n"
        "import jax.numpy as jnp, laxify\n"
        "def fact(n):\n"
        "    r = 1\n"
        "    for i in range(1, n + 1):\n"
        "        r = r * i\n"
        "    return r\n"
        "def fib(n):\n"
        "    a, b = 0, 1\n"
        "    i = 0\n"
        "    while i < n:\n"
        "        a, b = b, a + b\n"
        "        i += 1\n"
        "    return a\n"
        "print(int(laxify.to_static(fact)(jnp.int64(13))), int(jax.jit(laxify.convert(fact))(jnp.int64(13))),\n"
        "      int(laxify.to_static(fib)(jnp.int64(50))))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["6227020800", "6227020800", "12586269025"], out.stderr


# -- appends to a list that another name refers to --------------------------------------

def _append_alias(x):
    a = [1.0]
    b = a
    for i in range(3):
        b.append(x)
    return len(a), a[-1]


def _append_rows(x):
    rows = [[1.0], [2.0]]
    for r in rows:
        for i in range(2):
            r.append(x)
    return len(rows[0]), rows[1][-1]


def _append_param(xs, x):
    for i in range(3):
        xs.append(x * i)
    return len(xs)


def _append_param_traced(xs, x, n):
    for i in range(n):
        xs.append(x)
    return len(xs)


def test_appends_through_an_alias_or_a_for_target_reach_the_list():
    for fn in (_append_alias, _append_rows):
        expected = fn(jnp.float32(2.0))
        with warnings.catch_warnings():
            warnings.simplefilter("error", laxify.FallbackWarning)
            assert_trees_close(expected, laxify.to_static(fn)(jnp.float32(2.0)), what=fn.__name__)
            assert_trees_close(expected, jax.jit(laxify.convert(fn))(jnp.float32(2.0)), what=fn.__name__)


def test_appends_to_a_list_argument_in_a_loop_are_written_back():
    agrees(_append_param, [1.0], jnp.float32(2.0))
    xs = [1.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert laxify.to_static(_append_param_traced)(xs, jnp.float32(2.0), jnp.int32(2)) == 3
    assert len(xs) == 3  # a traced trip count: the loop runs eagerly, on the caller's list
    assert any(issubclass(w.category, laxify.FallbackWarning) and "appends to `xs`" in str(w.message)
               for w in caught)


def _stack_machine(tokens):
    stack = []
    for t in tokens:
        if t >= 0:
            stack.append(t)
        else:
            b = stack.pop()
            a = stack.pop()
            stack.append(a + b)
    return stack[-1]


def _two_stacks(pushes):
    inbox, outbox = [], []
    for v in pushes:
        inbox.append(v)
    while inbox:
        outbox.append(inbox.pop())
    return outbox[0] * 10 + outbox[-1]


def test_list_methods_on_a_list_a_loop_stacks_fall_back_or_convert():
    tokens = jnp.array([2, 3, -1, 4, -1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert int(laxify.to_static(_stack_machine)(tokens)) == int(_stack_machine(tokens)) == 9
    assert any(issubclass(w.category, laxify.FallbackWarning) and "`stack`" in str(w.message) for w in caught)
    with pytest.raises(laxify.ConversionError, match="`stack`"):
        jax.jit(laxify.convert(_stack_machine))(tokens)
    # `while inbox:` on the list of rows (it was an AttributeError on a tracer): the loop
    # appends to `outbox` a traced number of times, so it runs eagerly (with its warning).
    pushes = jnp.array([1, 2, 3])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert int(laxify.to_static(_two_stacks)(pushes)) == int(_two_stacks(pushes)) == 31


def _own_list_in_loop_body(x, k):
    s = x[0] * 0  # (an array: a Python float carried by the loop would run it as Python)
    for i in range(k):
        log = [x[0], 0.5]
        s = s + (log.pop() if len(x) >= 3 else 1.0)
        s = s + len(log)
    return s


def test_a_list_the_loop_body_makes_itself_is_not_an_effect():
    """The body's own list, popped in a conditional expression Python decides: it converts
    (it used to fall back: the list was watched as the receiver of a method call)."""
    x, k = jnp.array([1.5, 3.0, 3.5]), jnp.int32(3)
    expected = _own_list_in_loop_body(x, k)
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert_trees_close(expected, laxify.to_static(_own_list_in_loop_body)(x, k), what="to_static")
        assert_trees_close(expected, jax.jit(laxify.convert(_own_list_in_loop_body))(x, k), what="jit")
