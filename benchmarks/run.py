"""laxify benchmarks (DESIGN §7), measured side by side in one run: `make bench`.

(a) conversion time, cold and cached; (b) cached call time vs a hand-written jax.lax program;
(c) steady-state runtime of bigger workloads vs hand-written; (d) first-call time of a static
`for i in range(N)` loop vs plain Python unrolling under jax.jit. All figures are medians.
Pass --quick for a fast smoke run with few repeats (figures then are rough).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import laxify  # noqa: E402
from laxify.conversion import clear_cache, convert_function  # noqa: E402
from timing import cold_first_call, fmt, fresh, interleaved, median, median_cpu, table  # noqa: E402
import workloads as w  # noqa: E402


def ratio(a: float, b: float) -> str:
    r = a / b
    return f"{r:,.0f}x" if r >= 100 else f"{r:.2f}x"


def conversion(quick: bool) -> str:
    repeats = 5 if quick else 50
    rows = []
    for name, fn in (("quickstart `collatz` (12 lines)", w.collatz), ("typical function (48 lines)", w.typical)):
        cold = median(lambda: convert_function(fn), repeats, setup=clear_cache)
        # CPU time of this process: insensitive to other processes sharing the cores.
        cold_cpu = median_cpu(lambda: convert_function(fn), repeats, setup=clear_cache)
        convert_function(fn)
        lookup = median(lambda: convert_function(fn), repeats, number=1000)
        bound = median(lambda: laxify.convert(fn), repeats, number=1000)
        rows.append([name, fmt(cold), fmt(cold_cpu), fmt(lookup), fmt(bound), ratio(cold, lookup)])
    return table(["function", "cold: clear_cache + convert", "cold, CPU time", "cached: convert_function(fn)",
                  "cached: laxify.convert(fn)", "cold / cached"], rows)


def cached_call(quick: bool) -> str:
    x = jnp.int32(27)  # 111 iterations of the while loop
    static = laxify.to_static(w.collatz)
    jit_converted = jax.jit(laxify.convert(w.collatz))
    hand = jax.jit(w.lax_collatz)
    _check_same(static(x), hand(x))
    t = interleaved({"laxify": lambda: static(x), "jit(convert)": lambda: jit_converted(x),
                     "hand": lambda: hand(x)}, repeats=20 if quick else 200, number=100)

    def first_laxify():
        clear_cache()
        f = laxify.to_static(w.collatz)
        return lambda: f(x)

    def first_hand():
        f = jax.jit(fresh(w.lax_collatz))
        return lambda: f(x)

    repeats = 3 if quick else 15
    first = {"laxify": cold_first_call(first_laxify, repeats), "hand": cold_first_call(first_hand, repeats)}
    rows = [
        ["cached call: `laxify.to_static(collatz)(x)`", fmt(t["laxify"]), fmt(t["hand"]), ratio(t["laxify"], t["hand"])],
        ["cached call: `jax.jit(laxify.convert(collatz))(x)`", fmt(t["jit(convert)"]), fmt(t["hand"]),
         ratio(t["jit(convert)"], t["hand"])],
        ["first call (convert + trace + compile)", fmt(first["laxify"]), fmt(first["hand"]),
         ratio(first["laxify"], first["hand"])],
    ]
    return table(["collatz(27), 111 iterations", "laxify", "hand-written lax, jax.jit", "ratio"], rows)


def steady_state(quick: bool) -> str:
    rows = []
    key = jax.random.split(jax.random.PRNGKey(0), 3)
    hidden, features, steps = 256, 64, 1000
    params = (jax.random.normal(key[0], (hidden, hidden)) / np.sqrt(hidden),
              jax.random.normal(key[1], (hidden, features)) / np.sqrt(features), jnp.zeros(hidden))
    xs = jax.random.normal(key[2], (steps, features))
    rnn, hand_rnn = laxify.to_static(w.rnn), jax.jit(w.lax_rnn, static_argnums=2)
    _check_same(rnn(params, xs, steps), hand_rnn(params, xs, steps))
    t = interleaved({"laxify": lambda: rnn(params, xs, steps), "hand": lambda: hand_rnn(params, xs, steps)},
                    repeats=5 if quick else 30, number=5)
    rows.append([f"RNN, `for t in range(n)`, n={steps}, hidden {hidden}", fmt(t["laxify"]), fmt(t["hand"]),
                 ratio(t["laxify"], t["hand"])])

    a = jnp.linspace(1e-3, 1e4, 1 << 20, dtype=jnp.float32)
    newton, hand_newton = laxify.to_static(w.newton), jax.jit(w.lax_newton, static_argnums=1)
    out, hand_out = newton(a, 1e-2), hand_newton(a, 1e-2)
    _check_same(out, hand_out)
    t = interleaved({"laxify": lambda: newton(a, 1e-2), "hand": lambda: hand_newton(a, 1e-2)},
                    repeats=5 if quick else 30, number=3)
    rows.append([f"Newton sqrt, `while` + `if`, 2^20 floats, {int(out[1])} iterations", fmt(t["laxify"]),
                 fmt(t["hand"]), ratio(t["laxify"], t["hand"])])
    return table(["steady state (cached call)", "laxify", "hand-written lax, jax.jit", "ratio"], rows)


def first_call_vs_trip_count(quick: bool) -> str:
    x = jnp.linspace(0.0, 1.0, 1000)
    rows = []
    for n in (10, 100, 1000):
        def make_laxify():
            clear_cache()
            f = laxify.to_static(w.make_static_loop())
            return lambda: f(x, n)

        def make_hand():
            f = jax.jit(w.make_lax_static_loop(), static_argnums=1)
            return lambda: f(x, n)

        def make_unrolled():
            f = jax.jit(w.make_static_loop(), static_argnums=1)
            return lambda: f(x, n)

        repeats = 3 if quick else 10
        lax_t = cold_first_call(make_laxify, repeats)
        hand_t = cold_first_call(make_hand, repeats)
        unrolled_t = cold_first_call(make_unrolled, 2 if quick else (3 if n == 1000 else repeats))
        rows.append([str(n), fmt(lax_t), fmt(hand_t), fmt(unrolled_t), ratio(unrolled_t, lax_t)])
    return table(["N", "laxify (scan)", "hand-written fori_loop", "jax.jit, Python unrolled", "unrolled / laxify"], rows)


def _check_same(a, b) -> None:
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats: a smoke run, rough figures")
    quick = parser.parse_args(argv).quick
    print(f"laxify {laxify.__version__}, jax {jax.__version__}, {jax.devices()[0].platform}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    sections = [
        ("(a) Conversion time (source → lowered, compiled code object)", conversion),
        ("(b) Per-call time vs hand-written jax.lax", cached_call),
        ("(c) Steady-state runtime vs hand-written jax.lax", steady_state),
        ("(d) First call (convert + trace + compile) of a static `for i in range(N)` loop", first_call_vs_trip_count),
    ]
    for title, section in sections:
        print(f"\n### {title}\n", flush=True)
        print(section(quick), flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
