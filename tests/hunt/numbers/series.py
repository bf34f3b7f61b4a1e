"""Series, sums, root finding and quadrature, written as textbook code (``make hunt``)."""

import math

import jax.numpy as jnp


def harmonic_until(limit):
    # smallest n with H(n) > limit
    total = 0.0
    n = 0
    while total <= limit:
        n += 1
        total += 1 / n
    return n


def leibniz_pi(terms):
    s = 0.0
    sign = 1
    for k in range(terms):
        s += sign / (2 * k + 1)
        sign = -sign
    return 4 * s


def exp_taylor(x, tol):
    term = 1.0
    total = 1.0
    k = 1
    while abs(term) > tol:
        term = term * x / k
        total = total + term
        k += 1
    return total, k


def newton_sqrt(a):
    if a < 0:
        raise ValueError("negative input")
    if a == 0:
        return a * 0.0
    guess = a
    for _ in range(30):
        nxt = 0.5 * (guess + a / guess)
        if abs(nxt - guess) < 1e-6 * nxt:
            return nxt
        guess = nxt
    return guess


def bisect_cubic(lo, hi):
    # root of x^3 - 2x - 5 on [lo, hi]
    f_lo = lo ** 3 - 2 * lo - 5
    f_hi = hi ** 3 - 2 * hi - 5
    if f_lo * f_hi > 0:
        return None
    steps = 0
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        f_mid = mid ** 3 - 2 * mid - 5
        if f_mid * f_lo <= 0:
            hi = mid
        else:
            lo = mid
            f_lo = f_mid
        steps += 1
    return (lo + hi) / 2, steps


def trapezoid_inverse(a, b, n):
    # integral of 1/x from a to b with n panels
    h = (b - a) / n
    total = 0.5 * (1 / a + 1 / b)
    for i in range(1, n):
        total += 1 / (a + i * h)
    return total * h


def simpson_poly(b, n):
    if n % 2 == 1:
        n += 1
    h = b / n
    acc = 0.0
    for i in range(n + 1):
        x = i * h
        fx = x * x * x - x
        if i == 0 or i == n:
            w = 1
        elif i % 2 == 1:
            w = 4
        else:
            w = 2
        acc += w * fx
    return acc * h / 3


def geometric_partial(r, n):
    s = 0
    p = 1
    for _ in range(n):
        s += p
        p *= r
    return s


def alternating_until(tol):
    # sum (-1)^k / k^2 until the term is below tol
    k = 1
    s = 0.0
    while True:
        term = (-1) ** (k + 1) / k ** 2
        if abs(term) < tol:
            break
        s += term
        k += 1
    return s, k


def basel_tail(n):
    # pi^2/6 - sum_{k<=n} 1/k^2
    s = 0
    for k in range(1, n + 1):
        s += k ** -2
    return math.pi ** 2 / 6 - s


def wallis(n):
    prod = 1.0
    for k in range(1, n + 1):
        four = 4 * k * k
        prod *= four / (four - 1)
    return 2 * prod


def arctan_series(x, n):
    if abs(x) > 1:
        raise ValueError("series diverges")
    total = x * 0
    power = x
    for k in range(n):
        total = total + power / (2 * k + 1) * (-1) ** k
        power = power * x * x
    return total


def log1p_series(x, terms):
    out = 0.0
    for k in range(1, terms + 1):
        out += (-1) ** (k + 1) * x ** k / k
    return out


def horner(coeffs, x):
    result = 0
    for c in coeffs:
        result = result * x + c
    return result


def fib_ratio(steps):
    a, b = 1, 1
    for _ in range(steps):
        a, b = b, a + b
    return b / a, b


def euler_decay(y0, rate, h, t_end):
    t = 0.0
    y = y0
    n = 0
    while t < t_end:
        y = y - h * rate * y
        t += h
        n += 1
    return y, n


def fixed_point_cos(x0):
    x = x0
    for i in range(100):
        nx = jnp.cos(x)
        if abs(nx - x) < 1e-6:
            return nx, i
        x = nx
    return x, -1


def secant(x0, x1):
    # root of x^2 - 3
    f0 = x0 * x0 - 3
    f1 = x1 * x1 - 3
    for it in range(40):
        denom = f1 - f0
        if denom == 0:
            return x1, it
        x2 = x1 - f1 * (x1 - x0) / denom
        x0, f0 = x1, f1
        x1 = x2
        f1 = x1 * x1 - 3
        if abs(f1) < 1e-6:
            return x1, it + 1
    return x1, 40


def kahan_sum(xs):
    total = 0.0
    comp = 0.0
    for v in xs:
        y = v - comp
        t = total + y
        comp = (t - total) - y
        total = t
    return total


def digits_of_e(n):
    # sum 1/k! as a fraction numerator/denominator with Python ints
    num = 0
    den = 1
    fact = 1
    for k in range(n):
        if k > 0:
            fact *= k
        num = num * fact + den if k == 0 else num * k + 1
        den = fact
    return num, den


def power_sum(n, p):
    total = 0
    for k in range(1, n + 1):
        total += k ** p
    return total


def golden_section(a, b):
    # minimum of (x - 1.3)^2 on [a, b]
    ratio = (math.sqrt(5) - 1) / 2
    c = b - ratio * (b - a)
    d = a + ratio * (b - a)
    it = 0
    while abs(b - a) > 1e-3:
        if (c - 1.3) ** 2 < (d - 1.3) ** 2:
            b = d
        else:
            a = c
        c = b - ratio * (b - a)
        d = a + ratio * (b - a)
        it += 1
    return (a + b) / 2, it


def midpoint_rule(f_kind, n):
    h = 1.0 / n
    acc = 0.0
    for i in range(n):
        m = (i + 0.5) * h
        if f_kind == 0:
            acc += m * m
        else:
            acc += math.sqrt(m)
    return acc * h


def continued_fraction_sqrt2(depth):
    value = 2.0
    for _ in range(depth):
        value = 2 + 1 / value
    return value - 1


def zeta_terms(s, n):
    total = 0.0
    for k in range(1, n + 1):
        total += 1 / k ** s
    return total


def halving_steps(x):
    steps = 0
    while x > 1:
        x = x / 2
        steps += 1
    return steps, x


def series_with_print(n):
    partial = []
    s = 0
    for k in range(n):
        s += k * k
        partial.append(s)
    print(partial)
    return s


def richardson(h):
    # derivative of x^3 at 1 by central differences, then Richardson
    def d(step):
        return ((1 + step) ** 3 - (1 - step) ** 3) / (2 * step)
    return (4 * d(h / 2) - d(h)) / 3


def nth_root_newton(a, k):
    x = a / k if a > 1 else a * 0 + 1.0
    for _ in range(50):
        x_new = ((k - 1) * x + a / x ** (k - 1)) / k
        if abs(x_new - x) < 1e-7:
            break
        x = x_new
    return x_new


def series_sign_changes(xs):
    changes = 0
    prev = 0
    for v in xs:
        sign = 1 if v > 0 else (-1 if v < 0 else 0)
        if sign != 0 and prev != 0 and sign != prev:
            changes += 1
        if sign != 0:
            prev = sign
    return changes


def telescoping(n):
    s = 0.0
    for k in range(1, n + 1):
        s += 1 / (k * (k + 1))
    return s, 1 - 1 / (n + 1)


def bernoulli_like(n):
    # sum of 1 / 2**k for k < n, then the missing bit
    acc = 0
    for k in range(n):
        acc += 2 ** -k
    return 2 - acc


def exponent_of_tol(tol):
    k = 0
    while 10 ** -k > tol:
        k += 1
    return k


def cesaro_mean(xs):
    partial = 0.0
    sums = 0.0
    n = 0
    for v in xs:
        partial += v
        sums += partial
        n += 1
    try:
        return sums / n
    except ZeroDivisionError:
        return float("nan")


def sqrt_of_diff(a, b):
    d = a - b
    return d ** 0.5


def integral_steps_print(n):
    h = 1 / n
    area = 0
    for i in range(n):
        area += h * (i * h)
    print("area", round(area, 4))
    return area


X1 = jnp.float32(1.0)

CASES = [
    (harmonic_until, [(jnp.float32(0.5),), (jnp.float32(2.0),), (jnp.float32(3.1),), (2.0,)]),
    (leibniz_pi, [(jnp.int32(0),), (jnp.int32(1),), (jnp.int32(50),), (10,)]),
    (exp_taylor, [(jnp.float32(1.0), 1e-6), (jnp.float32(-2.5), 1e-4), (jnp.float32(0.0), 1e-3)]),
    (newton_sqrt, [(jnp.float32(2.0),), (jnp.float32(0.0),), (jnp.float32(-1.0),), (jnp.float32(1e4),)]),
    (bisect_cubic, [(jnp.float32(2.0), jnp.float32(3.0)), (jnp.float32(3.0), jnp.float32(4.0)),
                    (jnp.float32(2.09), jnp.float32(2.1))]),
    (trapezoid_inverse, [(jnp.float32(1.0), jnp.float32(2.0), jnp.int32(1)),
                         (jnp.float32(1.0), jnp.float32(3.0), jnp.int32(16)), (1.0, 2.0, jnp.int32(0))]),
    (simpson_poly, [(jnp.float32(2.0), jnp.int32(4)), (jnp.float32(1.0), jnp.int32(3)),
                    (jnp.float32(3.0), jnp.int32(0))]),
    (geometric_partial, [(jnp.int32(3), 5), (jnp.int32(3), 25), (jnp.int32(3), jnp.int32(25)),
                         (jnp.float32(0.5), 10)]),
    (alternating_until, [(jnp.float32(1e-2),), (jnp.float32(2.0),), (jnp.float32(1e-4),)]),
    (basel_tail, [(jnp.int32(0),), (jnp.int32(10),), (50,)]),
    (wallis, [(jnp.int32(0),), (jnp.int32(1),), (jnp.int32(200),)]),
    (arctan_series, [(jnp.float32(0.5), 10), (jnp.float32(1.5), 10), (jnp.float32(-1.0), jnp.int32(30))]),
    (log1p_series, [(jnp.float32(0.5), 8), (jnp.float32(0.5), jnp.int32(8)), (jnp.float32(-0.25), jnp.int32(0))]),
    (horner, [(jnp.array([1, -3, 2]), jnp.int32(5)), (jnp.array([2.0, 0.0, -1.0]), jnp.float32(0.5)),
              ([1, 0, 0, 0, 0, 0, 0, 0], jnp.int32(30))]),
    (fib_ratio, [(jnp.int32(0),), (jnp.int32(10),), (jnp.int32(50),), (60,)]),
    (euler_decay, [(jnp.float32(1.0), jnp.float32(0.5), 0.1, jnp.float32(1.0)),
                   (jnp.float32(2.0), jnp.float32(1.0), 0.25, jnp.float32(0.0)),
                   (jnp.float32(1.0), 0.5, 0.1, 1.0)]),
    (fixed_point_cos, [(jnp.float32(1.0),), (jnp.float32(0.7390851),)]),
    (secant, [(jnp.float32(1.0), jnp.float32(2.0)), (jnp.float32(1.0), jnp.float32(1.0)),
              (jnp.float32(1.7320508), jnp.float32(1.75))]),
    (kahan_sum, [(jnp.array([0.1, 0.2, 0.3]),), (jnp.zeros((0,)),), (jnp.array([1e8, 1.0, -1e8]),)]),
    (digits_of_e, [(jnp.int32(1),), (jnp.int32(8),), (jnp.int32(15),), (15,)]),
    (power_sum, [(jnp.int32(10), 2), (jnp.int32(100), 5), (jnp.int32(0), 3), (20, jnp.int32(7))]),
    (golden_section, [(jnp.float32(0.0), jnp.float32(3.0)), (jnp.float32(1.2), jnp.float32(1.2005))]),
    (midpoint_rule, [(0, jnp.int32(4)), (1, jnp.int32(10)), (1, jnp.int32(0))]),
    (continued_fraction_sqrt2, [(jnp.int32(0),), (jnp.int32(20),)]),
    (zeta_terms, [(2, jnp.int32(100)), (jnp.float32(1.5), jnp.int32(20)), (3, 0)]),
    (halving_steps, [(jnp.float32(100.0),), (jnp.float32(0.5),), (jnp.int32(100),)]),
    (series_with_print, [(jnp.int32(4),), (jnp.int32(0),), (3,)]),
    (richardson, [(jnp.float32(0.1),), (jnp.float32(0.0),), (0.5,)]),
    (nth_root_newton, [(jnp.float32(27.0), 3), (jnp.float32(0.5), 2), (jnp.float32(1024.0), jnp.int32(10))]),
    (series_sign_changes, [(jnp.array([1.0, -2.0, 0.0, 3.0, -1.0]),), (jnp.array([0.0, 0.0]),),
                           (jnp.array([2, 3, 4]),)]),
    (telescoping, [(jnp.int32(1),), (jnp.int32(100),), (jnp.int32(0),)]),
    (bernoulli_like, [(jnp.int32(0),), (jnp.int32(6),), (jnp.int32(30),), (8,)]),
    (exponent_of_tol, [(jnp.float32(1e-3),), (jnp.float32(5.0),), (jnp.float32(2e-6),)]),
    (cesaro_mean, [(jnp.array([1.0, -1.0, 1.0, -1.0]),), (jnp.zeros((0,)),), (jnp.array([3.0]),)]),
    (sqrt_of_diff, [(jnp.int32(7), 3), (jnp.int32(2), 3), (jnp.float32(2.0), jnp.float32(3.0))]),
    (integral_steps_print, [(jnp.int32(4),), (jnp.int32(1),)]),
]
