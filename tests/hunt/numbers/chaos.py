"""Chaotic recurrences of Python floats, written as textbook code (``make hunt``): a
map iterated 60 times amplifies any float32 rounding of a Python float to a different value,
so a loop that computed float64 Python floats in float32 shows.

A float32 array start is given only where eager code makes it a Python float (`math.sin` of
it) or where the map has no multiply-add XLA fuses: the Hénon map, the folded map (`1.8 * x -
0.9`) and the standard map of float32 arrays differ from eager's op-by-op float32 after 60
steps under any `jax.jit` (one rounding of a fused multiply-add, `math.sin` of an array in
float32 where eager computes float64 and rounds: docs/semantics.md, not covered)."""

import math

import jax.numpy as jnp


def logistic_param(x, r, n):
    for _ in range(n):
        x = r * x * (1 - x)
    return x


def logistic_aug(x, n):
    for _ in range(n):
        x *= 3.99 * (1 - x)
    return x


def tent_map(x, n):
    for _ in range(n):
        if x < 0.5:
            x = 1.9 * x
        else:
            x = 1.9 * (1 - x)
    return x


def sine_map(x, n):
    for _ in range(n):
        x = 0.99 * math.sin(math.pi * x)
    return x


def henon(x, y, n):
    for _ in range(n):
        x, y = 1 - 1.4 * x * x + y, 0.3 * x
    return x


def henon_state(state, n):
    x, y = state
    for _ in range(n):
        x, y = 1 - 1.4 * x * x + y, 0.3 * x
    return x


def standard_map(p, theta, k, n):
    for _ in range(n):
        p = (p + k * math.sin(theta)) % (2 * math.pi)
        theta = (theta + p) % (2 * math.pi)
    return theta


def gauss_map(x, n):
    for _ in range(n):
        x = math.exp(-6.2 * x * x) - 0.5
    return x


def circle_map(theta, omega, k, n):
    for _ in range(n):
        theta = theta + omega - k / (2 * math.pi) * math.sin(2 * math.pi * theta)
        theta = theta - math.floor(theta)
    return theta


def _logistic_step(x):
    return 3.97 * x * (1 - x)


def logistic_helper(x, n):
    for _ in range(n):
        x = _logistic_step(x)
    return x


def logistic_from_sqrt(a, n):
    x = math.sqrt(a) / 2
    for _ in range(n):
        x = 3.95 * x * (1 - x)
    return x


def logistic_from_float(a, n):
    x = float(a)
    for _ in range(n):
        x = 3.93 * x - 3.93 * x * x
    return x


def logistic_of_sum(a, b, n):
    x = a + b
    for _ in range(n):
        x = 3.91 * x * (1 - x)
    return x


def logistic_dict(n):
    state = {"x": 0.2, "steps": 0}
    for _ in range(n):
        state["x"] *= 3.98 * (1 - state["x"])
        state["steps"] += 1
    return state["x"], state["steps"]


def logistic_list(n):
    xs = [0.2, 0.7]
    for _ in range(n):
        xs[0] = 3.96 * xs[0] * (1 - xs[0])
        xs[1] = 3.96 * xs[1] * (1 - xs[1])
    return xs[0] + xs[1]


def folded_map(x, n):
    for _ in range(n):
        x = abs(1.8 * x - 0.9)
    return x


def max_of_two_maps(x, y, n):
    for _ in range(n):
        x = 3.9 * x * (1 - x)
        y = 3.8 * y * (1 - y)
    return max(x, y)


def annotated_map(x: float, n: int) -> float:
    for _ in range(n):
        x: float = 3.94 * x * (1 - x)
    return x


def bisection_of_a_chaotic_root(lo, hi, n):
    for _ in range(n):
        mid = (lo + hi) / 2
        if math.cos(7 * mid) * mid > 0.1:
            hi = mid
        else:
            lo = mid
    return lo * 1e7 - math.floor(lo * 1e7)


def steps_until_escape(x, n):
    steps = 0
    while steps < n and x < 0.999:
        x = 3.99 * x * (1 - x)
        steps += 1
    return steps


def counts_above_half(x, n):
    above = 0
    for _ in range(n):
        x = 3.97 * x * (1 - x)
        if x > 0.5:
            above += 1
    return above


def lyapunov_sum(x, r, n):
    total = 0.0
    for _ in range(n):
        x = r * x * (1 - x)
        total += math.log(abs(r * (1 - 2 * x)))
    return total / n


def logistic_array(x, n):
    for _ in range(n):
        x = 3.9 * x * (1 - x)
    return x


def weighted_orbit(x, weights):
    total = 0.0
    for w in weights:
        x = 3.9 * x * (1 - x)
        total = total + w * x
    return total


N = jnp.int32(60)

CASES = [
    (logistic_param, [(0.2, 3.9, N), (0.2, 3.9, 60), (jnp.float32(0.2), jnp.float32(3.9), N), (0.5, 2.5, N)]),
    (logistic_aug, [(0.3, N), (0.3, jnp.int32(0)), (jnp.float32(0.3), N)]),
    (tent_map, [(0.123, N), (jnp.float32(0.123), N), (0.123, 60)]),
    (sine_map, [(0.31, N), (jnp.float32(0.31), N)]),
    (henon, [(0.1, 0.1, N), (0.1, 0.1, jnp.int32(2))]),
    (henon_state, [((0.1, 0.1), N), ((0.1, 0.1), jnp.int32(3))]),
    (standard_map, [(0.5, 0.7, 1.2, N), (0.5, 0.7, 1.2, jnp.int32(0))]),
    (gauss_map, [(0.3, N), (jnp.float32(0.3), N)]),
    (circle_map, [(0.1, 0.35, 3.0, N), (jnp.float32(0.1), 0.35, 3.0, N)]),
    (logistic_helper, [(0.2, N), (jnp.float32(0.2), N)]),
    (logistic_from_sqrt, [(0.5, N), (jnp.float32(0.5), N)]),
    (logistic_from_float, [(0.45, N), (jnp.float32(0.45), N)]),
    (logistic_of_sum, [(0.1, 0.2, N), (jnp.float32(0.1), jnp.float32(0.2), N)]),
    (logistic_dict, [(N,), (jnp.int32(0),), (60,)]),
    (logistic_list, [(N,), (jnp.int32(1),)]),
    (folded_map, [(0.1234, N), (0.1234, jnp.int32(5))]),
    (max_of_two_maps, [(0.2, 0.3, N), (jnp.float32(0.2), jnp.float32(0.3), N)]),
    (annotated_map, [(0.25, N), (jnp.float32(0.25), N)]),
    (bisection_of_a_chaotic_root, [(0.1, 1.0, jnp.int32(40)), (0.1, 1.0, 40)]),
    (steps_until_escape, [(0.2, jnp.int32(500)), (jnp.float32(0.2), jnp.int32(500))]),
    (counts_above_half, [(0.2, jnp.int32(200)), (jnp.float32(0.2), jnp.int32(200))]),
    (lyapunov_sum, [(0.2, 3.9, jnp.int32(200)), (jnp.float32(0.2), jnp.float32(3.9), jnp.int32(200))]),
    (logistic_array, [(jnp.linspace(0.1, 0.9, 5), N), (jnp.array(0.3), N)]),
    (weighted_orbit, [(0.2, jnp.linspace(0.0, 1.0, 60)), (0.2, [0.5] * 60)]),
]
