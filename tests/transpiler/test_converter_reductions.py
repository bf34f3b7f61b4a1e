"""The reductions converter alone: `sum`/`any`/`all` of a generator expression becomes a `for`
loop before the statement, where nothing in the statement could tell the loop ran first."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from golden import check, check_unchanged
from laxify.transpiler.converters import reductions

NAMESPACE = {"math": math, "jnp": jnp, "np": np}


def test_a_sum_is_a_loop_that_adds_each_item_as_python_sum_does():
    check(reductions, """
    def f(x, n):
        total = sum(x[k] * k for k in range(n) if k % 2)
        return total
    """, """
    def f(x, n):
        _lx_sum_2 = 0
        for _lx_each_k_1 in range(n):
            if _lx_each_k_1 % 2:
                _lx_sum_2 = _lx.summed(_lx_sum_2, x[_lx_each_k_1] * _lx_each_k_1)
        total = _lx.sum_result(_lx_sum_2)
        return total
    """)


def test_any_and_all_stop_at_the_item_that_decides():
    check(reductions, """
    def f(x, n):
        if any(x[k] > 0 for k in range(n)):
            return all(x[v] < 3 for v in range(1, n))
        return False
    """, """
    def f(x, n):
        _lx_any_4 = False
        for _lx_each_k_3 in range(n):
            if x[_lx_each_k_3] > 0:
                _lx_any_4 = True
                break
        if _lx_any_4:
            _lx_all_2 = True
            for _lx_each_v_1 in range(1, n):
                if not x[_lx_each_v_1] < 3:
                    _lx_all_2 = False
                    break
            return _lx_all_2
        return False
    """)


def test_a_one_line_body_a_start_and_pure_calls():
    check(reductions, """
    def f(x, n):
        if n: return jnp.abs(x).sum() + sum((i * math.cos(x[i]) for i in range(n)), 1.0)
        return 0.0
    """, """
    def f(x, n):
        if n:
            _lx_sum_2 = 1.0
            for _lx_each_i_1 in range(n):
                _lx_sum_2 = _lx.summed(_lx_sum_2, _lx_each_i_1 * math.cos(x[_lx_each_i_1]))
            return jnp.abs(x).sum() + _lx.sum_result(_lx_sum_2)
        return 0.0
    """, NAMESPACE)


def test_a_generator_over_anything_but_a_range_stays():
    # Over an array or a list, Python computes the items while tracing (its values exactly).
    check_unchanged(reductions, """
    def f(x, xs):
        return sum(v * v for v in x), any(i > 0 for i, v in enumerate(xs)), all(v for v in range)
    """, NAMESPACE)


def test_where_the_loop_running_first_could_be_seen_the_statement_stays():
    # A call that may have effects, a reduction that runs only for some data (a branch of
    # `a if c else b`, after `or`, an `elif` or `while` test), a generator with two `for`s, a
    # walrus or a nested generator, a `sum` or `any` that is not the builtin.
    check_unchanged(reductions, """
    def f(x, n, log, sum):
        a = log(x) + any(v > 0 for v in x)
        b = x if n else all(v > 0 for v in x)
        c = n or any(v > 0 for v in x)
        if n:
            pass
        elif any(v > 0 for v in x):
            pass
        while any(v > 0 for v in x):
            x = x - 1
        d = any(v > w for v in x for w in x), any((y := v) > 0 for v in x)
        e = all(any(w > v for w in x) for v in x), sum(v for v in x)
        return a, b, c, d, e
    """, NAMESPACE)


def test_attributes_and_keywords_keep_their_names():
    check(reductions, """
    def f(x, k):
        return sum(x.k * k + jnp.sum(x, axis=k) for k in range(3))
    """, """
    def f(x, k):
        _lx_sum_2 = 0
        for _lx_each_k_1 in range(3):
            _lx_sum_2 = _lx.summed(_lx_sum_2, x.k * _lx_each_k_1 + jnp.sum(x, axis=_lx_each_k_1))
        return _lx.sum_result(_lx_sum_2)
    """, NAMESPACE)
