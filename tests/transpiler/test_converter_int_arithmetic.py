"""The int-arithmetic converter alone, golden tests (source before, source after)."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.converters import int_arithmetic
from laxify.transpiler.converters.base import Context


def convert(before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = int_arithmetic.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(before: str, after: str) -> None:
    code = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    compile(code, "<converted>", "exec")


def test_products_and_sums_of_python_ints_in_a_loop_body_are_routed():
    check("""
    def f(n):
        r = 1
        a, b = 0, 1
        for i in range(1, n + 1):
            r = r * i
            a, b = b, a + b
            s = r + i ** 2
        return r, a, s
    """, """
    def f(n):
        r = 1
        a, b = 0, 1
        for i in range(1, n + 1):
            r = _lx.python_op('*', r, i, 'r')
            a, b = b, _lx.python_op('+', a, b, 'b')
            s = _lx.python_op('+', r, _lx.python_op('**', i, 2), 's')
        return r, a, s
    """)


def test_a_counters_step_and_a_step_standing_alone_are_left_as_written():
    unchanged = """
    def f(x, n):
        i = 0
        j = 5
        while i < n:
            x = x + x[i - 1]
            i += 1
            j = j - 2
        return x, j
    """
    check(unchanged, unchanged)


def test_a_step_whose_value_goes_on_is_routed():
    check("""
    def f(n):
        r = 1
        for k in range(n):
            r = r * (k + 1)
            m = k + 1
        return r, m
    """, """
    def f(n):
        r = 1
        for k in range(n):
            r = _lx.python_op('*', r, _lx.python_op('+', k, 1), 'r')
            m = _lx.python_op('+', k, 1, 'm')
        return r, m
    """)


def test_parameters_are_left_alone_and_code_outside_loops_is_routed():
    # `u = t * k` outside the loop: a Python int in eager code (k may be a traced Python int
    # under jax.jit), so it is routed as in a loop body; so are floats (Python's are float64, a
    # loop that changes one runs as Python: runtime/dispatch/loops.py). `x = x + i`: a parameter
    # updated by a Python int may hold one (a static argument): routed (an array's `+` is JAX's).
    check("""
    def f(x, k, n):
        acc = 0.0
        t = 1
        u = t * k
        for i in range(n):
            x = x + i
            acc = acc * 2
            t *= k
        return x, acc, t, u
    """, """
    def f(x, k, n):
        acc = 0.0
        t = 1
        u = _lx.python_op('*', t, k, 'u')
        for i in range(n):
            x = _lx.python_op('+', x, i, 'x')
            acc = _lx.python_op('*', acc, 2, 'acc')
            t = _lx.python_op('*=', t, k, 't')
        return x, acc, t, u
    """)


def test_a_local_holding_a_parameters_value_may_hold_a_python_number():
    # `x = x0`: the parameter's value (a Python float argument is a static value); an operation
    # of it with a name that holds one (`dt`) may give one (`y = y * 2`: a self-update, routed
    # as before).
    check("""
    def f(x0, n):
        dt = 0.05
        x_prev = x0
        x = x0
        y = x0
        for _ in range(n):
            x_next = 2 * x - x_prev - dt * dt * x
            x_prev, x = x, x_next
            y = y * 2
        return x, y
    """, """
    def f(x0, n):
        dt = 0.05
        x_prev = x0
        x = x0
        y = x0
        for _ in range(n):
            x_next = _lx.python_op('-', _lx.python_op('-', _lx.python_op('*', 2, x), x_prev), _lx.python_op('*', _lx.python_op('*', dt, dt), x), 'x_next')
            x_prev, x = x, x_next
            y = _lx.python_op('*', y, 2, 'y')
        return x, y
    """)


def test_a_local_holding_a_parameters_value_and_updated_by_itself_is_routed():
    # `x = r * x * (1 - x)`: operations of the local, a parameter and literals keep what the
    # parameter may be (a Python float, whose loop runs as Python); `y`, given to a library
    # call, is an array's.
    check("""
    def f(x0, r, n):
        x = x0
        y = x0
        for _ in range(n):
            x = r * x * (1 - x)
            y = jnp.sin(y)
        return x, y
    """, """
    def f(x0, r, n):
        x = x0
        y = x0
        for _ in range(n):
            x = _lx.python_op('*', _lx.python_op('*', r, x), _lx.python_op('-', 1, x), 'x')
            y = jnp.sin(y)
        return x, y
    """)


def test_an_item_read_goes_through_the_runtime_and_a_store_or_delete_stays():
    # `TABLE` (a global), `weights` (bound to a list display) and `x` (a parameter used only
    # by indexing: `interp(x, dx, dy)` takes lists) may be Python lists: their items at an
    # index that reads a name go through `_lx.item`; `y`, a parameter used as an array
    # (`y.shape`, `y * 2`), is indexed as written, and so is an item at a literal index. An item
    # not used in place (`a, ... = TABLE[i], 0`) is `_lx.one_item`: the very item, not a switch.
    check("""
    def f(x, y, n):
        weights = [1.0, 2.0]
        for i in range(n):
            TABLE[i] = TABLE[i - 1] + weights[i] + x[i] + y[i] + y[0]
            del TABLE[i]
            a, TABLE[i] = TABLE[i], 0
        return x, y.shape, y * 2
    """, """
    def f(x, y, n):
        weights = [1.0, 2.0]
        for i in range(n):
            TABLE[i] = _lx.item(TABLE, i - 1) + _lx.item(weights, i) + _lx.item(x, i) + y[i] + y[0]
            del TABLE[i]
            a, TABLE[i] = _lx.one_item(TABLE, i), 0
        return x, y.shape, y * 2
    """)


def test_an_item_at_a_computed_index_is_routed_without_any_construct():
    # No loop or `if`: a straight-line function's `table[k]` may still be of a Python list at
    # a traced int (`k` a parameter, or computed by the program).
    check("""
    def f(x, i):
        t = [1.0, 2.5, 4.0]
        k = jnp.argmax(x)
        return t[i] * x[k]
    """, """
    def f(x, i):
        t = [1.0, 2.5, 4.0]
        k = jnp.argmax(x)
        return _lx.item(t, i) * x[k]
    """)


def test_a_store_into_an_item_of_an_item_reads_the_inner_items_and_stores_the_outer():
    # `REGISTRY[m][q][k] = v` (typing.overload): the load `REGISTRY[m]` may be of a Python
    # list at a traced int; the outer subscript is the store, left as it is (it was made a
    # call: invalid Python).
    check("""
    def f(fn, func):
        REGISTRY[fn.m][fn.q][fn.k] = func
        return func
    """, """
    def f(fn, func):
        _lx.item(REGISTRY, fn.m)[fn.q][fn.k] = func
        return func
    """)


def test_a_parameter_a_loop_updates_by_itself_parameters_literals_and_globals_is_routed():
    # `p`, `v`: parameters a loop updates (a Python float argument is float64 in eager code);
    # `s`: a local computed from parameters (that sum itself is of parameters only: left as
    # written); `RATE`, `DT`: globals an operator reads, counted as parameters. Outside a loop
    # a parameter's own update (`y = -y`) is left as written.
    check("""
    def f(p, v, a, b, y, n):
        s = a + b
        if y > 0:
            y = -y
        for _ in range(n):
            p = p * (1 + RATE)
            v *= 0.999
            s = s * DT
        return p, v, s, y
    """, """
    def f(p, v, a, b, y, n):
        s = a + b
        if y > 0:
            y = -y
        for _ in range(n):
            p = _lx.python_op('*', p, 1 + RATE, 'p')
            v = _lx.python_op('*=', v, 0.999, 'v')
            s = _lx.python_op('*', s, DT, 's')
        return p, v, s, y
    """)


def test_an_array_parameter_updated_with_its_rows_is_left_as_written():
    # `acc + row`: the rows of what `acc` iterates over are an array's most often.
    check("""
    def f(xs, acc):
        for row in xs:
            acc = acc + row
        return acc
    """, """
    def f(xs, acc):
        for row in xs:
            acc = acc + row
        return acc
    """)
