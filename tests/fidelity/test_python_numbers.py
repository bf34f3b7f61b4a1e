"""A value that is a Python number in eager code keeps Python's meaning once traced
(runtime/numbers.py): the oracle is the function run eagerly on the same inputs; `to_static`
gives its value or its exception (converted, or by a fallback with a warning), and
`laxify.checked(jax.jit(laxify.convert(f)))` gives its value or a located error."""

import contextlib
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify.ir.errors import ConversionError
from laxify.runtime.numbers import NumberNotHeld


def negative_power_in_static_loop(x):
    total = 0.0
    for k in range(6):
        total = total + x * 2 ** (-k)
    return total


def negative_power_step(x):
    outs = []
    for bits in range(1, 5):
        step = 2 ** -bits
        outs.append(jnp.round(x / step) * step)
    return outs


def negative_power_traced_bound(n):
    s = 0.0
    for i in range(n):
        s += 2 ** (-i)
    return s


def power_sum(x):
    s = 0
    for i in range(25):
        s = s + 3 ** i
        x = x + 1
    return s, x


def shifts(x):
    r = 1
    for _ in range(40):
        r <<= 1
        x = x + 1
    return r, x


def builtin_pow_sum(n):
    s = 0
    for i in range(n):
        s += pow(2, i)
    return s


def high_power(n):
    s = 0
    for i in range(n):
        s = s + i**31
    return s


def mask_bits(x, n):
    mask = 0
    for k in range(n):
        mask = mask | (1 << k)
        x = x + 1
    return mask, x


def list_item_sum(x):
    acc = [0, 0]
    for v in x:
        if v > 0:
            acc[0] += 1000000000
    return acc[0]


def big_literal_product(x):
    n = 0
    for v in x:
        if v > 1:
            n += 1
    return n * 3000000000


def floor_division_handler(n):
    total = 0
    for i in range(n):
        try:
            total += 12 // (i - 2)
        except ZeroDivisionError:
            total += 100
    return total


def true_division(n):
    total = jnp.float32(0.0)  # (an array: a Python float the loop changes would run it as Python)
    for i in range(n):
        total += 1 / (i - 2)
    return total


def modulo(n):
    total = 0
    for i in range(n):
        total += 10 % i
    return total


def suppressed(n):
    total = 0
    for i in range(n):
        with contextlib.suppress(ZeroDivisionError):
            total += 12 // (i - 2)
    return total


def complex_root(n):
    total = 0
    for i in range(n):
        total += (i - 2) ** 0.5
    return total


def index_is_int(n):
    t = 0
    for i in range(n):
        if isinstance(i, int) and type(i) is int:
            t += 100
        else:
            t += 1
    return t


def exact_comparison(n):
    c = 0
    for i in range(16777216, n):
        if i == 16777217.0:
            c += 1
    return c


def zero_step(n, step):
    t = 0
    for i in range(0, n, step):
        t += i
    return t


def bool_flags(x):
    a = False
    b = False
    for v in x:
        if v > 0:
            a = True
        if v > 1:
            b = True
    return a + b, a - b, a * 3


def float_counter(x):
    t = 0.0
    n = 0
    while t < x:
        t += 0.1
        n += 1
    return n


def negative_shift(n):
    r = 0
    for i in range(n):
        r = r + (1 << (i - 2))
    return r


def bools_of_a_branch(x):
    a = False
    if x > 0:
        a = True
    n = 0
    if x > 1:
        n = 3
    return a + a, isinstance(n, int), a - a


def list_items(x):
    acc = [0, 0]
    for v in x:
        if v > 0:
            acc[0] = acc[0] + 1000000000
        acc[1] = acc[1] * 3 + 1
    n = len(acc)
    return acc[0], acc[1], n * acc[1]


TORQUES = [-1.0, 0.0, 1.0]


def list_indexed_by_a_traced_int(a, x):
    t = TORQUES[a]
    table = [1, 4, 9, 16]
    s = 0
    for i in range(3):
        if x[i] > 0:
            s = s + table[i + 1]
    return t, s


def table_in_straight_line(x, i):
    t = [1.0, 2.5, 4.0]  # no construct in the function: still one program
    return t[i] * x


WEIGHTS = (0.5, 1.5, 3.0, 6.0)


def table_at_a_computed_index(x):
    k = jnp.argmax(x)  # an index the program computes
    return WEIGHTS[k] * x[k]


def table_at_an_array_index(x):
    t = [1.0, 2.0, 4.0, 8.0]
    s = 0.0
    for i in jnp.arange(len(t) - 1):  # `i` is an element of an array
        s = s + (t[i + 1] - t[i]) * x
    return s


def _search(key, arr):
    lo, hi = 0, len(arr)
    if key > arr[hi - 1]:
        return hi
    while lo < hi:
        mid = lo + ((hi - lo) >> 1)
        if key >= arr[mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _interpolate(x, dx, dy):
    j = _search(x, dx)  # `dx`, `dy`: parameters used only as sequences (fluids' `interp`)
    if j == -1:
        return dy[0]
    elif j == len(dx) - 1:
        return dy[j]
    elif j == len(dx):
        return dy[-1]
    return (dy[j + 1] - dy[j]) / (dx[j + 1] - dx[j]) * (x - dx[j]) + dy[j]


ALPHAS = [0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8]
LOSSES = [2000.0, 410.0, 50.0, 17.0, 8.0, 1.8, 0.4]


def screen_loss(alpha):
    return _interpolate(alpha, ALPHAS, LOSSES)

def math_power(action, p):
    cost = math.pow(action[0], 2) * 0.5
    if cost > 1.0:
        cost = cost + math.pow(action[0], p)
    return cost


def next_power_of_two(n):
    p = 1
    while p < n:
        p <<= 1  # past int32 the program's p would wrap to 0: the loop stops on the failed check
    return p


def best_of_two(xs):
    take, skip = 0, 0
    for v in xs:  # `skip` becomes a float only on the second trace of the body
        take, skip = skip + v, max(take, skip)
    return max(take, skip)


def seeded_generator(steps, seed):
    x = seed  # a Python int the caller gives (a static argument of to_static)
    for _ in range(steps):
        x = (x * 48271) % 2147483647
    return x


def scaled_count(flags, scale):
    for ok in flags:
        if ok:
            scale = scale * 2
        else:
            scale = scale // 2
    return scale


def division_after_or(n):
    # the right of `or` (and the sides of `a if c else b`) runs only for some data: a lambda
    # laxify writes, whose int arithmetic is the function's own
    found, total = False, 0
    for k in range(n):
        if k == 7 or 10 // (3 - k) < 0:
            found = True
        total += 1 if k == 7 else 12 % (4 - k)
    return found, total


TABLE = [1.5, 2.5, 4.0]


def item_in_a_try(i):
    # the handler catches the IndexError of a traced index: the item is Python's (runs as Python)
    try:
        v = TABLE[i]
    except IndexError:
        v = -1.0
    return v


CASES = [
    (item_in_a_try, [(jnp.int32(1),), (jnp.int32(-3),), (jnp.int32(3),), (jnp.int32(-4),)]),
    (division_after_or, [(jnp.int32(3),), (jnp.int32(4),), (jnp.int32(5),), (jnp.int32(0),)]),
    (seeded_generator, [(jnp.int32(5), 12345), (jnp.int32(0), 7)]),
    (scaled_count, [(jnp.array([True] * 35), 1), (jnp.array([True, False, True]), 3)]),
    (next_power_of_two, [(jnp.int32(5),), (jnp.int32(1),), (jnp.int32(2**30 + 1),)]),
    (best_of_two, [(jnp.array([5.0]),), (jnp.array([2.0, 7.0, 1.0]),), (jnp.zeros((0,)),)]),
    (math_power, [(jnp.array([1.0]), jnp.float32(0.5)), (jnp.array([-2.0]), jnp.float32(0.5)),
                  (jnp.array([-2.0]), jnp.float32(2.0)), (jnp.array([0.5]), jnp.float32(-1.0))]),
    (list_indexed_by_a_traced_int, [(jnp.int32(0), jnp.array([1.0, -1.0, 2.0])), (jnp.int32(-1), jnp.ones(3)),
                                    (jnp.int32(3), jnp.ones(3)), (jnp.int32(-4), jnp.zeros(3))]),
    (table_in_straight_line, [(jnp.float32(2.0), jnp.int32(0)), (jnp.float32(2.0), jnp.int32(-1)),
                              (jnp.float32(2.0), jnp.int32(3)), (jnp.float32(2.0), jnp.int32(-4))]),
    (table_at_a_computed_index, [(jnp.array([1.0, 5.0, 2.0, 0.0]),), (jnp.array([9.0, 1.0, 2.0, 3.0]),)]),
    (table_at_an_array_index, [(jnp.float32(1.5),), (jnp.float32(-2.0),)]),
    (screen_loss, [(jnp.float32(0.01),), (jnp.float32(0.25),), (jnp.float32(0.8),), (jnp.float32(0.95),),
                   (jnp.float32(0.05),)]),
    (bools_of_a_branch, [(jnp.float32(2.0),), (jnp.float32(0.5),), (jnp.float32(-1.0),)]),
    (list_items, [(jnp.array([1.0, -1.0, 2.0, 3.0]),), (jnp.array([1.0, -1.0]),), (jnp.zeros((21,)),)]),
    (negative_power_in_static_loop, [(jnp.float32(1.0),), (jnp.float32(-3.0),)]),
    (negative_power_step, [(jnp.array([0.3, 0.7]),)]),
    (negative_power_traced_bound, [(jnp.int32(5),), (jnp.int32(0),), (jnp.int32(1),)]),
    (power_sum, [(jnp.float32(0.0),)]),
    (shifts, [(jnp.float32(0.0),)]),
    (builtin_pow_sum, [(jnp.int32(40),), (jnp.int32(10),)]),
    (high_power, [(jnp.int32(3),), (jnp.int32(2),)]),
    (mask_bits, [(jnp.float32(0.0), 40), (jnp.float32(0.0), 20)]),
    (list_item_sum, [(jnp.array([1.0, -1.0, 2.0, 3.0]),), (jnp.array([1.0, -1.0]),)]),
    (big_literal_product, [(jnp.array([1.0, 2.0, 3.0]),), (jnp.array([0.0, 1.0]),)]),
    (floor_division_handler, [(jnp.int32(5),), (jnp.int32(2),)]),
    (true_division, [(jnp.int32(5),), (jnp.int32(2),)]),
    (modulo, [(jnp.int32(5),), (jnp.int32(0),)]),
    (suppressed, [(jnp.int32(5),), (jnp.int32(2),)]),
    (complex_root, [(jnp.int32(5),), (jnp.int32(2),)]),
    (index_is_int, [(jnp.int32(3),)]),
    (exact_comparison, [(jnp.int32(16777218),), (jnp.int32(16777217),)]),
    (zero_step, [(jnp.int32(3), jnp.int32(0)), (jnp.int32(3), jnp.int32(1))]),
    (bool_flags, [(jnp.array([1.0, 2.0]),), (jnp.array([1.0, 0.0]),), (jnp.array([-1.0]),)]),
    (float_counter, [(jnp.float32(3.0),), (jnp.float32(0.0),)]),
    (negative_shift, [(jnp.int32(5),), (jnp.int32(2),)]),
]


def _outcome(fn, args):
    try:
        return "value", jax.tree_util.tree_map(lambda v: np.asarray(v).tolist() if hasattr(v, "shape") else v, fn(*args))
    except Exception as e:
        return "error", type(e)


def _same(got, want) -> bool:
    if got[0] != want[0]:
        return False
    if got[0] == "error":
        return issubclass(got[1], want[1])
    flat_got, flat_want = jax.tree_util.tree_leaves(got[1]), jax.tree_util.tree_leaves(want[1])
    if len(flat_got) != len(flat_want):
        return False
    return all(
        np.allclose(np.asarray(a, dtype=complex), np.asarray(b, dtype=complex), rtol=1e-6) for a, b in zip(flat_got, flat_want)
    )


@pytest.mark.parametrize("fn, inputs", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_to_static_gives_eagers_value_or_error(fn, inputs):
    static = laxify.to_static(fn)
    for args in inputs:
        want = _outcome(fn, args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", laxify.FallbackWarning)
            got = _outcome(static, args)
        assert _same(got, want), (args, got, want)


@pytest.mark.parametrize("fn, inputs", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_jit_of_convert_gives_eagers_value_or_a_located_error(fn, inputs):
    for args in inputs:
        want = _outcome(fn, args)
        statics = tuple(k for k, a in enumerate(args) if isinstance(a, int))
        jitted = laxify.checked(jax.jit(laxify.convert(fn), static_argnums=statics), static_argnums=statics)
        got = _outcome(jitted, args)
        if got[0] == "error" and issubclass(got[1], (NumberNotHeld, ConversionError)):
            continue  # a located error: this input needs Python (to_static runs it eagerly)
        assert _same(got, want), (args, got, want)


def test_the_loops_stay_compiled_where_python_numbers_fit():
    """The rules add checks to the program; they do not unroll or drop its loops."""
    text = str(jax.make_jaxpr(laxify.convert(negative_power_in_static_loop))(jnp.float32(1.0)))
    assert "scan" in text or "while" in text
    text = str(jax.make_jaxpr(laxify.convert(builtin_pow_sum))(jnp.int32(5)))
    assert "while" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)  # converted: no fallback on these inputs
        assert int(laxify.to_static(builtin_pow_sum)(jnp.int32(10))) == 1023
        assert int(laxify.to_static(index_is_int)(jnp.int32(3))) == 300
        assert [int(v) for v in laxify.to_static(bool_flags)(jnp.array([1.0, 2.0]))] == [2, 0, 3]


def test_a_python_float_sum_runs_as_python_naming_it():
    """`s += 2 ** (-i)`: Python's float64 sum (1.9375), or an int where the loop does not run;
    the float32 program holds neither exactly, so the loop runs as Python."""
    for n, want in ((5, 1.9375), (0, 0.0)):
        with pytest.warns(laxify.FallbackWarning, match="changes the Python float `s`"):
            got = laxify.to_static(negative_power_traced_bound)(jnp.int32(n))
        assert type(got) is float and got == want


def test_an_overflow_says_where_and_falls_back_with_a_warning():
    with pytest.warns(laxify.FallbackWarning, match="Python int in eager code") as caught:
        assert int(laxify.to_static(shifts)(jnp.float32(0.0))[0]) == 2**40
    assert caught[0].filename == __file__


def test_a_division_by_zero_raises_pythons_error_at_the_users_line():
    with pytest.raises(ZeroDivisionError, match="division by zero") as info:
        laxify.to_static(true_division)(jnp.int32(5))
    assert info.traceback[-1].path.name == "test_python_numbers.py"


def test_a_float_carried_by_a_while_loop_falls_back_naming_it():
    with pytest.warns(laxify.FallbackWarning, match="changes the Python float `t`"):
        assert int(laxify.to_static(float_counter)(jnp.float32(3.0))) == float_counter(jnp.float32(3.0))


def spring(x0, v0, steps):
    k = 0.0025
    x = x0
    v = v0
    for _ in range(steps):
        v = v - k * x
        x = x + v
    return x


def halved(x0, steps):
    x = x0
    for _ in range(steps):
        x = x * 0.5
    return x


def logistic_map(x0, r, n):
    x = x0
    for _ in range(n):
        x = r * x * (1 - x)
    return x


def test_a_local_holding_a_python_float_argument_is_a_python_number():
    """`x = x0`, `v = v0` of Python float arguments, changed with a float literal's name (`v -
    k * x`, `x + v`): float64 in Python, float32 in a program (0.09127177 after 30 steps, where
    Python gives 0.0912717019): the loop runs as Python, naming it."""
    for steps in (30, 0):
        with pytest.warns(laxify.FallbackWarning, match="changes the Python float `[vx]`"):
            got = laxify.to_static(spring)(2.0, 0.0, jnp.int32(steps))
        assert type(got) is float and got == spring(2.0, 0.0, steps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        # An array argument is an array in eager code: the loop stays one program.
        got = laxify.to_static(spring)(jnp.float32(2.0), jnp.float32(0.0), jnp.int32(30))
        np.testing.assert_allclose(got, spring(jnp.float32(2.0), jnp.float32(0.0), 30), rtol=1e-5)
        # A power-of-two scale is exact in float32: no change to tell.
        assert float(laxify.to_static(halved)(3.0, jnp.int32(5))) == halved(3.0, 5)
    assert "while" in str(jax.make_jaxpr(laxify.convert(spring))(jnp.float32(2.0), jnp.float32(0.0), jnp.int32(30)))


def test_a_python_float_argument_updated_with_parameters_and_literals_runs_as_python():
    """The logistic map `x = r * x * (1 - x)` of Python float arguments: chaotic, so float32
    is far from Python's float64 after 30 steps (0.880 against 0.973): the loop runs as Python."""
    with pytest.warns(laxify.FallbackWarning, match="changes the Python float `x`"):
        got = laxify.to_static(logistic_map)(0.5, 3.9, jnp.int32(30))
    assert type(got) is float and got == logistic_map(0.5, 3.9, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        # Array arguments (strongly or weakly typed) are arrays in eager code (float32 there
        # too): one program, no warning. (A chaotic map: its float32 digits depend on XLA's
        # fusion, so only a value in the map's range is asserted.)
        for x0 in (jnp.float32(0.5), jnp.array(0.5)):
            got = laxify.to_static(logistic_map)(x0, jnp.float32(3.9), jnp.int32(30))
            assert got.dtype == jnp.float32 and 0.0 <= float(got) <= 1.0
        text = str(jax.make_jaxpr(laxify.convert(logistic_map))(jnp.array(0.5), jnp.float32(3.9), jnp.int32(30)))
        assert "while" in text


def compound(p, rate, n):
    for _ in range(n):
        p = p * (1 + rate)
    return p


def decay(v, n):
    for _ in range(n):
        v *= 0.999
        v += 0.001
    return v


def cooling(temp, env, k, n):
    for _ in range(n):
        temp = temp - k * (temp - env)
    return temp


def fibonacci_like(a, b, n):
    for _ in range(n):
        a, b = b, a + b * 0.5
    return a


def sum_start(a, b, n):
    s = a + b
    for _ in range(n):
        s = s * 0.99
    return s


def ticks(t, x):
    count = 0
    while t < x:
        t += 0.1
        count += 1
    return count


@pytest.mark.parametrize(
    ("fn", "floats", "rest", "name"),
    [
        (compound, (1000.0, 0.05), (30,), "p"),  # 4321.9365 in float32, 4321.9424 in Python
        (decay, (0.3,), (500,), "v"),
        (cooling, (90.0, 20.0, 0.07), (40,), "temp"),
        (fibonacci_like, (0.1, 0.3), (40,), "[ab]"),
        (sum_start, (0.1, 0.2), (300,), "s"),
        (ticks, (0.0,), (3.0,), "t"),  # 31 ticks in float32, 30 in Python
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_python_float_parameter_updated_in_a_traced_loop_runs_as_python(fn, floats, rest, name):
    """A parameter (or a local assigned an operation of parameters) that a traced loop updates
    by operations of itself, parameters and literals: a Python float argument is float64 in
    eager code, so the loop runs as Python naming it; an array argument stays one program."""
    traced = tuple(jnp.float32(r) if type(r) is float else jnp.int32(r) for r in rest)
    want = fn(*floats, *rest)
    with pytest.warns(laxify.FallbackWarning, match=f"changes the Python float `{name}`"):
        got = laxify.to_static(fn)(*floats, *traced)
    assert type(got) is type(want) and got == want
    arrays = tuple(jnp.float32(v) for v in floats)
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = laxify.to_static(fn)(*arrays, *traced)
    np.testing.assert_allclose(got, fn(*arrays, *rest), rtol=1e-5)
    assert "while" in str(jax.make_jaxpr(laxify.convert(fn))(*arrays, *traced))


def root_start(a, n):
    x = math.sqrt(a)
    for _ in range(n):
        x = x * 0.9 + 0.1
    return x


def magnitude_start(a, n):
    x = a if a > 0 else -a
    for _ in range(n):
        x = float(x) * 0.999 + 0.001
    return x


def unpacked_state(state, n):
    x, v = state
    for _ in range(n):
        v = v - 0.01 * x
        x = x + 0.01 * v
    return x


def annotated(p: float, n: int) -> float:
    for _ in range(n):
        p: float = p * 1.01
    return p


def bisection(lo, hi, n):
    for _ in range(n):
        mid = (lo + hi) / 2
        if mid * mid > 2.0:
            hi = mid
        else:
            lo = mid
    return lo


def _relax(x):
    return x * 0.999 + 0.001


def relaxed_by_a_helper(x, n):
    for _ in range(n):
        x = _relax(x)
    return x


def running_max(x, n):
    m = x
    for i in range(n):
        m = max(m, x * 1.01**i)
    return m


def folded(x, n):
    for _ in range(n):
        x = abs(x - 0.33)
    return x


def sine_map(x, n):
    for _ in range(n):
        x = 0.99 * math.sin(math.pi * x)
    return x


def wrapped_angle(theta, n):
    for _ in range(n):
        theta = (theta * 1.3 + 0.7) % (2 * math.pi)
    return theta


RATE = 0.05
GRAVITY = 9.81
STEP = 0.01


def compound_at_a_global_rate(p, n):
    for _ in range(n):
        p = p * (1 + RATE)
    return p


def falling(n):
    height = 100.0
    speed = 0.0
    for _ in range(n):
        speed += GRAVITY * STEP
        height -= speed * STEP
    return height


def _logistic_of(r):
    def run(x, n):
        for _ in range(n):
            x = r * x * (1 - x)
        return x

    return run


logistic_of_a_closure = _logistic_of(3.9)


def _growth_factor(k):
    return 1.0 + 0.01 * k


def grown_by_a_function(x, n):
    for _ in range(n):
        x = x * _growth_factor(3.5)
    return x


def dict_balance(n):
    state = {"p": 1000.0}
    for _ in range(n):
        state["p"] *= 1.05
    return state["p"]


@pytest.mark.parametrize(
    ("fn", "args", "name"),
    [
        (root_start, (2.0, 50), "x"),
        (magnitude_start, (-0.3, 500), "x"),
        (unpacked_state, ((1.0, 0.0), 100), "[xv]"),
        (annotated, (1.0, 100), "p"),
        (bisection, (1.0, 2.0, 30), "(lo|hi)"),  # 1.4142135 in float32
        (dict_balance, (30,), "state"),
        (relaxed_by_a_helper, (0.3, 500), "x"),  # 0.5755368 in float32, 0.5755347 in Python
        (running_max, (0.3, 30), "m"),  # max of Python floats: a Python float
        (folded, (0.1, 31), "x"),  # 0.23000002 in float32
        (wrapped_angle, (2.5, 60), "theta"),  # `2 * math.pi`: a Python float
        (compound_at_a_global_rate, (1000.0, 30), "p"),  # a global's value
        (falling, (300,), "(speed|height)"),  # 55.707817 in float32, 55.70785 in Python
        (logistic_of_a_closure, (0.2, 60), "x"),  # a closure cell's value: 0.378 in float32
        (grown_by_a_function, (1.0, 200), "x"),  # a function's Python float: 972.8974 in float32
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_python_float_reached_other_ways_runs_as_python(fn, args, name):
    """A local computed from parameters by a call, a conditional expression or unpacking, an
    annotated update, a midpoint `(lo + hi) / 2`, an item of a dict of floats, a helper's
    result, `max` and `abs` of Python floats, globals and closure cells: changed by a traced loop (a traced trip count), each is a Python float in eager
    code."""
    *floats, n = args
    want = fn(*floats, n)
    with pytest.warns(laxify.FallbackWarning, match=f"changes the Python float `{name}`"):
        got = laxify.to_static(fn)(*floats, jnp.int32(n))
    assert type(got) is float and got == want


def test_an_array_that_a_loop_makes_a_python_float_runs_as_python():
    """`math.sin` of a float32 array is a Python float in eager code: from the first iteration
    on the sine map computes in float64 there (0.967 after 60 steps, 0.546 in float32)."""
    want = sine_map(jnp.float32(0.31), 60)
    assert type(want) is float
    with pytest.warns(laxify.FallbackWarning, match="changes the Python float `x`"):
        got = laxify.to_static(sine_map)(jnp.float32(0.31), jnp.int32(60))
    assert type(got) is float and got == want


def test_math_fabs_of_an_array_value_is_no_computed_float():
    """`math.fabs(max(x))` of a float32 array: a Python float in eager code holding the
    array's value exactly, not one float64 arithmetic computed: the loop stays one program
    (the fuzzer's program); `math.fabs` of a computed Python float is one (its loop runs as
    Python)."""

    def peak(x):
        s = 0.0
        for _ in range(1):
            s = math.fabs(max(x))
        return s

    def folded(x, n):
        for _ in range(n):
            x = math.fabs(x * 1.3 - 0.77)
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert float(jax.jit(laxify.convert(peak))(jnp.array([-3.0, 2.0]))) == 2.0
    with pytest.warns(laxify.FallbackWarning, match="changes the Python float `x`"):
        assert laxify.to_static(folded)(0.3, jnp.int32(40)) == folded(0.3, 40)


def test_a_python_float_meeting_an_array_in_a_loop_stays_compiled():
    """Where the float meets an array (`total + xs[i] * 0.5` of an int array, `jnp.cos(x)`),
    eager code computes an array too: no warning, one program, eager's value."""

    def mean_of_halves(xs, n):
        total = 0.0
        for i in range(n):
            total += xs[i] * 0.5
        return total

    def cosine_fixed_point(n):
        x = 0.5
        for _ in range(n):
            x = jnp.cos(x)
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = laxify.to_static(mean_of_halves)(jnp.arange(5), jnp.int32(4))
        assert float(got) == float(mean_of_halves(jnp.arange(5), 4)) == 3.0
        got = laxify.to_static(cosine_fixed_point)(jnp.int32(10))
        assert float(got) == float(cosine_fixed_point(10))
    assert "while" in str(jax.make_jaxpr(laxify.convert(mean_of_halves))(jnp.arange(5), jnp.int32(4)))
    assert "while" in str(jax.make_jaxpr(laxify.convert(cosine_fixed_point))(jnp.int32(10)))


def test_printing_a_list_of_python_ints_prints_python_ints(capsys):
    def counts_of(x):
        counts = [0, 0]
        for v in x:
            if v > 0:
                counts[0] += 1
            else:
                counts[1] += 1
        print(counts)
        return x

    laxify.to_static(counts_of)(jnp.array([1.0, -1.0, 2.0]))
    assert capsys.readouterr().out == "[2, 1]\n"


def test_range_of_a_float_array_is_a_type_error():
    def loop(x):
        t = 0
        for i in range(x):
            t += i
        return t

    with pytest.raises(TypeError):
        loop(jnp.float32(3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        with pytest.raises(TypeError, match="integer"):
            laxify.to_static(loop)(jnp.float32(3.0))


def test_a_python_list_indexed_by_a_traced_int_stays_one_program():
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        t, total = laxify.to_static(list_indexed_by_a_traced_int)(jnp.int32(2), jnp.array([1.0, -1.0, 2.0]))
    assert (float(t), int(total)) == (1.0, 20)
    text = str(jax.make_jaxpr(laxify.convert(list_indexed_by_a_traced_int))(jnp.int32(2), jnp.ones(3)))
    assert "scan" in text or "while" in text


@pytest.mark.parametrize(
    "fn, args, construct",
    [
        (table_in_straight_line, (jnp.float32(2.0), jnp.int32(1)), None),
        (table_at_a_computed_index, (jnp.array([1.0, 5.0, 2.0, 0.0]),), None),
        (table_at_an_array_index, (jnp.float32(1.5),), "scan"),
        (screen_loss, (jnp.float32(0.25),), "while"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_list_at_a_computed_index_is_one_program(fn, args, construct):
    """A straight-line function, an index the program computes, an array's element as the
    index, and tables passed to a helper that only indexes them (fluids' `interp`): no
    fallback, and the program holds the construct."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = laxify.to_static(fn)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(fn(*args)), rtol=1e-6)
    text = str(jax.make_jaxpr(laxify.convert(fn))(*args))
    assert construct is None or construct in text


def flags_before_a_python_line(x, a, k):
    pn = False
    pb = False
    for _ in range(k):
        if a > -1.25:
            pn = True
        if jnp.sum(x) > 1.75:
            pb = True
    c = (pn + pb) * 2 - (pn - pb)
    return len(str(int(jnp.floor(a * a)))) + c  # str() of a traced value: split around it


def handler_after_a_branch(x):
    misses = 0
    if x > 0:
        misses = 1
    try:
        return 10 / misses
    except ZeroDivisionError:
        return -1.0


def test_python_numbers_stay_python_numbers_across_a_split():
    """The values a compiled segment of a split run gives for Python numbers are Python
    numbers again in the Python that follows (a bool's `-`, a division by a zero int)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", laxify.FallbackWarning)
        for k in (0, 2):
            args = (jnp.ones(3), jnp.float32(2.5), jnp.int32(k))
            assert laxify.to_static(flags_before_a_python_line)(*args) == flags_before_a_python_line(*args)
        for v in (-1.0, 1.0):
            x = jnp.float32(v)
            assert float(laxify.to_static(handler_after_a_branch)(x)) == handler_after_a_branch(x)


# -- Python floats a loop changes, list arguments, printed appended lists --------------------


def mask_of_bits(positions):
    mask = 0
    for p in positions:
        mask |= 1 << p
    return mask


def rocket(fuel, burn):
    mass = 10 + fuel
    v = 0
    while fuel > 0:
        used = min(burn, fuel)
        v += 3 * math.log(mass / (mass - used))
        mass -= used
        fuel -= used
    return v


def running_peak(xs):
    peak = 0.0
    for v in xs:
        if abs(v) > peak:
            peak = abs(v)
    return peak


def levels_of(x, bits):
    base = 2
    levels = base**bits - 1
    if x > 0:
        x = x * levels
    return x


def divide_table(n):
    out = []
    for i in range(4):
        out.append(n // (i + 1))
    print(out)
    print(f"table {out}")
    return out


def test_items_of_a_list_argument_are_python_ints():
    assert int(laxify.to_static(mask_of_bits)([2, 5])) == 36
    with pytest.warns(laxify.FallbackWarning, match="int32"):
        assert laxify.to_static(mask_of_bits)([2, 33]) == 2**33 + 4


def test_a_math_result_carried_as_a_python_float_runs_as_python():
    for fuel, burn in ((jnp.float32(20.0), jnp.float32(6.0)), (jnp.float32(0.0), jnp.float32(1.0))):
        want = rocket(fuel, burn)
        with pytest.warns(laxify.FallbackWarning, match="changes the Python float `v`"):
            got = laxify.to_static(rocket)(fuel, burn)
        assert type(got) is type(want) and got == want  # (0, an int, where the loop does not run)


def test_a_float_that_becomes_an_array_on_a_path_stays_compiled():
    xs = jnp.array([0.5, -1.5, 0.25])
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        assert float(laxify.to_static(running_peak)(xs)) == 1.5
    assert "scan" in str(jax.make_jaxpr(laxify.convert(running_peak))(xs))


def literal_power_only(x, bits):
    # No loop, no `if`: nothing else to convert, and jax.jit alone gives 0 for 2 ** -1.
    levels = 2**bits - 1
    return x * levels, levels


@pytest.mark.parametrize("fn", [levels_of, literal_power_only])
def test_a_negative_int_array_exponent_raises_jaxs_error(fn):
    with pytest.raises(TypeError, match="negative"):
        fn(jnp.float32(1.0), jnp.int32(-1))
    for route in (laxify.to_static(fn), laxify.checked(jax.jit(laxify.convert(fn)))):
        with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
            route(jnp.float32(1.0), jnp.int32(-1))
        assert float(jax.tree_util.tree_leaves(route(jnp.float32(1.0), jnp.int32(3)))[0]) == 7.0
    assert float(jax.tree_util.tree_leaves(laxify.to_static(fn)(jnp.float32(1.0), -1))[0]) == -0.5  # Python's int


def test_printing_an_appended_list_prints_the_list(capsys):
    got = laxify.to_static(divide_table)(jnp.int32(12))
    eager_text = "[Array(12, dtype=int32), Array(6, dtype=int32), Array(4, dtype=int32), Array(3, dtype=int32)]"
    assert capsys.readouterr().out == f"{eager_text}\ntable {eager_text}\n"
    assert [int(v) for v in got] == [12, 6, 4, 3]


def bias_corrected(m):
    out = m
    for t in range(1, 11):
        out = out + m / (1 - 0.999**t)
    return out


def stepped_rate(w):
    for step in range(300):
        lr = 0.1 * 0.5 ** (step // 100)
        w = w - lr * w
    return w


def test_python_floats_of_a_scanned_index_are_pythons_values():
    """`1 - 0.999 ** t` of a static range's index is a float64 cancellation in Python; the
    scan uses Python's value at each iteration (rounded once), not float32 operations."""
    m = jnp.float32(0.001)
    got, want = laxify.to_static(bias_corrected)(m), bias_corrected(m)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    chained = laxify.convert(bias_corrected)(m)  # (float32 `1 - 0.999 ** t` is 1e-4 off)
    np.testing.assert_allclose(np.asarray(chained), np.asarray(want), rtol=1e-6)
    assert "scan" in str(jax.make_jaxpr(laxify.convert(bias_corrected))(m))
    w = jnp.float32(1.0)
    np.testing.assert_allclose(np.asarray(laxify.to_static(stepped_rate)(w)), np.asarray(stepped_rate(w)), rtol=1e-5)
    assert "scan" in str(jax.make_jaxpr(laxify.convert(stepped_rate))(w))


def damped(x, y):
    damp = 1.0
    while jnp.max(jnp.abs(y - x)) * damp > 0.25:
        damp = damp * 0.5
    return x + damp * (y - x), damp


def test_a_python_float_halved_by_a_loop_stays_compiled():
    """`damp * 0.5`: a power-of-two scale of Python's exact value is exact in float32 too."""
    x, y = jnp.zeros(3), jnp.array([1.0, 5.0, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", laxify.FallbackWarning)
        got = laxify.to_static(damped)(x, y)
    want = damped(x, y)
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    assert float(got[1]) == want[1] == 0.03125
    assert "while" in str(jax.make_jaxpr(laxify.convert(damped))(x, y))
