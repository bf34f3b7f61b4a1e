"""Cost of checking asserts on traced values (the default: asserts are checked as Python
checks them; docs/semantics.md "assert"): a function with an `assert` in a loop (on the
array the loop updates, or on the input), or one at the top, against the same function with
`checks=False` and against the function without the assert.

Cached call (small input, dispatch-bound) and steady state (large input), each the median of
interleaved rounds, each call waited for. Run: `.venv/bin/python benchmarks/assert_check.py`
(`--quick`: fewer rounds).
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp

import laxify


def with_assert(x):
    for i in range(8):
        assert x[i] > -1e30, f"item {i} too small: {x[i]}"
        x = jnp.tanh(x * 1.5) + x
    return x


def with_assert_on_the_input(x):
    y = x
    for i in range(8):
        assert x[i] > -1e30, f"item {i} too small: {x[i]}"
        y = jnp.tanh(y * 1.5) + y
    return y


def with_assert_at_the_top(x):
    assert x[0] > -1e30, f"first item too small: {x[0]}"
    for i in range(8):
        x = jnp.tanh(x * 1.5) + x
    return x


def without_assert(x):
    for i in range(8):
        x = jnp.tanh(x * 1.5) + x
    return x


def _per_call(fn, x, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(fn(x))
    return (time.perf_counter() - start) / calls * 1e6


def measure(x, calls: int, rounds: int) -> dict[str, float]:
    variants = {
        "in the loop, on the carry": laxify.to_static(with_assert),
        "same, checks=False": laxify.to_static(with_assert, checks=False),
        "in the loop, on the input": laxify.to_static(with_assert_on_the_input),
        "at the top": laxify.to_static(with_assert_at_the_top),
        "no assert": laxify.to_static(without_assert),
    }
    for fn in variants.values():
        jax.block_until_ready(fn(x))  # compiled
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            times[name].append(_per_call(fn, x, calls))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 7 if quick else 21
    for label, x, calls in (
        ("cached call, 8 floats", jnp.linspace(0.1, 1.0, 8), 2000),
        ("steady state, 4M floats", jnp.linspace(0.1, 1.0, 4_000_000), 5),
    ):
        found = measure(x, calls, rounds)
        base = found["no assert"]
        row = ", ".join(f"{name} {t:.1f} µs ({t / base:.2f}×)" for name, t in found.items())
        print(f"{label}: {row}")


if __name__ == "__main__":
    main()
