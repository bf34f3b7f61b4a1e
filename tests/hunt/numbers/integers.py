"""Number theory, digits and bit tricks, written as textbook code (``make hunt``)."""

import math

import jax.numpy as jnp


def gcd_euclid(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def lcm_upto(n):
    result = 1
    for k in range(2, n + 1):
        result = result * k // math.gcd(result, k)
    return result


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def count_primes_below(n):
    count = 0
    for m in range(2, n):
        prime = True
        for d in range(2, m):
            if d * d > m:
                break
            if m % d == 0:
                prime = False
                break
        if prime:
            count += 1
    return count


def digit_sum(n):
    n = abs(n)
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s


def reverse_digits(n):
    rev = 0
    while n > 0:
        rev = rev * 10 + n % 10
        n = n // 10
    return rev


def is_palindrome_number(n):
    if n < 0:
        return False
    original = n
    rev = 0
    while n:
        rev = rev * 10 + n % 10
        n //= 10
    return rev == original


def popcount(n):
    count = 0
    while n:
        n &= n - 1
        count += 1
    return count


def reverse_bits8(n):
    out = 0
    for _ in range(8):
        out = (out << 1) | (n & 1)
        n >>= 1
    return out


def next_power_of_two(n):
    p = 1
    while p < n:
        p <<= 1
    return p


def isqrt_newton(n):
    if n < 0:
        raise ValueError("square root of negative number")
    if n < 2:
        return n
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


def modpow(base, exp, mod):
    result = 1
    base %= mod
    while exp > 0:
        if exp & 1:
            result = result * base % mod
        base = base * base % mod
        exp >>= 1
    return result


def factorial_loop(n):
    f = 1
    for k in range(2, n + 1):
        f *= k
    return f


def binomial(n, k):
    if k < 0 or k > n:
        return 0
    k = min(k, n - k)
    c = 1
    for i in range(k):
        c = c * (n - i) // (i + 1)
    return c


def catalan(n):
    c = 1
    for i in range(n):
        c = c * 2 * (2 * i + 1) // (i + 2)
    return c


def is_perfect(n):
    total = 1
    d = 2
    while d * d <= n:
        if n % d == 0:
            total += d
            if d * d != n:
                total += n // d
        d += 1
    return n > 1 and total == n


def totient(n):
    result = n
    p = 2
    while p * p <= n:
        if n % p == 0:
            while n % p == 0:
                n //= p
            result -= result // p
        p += 1
    if n > 1:
        result -= result // n
    return result


def digital_root(n):
    while n >= 10:
        s = 0
        while n > 0:
            s += n % 10
            n //= 10
        n = s
    return n


def bits_to_int(bits):
    value = 0
    for b in bits:
        value = value * 2 + b
    return value


def count_base_digits(n, base):
    if base < 2:
        raise ValueError("base must be at least 2")
    digits = 0
    while True:
        digits += 1
        n //= base
        if n == 0:
            break
    return digits


def gray_roundtrip(n):
    g = n ^ (n >> 1)
    back = g
    shift = 1
    while (g >> shift) > 0:
        back ^= g >> shift
        shift += 1
    return g, back


def factorial_trailing_zeros(n):
    zeros = 0
    p = 5
    while p <= n:
        zeros += n // p
        p *= 5
    return zeros


def josephus(n, k):
    pos = 0
    for m in range(2, n + 1):
        pos = (pos + k) % m
    return pos + 1


def is_armstrong(n):
    digits = []
    m = n
    while m > 0:
        digits.append(m % 10)
        m //= 10
    p = len(digits)
    total = 0
    for d in digits:
        total += d ** p
    return total == n


def extended_gcd(a, b):
    x0, x1, y0, y1 = 1, 0, 0, 1
    while b != 0:
        q = a // b
        a, b = b, a - q * b
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    return a, x0, y0


def pisano_period(m):
    a, b = 0, 1
    for i in range(1, 6 * m + 1):
        a, b = b, (a + b) % m
        if a == 0 and b == 1:
            return i
    return -1


def luhn_valid(digits):
    total = 0
    double = False
    for d in digits[::-1]:
        v = d * 2 if double else d
        if v > 9:
            v -= 9
        total += v
        double = not double
    return total % 10 == 0


def happy_number(n):
    seen_steps = 0
    while n != 1 and n != 4:
        s = 0
        while n > 0:
            s += (n % 10) ** 2
            n //= 10
        n = s
        seen_steps += 1
    return n == 1, seen_steps


def kaprekar_steps(n):
    steps = 0
    while n != 6174 and steps < 10:
        d = [n // 1000, n // 100 % 10, n // 10 % 10, n % 10]
        big = 0
        small = 0
        for v in sorted(d, reverse=True):
            big = big * 10 + v
        for v in sorted(d):
            small = small * 10 + v
        n = big - small
        if n == 0:
            return -1
        steps += 1
    return steps


def sum_of_divisors_table(n):
    sigma = [0] * 8
    for d in range(1, 8):
        for m in range(d, 8, d):
            sigma[m] += d * n
    return sigma


def collatz_peak(n):
    peak = n
    steps = 0
    while n != 1:
        if n % 2:
            n = 3 * n + 1
        else:
            n //= 2
        if n > peak:
            peak = n
        steps += 1
    return steps, peak


def product_of_range(lo, hi):
    p = 1
    for k in range(lo, hi):
        p *= k
    return p


def power_of_three_sum(n):
    acc = 0
    for i in range(n):
        acc = acc + pow(3, i)
    return acc


def parity_of_bits(n):
    parity = False
    while n:
        parity = not parity
        n = n & (n - 1)
    return parity


def mask_of_bits(positions):
    mask = 0
    for p in positions:
        mask |= 1 << p
    return mask


def integer_log2(n):
    if n <= 0:
        raise ValueError("math domain error")
    k = -1
    while n:
        n >>= 1
        k += 1
    return k


def sum_squares_mod(n, m):
    total = 0
    for i in range(n):
        try:
            total += (i * i) % (m - i)
        except ZeroDivisionError:
            total -= 1
    return total


def divide_table(n):
    out = []
    for i in range(4):
        out.append(n // (i + 1))
    print(out)
    return out


def checksum_mod(xs):
    h = 0
    for v in xs:
        h = (h * 31 + v) % 1000003
    return h


def steps_to_zero(n):
    steps = 0
    while n > 0:
        if n % 2 == 0:
            n //= 2
        else:
            n -= 1
        steps += 1
    return steps


def is_int_check(xs):
    total = 0
    for i, v in enumerate(xs):
        if isinstance(i, int) and v > 0:
            total += i
    return total


def triangular_search(target):
    k = 0
    t = 0
    while t < target:
        k += 1
        t += k
    return k, t == target


def wrap_product(xs):
    prod = 1
    for v in xs:
        if v != 0:
            prod = prod * 1000
    return prod


def divisor_count_pairs(n):
    count = 0
    for a in range(1, n + 1):
        if n % a == 0:
            count += 1
    return count, count % 2 == 1


def left_shift_accum(n):
    r = 1
    for _ in range(n):
        r <<= 1
    return r


def fraction_of_evens(xs):
    evens = 0
    total = 0
    for v in xs:
        total += 1
        if v % 2 == 0:
            evens += 1
    return evens / total


CASES = [
    (gcd_euclid, [(jnp.int32(48), jnp.int32(18)), (jnp.int32(7), jnp.int32(0)), (jnp.int32(0), jnp.int32(0)),
                  (jnp.int32(-12), 8)]),
    (lcm_upto, [(jnp.int32(10),), (jnp.int32(1),), (jnp.int32(25),), (12,)]),
    (is_prime, [(jnp.int32(97),), (jnp.int32(1),), (jnp.int32(2),), (jnp.int32(91),)]),
    (count_primes_below, [(jnp.int32(30),), (jnp.int32(2),), (10,)]),
    (digit_sum, [(jnp.int32(98765),), (jnp.int32(0),), (jnp.int32(-405),)]),
    (reverse_digits, [(jnp.int32(1234),), (jnp.int32(0),), (jnp.int32(1999999999),), (120,)]),
    (is_palindrome_number, [(jnp.int32(12321),), (jnp.int32(-121),), (jnp.int32(10),)]),
    (popcount, [(jnp.int32(255),), (jnp.int32(0),), (jnp.int32(-1),), (1023,)]),
    (reverse_bits8, [(jnp.int32(1),), (jnp.int32(0b10110000),), (5,)]),
    (next_power_of_two, [(jnp.int32(5),), (jnp.int32(1),), (jnp.int32(0),), (jnp.int32(1073741825),)]),
    (isqrt_newton, [(jnp.int32(99),), (jnp.int32(1),), (jnp.int32(-4),), (jnp.int32(2147395600),)]),
    (modpow, [(jnp.int32(3), jnp.int32(200), jnp.int32(13)), (jnp.int32(7), jnp.int32(0), jnp.int32(5)),
              (jnp.int32(5), jnp.int32(10), jnp.int32(0)), (2, jnp.int32(30), 1000003)]),
    (factorial_loop, [(jnp.int32(5),), (jnp.int32(0),), (jnp.int32(13),), (jnp.int32(20),)]),
    (binomial, [(jnp.int32(10), jnp.int32(3)), (jnp.int32(5), jnp.int32(7)), (jnp.int32(34), jnp.int32(17)),
                (30, jnp.int32(15))]),
    (catalan, [(jnp.int32(0),), (jnp.int32(5),), (jnp.int32(19),)]),
    (is_perfect, [(jnp.int32(28),), (jnp.int32(1),), (jnp.int32(27),)]),
    (totient, [(jnp.int32(36),), (jnp.int32(1),), (jnp.int32(97),)]),
    (digital_root, [(jnp.int32(987654321),), (jnp.int32(7),), (jnp.int32(0),)]),
    (bits_to_int, [(jnp.array([1, 0, 1, 1]),), (jnp.array([], dtype=jnp.int32),), (jnp.ones(40, dtype=jnp.int32),),
                   ([1] * 35,)]),
    (count_base_digits, [(jnp.int32(1000), 10), (jnp.int32(0), jnp.int32(2)), (jnp.int32(255), jnp.int32(1))]),
    (gray_roundtrip, [(jnp.int32(13),), (jnp.int32(0),), (jnp.int32(1 << 20),)]),
    (factorial_trailing_zeros, [(jnp.int32(100),), (jnp.int32(4),), (jnp.int32(2000000000),)]),
    (josephus, [(jnp.int32(7), jnp.int32(3)), (jnp.int32(1), jnp.int32(2)), (jnp.int32(41), 3)]),
    (is_armstrong, [(jnp.int32(153),), (jnp.int32(154),), (jnp.int32(0),)]),
    (extended_gcd, [(jnp.int32(240), jnp.int32(46)), (jnp.int32(5), jnp.int32(0)), (17, jnp.int32(5))]),
    (pisano_period, [(jnp.int32(10),), (jnp.int32(1),), (7,)]),
    (luhn_valid, [(jnp.array([7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 3]),), (jnp.array([1, 2, 3]),),
                  (jnp.array([], dtype=jnp.int32),)]),
    (happy_number, [(jnp.int32(19),), (jnp.int32(4),), (jnp.int32(20),), (jnp.int32(1),)]),
    (kaprekar_steps, [(jnp.int32(3524),), (jnp.int32(6174),), (jnp.int32(1111),)]),
    (sum_of_divisors_table, [(jnp.int32(1),), (3,), (jnp.int32(400000000),)]),
    (collatz_peak, [(jnp.int32(27),), (jnp.int32(1),), (jnp.int32(9),), (113383,)]),
    (product_of_range, [(jnp.int32(1), jnp.int32(6)), (jnp.int32(5), jnp.int32(5)), (jnp.int32(10), jnp.int32(25)),
                        (3, jnp.int32(9))]),
    (power_of_three_sum, [(jnp.int32(5),), (jnp.int32(0),), (jnp.int32(25),), (22,)]),
    (parity_of_bits, [(jnp.int32(7),), (jnp.int32(0),), (jnp.int32(6),)]),
    (mask_of_bits, [(jnp.array([0, 3, 5]),), (jnp.array([1, 40]),), ([2, 33],), (jnp.array([], dtype=jnp.int32),)]),
    (integer_log2, [(jnp.int32(1024),), (jnp.int32(1),), (jnp.int32(0),), (jnp.int32(1000),)]),
    (sum_squares_mod, [(jnp.int32(5), 3), (jnp.int32(2), 3), (jnp.int32(6), jnp.int32(10)), (4, 2)]),
    (divide_table, [(jnp.int32(12),), (7,), (jnp.int32(-7),)]),
    (checksum_mod, [(jnp.array([1, 2, 3]),), (jnp.array([999, 999, 999, 999]),), (jnp.zeros(0, dtype=jnp.int32),)]),
    (steps_to_zero, [(jnp.int32(14),), (jnp.int32(0),), (jnp.int32(123),)]),
    (is_int_check, [(jnp.array([1.0, 2.0, -1.0, 3.0]),), (jnp.zeros(0),), ([1, -2, 3],)]),
    (triangular_search, [(jnp.int32(10),), (jnp.int32(11),), (jnp.int32(0),), (15,)]),
    (wrap_product, [(jnp.array([1, 2, 3]),), (jnp.array([5, 6, 7, 8]),), (jnp.array([1, 0, 3, 4]),), (jnp.array([0, 0]),)]),
    (divisor_count_pairs, [(jnp.int32(36),), (jnp.int32(1),), (jnp.int32(30),)]),
    (left_shift_accum, [(jnp.int32(10),), (jnp.int32(0),), (jnp.int32(40),), (31,)]),
    (fraction_of_evens, [(jnp.array([1, 2, 4]),), (jnp.zeros(0, dtype=jnp.int32),), (jnp.array([7]),)]),
]
