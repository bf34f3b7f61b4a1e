"""Cost of the int32 overflow check of Python ints in traced loops (docs/semantics.md "Numbers").

A loop whose carried Python ints are multiplied or added together (checked) run by `to_static`
(which functionalizes the check) against `jax.jit(laxify.convert(f))` of the same function (which
holds no check: nothing would report it), and a counter loop (`i += 1`, not checked) both ways.
Cached call (dispatch-bound: few iterations) and steady state (compute-bound: many iterations),
medians of interleaved rounds. Run: `.venv/bin/python benchmarks/int_overflow.py`.
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp

import laxify


def mixing(n):
    """Two checked operations per iteration (`*` and `+` of carried Python ints)."""
    h = 7
    for i in range(n):
        h = (h * 31) % 1000003 + i
    return h


def counter(x, n):
    """A counter's step only (`i += 1`): no check."""
    i = 0
    s = 0.0
    while i < n:
        s = s + x[i % 8]
        i += 1
    return s


def _per_call(fn, args, calls: int) -> float:
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(calls):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / calls


def _pair(name: str, fns: dict, args, calls: int, rounds: int) -> None:
    times: dict = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            times[k].append(_per_call(fn, args, calls))
    med = {k: statistics.median(v) for k, v in times.items()}
    a, b = med["to_static"], med["jit(convert)"]
    print(f"| {name} | {a * 1e6:.1f} / {b * 1e6:.1f} µs ({a / b:.2f}×) |")


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 5 if quick else 15
    print("| measured (`to_static` / `jax.jit(convert)`) | medians |")
    print("|---|---|")
    for label, n, calls in (("cached call", 8, 2000), ("steady state", 1_000_000, 5)):
        _pair(f"{label}, checked `mixing`, n = {n}",
              {"to_static": laxify.to_static(mixing), "jit(convert)": jax.jit(laxify.convert(mixing))},
              (jnp.int32(n),), calls if not quick else max(calls // 10, 2), rounds)
        _pair(f"{label}, unchecked `counter`, n = {n}",
              {"to_static": laxify.to_static(counter), "jit(convert)": jax.jit(laxify.convert(counter))},
              (jnp.arange(8.0), jnp.int32(n)), calls if not quick else max(calls // 10, 2), rounds)


if __name__ == "__main__":
    main()
