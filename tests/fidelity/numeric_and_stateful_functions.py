"""Small functions in another style than ``textbook_algorithms.py``: numeric methods (Newton,
bisection, Simpson, Horner, series), small classes and closures that keep state, keyword
arguments, comprehensions, exceptions caught or raised, `None` sentinels, helpers that change
their arguments. Same ``CASES`` format."""
from __future__ import annotations
import math
import jax.numpy as jnp

i32, f32 = jnp.int32, jnp.float32
def arr(*v):
    return jnp.array(v, jnp.float32 if any(isinstance(x, float) for x in v) else jnp.int32)

def newton_sqrt(a, tol=1e-5):
    if a < 0:
        raise ValueError("negative input")
    if a == 0:
        return 0.0
    x = a
    while abs(x * x - a) > tol * a:
        x = 0.5 * (x + a / x)
    return x

def bisection_root(lo, hi):
    f = lambda t: t * t * t - 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if f(mid) * f(lo) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2

def simpson(n):
    if n % 2 == 1:
        n = n + 1
    h = 1.0 / n
    s = 0.0
    for i in range(n + 1):
        x = i * h
        w = 1 if i == 0 or i == n else (4 if i % 2 == 1 else 2)
        s += w * x * x
    return s * h / 3

def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc

def exp_series(x):
    term, total, k = 1.0, 1.0, 1
    while abs(term) > 1e-7 and k < 60:
        term = term * x / k
        total += term
        k += 1
    return total, k

class Accum:
    def __init__(self):
        self.total = 0.0
        self.count = 0
    def add(self, v):
        if v > 0:
            self.total += v
            self.count += 1
    def mean(self):
        return self.total / self.count if self.count else 0.0

def accum_positive(xs):
    acc = Accum()
    for v in xs:
        acc.add(v)
    return acc.mean(), acc.count

def make_counter():
    count = [0]
    def inc(v):
        if v > 1:
            count[0] += 1
    return count, inc

def closure_counter(xs):
    count, inc = make_counter()
    for v in xs:
        inc(v)
    return count[0]

def kw_scale(x, *, factor=2.0, shift=0.0):
    if x > 0:
        return x * factor + shift
    return x - shift

def call_kw(x):
    return kw_scale(x, shift=1.0) + kw_scale(-x, factor=3.0)

def comp_filter_sum(xs):
    return sum([v * v for v in xs if v > 0])

def comp_where(xs):
    return [v if v > 0 else -v for v in xs]

def tuple_return_paths(x):
    if x > 0:
        return x, 1
    elif x < 0:
        return -x, -1
    return x, 0

def safe_div(a, b):
    try:
        if b == 0:
            raise ZeroDivisionError("b is zero")
        return a / b
    except ZeroDivisionError:
        return 0.0

def validate_then_loop(xs, k):
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    total = 0
    for v in xs:
        total += v // k
    return total

def gcd_loop(a, b):
    while b != 0:
        a, b = b, a % b
    return a

def lcm_list(xs):
    out = 1
    for v in xs:
        out = out * v // gcd_loop(out, v)
    return out

def collatz_count(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps

def digits_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s

def reverse_two_pointers(a):
    i, j = 0, a.shape[0] - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        i += 1
        j -= 1
    return a

def kadane_max(xs):
    best = cur = xs[0]
    for v in xs[1:]:
        cur = max(v, cur + v)
        best = max(best, cur)
    return best

def two_pointer_pair(a, target):
    i, j = 0, a.shape[0] - 1
    while i < j:
        s = a[i] + a[j]
        if s == target:
            return i, j
        if s < target:
            i += 1
        else:
            j -= 1
    return -1, -1

def inversion_pairs(a):
    n = a.shape[0]
    c = 0
    for i in range(n):
        for j in range(i + 1, n):
            if a[i] > a[j]:
                c += 1
    return c

def min_index_key(xs):
    return min(range(len(xs)), key=lambda i: xs[i])

def argmax_loop(xs):
    best, idx = xs[0], 0
    for i, v in enumerate(xs):
        if v > best:
            best, idx = v, i
    return idx

def stack_balance(codes):
    depth = 0
    for c in codes:
        if c == 1:
            depth += 1
        elif c == 2:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0

def running_mean_list(xs):
    out = []
    s = 0.0
    for i, v in enumerate(xs):
        s += v
        out.append(s / (i + 1))
    return out

def zip_dot(a, b):
    return sum(x * y for x, y in zip(a, b))

def reversed_accum(xs):
    acc = 0.0
    for v in reversed(xs):
        acc = acc * 0.5 + v
    return acc

def piecewise(x):
    if x < -1:
        y = -1.0
    elif x > 1:
        y = 1.0
    else:
        y = x
    return y * 2

def nested_helper_mutation(xs):
    def bump(lst, i):
        if lst[i] < 0:
            lst[i] = 0.0
    lst = [v for v in xs]
    for i in range(len(lst)):
        bump(lst, i)
    return lst

def dict_accumulate(xs):
    d = {"pos": 0.0, "neg": 0.0}
    for v in xs:
        if v > 0:
            d["pos"] += v
        else:
            d["neg"] += v
    return d

def none_sentinel(xs):
    found = None
    for v in xs:
        if v > 2:
            found = v
            break
    return -1.0 if found is None else found

def while_true_break(n):
    i = 0
    total = 0
    while True:
        if i >= n:
            break
        total += i
        i += 1
    return total

def math_funcs(x):
    if x > 0:
        return math.sqrt(x) + math.floor(x)
    return math.fabs(x)

def int_conversion(x):
    k = int(x * 3)
    return k * 2 + round(x)

def default_list_arg(x, acc=None):
    if acc is None:
        acc = []
    if x > 0:
        acc.append(x)
    return len(acc)

def mutate_array_arg_helper(a):
    def clip_neg(arr):
        for i in range(arr.shape[0]):
            if arr[i] < 0:
                arr[i] = 0
    clip_neg(a)
    return a.sum()

def early_return_flag(xs):
    for v in xs:
        if v == 0:
            return "zero"
    return "none"

def is_identity_loop(xs):
    best = None
    for v in xs:
        if best is None or v > best:
            best = v
    return best

def aug_assign_tuple(xs):
    lo, hi = xs[0], xs[0]
    for v in xs:
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    return hi - lo

# -- objects that keep state, aliases, sentinels ---------------------------------------------

class Stack:
    def __init__(self):
        self.items = []
    def push(self, v):
        self.items.append(v)
    def pop(self):
        return self.items.pop()
    def empty(self):
        return len(self.items) == 0

def stack_reverse(xs):
    s = Stack()
    for v in xs:
        s.push(v)
    out = []
    while not s.empty():
        out.append(s.pop())
    return out

class Running:
    def __init__(self):
        self.best = None
    def see(self, v):
        if self.best is None or v > self.best:
            self.best = v

def running_best(xs):
    r = Running()
    for v in xs:
        r.see(v)
    return r.best

def dict_of_lists(xs):
    groups = {"small": [], "big": []}
    for v in xs:
        groups["small" if v < 2 else "big"].append(v)
    return len(groups["small"]), len(groups["big"])

def tuple_state(xs):
    state = (0.0, 0)
    for v in xs:
        s, c = state
        if v > 0:
            state = (s + v, c + 1)
    return state

def counter_global(xs):
    total = 0
    seen = []
    for v in xs:
        if v not in seen:
            seen.append(v)
            total += 1
    return total

def list_index_update(xs):
    out = [0, 0, 0]
    for v in xs:
        out[v % 3] += 1
    return out

def chained_compare(x):
    if 0 < x < 10:
        return 1
    return 0

def ternary_chain(x):
    return "neg" if x < 0 else "zero" if x == 0 else "pos"

def float_int_mix(n):
    total = 0
    for i in range(n):
        total += i / 2
    return total

def early_exit_nested_for(m, target):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] == target:
                return i, j
    return -1, -1

def list_copy_then_mutate(xs):
    a = list(xs)
    b = a
    c = a[:]
    a[0] = 100
    return b[0], c[0]

def augmented_list_alias(x):
    a = [1]
    b = a
    if x > 0:
        a += [2]
    return len(b)

def is_none_default(x, scale=None):
    if scale is None:
        scale = 2.0
    if x > 0:
        return x * scale
    return -x

def accumulate_pairs(xs):
    pairs = []
    for i in range(len(xs) - 1):
        if xs[i] < xs[i + 1]:
            pairs.append((i, i + 1))
    return len(pairs)


CASES = [
    (newton_sqrt, [(f32(2.0),), (f32(0.0),), (f32(9.0),)], False),
    (bisection_root, [(f32(0.0), f32(2.0))], False),
    (simpson, [(i32(4),), (i32(5),)], False),
    (horner, [([1.0, -2.0, 3.0], f32(2.0)), (arr(1.0, 0.5), f32(-1.0))], False),
    (exp_series, [(f32(1.0),), (f32(-2.0),)], False),
    (accum_positive, [(arr(1.0, -2.0, 3.0),), (arr(-1.0, -2.0),)], False),
    (closure_counter, [(arr(1.0, 2.0, 3.0),), (arr(0.0,),)], False),
    (call_kw, [(f32(2.0),), (f32(-2.0),)], False),
    (comp_filter_sum, [(arr(1.0, -2.0, 3.0),)], False),
    (comp_where, [(arr(1.0, -2.0, 3.0),)], False),
    (tuple_return_paths, [(f32(2.0),), (f32(-3.0),), (f32(0.0),)], False),
    (safe_div, [(f32(6.0), f32(3.0)), (f32(6.0), f32(0.0))], False),
    (validate_then_loop, [(arr(3, 7, 9), i32(2))], False),
    (gcd_loop, [(i32(12), i32(18)), (i32(7), i32(0))], False),
    (lcm_list, [(arr(4, 6, 10),)], False),
    (collatz_count, [(i32(6),), (i32(1),), (i32(27),)], False),
    (digits_sum, [(i32(1234),), (i32(0),)], False),
    (reverse_two_pointers, [(arr(1, 2, 3, 4, 5),), (arr(1,),)], True),
    (kadane_max, [(arr(-2, 1, -3, 4, -1, 2, 1, -5, 4),)], False),
    (two_pointer_pair, [(arr(1, 2, 4, 7, 11), i32(9)), (arr(1, 2), i32(10))], False),
    (inversion_pairs, [(arr(3, 1, 2, 5, 4),)], False),
    (min_index_key, [(arr(3.0, 1.0, 2.0),)], False),
    (argmax_loop, [(arr(3.0, 1.0, 7.0, 2.0),)], False),
    (stack_balance, [(arr(1, 1, 2, 2),), (arr(1, 2, 2, 1),), (arr(1, 1, 2),)], False),
    (running_mean_list, [(arr(1.0, 2.0, 3.0),)], False),
    (zip_dot, [(arr(1.0, 2.0), arr(3.0, 4.0))], False),
    (reversed_accum, [(arr(1.0, 2.0, 3.0),)], False),
    (piecewise, [(f32(-3.0),), (f32(3.0),), (f32(0.5),)], False),
    (nested_helper_mutation, [(arr(1.0, -2.0, 3.0),)], False),
    (dict_accumulate, [(arr(1.0, -2.0, 3.0),)], False),
    (none_sentinel, [(arr(1.0, 3.0, 5.0),), (arr(1.0, 2.0),)], False),
    (while_true_break, [(i32(5),), (i32(0),)], False),
    (math_funcs, [(f32(2.5),), (f32(-1.5),)], False),
    (int_conversion, [(f32(1.7),), (f32(-1.2),), (f32(2.5),)], False),
    (default_list_arg, [(f32(2.0),), (f32(-1.0),)], False),
    (mutate_array_arg_helper, [(arr(1, -2, 3),)], True),
    (early_return_flag, [(arr(1, 0, 2),), (arr(1, 2),)], False),
    (is_identity_loop, [(arr(1.0, 5.0, 2.0),)], False),
    (aug_assign_tuple, [(arr(4.0, -1.0, 7.0),)], False),
    (stack_reverse, [(arr(1.0, 2.0, 3.0),)], False),
    (running_best, [(arr(1.0, 5.0, 2.0),)], False),
    (dict_of_lists, [(arr(1, 3, 0, 5),)], False),
    (tuple_state, [(arr(1.0, -2.0, 3.0),)], False),
    (counter_global, [(arr(1, 2, 1, 3),)], False),
    (list_index_update, [(arr(1, 2, 4, 5),)], False),
    (chained_compare, [(f32(5.0),), (f32(15.0),)], False),
    (ternary_chain, [(f32(-1.0),), (f32(0.0),), (f32(2.0),)], False),
    (float_int_mix, [(i32(5),)], False),
    (early_exit_nested_for, [(jnp.array([[1, 2], [3, 4]]), i32(3)), (jnp.array([[1, 2], [3, 4]]), i32(9))], False),
    (list_copy_then_mutate, [(arr(1.0, 2.0),)], False),
    (augmented_list_alias, [(f32(1.0),), (f32(-1.0),)], False),
    (is_none_default, [(f32(1.0),), (f32(-1.0),)], False),
    (accumulate_pairs, [(arr(1, 3, 2, 4),)], False),
]
