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


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 0:
        return "−" + fmt(-seconds)
    if seconds == float("inf"):
        return "> limit"
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


def cold_pair(make_a: Callable[[], Callable[[], object]], make_b: Callable[[], Callable[[], object]],
              repeats: int) -> tuple[float, float]:
    """``cold_first_call`` of two makers, measured in alternation (load drift hits both)."""
    a, b = [], []
    for _ in range(repeats):
        a.append(cold_first_call(make_a, 1))
        b.append(cold_first_call(make_b, 1))
    return statistics.median(a), statistics.median(b)


def per_call(fn: Callable[[], object], budget: float = 0.005) -> int:
    """How many back-to-back calls of ``fn`` fill about ``budget`` seconds (at least one)."""
    jax.block_until_ready(fn())
    t = sample(fn, 1)
    return max(1, min(1000, int(budget / max(t, 1e-9))))


def temp_bytes(lowered) -> int | None:
    """Temporary device memory of the compiled program (``memory_analysis``), if reported."""
    try:
        analysis = lowered.compile().memory_analysis()
    except Exception:  # a backend without the analysis
        return None
    return None if analysis is None else int(analysis.temp_size_in_bytes)


def eqn_count(jaxpr) -> int:
    """Equations of ``jaxpr``, those of nested jaxprs (loop bodies, branches) included."""
    def subs(value):
        if hasattr(value, "eqns"):
            yield value
        elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
            yield value.jaxpr
        elif isinstance(value, (tuple, list)):
            for item in value:
                yield from subs(item)

    def count(j) -> int:
        j = j.jaxpr if not hasattr(j, "eqns") else j
        return sum(1 + sum(count(s) for p in e.params.values() for s in subs(p)) for e in j.eqns)

    return count(jaxpr)


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
