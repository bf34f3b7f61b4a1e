"""Split fallback (docs/semantics.md, "Split fallback"): a function that falls back for
value-dependent Python runs eagerly, but each of its loops runs as a compiled program of its own
where it can. Oracle: the function run as plain Python on the same arrays; and the plan says
which loops ran compiled (their programs contain the lax loop; no Python iteration)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify.split import SplitRunner

COUNT = 0


def after_loop(x, n):
    i = 0
    acc = x
    while i < n:
        acc = acc * 0.5 + 1.0
        i = i + 1
    s = str(int(acc))  # must stay Python
    return acc, s


def before_loop(x, n):
    s = "v" + str(int(x))  # must stay Python
    acc = x
    i = 0
    while i < n:
        acc = jnp.sin(acc) + 0.5
        i += 1
    return acc, s


def in_traced_if(x, n):
    acc = x
    i = 0
    while i < n:
        acc = acc * 0.9 + 0.3
        i += 1
    if acc > 2.5:
        tag = str(int(acc * 10))  # must stay Python, in a traced `if`
    else:
        tag = "small"
    for k in range(4):
        acc = acc + k * 0.25
    return acc, tag


def in_loop(x, n, m):
    parts = []
    acc = x
    i = 0
    while i < n:  # a Python loop: its body builds a string
        j = 0
        while j < m:  # compiled on its own, for each iteration of the outer loop
            acc = acc * 0.5 + 1.0
            j += 1
        parts.append(str(int(acc * 100) % 7))
        i += 1
    return acc, "".join(parts)


def nested_deeper(x, n, m):
    acc = x
    out = ""
    for i in range(n):  # Python (its body makes a string)
        if acc > 1.0:  # a traced `if` decided by Python here
            k = 0
            while k < m:  # compiled
                acc = acc - 0.125
                k += 1
            out = out + str(int(acc))
        else:
            acc = acc + 2.0
            out = out + "+"
    return acc, out


def grown_list(x, n):
    out = []
    k = 0
    while k < n:  # a list grown to a traced length: Python
        out.append(x * k)
        k += 1
    total = x
    for _ in range(50):  # needs no Python: compiled
        total = total * 0.99 + 0.01
    return jnp.stack(out), total


def prints_in_order(x, n):
    print("start", int(x))
    acc = x
    i = 0
    while i < n:
        acc = acc + 1
        i += 1
    print("loop done")
    s = str(int(acc))
    print("result", s)
    return s


def with_global(x, n):
    global COUNT
    COUNT += 1
    acc = x
    i = 0
    while i < n:
        acc = acc * 2.0
        i += 1
    return acc, str(int(acc))


def raises_in_loop(x, n):
    acc = x
    i = 0
    while i < n:
        if acc > 100.0:
            raise ValueError("too big")
        acc = acc * 3.0
        i += 1
    return acc, str(int(acc))


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [w for w in caught if issubclass(w.category, laxify.FallbackWarning)]


def _plan(f):
    runners = [r for r in f._eager.values() if isinstance(r, SplitRunner)]
    assert len(runners) == 1
    return runners[0].plan


def _same(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        if isinstance(u, str) or isinstance(v, str):
            assert u == v
        else:
            np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-6)


def _record(plan, line):
    """The record of the construct at ``line`` (not an `if` laxify made around the code after a
    statement that may return or raise), or of the segment that holds it (runtime/segments.py:
    the statements around the Python one, compiled as one program)."""
    found = [r for r in plan.records.values() if r.site.line == line and not r.is_guard and not r.is_segment]
    if not found:
        found = [r for r in plan.records.values() if r.is_segment and r.site.line <= line <= r.site.end_line]
    assert len(found) == 1, plan.lines()
    return found[0]


def _compiled_text(record) -> str:
    """What the FallbackWarning says of a record that ran compiled."""
    if record.is_segment:
        return f"the code at lines {record.site.line}-{record.site.end_line} runs as"
    return f"loop(s) run as compiled programs of their own (line(s) {record.site.line})"


def _line(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_python_after_a_loop_compiles_the_loop(n):
    f = laxify.to_static(after_loop)
    x = jnp.float32(3.0)
    result, caught = _run(f, x, jnp.int32(n))
    _same(result, after_loop(x, jnp.int32(n)))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "`str()` of a traced value" in message and "split" in message
    record = _record(_plan(f), _line(after_loop, "while i < n"))
    assert _compiled_text(record) in message
    assert (record.compiled_runs, record.python_runs) == (1, 0)
    # Later calls of the signature: the same program, no second warning, no new trace.
    for m in (n + 1, 5):
        result, caught = _run(f, jnp.float32(1.5), jnp.int32(m))
        _same(result, after_loop(jnp.float32(1.5), jnp.int32(m)))
        assert caught == []
    assert record.compiled_runs == 3 and record.python_runs == 0
    (entry,) = [e for e in _plan(f).entries.values()]
    assert entry.jitted._cache_size() == 1


def test_the_compiled_loop_is_one_lax_while():
    f = laxify.to_static(after_loop)
    _run(f, jnp.float32(3.0), jnp.int32(10))
    (entry,) = list(_plan(f).entries.values())
    jaxpr = str(jax.make_jaxpr(entry.jitted)(entry.arguments))
    assert "while" in jaxpr


def _settle(x, n):
    i = 0
    while i < n:
        x = jnp.tanh(x * 0.9 + 0.1)
        i += 1
    return x


def _settle_counted(x, n):
    i = 0
    while i < n:
        x = jnp.tanh(x * 0.9 + 0.1)
        i += 1
    return x, i


def count_unread(x, n):
    acc = _settle(x, n)  # (a helper's loop: a program of its own in the split run)
    return acc, str(int(acc * 100))


def count_read(x, n):
    acc, i = _settle_counted(x, n)
    return acc, str(int(acc * 100)) + "/" + str(i)


@pytest.mark.parametrize("fn, kinds", [(count_unread, ["array", "array"]), (count_read, ["array", "number"])])
def test_a_count_nothing_reads_after_the_loop_stays_an_array(fn, kinds):
    # Turning a loop's count into a Python int waits for the program (~25 us a call): where
    # nothing reads it after the loop it stays as the program gave it; read, it is a Python
    # int, as in eager code.
    f = laxify.to_static(fn)
    args = (jnp.float32(3.0), jnp.int32(10))
    result, _ = _run(f, *args)
    assert result[1] == fn(*args)[1]
    (entry,) = [e for key, e in _plan(f).entries.items() if getattr(key[0], "__name__", "") == "while_loop"]
    assert sorted(kind for kind, _ in entry.out_spec) == kinds


@pytest.mark.parametrize("x", [-2.0, 0.5, 7.25])
def test_python_before_a_loop(x):
    f = laxify.to_static(before_loop)
    args = (jnp.float32(x), jnp.int32(25))
    result, caught = _run(f, *args)
    _same(result, before_loop(*args))
    assert len(caught) == 1 and caught[0].lineno == _line(before_loop, "str(int(x))")
    record = _record(_plan(f), _line(before_loop, "while i < n"))
    assert (record.compiled_runs, record.python_runs) == (1, 0)


@pytest.mark.parametrize("x,n", [(0.1, 3), (5.0, 40), (0.0, 0), (9.0, 1)])
def test_python_in_a_traced_if(x, n):
    f = laxify.to_static(in_traced_if)
    args = (jnp.float32(x), jnp.int32(n))
    result, caught = _run(f, *args)
    _same(result, in_traced_if(*args))
    plan = _plan(f)
    assert _record(plan, _line(in_traced_if, "while i < n")).python_runs == 0
    assert _record(plan, _line(in_traced_if, "for k in range(4)")).python_runs == 0
    # Both paths of the `if` on the same signature.
    for x2 in (0.0, 30.0):
        args = (jnp.float32(x2), jnp.int32(n))
        result, caught = _run(f, *args)
        _same(result, in_traced_if(*args))
        assert caught == []


@pytest.mark.parametrize("n,m", [(0, 3), (1, 1), (4, 6), (3, 0)])
def test_python_in_a_loop_compiles_the_inner_loop(n, m):
    f = laxify.to_static(in_loop)
    args = (jnp.float32(1.0), jnp.int32(n), jnp.int32(m))
    result, caught = _run(f, *args)
    _same(result, in_loop(*args))
    assert len(caught) == 1
    plan = _plan(f)
    outer = _record(plan, _line(in_loop, "while i < n"))
    assert outer.python_runs == 1 and outer.compiled_runs == 0 and outer.why
    message = str(caught[0].message)
    assert f"the `while` loop at line {outer.site.line} runs as Python" in message
    if n:
        inner = _record(plan, _line(in_loop, "while j < m"))
        assert (inner.compiled_runs, inner.python_runs) == (n, 0)
        assert len(plan.entries) == 1  # one program for the inner loop, reused n times


@pytest.mark.parametrize("x", [0.5, 3.0, 10.0])
def test_nested_python_loop_traced_if_and_compiled_loop(x):
    f = laxify.to_static(nested_deeper)
    args = (jnp.float32(x), 5, jnp.int32(9))
    result, _ = _run(f, *args)
    _same(result, nested_deeper(*args))
    plan = _plan(f)
    inner = [r for r in plan.records.values() if r.site.line == _line(nested_deeper, "while k < m")]
    assert all(r.python_runs == 0 for r in inner)


@pytest.mark.parametrize("n", [0, 1, 6])
def test_a_list_grown_to_a_traced_length(n):
    f = laxify.to_static(grown_list)
    args = (jnp.float32(2.0), jnp.int32(n))
    if n == 0:  # jnp.stack([]) raises in Python: the same error
        with pytest.raises(ValueError):
            grown_list(*args)
        with pytest.raises(ValueError), warnings.catch_warnings():
            warnings.simplefilter("ignore", laxify.FallbackWarning)
            f(*args)
        return
    result, caught = _run(f, *args)
    _same(result, grown_list(*args))
    plan = _plan(f)
    assert _record(plan, _line(grown_list, "while k < n")).python_runs == 1
    assert _record(plan, _line(grown_list, "for _ in range(50)")).compiled_runs == 1


def test_prints_keep_python_order(capsys):
    expected = prints_in_order(jnp.float32(2.0), jnp.int32(4))
    out_eager = capsys.readouterr().out
    f = laxify.to_static(prints_in_order)
    result, _ = _run(f, jnp.float32(2.0), jnp.int32(4))
    assert result == expected
    assert capsys.readouterr().out == out_eager == "start 2\nloop done\nresult 6\n"
    result, _ = _run(f, jnp.float32(2.0), jnp.int32(4))
    assert capsys.readouterr().out == out_eager


def test_a_global_write_happens_once_per_call():
    global COUNT
    COUNT = 0
    f = laxify.to_static(with_global)
    for k in range(3):
        result, _ = _run(f, jnp.float32(1.0), jnp.int32(k + 2))
        _same(result, (jnp.float32(2.0 ** (k + 2)), str(2 ** (k + 2))))
    assert COUNT == 3


@pytest.mark.parametrize("n", [2, 10])
def test_an_exception_in_a_loop_is_pythons(n):
    f = laxify.to_static(raises_in_loop)
    args = (jnp.float32(1.5), jnp.int32(n))
    if n == 10:
        with pytest.raises(ValueError, match="too big"):
            raises_in_loop(*args)
        with pytest.raises(ValueError, match="too big"), warnings.catch_warnings():
            warnings.simplefilter("ignore", laxify.FallbackWarning)
            f(*args)
    else:
        result, _ = _run(f, *args)
        _same(result, raises_in_loop(*args))


def test_error_modes_still_refuse_with_the_located_error():
    f = laxify.to_static(after_loop, fallback="error")
    with pytest.raises(laxify.ConversionError) as e:
        f(jnp.float32(3.0), jnp.int32(4))
    assert e.value.location.line == _line(after_loop, "str(int(acc))")
    with pytest.raises(laxify.ConversionError):
        laxify.to_static(after_loop, strict=True)(jnp.float32(3.0), jnp.int32(4))
    with pytest.raises(Exception) as e:
        jax.jit(laxify.convert(after_loop))(jnp.float32(3.0), jnp.int32(4))
    assert "_lx" not in str(e.value)


def test_grad_through_a_split_function_is_a_located_error():
    def g(x):
        acc = x
        for _ in range(3):
            acc = acc * acc
        label = str(int(acc))
        return acc * len(label)

    f = laxify.to_static(g)
    value, _ = _run(f, jnp.float32(1.5))
    _same(value, g(jnp.float32(1.5)))
    with pytest.raises(laxify.ConversionError) as e:
        jax.grad(f)(jnp.float32(1.5))
    assert e.value.location.line == _line(g, "str(int(acc))")
    assert "Python segments" in str(e.value) and "_lx" not in str(e.value)


def test_explain_shows_the_segments():
    f = laxify.to_static(in_loop)
    args = (jnp.float32(1.0), jnp.int32(2), jnp.int32(3))
    _run(f, *args)
    text = str(f.explain(*args))
    assert "split fallback" in text
    assert f"line {_line(in_loop, 'while i < n')}" in text and "runs as Python" in text
    assert "runs compiled" in text


SCALE = 2.0


def reads_a_global(x, n):
    acc, i = x, 0
    while i < n:
        acc = acc * SCALE
        i += 1
    return acc, str(int(acc))


def test_a_global_rebound_between_calls_is_read_again():
    global SCALE
    f = laxify.to_static(reads_a_global)
    try:
        for scale in (2.0, 3.0, 2.0):
            SCALE = scale
            result, _ = _run(f, jnp.float32(1.0), jnp.int32(3))
            _same(result, reads_a_global(jnp.float32(1.0), jnp.int32(3)))
        SCALE = jnp.float32(0.5)
        result, _ = _run(f, jnp.float32(1.0), jnp.int32(3))
        _same(result, reads_a_global(jnp.float32(1.0), jnp.int32(3)))
    finally:
        SCALE = 2.0
    record = _record(_plan(f), _line(reads_a_global, "while i < n"))
    assert record.python_runs == 0 and record.compiled_runs == 4


def python_inside_a_static_range(x, k):
    acc = x * 1.0
    count = 0
    for i in range(3):  # a static range with an array carry: a scan, unless its body needs Python
        acc = acc + i
        grown = []
        w = 0
        while w < k:  # a list grown to a traced length
            grown.append(acc * w)
            w += 1
        count = len(grown) + count % 5
        for row in x:  # over an array's rows: compiled on its own
            acc = acc + row
    return acc, count


@pytest.mark.parametrize("k", [0, 2])
def test_python_inside_a_static_range_runs_that_range_as_python(k):
    f = laxify.to_static(python_inside_a_static_range)
    args = (jnp.arange(3.0), jnp.int32(k))
    result, caught = _run(f, *args)
    _same(result, python_inside_a_static_range(*args))
    assert len(caught) == 1
    plan = _plan(f)
    assert _record(plan, _line(python_inside_a_static_range, "for i in range(3)")).python_runs == 1
    inner = _record(plan, _line(python_inside_a_static_range, "for row in x"))
    assert (inner.compiled_runs, inner.python_runs) == (3, 0)


def python_float_in_loop(x, n):
    s = 0.0
    acc = x
    i = 0
    while i < n:
        s = s + 0.1  # a Python float in eager Python: its digits show in the string
        acc = acc + 1.0
        i += 1
    return acc, str(s)


def test_a_python_float_changed_in_a_loop_keeps_pythons_digits():
    f = laxify.to_static(python_float_in_loop)
    args = (jnp.float32(1.0), jnp.int32(3))
    result, _ = _run(f, *args)
    assert result[1] == python_float_in_loop(*args)[1] == str(0.1 + 0.1 + 0.1)
    _same(result, python_float_in_loop(*args))
    record = _record(_plan(f), _line(python_float_in_loop, "while i < n"))
    assert record.python_runs == 1 and "Python float `s`" in record.why


def appends_to_an_outer_list(x, n):
    log = []
    acc, i = x, 0
    while i < n:
        log.append(i)  # changes a list outside the loop: the loop runs as Python
        acc = acc + 1.0
        i += 1
    return acc, len(log)


@pytest.mark.parametrize("n", [0, 4])
def test_a_loop_changing_an_outer_list_runs_as_python(n):
    f = laxify.to_static(appends_to_an_outer_list)
    args = (jnp.float32(1.0), jnp.int32(n))
    for _ in range(2):
        result, _ = _run(f, *args)
        _same(result, appends_to_an_outer_list(*args))
    record = _record(_plan(f), _line(appends_to_an_outer_list, "while i < n"))
    assert record.compiled_runs == 0 and record.python_runs == 2


def test_converted_code_of_an_installed_package_is_rebuilt_not_shared():
    bic = pytest.importorskip("algorithms.bit_manipulation.bytes_int_conversion")
    f = laxify.to_static(bic.int_to_bytes_big_endian)
    for n in (17, 70000, 0):
        result, _ = _run(f, jnp.int32(n))
        assert result == bic.int_to_bytes_big_endian(n)


# -- traced `if`s in the split run: the taken branch compiled as a program of its own ----------


def branch_with_work(x, n):
    tag = str(int(x))  # must stay Python: the function is split
    if x > 1.0:  # a traced `if`, decided by Python here
        y = jnp.sin(x) * 2.0 + x * x - 1.0
        y = jnp.where(y > 3.0, y / 2.0, y)
    else:
        y = jnp.cos(x) - x * 0.5
    if n > 2:
        z = y  # no operation: runs as it is
    else:
        z = y * 3.0 + 1.0
    return y, z, tag


@pytest.mark.parametrize("x,n", [(0.5, 1), (2.0, 1), (3.0, 5), (-4.0, 5)])
def test_traced_ifs_after_the_python_statement_run_as_one_program(x, n):
    # The two `if`s after the statement that needs Python are one segment (runtime/segments.py):
    # one program holding both `lax.cond`s, traced once for the signature.
    f = laxify.to_static(branch_with_work)
    args = (jnp.float32(x), jnp.int32(n))
    result, caught = _run(f, *args)
    _same(result, branch_with_work(*args))
    assert len(caught) == 1
    plan = _plan(f)
    first = _record(plan, _line(branch_with_work, "if x > 1.0"))
    second = _record(plan, _line(branch_with_work, "if n > 2"))
    assert first is second and first.is_segment
    assert (first.compiled_runs, first.python_runs) == (1, 0)
    assert _compiled_text(first) in str(caught[0].message)
    (program,) = [e for e in plan.entries.values() if not isinstance(e, str)]
    jaxpr = str(jax.make_jaxpr(program.jitted)(program.arguments))
    assert "sin" in jaxpr and "cos" in jaxpr and "cond" in jaxpr
    # Both branches, again and again on the same signature: the program traced once.
    for x2 in (x, -x, 2.5, 0.0, x):
        args = (jnp.float32(x2), jnp.int32(n))
        result, caught = _run(f, *args)
        _same(result, branch_with_work(*args))
        assert caught == []
    assert program.jitted._cache_size() == 1
    assert first.python_runs == 0 and first.compiled_runs == 6


def prints_in_a_branch(x):
    label = "v" + str(int(x))  # must stay Python
    print("before", label)
    if x > 0:
        y = x * 2.0 + 1.0
        print("in branch", y)
        y = y - 0.5
    else:
        y = x
    print("after")
    return y


def test_prints_in_a_compiled_branch_keep_pythons_order(capsys):
    f = laxify.to_static(prints_in_a_branch)
    for x in (1.0, 2.0, -1.0):
        expected = prints_in_a_branch(jnp.float32(x))
        out_eager = capsys.readouterr().out
        result, _ = _run(f, jnp.float32(x))
        _same(result, expected)
        assert capsys.readouterr().out == out_eager
    record = _record(_plan(f), _line(prints_in_a_branch, "if x > 0"))  # (in the segment after the str)
    assert record.compiled_runs == 3 and record.python_runs == 0


def raises_in_a_branch(x):
    tag = str(int(x))
    if x > 0:
        y = x * 2.0
        if y > 5.0:
            raise ValueError("too big")
        y = y + 1.0
    else:
        y = x * 0.5 - 1.0
    return y, tag


@pytest.mark.parametrize("x", [1.0, 4.0, -2.0])
def test_a_branch_that_may_raise_runs_as_python(x):
    f = laxify.to_static(raises_in_a_branch)
    args = (jnp.float32(x),)
    for _ in range(2):
        if x == 4.0:
            with pytest.raises(ValueError, match="too big"):
                raises_in_a_branch(*args)
            with pytest.raises(ValueError, match="too big"), warnings.catch_warnings():
                warnings.simplefilter("ignore", laxify.FallbackWarning)
                f(*args)
        else:
            result, _ = _run(f, *args)
            _same(result, raises_in_a_branch(*args))
    record = _record(_plan(f), _line(raises_in_a_branch, "if x > 0"))
    if x > 0:
        assert record.compiled_runs == 0 and record.python_runs == 2 and "check made at run time" in record.why
    else:
        assert record.compiled_runs == 2 and record.python_runs == 0


def branch_in_a_python_loop(x, n):
    out = ""
    acc = x
    for i in range(n):  # Python: its body makes a string
        if acc > 1.0:  # compiled branch, at each iteration
            acc = jnp.sqrt(acc) * 0.9 + 0.05
        else:
            acc = acc * 3.0 + 0.5
        out = out + str(int(acc * 10)) + ","
    return acc, out


@pytest.mark.parametrize("x,n", [(0.2, 6), (9.0, 4), (1.0, 0)])
def test_a_branch_in_a_python_loop_is_compiled_per_signature(x, n):
    f = laxify.to_static(branch_in_a_python_loop)
    args = (jnp.float32(x), n)
    result, caught = _run(f, *args)
    _same(result, branch_in_a_python_loop(*args))
    if not n:  # no iteration makes a string: one program, whose result holds the Python ""
        assert not caught and not any(isinstance(r, SplitRunner) for r in f._eager.values())
        return
    plan = _plan(f)
    if n:
        assert _record(plan, _line(branch_in_a_python_loop, "for i in range(n)")).python_runs == 1
        record = _record(plan, _line(branch_in_a_python_loop, "if acc > 1.0"))
        assert record.compiled_runs == n and record.python_runs == 0
        programs = [e for e in plan.entries.values() if not isinstance(e, str)]
        assert 1 <= len(programs) <= 2  # one per branch taken, reused by the iterations
        assert all(e.jitted._cache_size() == 1 for e in programs)


def test_a_split_signature_takes_the_hot_path():
    from laxify.call.path import _SplitHot

    f = laxify.to_static(after_loop)
    for n in (3, 4, 0):
        args = (jnp.float32(2.0), jnp.int32(n))
        result, caught = _run(f, *args)
        _same(result, after_loop(*args))
        assert len(caught) == (1 if n == 3 else 0)
    assert [type(hot) for hot, _ in f._by_types.values()] == [_SplitHot]
    record = _record(_plan(f), _line(after_loop, "while i < n"))
    assert (record.compiled_runs, record.python_runs) == (3, 0)
    # Another static value (a Python int): its own signature, still split and correct.
    result, _ = _run(f, jnp.float32(2.0), 5)
    _same(result, after_loop(jnp.float32(2.0), 5))


def one_op_branch(x, k):
    tag = str(int(x))
    if k > 0:
        x = x * 2.0  # one operation: faster eagerly than as a program of its own
    else:
        x = x * 2.0 + 1.0
    return x, tag


def test_a_branch_of_one_operation_runs_eagerly_without_a_lookup_later():
    f = laxify.to_static(one_op_branch)
    for k in (1, 1, 0, 1, 0):
        args = (jnp.float32(1.5), jnp.int32(k))
        result, _ = _run(f, *args)
        _same(result, one_op_branch(*args))
    plan = _plan(f)
    record = _record(plan, _line(one_op_branch, "if k > 0"))
    # Looked up once for the one-operation branch (then run as it is: Plan.idle); the other
    # branch compiled and run twice.
    assert (record.eager_runs, record.compiled_runs, record.python_runs) == (1, 2, 0)
    assert len(plan.idle) == 1
