"""Straight-line segments of a split function (runtime/segments.py, docs/semantics.md
"Split fallback"): around the statement that must stay Python, the code before it and the code
after it each run as one compiled program. Oracle: the function run as plain Python on the same
arrays (values, strings, prints, global writes), on inputs that take every path; and the plan
says which segments ran compiled (their programs hold the code's operations)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import laxify
from test_split import _plan, _run, _same  # noqa: E402 (tests/e2e is on the path)

CALLS = 0


def around_a_string(x, n):
    y = jnp.sin(x) * 2.0 + x * x  # before: one program
    acc, i = y, 0
    while i < n:
        acc = acc * 0.9 + 0.1
        i += 1
    label = "v" + str(int(acc * 100))  # must stay Python
    z = acc * 3.0 - y  # after: another program
    if z > 1.0:
        z = jnp.sqrt(z) + 1.0
    else:
        z = z - 2.0
    return z, label


def python_in_a_loop_body(x, n):
    out = ""
    acc = x
    for k in range(n):  # Python: its body builds a string
        acc = acc * 0.5 + 1.0  # with the next statement: one program per iteration
        acc = jnp.tanh(acc) + k
        out = out + str(int(acc * 10) % 10)
        acc = acc - 0.25
    return acc, out


def float_joined_in_a_segment(x):
    label = str(int(x))
    t = 0.1
    if x > 0:  # a traced `if` in the segment after the str: Python keeps the float
        t = t + 0.2
    s = t * 3
    return label, s


def reads_a_name_bound_in_python_if(x, flag):
    label = str(int(x))
    if flag:  # a Python `if` kept as it is (flag is static)
        w = x * 2.0
    y = x + 1.0
    z = y * 2.0 + (w if flag else 0.0)
    return label, z


def global_after(x):
    global CALLS
    label = str(int(x))
    CALLS += 1
    y = x * 2.0
    z = y + CALLS
    return label, z


def prints_around(x):
    print("start", x)
    a = x * 2.0
    b = a + 1.0
    label = str(int(b))
    print("label", label)
    c = b * b
    print("c", c)
    return c


def _segments(plan):
    return sorted((r for r in plan.records.values() if r.is_segment), key=lambda r: r.site.line)


@pytest.mark.parametrize("x,n", [(0.5, 3), (2.0, 0), (-3.0, 7)])
def test_the_code_before_and_after_the_python_statement_runs_as_two_programs(x, n):
    f = laxify.to_static(around_a_string)
    args = (jnp.float32(x), jnp.int32(n))
    result, caught = _run(f, *args)
    _same(result, around_a_string(*args))
    assert len(caught) == 1
    before, after = _segments(_plan(f))
    assert (before.compiled_runs, after.compiled_runs, before.python_runs, after.python_runs) == (1, 1, 0, 0)
    message = str(caught[0].message)
    assert f"the code at lines {before.site.line}-" in message and "compiled program" in message
    programs = {e.jitted: e for e in _plan(f).entries.values() if not isinstance(e, str)}.values()
    texts = [str(jax.make_jaxpr(e.jitted)(e.arguments)) for e in programs]
    assert any("sin" in t and "while" in t for t in texts)  # before: its ops and the loop, one program
    assert any("sqrt" in t and "cond" in t for t in texts)  # after: both branches of the traced `if`
    for x2, n2 in ((x, n + 1), (-x, n), (4.0, 2)):  # both paths, the same programs
        args = (jnp.float32(x2), jnp.int32(n2))
        result, caught = _run(f, *args)
        _same(result, around_a_string(*args))
        assert caught == []
    assert all(e.jitted._cache_size() == 1 for e in programs)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_the_body_of_a_loop_run_as_python_is_not_grouped(n):
    # A Python loop decides each iteration on the values its body computes: compiled as one
    # program, the body would compute them with XLA's float arithmetic (a fused multiply-add),
    # which may change how often the loop runs (see extended_gcd below).
    f = laxify.to_static(python_in_a_loop_body)
    args = (jnp.float32(0.5), n)
    result, caught = _run(f, *args)
    _same(result, python_in_a_loop_body(*args))
    if n:
        assert not _segments(_plan(f))


def extended_gcd(num1, num2):  # the real-code corpus' (algorithms.math.extended_gcd)
    old_s, s = 1, 0
    old_t, t = 0, 1
    old_r, r = num1, num2
    while r != 0:  # Python: `r` turns from int32 to float32 in the body
        quotient = old_r / r
        old_r, r = r, old_r - quotient * r
        old_s, s = s, old_s - quotient * s
        old_t, t = t, old_t - quotient * t
    return old_s, old_t, old_r


def test_a_python_loop_testing_a_float_for_zero_runs_as_often_as_eagerly():
    # Its body grouped into one program gave r = 13 - (13 / 17) * 17 = -2.4e-7 (one fused
    # multiply-add) where eager's two roundings give 0.0: the loop ran on, (1.0, -0.76, -2.4e-7)
    # for eager's (0, 1, 17).
    args = (jnp.int32(13), jnp.int32(17))
    result, _ = _run(laxify.to_static(extended_gcd), *args)
    expected = extended_gcd(*args)
    assert result[:2] == expected[:2] and int(result[2]) == int(expected[2]) == 17


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_a_python_float_joined_by_a_traced_if_keeps_pythons_digits(x):
    f = laxify.to_static(float_joined_in_a_segment)
    result, _ = _run(f, jnp.float32(x))
    expected = float_joined_in_a_segment(jnp.float32(x))
    assert result == expected and type(result[1]) is float  # 0.30000000000000004 * 3, as Python
    (segment,) = _segments(_plan(f))
    assert segment.python_runs == 1 and "Python floats" in segment.why


@pytest.mark.parametrize("flag", [True, False])
def test_a_name_a_python_if_may_leave_unbound_keeps_its_statements_out_of_a_segment(flag):
    f = laxify.to_static(reads_a_name_bound_in_python_if, static_argnums=(1,))
    result, _ = _run(f, jnp.float32(2.0), flag)
    _same(result, reads_a_name_bound_in_python_if(jnp.float32(2.0), flag))


def test_a_global_write_happens_once_per_call_and_is_read_after():
    global CALLS
    CALLS = 0
    f = laxify.to_static(global_after)
    for k in range(3):
        result, _ = _run(f, jnp.float32(2.0))
        assert result[0] == "2" and float(result[1]) == 4.0 + k + 1
    assert CALLS == 3


def test_prints_of_segments_keep_pythons_order(capsys):
    expected = prints_around(jnp.float32(1.5))
    out_eager = capsys.readouterr().out
    f = laxify.to_static(prints_around)
    for _ in range(2):
        result, _ = _run(f, jnp.float32(1.5))
        _same(result, expected)
        assert capsys.readouterr().out == out_eager


def test_the_split_variant_is_compiled_once_per_function():
    f = laxify.to_static(around_a_string)
    _run(f, jnp.float32(0.5), jnp.int32(2))
    converted = f._converted
    assert len(converted._segmented) == 1
    (code, sites), = converted._segmented.values()
    assert code is not None and len(sites) == len(converted.lowered.sites) + 2


def keeps_the_object_through_a_compiled_branch(x, n):
    out = ""
    y = x
    z = x
    for k in range(n):  # Python: its body makes a string
        if x > 0:  # decided by Python in the split run: the taken branch compiled
            y = x * 2.0 + 1.0
            z = jnp.sin(x) * 2.0
        else:  # `y` passes through this branch's program
            z = jnp.cos(x) * 2.0 - 1.0
        out = out + str(int(z * 10) % 10)
    return y is x, out


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_a_value_a_compiled_construct_gives_back_unchanged_is_the_same_object(x):
    f = laxify.to_static(keeps_the_object_through_a_compiled_branch)
    args = (jnp.float32(x), 3)
    result, _ = _run(f, *args)
    assert result == keeps_the_object_through_a_compiled_branch(*args)


def two_python_statements(x, n):
    a = jnp.sin(x) * 2.0 + 1.0
    first = str(int(a * 10))  # must stay Python (the fallback's line)
    b = a * a + 1.0
    c = jnp.cos(b) * 3.0
    second = str(int(c * 10))  # must stay Python too: found by the segment after the first
    d = c * 2.0 + b
    e = jnp.tanh(d) - 1.0
    return e, first + "," + second


def test_a_second_python_statement_splits_the_code_again_for_later_calls():
    f = laxify.to_static(two_python_statements)
    for k, x in enumerate((0.5, 1.5, -2.0)):
        args = (jnp.float32(x), jnp.int32(3))
        result, caught = _run(f, *args)
        _same(result, two_python_statements(*args))
        assert len(caught) == (1 if k == 0 else 0)
    segments = _segments(_plan(f))
    lines = {r.site.line: r for r in segments}
    after_first = min(line for line in lines if line > segments[0].site.line)
    # After the first call the code is split at both statements: the segments between and
    # after them run compiled.
    compiled = [r for r in segments if r.compiled_runs]
    assert len(compiled) >= 2 and all(r.compiled_runs == 2 for r in compiled), _plan(f).lines()
    assert after_first
