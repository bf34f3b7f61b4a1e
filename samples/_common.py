"""Shared plumbing of the samples: command line, agreement checks, timings, the summary record.

Not a sample itself (names starting with `_` are skipped by tests/test_samples.py and by
samples/_summary.py). Each sample's `main(argv)` returns a `Result` that `_summary.py` tabulates.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import jax
import jax.extend.core
import numpy as np


@dataclass
class Result:
    """What one sample found: for the `make demo` summary table."""

    name: str
    constructs: str = ""
    ok: bool = True
    eager: float | None = None
    first: float | None = None
    cached: float | None = None
    jit: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float | None:
        if self.eager is None or not self.cached:
            return None
        return self.eager / self.cached


class Disagreement(SystemExit):
    """laxify and eager Python disagree: the sample exits with a non-zero status."""


def arg_parser(doc: str | None, default_size: int, size_help: str) -> argparse.ArgumentParser:
    """The flags every sample takes, --size N and --diff; a sample may add its own."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=default_size, help=f"{size_help} (default {default_size})")
    parser.add_argument("--diff", action="store_true", help="print what laxify changed in the source")
    return parser


def check(label: str, got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Compare two pytrees leaf by leaf; print `label ... OK` or exit non-zero with both sides."""
    got_leaves = jax.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        raise Disagreement(f"{label}: laxify gave {len(got_leaves)} values, eager {len(want_leaves)}")
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or not np.allclose(g, w, rtol=rtol, atol=atol):
            raise Disagreement(f"{label}: output {i} disagrees\n  laxify: {g}\n  eager:  {w}")
    print(f"{label:60s} OK")


def seconds(fn: Callable[[], Any], repeats: int = 1) -> float:
    """Median wall time of `fn()` (results blocked on) over `repeats` runs."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fmt(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1.0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.0f} us"
    return f"{s * 1e9:.0f} ns"


def try_plain_jit(fn: Callable, *args) -> str:
    """Run plain `jax.jit(fn)` (Python control flow unrolled while tracing), timing its first call;
    or say why it cannot run at all."""
    t0 = time.perf_counter()
    try:
        jax.block_until_ready(jax.jit(fn)(*args))
    except (jax.errors.TracerBoolConversionError, jax.errors.ConcretizationTypeError,
            jax.errors.TracerIntegerConversionError) as e:
        return f"plain jax.jit cannot trace it ({type(e).__name__}: Python control flow on a traced value)"
    return f"plain jax.jit (Python loops unrolled): first call {fmt(time.perf_counter() - t0)}"


def time_all(result: Result, eager: Callable[[], Any], converted: Callable[[], Any],
             eager_repeats: int = 1, cached_repeats: int = 20, jit_note: str = "") -> None:
    """Fill the timings of `result` and print the timing line. Set `result.first` to the time of
    the sample's first call of its converted function (conversion, tracing and compiling) before
    anything else runs it; otherwise it is measured here, as the first call of `converted`.
    `eager` should have run once on the same shapes, so that op-by-op compilation is not counted."""
    if result.first is None:
        result.first = seconds(converted)
    result.cached = seconds(converted, cached_repeats)
    result.eager = seconds(eager, eager_repeats)
    result.jit = jit_note
    print(f"timing: eager {fmt(result.eager)} | laxify first call {fmt(result.first)}"
          f" | cached {fmt(result.cached)} ({result.speedup:,.0f}x eager)")
    if jit_note:
        print(f"        {jit_note}")


_CONTROL = ("cond", "while", "scan")


def count_constructs(fn: Callable, *args, **kwargs) -> str:
    """How many lax.cond / while / scan the traced program holds, e.g. `2 cond, 1 while`."""
    counts: Counter[str] = Counter()

    def walk(jaxpr) -> None:
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in _CONTROL:
                counts[eqn.primitive.name] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, jax.extend.core.ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, jax.extend.core.Jaxpr):
                        walk(sub)

    walk(jax.make_jaxpr(lambda: fn(*args, **kwargs))().jaxpr)
    return ", ".join(f"{counts[k]} {k}" for k in _CONTROL if counts[k]) or "none"
