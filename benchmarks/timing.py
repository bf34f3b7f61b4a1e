"""Timing helpers for benchmarks/run.py: perf_counter, block_until_ready, medians."""

from __future__ import annotations

import statistics
import time
import types
from typing import Callable

import jax


def sample(fn: Callable[[], object], number: int = 1) -> float:
    """Seconds per call of ``fn`` over ``number`` back-to-back calls (results made ready)."""
    t0 = time.perf_counter()
    for _ in range(number):
        out = fn()
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / number


def median(fn: Callable[[], object], repeats: int, number: int = 1, setup: Callable[[], object] | None = None) -> float:
    """Median over ``repeats`` samples; ``setup`` runs untimed before each sample."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        times.append(sample(fn, number))
    return statistics.median(times)


def median_cpu(fn: Callable[[], object], repeats: int, setup: Callable[[], object] | None = None) -> float:
    """Median process CPU time (``time.process_time``) of one call, for pure-Python work."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], object]], repeats: int, number: int = 1) -> dict[str, float]:
    """Medians of the ``fns`` measured in alternation (the order rotates each round), so that
    drift in machine load affects all of them alike."""
    names = list(fns)
    for name in names:  # warm-up: compile, fill caches
        jax.block_until_ready(fns[name]())
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            times[name].append(sample(fns[name], number))
    return {name: statistics.median(ts) for name, ts in times.items()}


def cold_first_call(make: Callable[[], Callable[[], object]], repeats: int) -> float:
    """Median time of the first call of a freshly made callable (``make`` is untimed)."""
    times = []
    for _ in range(repeats):
        call = make()
        t0 = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fresh(fn: types.FunctionType) -> types.FunctionType:
    """A new function object with the same code: jax's per-function trace caches start empty."""
    new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__qualname__ = fn.__qualname__
    return new


def fmt(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e9:.0f} ns"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table (readable in a terminal too)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
