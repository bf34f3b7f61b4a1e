"""The recursion converter: which functions that call themselves become loops, and which are
left as they are (their calls then unroll while tracing, as any call of a converted function).

Each function here is a module global (the converter rewrites only a call of the global that
is the function itself). The behaviour of the loops is tested in tests/e2e/test_recursion_loops.py;
here, each refused form also runs on a static depth, with eager's value.
"""

from __future__ import annotations

import laxify
import pytest


def _loops(fn) -> bool:
    return "_lx.recursion(" in laxify.to_static(fn).source


def tail(n, acc):
    if n == 0:
        return acc
    return tail(n - 1, acc + n)


def saved_after(n):
    if n == 0:
        return 0
    k = n * 2
    below = saved_after(n - 1)
    return below + k


def through_elif(n):
    if n <= 0:
        return 0
    elif n % 2:
        return 1 + through_elif(n - 1)
    else:
        return 2 + through_elif(n - 1)


def falls_off_the_end(n, out):
    if n > 0:
        return falls_off_the_end(n - 1, out)


def enclosing_call(n):
    if n == 0:
        return 1
    return abs(enclosing_call(n - 1) - 3)


def call_after_it(n):
    if n == 0:
        return 0
    return call_after_it(n - 1) + helper(n)


def conditional_expression(n):  # a `return` of one: an `if` with a `return` in each branch
    return 0 if n <= 0 else 1 + conditional_expression(n - 1)


def conditional_chain(n):
    return 0 if n <= 0 else 5 if n == 7 else conditional_chain(n - 1) * 2


@pytest.mark.parametrize(
    "fn",
    [
        tail,
        saved_after,
        through_elif,
        falls_off_the_end,
        enclosing_call,
        call_after_it,
        conditional_expression,
        conditional_chain,
    ],
)
def test_linear_recursion_is_rewritten(fn):
    assert _loops(fn)
    for n in (0, 3, 7, 9):
        args = (n, 0) if fn in (tail, falls_off_the_end) else (n,)
        assert laxify.to_static(fn)(*args) == fn(*args)


def tree(n):
    if n < 2:
        return n
    return tree(n - 1) + tree(n - 2)


def call_in_a_loop(n):
    total = 0
    for k in range(2):
        if n > 0:
            total = total + call_in_a_loop(n - 1)
    return total


def call_in_a_test(n):
    if n > 0 and call_in_a_test(n - 1) > 0:
        return 1
    return 0


def short_circuit(n):
    return n <= 0 or short_circuit(n - 1)


def conditional_expression_assigned(n):
    r = 0 if n <= 0 else 1 + conditional_expression_assigned(n - 1)
    return r


def call_before_it(n):
    if n == 0:
        return 0
    return helper(n) + call_before_it(n - 1)


def helper(n):
    return n


def changes_in_place(n, out):
    if n == 0:
        return out
    out.append(n)
    return changes_in_place(n - 1, out)


def inside_try(n):
    try:
        if n == 0:
            return 0
        return inside_try(n - 1) + 1
    except ValueError:
        return -1


def star_args(n, *rest):
    if n == 0:
        return 0
    return star_args(n - 1, *rest) + 1


def default_left_out(n, step=1):
    if n <= 0:
        return 0
    return default_left_out(n - step) + 1


def passes_itself(n):
    if n == 0:
        return int(callable(passes_itself))
    return passes_itself(n - 1)


def read_before_bound(n):
    if n >= 0:
        k = 1
    if n == 0:
        return 0
    below = read_before_bound(n - 1)
    return below + k


def returns_in_a_loop(n):
    for k in range(3):
        if k == n:
            return k
    if n == 0:
        return -1
    return returns_in_a_loop(n - 1)


def walrus_at_the_call(n):
    if n <= 0:
        return 0
    return (m := n - 1) + walrus_at_the_call(m)


REFUSED = [
    (walrus_at_the_call, (3,)),
    (tree, (6,)),
    (call_in_a_loop, (2,)),
    (call_in_a_test, (3,)),
    (short_circuit, (3,)),
    (conditional_expression_assigned, (3,)),
    (call_before_it, (3,)),
    (changes_in_place, (3, [])),
    (inside_try, (3,)),
    (star_args, (3, 1)),
    (default_left_out, (3,)),
    (passes_itself, (2,)),
    (read_before_bound, (7,)),
    (returns_in_a_loop, (5,)),
]


@pytest.mark.parametrize("fn, args", REFUSED, ids=[fn.__name__ for fn, _ in REFUSED])
def test_other_recursion_is_left_as_written(fn, args):
    assert not _loops(fn)
    assert laxify.to_static(fn)(*args) == fn(*args)


def test_a_nested_function_is_rewritten_and_a_method_is_left_as_written():
    def inner(n):
        if n == 0:
            return 0
        return inner(n - 1) + 1

    class Counter:
        def down(self, n):
            if n == 0:
                return 0
            return self.down(n - 1) + 1

    assert _loops(inner)
    assert laxify.to_static(inner)(4) == 4
    assert not _loops(Counter.down)
    assert laxify.to_static(Counter().down)(4) == 4
