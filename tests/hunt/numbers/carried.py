"""Python numbers given as arguments and carried by loops over arrays, written as textbook code
(``make hunt``)."""

import math

import jax.numpy as jnp


def compound_savings(deposits, balance_cents):
    # integer cents: interest of 1% a month, then the deposit
    for d in deposits:
        balance_cents = balance_cents + balance_cents // 100
        if d > 0:
            balance_cents += 100 * 1000 * 1000
    return balance_cents


def tally_events(events, start):
    count = start
    for e in events:
        if e == 1:
            count += 1
        elif e == 2:
            count *= 1000
    return count


def score_with_penalty(hits, penalty):
    score = 0
    misses = 0
    for h in hits:
        if h:
            score += 10
        else:
            misses += 1
    try:
        return score / misses - penalty
    except ZeroDivisionError:
        return float(score)


def scaled_offsets(xs, base):
    total = base
    for i, v in enumerate(xs):
        total += i * base
    return total, isinstance(total, int)


def average_gap(times, unit):
    gaps = 0
    last = None
    n = 0
    for t in times:
        if last is not None:
            gaps += (t - last) * unit
            n += 1
        last = t
    if n == 0:
        return 0
    return gaps / n


def lcg_from_seed(steps, seed):
    x = seed
    for _ in range(steps):
        x = (x * 48271) % 2147483647
    return x


def halve_until_small(x, threshold):
    k = 0
    scale = 1.0
    while x * scale > threshold:
        scale /= 2
        k += 1
    return k, scale


def digit_histogram(n, base):
    counts = [0] * base
    while n > 0:
        counts[n % base] += 1
        n //= base
    print(counts)
    return counts


def sum_inverse_squares(n, start):
    s = start
    for k in range(1, n + 1):
        s += 1 / (k * k)
    return s


def bit_budget(flags, budget):
    for f in flags:
        if f:
            budget <<= 1
        else:
            budget >>= 1
    return budget


def exact_mean(values, weight):
    total = 0
    for v in values:
        total += int(v) * weight
    return total // len(values), total % len(values)


def interval_check(xs, lo, hi):
    inside = 0
    for v in xs:
        if lo <= v <= hi:
            inside += 1
    ratio = inside / xs.shape[0]
    return inside, math.floor(ratio * 100)


CASES = [
    (compound_savings, [(jnp.array([1, 0, 1]), 0), (jnp.array([1, 1, 1]), 1000), (jnp.zeros(0, jnp.int32), 5)]),
    (tally_events, [(jnp.array([1, 2, 2, 2, 1]), 1), (jnp.array([1, 1]), 7), (jnp.array([2, 2, 2, 2]), 3)]),
    (score_with_penalty, [(jnp.array([True, False, True]), 2), (jnp.array([True, True]), 2),
                          (jnp.array([False]), 0.5)]),
    (scaled_offsets, [(jnp.array([1.0, 2.0, 3.0]), 7), (jnp.zeros(0), 7), (jnp.ones(3), 1000000000)]),
    (average_gap, [(jnp.array([1.0, 3.0, 7.0]), 60), (jnp.array([5.0]), 60), (jnp.array([0, 100000]), 100000)]),
    (lcg_from_seed, [(jnp.int32(3), 1), (jnp.int32(0), 12345), (2, 5)]),
    (halve_until_small, [(jnp.float32(100.0), 1.0), (jnp.float32(0.5), 1.0), (jnp.float32(3.0), 0.1)]),
    (digit_histogram, [(jnp.int32(1202), 3), (jnp.int32(0), 2), (255, 16)]),
    (sum_inverse_squares, [(jnp.int32(10), 0), (jnp.int32(0), 1), (jnp.int32(3), 0.5)]),
    (bit_budget, [(jnp.array([True, True, False]), 4), (jnp.ones(31, dtype=bool), 2),
                  (jnp.array([False, False]), 1)]),
    (exact_mean, [(jnp.array([3.7, 2.2, 9.9]), 1000000000), (jnp.array([1, 2]), 3)]),
    (interval_check, [(jnp.array([0.5, 1.5, 2.5]), 1, 2), (jnp.array([-1.0]), 0.0, 1.0)]),
]
