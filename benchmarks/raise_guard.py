"""Cost of the run-time error channel: a small function with a `raise` guard at the top
against the same function without it (DESIGN §5, docs/semantics.md "Exceptions").

Cached call (dispatch-bound, small input) and steady state (compute-bound input), each the
median of interleaved rounds. Run: `.venv/bin/python benchmarks/raise_guard.py`
(`--latency`: each call waited for; `--reads`: the ways of reading the "did a check fail"
boolean on the host, against the same program without it; `--workloads`: each `make bench`
workload with a guard at the top against itself without it, each call waited for).
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import laxify


def guarded(x, n):
    if n < 0:
        raise ValueError(f"n is negative: {n}")
    return jnp.tanh(x * n) + x


def unguarded(x, n):
    return jnp.tanh(x * n) + x


def guarded_loop(x, n):
    for i in range(8):
        if x[i] < -1e30:
            raise ValueError(f"item {i} too small")
        x = jnp.tanh(x * n) + x
    return x


def unguarded_loop(x, n):
    for i in range(8):
        x = jnp.tanh(x * n) + x
    return x


def guarded_nested(x, n):
    for j in range(2):
        for i in range(4):
            if x[i] < -1e30:
                raise ValueError(f"item {i} too small")
            x = jnp.tanh(x * n) + x
    return x


def unguarded_nested(x, n):
    for j in range(2):
        for i in range(4):
            x = jnp.tanh(x * n) + x
    return x


def guarded_nested_input(x, y, n):
    for j in range(2):
        for i in range(4):
            if y[i] < -1e30:  # the guard reads an array the loop does not update
                raise ValueError(f"item {i} too small")
            x = jnp.tanh(x * n) + x
    return x


def unguarded_nested_input(x, y, n):
    for j in range(2):
        for i in range(4):
            x = jnp.tanh(x * n) + x
    return x


LATENCY = False  # --latency: wait for each call's result before the next call


def _per_call(fn, args, calls: int) -> float:
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(calls):
        out = fn(*args)
        if LATENCY:
            jax.block_until_ready(out)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / calls


def compare(name, a, b, args, calls, rounds=21):
    ta, tb = [], []
    for _ in range(rounds):  # interleaved: drift hits both alike
        ta.append(_per_call(a, args, calls))
        tb.append(_per_call(b, args, calls))
    ma, mb = statistics.median(ta), statistics.median(tb)
    # The fastest round too: on a shared machine other processes only ever add time.
    print(f"{name:<44} with guard {ma * 1e6:9.2f} us   without {mb * 1e6:9.2f} us   "
          f"ratio {ma / mb:5.3f} (median)  {min(ta) / min(tb):5.3f} (fastest rounds)")
    return ma / mb


def reads(rounds: int = 15, calls: int = 2000) -> None:
    """The cached call's floor: one device-to-host boolean per call, read four ways."""
    flagged = jax.jit(lambda x, n: (n < 0, jnp.tanh(x * n) + x))
    plain = jax.jit(lambda x, n: jnp.tanh(x * n) + x)
    x, n = jnp.linspace(-1, 1, 8, dtype=jnp.float32), jnp.float32(0.5)

    def reading(read):
        def call():
            failed, out = flagged(x, n)
            if read(failed):
                raise ValueError
            return out
        return call

    ways = {"no flag": lambda: plain(x, n), "flag not read": lambda: flagged(x, n)[1],
            "np.asarray": reading(np.asarray), "item()": reading(lambda b: b.item()),
            "bool()": reading(bool), "jax.device_get": reading(jax.device_get)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):  # interleaved
        for name, fn in ways.items():
            times[name].append(_per_call(fn, (), calls))
    base = statistics.median(times["no flag"])
    for name, ts in times.items():
        print(f"{name:<16} {statistics.median(ts) * 1e6:8.2f} us  ratio {statistics.median(ts) / base:5.2f}")


def with_guard(fn):
    """``fn`` behind a guard at the top: a `raise` under a traced condition on its first array."""

    def guarded(*args):
        first = jax.tree_util.tree_leaves(args)[0]
        if jnp.isnan(jnp.ravel(first)[0]):
            raise ValueError(f"the first input is NaN: {first}")
        return fn(*args)

    guarded.__name__ = guarded.__qualname__ = f"guarded_{fn.__name__}"
    return guarded


def workloads(quick: bool) -> None:
    """Each `make bench` workload with a guard at the top against the same workload without
    it: its cached call (collatz(27), the dispatch-bound one) and steady state (all), both
    through `to_static`; medians of interleaved rounds, the ratio and its spread."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    from workloads import WORKLOADS  # noqa: E402

    for wl in WORKLOADS:
        if not wl.eager:
            continue
        args = wl.make_args(quick)
        plain = laxify.to_static(wl.fn, static_argnums=wl.static_argnums, fallback="error")
        guarded = laxify.to_static(with_guard(wl.fn), static_argnums=wl.static_argnums, fallback="error")
        jax.block_until_ready((plain(*args), guarded(*args)))
        one = _per_call(plain, args, 1)
        calls = max(5, min(2000, int(0.02 / max(one, 1e-6))))
        compare(f"{wl.name}{' (cached call)' if 'collatz' in wl.name else ''}", guarded, plain, args, calls,
                rounds=7 if quick else 21)


def main() -> None:
    global LATENCY
    if "--reads" in sys.argv:
        reads()
        return
    if "--workloads" in sys.argv:
        LATENCY = True
        workloads("--quick" in sys.argv)
        return
    LATENCY = "--latency" in sys.argv
    n = jnp.float32(0.5)
    small = jnp.linspace(-1, 1, 8, dtype=jnp.float32)
    big = jnp.linspace(-1, 1, 4_000_000, dtype=jnp.float32)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, python {sys.version.split()[0]}, "
          f"{'each call waited for' if LATENCY else 'calls back to back'}")
    compare("cached call, to_static, 8 floats", laxify.to_static(guarded), laxify.to_static(unguarded),
            (small, n), 2000)
    compare("steady state, to_static, 4M floats", laxify.to_static(guarded), laxify.to_static(unguarded),
            (big, n), 20)
    compare("cached call, checked(jit(convert)), 8 floats", laxify.checked(jax.jit(laxify.convert(guarded))),
            jax.jit(laxify.convert(unguarded)), (small, n), 2000)
    compare("steady state, guard in a static loop, 4M", laxify.to_static(guarded_loop),
            laxify.to_static(unguarded_loop), (big, n), 10)
    compare("steady state, guard in nested loops, 4M", laxify.to_static(guarded_nested),
            laxify.to_static(unguarded_nested), (big, n), 10)
    compare("  same, the guard on an input array", laxify.to_static(guarded_nested_input),
            laxify.to_static(unguarded_nested_input), (big, small, n), 10)


if __name__ == "__main__":
    main()
