"""laxify in one minute: a data-dependent `while` with an `if` inside, under jax.jit.

Run with `make demo` (or `python samples/quickstart.py`). It shows that plain `jax.jit`
rejects the function, prints what laxify changes, checks laxify against eager Python on
inputs that take every path, and times eager vs laxify.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import laxify


def collatz(x):
    """Steps of the Collatz sequence from x down to 1, and the largest value it reaches."""
    steps = 0
    peak = x
    while x > 1:  # traced condition: becomes lax.while_loop
        if x % 2 == 0:  # traced condition: becomes lax.cond
            x = x // 2
        else:
            x = 3 * x + 1
        peak = jnp.maximum(peak, x)
        steps += 1
    return steps, peak


# Inputs that take every path: no iteration (1), only the even branch (2, 16),
# both branches (7, 27: 111 steps, peak 9232).
CASES = (1, 2, 16, 7, 27)


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _fmt(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:8.2f} s "
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds * 1e6:8.1f} us"


def main() -> None:
    x = jnp.int32(27)

    # 1. Plain jax.jit cannot trace a Python `while` on a traced value.
    try:
        jax.jit(collatz)(x)
    except jax.errors.TracerBoolConversionError:
        print("jax.jit(collatz) fails: TracerBoolConversionError (Python `while` on a traced value)")
    else:  # pragma: no cover - would mean jax changed its semantics
        raise SystemExit("expected jax.jit(collatz) to fail")

    # 2. laxify rewrites the control flow into lax.while_loop / lax.cond.
    laxify.conversion.clear_cache()  # so that the first call below includes the conversion
    f = laxify.to_static(collatz)
    t0 = time.perf_counter()
    jax.block_until_ready(f(x))
    first_call = time.perf_counter() - t0
    print("\nWhat laxify changes (f.diff()):\n")
    print(f.diff())

    # 3. The eager Python run (plain ints) is the oracle.
    print()
    for v in CASES:
        want_steps, want_peak = collatz(v)
        got_steps, got_peak = f(jnp.int32(v))
        assert np.allclose(got_steps, want_steps) and np.allclose(got_peak, want_peak), (v, got_steps, got_peak)
        print(f"collatz({v:2d}) = {int(got_steps):3d} steps, peak {int(got_peak):4d}   OK")

    # 4. Timings on x = 27 (111 iterations).
    eager = _median_seconds(lambda: collatz(x), repeats=5)
    cached = _median_seconds(lambda: f(x), repeats=300)
    print(f"\n{'collatz(27)':44s} {'median':>11s}")
    print(f"{'eager Python (op by op on a jax array)':44s} {_fmt(eager)}")
    print(f"{'laxify first call (convert+trace+compile)':44s} {_fmt(first_call)}")
    print(f"{'laxify cached call':44s} {_fmt(cached)}   ({eager / cached:,.0f}x faster than eager)")


if __name__ == "__main__":
    main()
