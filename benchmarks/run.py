"""laxify benchmarks, measured side by side in one process: `make bench`.

Per workload (benchmarks/workloads.py: the samples' core functions and synthetic if-heavy,
while-heavy, nested-loop, list-accumulating and 200-line functions): eager Python, `jax.jit`
with Python unrolling where it runs at all, the hand-written `jax.lax` program under
`jax.jit`, and laxify (`to_static`). Metrics: cold conversion, first call (convert + trace +
compile), steady-state call, temporary device memory of the compiled program, jaxpr equation
counts; then the cached call of a dispatch-bound function, the phases of a first call, the
first call and compile time of a static loop against its trip count, and `early_exit`.
Ratios are laxify / hand-written. Results: a Markdown report and JSON under
benchmarks/results/ (latest.md, latest.json). `--quick`: small inputs, few repeats (a smoke
run; rough figures).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import laxify  # noqa: E402
from laxify.conversion import clear_cache, convert_function  # noqa: E402
from timing import (  # noqa: E402
    cold_pair, eqn_count, fmt, fmt_bytes, fresh, interleaved, median_cpu, per_call, table, temp_bytes,
)
import workloads as w  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

# Python unrolling under jax.jit compiles one copy of the body per iteration: past some trip
# count XLA takes minutes. It runs in a subprocess stopped after this many seconds.
UNROLL_LIMIT = {True: 20.0, False: 60.0}


def unrolled_first_call(what: str, quick: bool) -> float:
    """First call of ``jax.jit`` of the Python function itself (its loops unrolled while
    tracing), in a fresh process: seconds, or ``inf`` past ``UNROLL_LIMIT``."""
    command = [sys.executable, __file__, "--unrolled", what] + (["--quick"] if quick else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=UNROLL_LIMIT[quick], check=True)
    except subprocess.TimeoutExpired:
        return float("inf")
    return float(done.stdout.split()[-1])


def _unrolled_main(what: str, quick: bool) -> None:
    """``--unrolled WORKLOAD`` or ``--unrolled loop:N``: print the first call's seconds."""
    if what.startswith("loop:"):
        n = int(what[5:])
        f, args = jax.jit(w.make_static_loop(), static_argnums=1), (jnp.linspace(0.0, 1.0, 1000), n)
    else:
        wl = next(x for x in w.WORKLOADS if x.name == what)
        f, args = jax.jit(wl.fn, static_argnums=wl.static_argnums), wl.make_args(quick)
    jax.block_until_ready(args)
    t0 = time.perf_counter()
    jax.block_until_ready(f(*args))
    print(time.perf_counter() - t0)


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:,.0f}x" if r >= 100 else f"{r:.2f}x"


def _check_same(a, b, what: str) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    if len(la) != len(lb):
        raise AssertionError(f"{what}: {len(la)} results vs {len(lb)}")
    for u, v in zip(la, lb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-4, atol=1e-4, err_msg=what)


# -- per workload -------------------------------------------------------------------------------
def measure(wl: w.Workload, quick: bool) -> dict:
    args = wl.make_args(quick)
    statics = wl.static_argnums
    static_fn = laxify.to_static(wl.fn, static_argnums=statics, fallback="error")
    hand = jax.jit(wl.hand, static_argnums=statics)
    out = static_fn(*args)
    _check_same(out, hand(*args), f"{wl.name}: laxify vs hand-written")
    r: dict = {"name": wl.name, "constructs": wl.constructs, "lines": len(inspect.getsource(wl.fn).splitlines())}

    if wl.eager:
        t0 = time.perf_counter()
        expected = wl.fn(*args)
        jax.block_until_ready(expected)
        r["eager"] = time.perf_counter() - t0
        _check_same(out, expected, f"{wl.name}: laxify vs eager Python")
    else:
        r["eager"] = None

    r["cold_conversion"] = median_cpu(lambda: convert_function(wl.fn), 3 if quick else 10, setup=clear_cache)

    def first_laxify():
        clear_cache()
        f = laxify.to_static(fresh(wl.fn), static_argnums=statics, fallback="error")
        return lambda: f(*args)

    def first_hand():
        f = jax.jit(fresh(wl.hand), static_argnums=statics)
        return lambda: f(*args)

    r["first_laxify"], r["first_hand"] = cold_pair(first_laxify, first_hand, 2 if quick else 5)
    r["first_unrolled"] = unrolled_first_call(wl.name, quick) if wl.unrolls else None

    number = per_call(lambda: hand(*args))
    t = interleaved({"laxify": lambda: static_fn(*args), "hand": lambda: hand(*args)},
                    repeats=5 if quick else 25, number=number)
    r["steady_laxify"], r["steady_hand"] = t["laxify"], t["hand"]

    r["temp_laxify"] = temp_bytes(static_fn.lower(*args))
    r["temp_hand"] = temp_bytes(hand.lower(*args))
    r["eqns_laxify"] = eqn_count(jax.make_jaxpr(laxify.convert(wl.fn), static_argnums=statics)(*args))
    r["eqns_hand"] = eqn_count(jax.make_jaxpr(wl.hand, static_argnums=statics)(*args))
    return r


def workload_tables(rows: list[dict]) -> str:
    times = table(
        ["workload", "constructs", "lines", "eager Python", "jax.jit, unrolled: first call", "cold conversion",
         "first call: laxify", "hand", "ratio", "steady: laxify", "hand", "ratio"],
        [[r["name"], r["constructs"], str(r["lines"]), fmt(r["eager"]), fmt(r["first_unrolled"]),
          fmt(r["cold_conversion"]), fmt(r["first_laxify"]), fmt(r["first_hand"]),
          ratio(r["first_laxify"], r["first_hand"]), fmt(r["steady_laxify"]), fmt(r["steady_hand"]),
          ratio(r["steady_laxify"], r["steady_hand"])] for r in rows])
    program = table(
        ["workload", "temp memory: laxify", "hand", "jaxpr equations: laxify", "hand", "ratio"],
        [[r["name"], fmt_bytes(r["temp_laxify"]), fmt_bytes(r["temp_hand"]), str(r["eqns_laxify"]),
          str(r["eqns_hand"]), ratio(r["eqns_laxify"], r["eqns_hand"])] for r in rows])
    return times + "\n\nThe compiled programs (temporary buffers from `compiled.memory_analysis()`; equations of " \
                   "`jax.make_jaxpr`, nested jaxprs included):\n\n" + program


# -- the cached call of a dispatch-bound function -------------------------------------------------
def cached_call(quick: bool) -> tuple[str, dict]:
    x = jnp.int32(27)  # 111 iterations of the while loop
    static = laxify.to_static(w.collatz)
    jit_converted = jax.jit(laxify.convert(w.collatz))
    hand = jax.jit(w.lax_collatz)
    _check_same(static(x), hand(x), "collatz")
    t = interleaved({"laxify": lambda: static(x), "jit(convert)": lambda: jit_converted(x), "hand": lambda: hand(x)},
                    repeats=30 if quick else 300, number=100)
    rows = [["`laxify.to_static(collatz)(x)`", fmt(t["laxify"]), fmt(t["hand"]), ratio(t["laxify"], t["hand"])],
            ["`jax.jit(laxify.convert(collatz))(x)`", fmt(t["jit(convert)"]), fmt(t["hand"]),
             ratio(t["jit(convert)"], t["hand"])]]
    return table(["cached call, collatz(27)", "laxify", "hand-written lax, jax.jit", "ratio"], rows), t


# -- the phases of a first call --------------------------------------------------------------------
def first_call_phases(quick: bool) -> tuple[str, dict]:
    """Convert, trace, lower and compile, timed apart: collatz(27) (dispatch-bound, small) and
    if-heavy (2,000 steps; its 19 lines take the longest to convert of the small workloads)."""
    phases = ("convert", "trace", "lower", "compile")
    cases = [
        ("collatz", w.collatz, w.lax_collatz, (jnp.int32(27),), ()),
        ("if-heavy", w.if_heavy, w.lax_if_heavy,
         (jax.random.normal(jax.random.PRNGKey(1), (2000,)) * 2.0, 2000), (1,)),
    ]
    rows, data = [], {}
    for name, fn, lax_fn, args, static in cases:
        samples: dict[str, list[dict]] = {"laxify": [], "hand": []}

        def run(make, convert) -> dict:
            t0 = time.perf_counter()
            f = convert()
            t1 = time.perf_counter()
            traced = make(f).trace(*args)
            t2 = time.perf_counter()
            lowered = traced.lower()
            t3 = time.perf_counter()
            lowered.compile()
            t4 = time.perf_counter()
            return dict(zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))

        def convert_laxify():
            clear_cache()
            f = laxify.to_static(fresh(fn), static_argnums=static)
            f.converted()  # the conversion alone
            return f

        for _ in range(3 if quick else 15):
            samples["laxify"].append(run(lambda f: f, convert_laxify))
            samples["hand"].append(run(lambda f: jax.jit(f, static_argnums=static), lambda: fresh(lax_fn)))
        med = {k: {p: statistics.median(s[p] for s in v) for p in phases} for k, v in samples.items()}
        rows += [[f"{name}: {p}", fmt(med["laxify"][p]), fmt(med["hand"][p]),
                  fmt(med["laxify"][p] - med["hand"][p])] for p in phases]
        total = {k: sum(v.values()) for k, v in med.items()}
        rows.append([f"{name}: total", fmt(total["laxify"]), fmt(total["hand"]), ratio(total["laxify"], total["hand"])])
        data[name] = med
    return table(["first call, by phase", "laxify", "hand-written", "difference"], rows), data


# -- a static loop's trip count ---------------------------------------------------------------------
def trip_count(quick: bool) -> tuple[str, list]:
    x = jnp.linspace(0.0, 1.0, 1000)
    rows, data = [], []
    for n in (10, 100, 1000, 10_000):
        def make_laxify():
            clear_cache()
            f = laxify.to_static(w.make_static_loop(), static_argnums=1)
            return lambda: f(x, n)

        def make_hand():
            f = jax.jit(w.make_lax_static_loop(), static_argnums=1)
            return lambda: f(x, n)

        lax_t, hand_t = cold_pair(make_laxify, make_hand, 2 if quick else 5)
        unrolled_t = unrolled_first_call(f"loop:{n}", quick) if n <= 100 or not quick else None
        compile_t = {}
        for k, make in (("laxify", lambda: laxify.to_static(w.make_static_loop(), static_argnums=1)),
                        ("hand", lambda: jax.jit(w.make_lax_static_loop(), static_argnums=1))):
            times = []
            for _ in range(2 if quick else 5):
                clear_cache()
                lowered = make().lower(x, n)  # a new lowering each time: compile() caches its result
                t0 = time.perf_counter()
                lowered.compile()
                times.append(time.perf_counter() - t0)
            compile_t[k] = statistics.median(times)
        data.append({"n": n, "first_laxify": lax_t, "first_hand": hand_t, "first_unrolled": unrolled_t,
                     "compile_laxify": compile_t["laxify"], "compile_hand": compile_t["hand"]})
        rows.append([f"{n:,}", fmt(lax_t), fmt(hand_t), ratio(lax_t, hand_t), fmt(unrolled_t),
                     fmt(compile_t["laxify"]), fmt(compile_t["hand"])])
    base = data[0]
    rows.append(["N=10,000 / N=10", ratio(data[-1]["first_laxify"], base["first_laxify"]),
                 ratio(data[-1]["first_hand"], base["first_hand"]), "", "",
                 ratio(data[-1]["compile_laxify"], base["compile_laxify"]),
                 ratio(data[-1]["compile_hand"], base["compile_hand"])])
    return table(["N", "first call: laxify (scan)", "hand fori_loop", "ratio", "jax.jit, Python unrolled",
                  "compile only: laxify", "hand"], rows), data


# -- early exit -------------------------------------------------------------------------------------
def early_exit(quick: bool) -> tuple[str, dict]:
    x = jnp.ones(w.EARLY_EXIT_STEPS)
    scan = laxify.to_static(w.first_above)
    early = laxify.to_static(laxify.loop_options(early_exit=True)(w.first_above))
    hand = jax.jit(w.lax_first_above)
    rows, data = [], {}
    for label, limit in (("break at step 3", 2.5), ("no break (all 10,000 steps)", 1e9)):
        _check_same(early(x, limit), scan(x, limit), "early exit vs scan")
        _check_same(early(x, limit), hand(x, limit), "early exit vs hand")
        t = interleaved({"scan": lambda: scan(x, limit), "early": lambda: early(x, limit),
                         "hand": lambda: hand(x, limit)},
                        repeats=5 if quick else 30, number=per_call(lambda: scan(x, limit)))
        data[label] = t
        rows.append([label, fmt(t["scan"]), fmt(t["early"]), fmt(t["hand"]), ratio(t["scan"], t["early"]),
                     ratio(t["early"], t["hand"])])
    return table(["`for i in range(10,000)` with a traced `break`", "scan (default)", "early_exit=True",
                  "hand-written while_loop", "scan / early_exit", "early_exit / hand"], rows), data


def _jsonable(value):
    """``data`` for strict JSON: a run stopped at the limit (``inf``) is the string "limit"."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value == float("inf"):
        return "limit"
    return value


# -- main -------------------------------------------------------------------------------------------
def machine() -> str:
    return (f"laxify {laxify.__version__}, jax {jax.__version__}, {jax.devices()[0].platform} "
            f"({jax.devices()[0].device_kind}), Python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"{platform.machine()}, load average {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, few repeats: a smoke run, rough figures")
    parser.add_argument("--only", default="", help="only the workloads whose name contains this text")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where latest.md and latest.json go")
    parser.add_argument("--unrolled", help=argparse.SUPPRESS)  # internal: see unrolled_first_call
    options = parser.parse_args(argv)
    quick = options.quick
    if options.unrolled:
        return _unrolled_main(options.unrolled, quick)
    started = time.perf_counter()
    report = [f"Machine: {machine()}{' — quick run (rough figures)' if quick else ''}."]
    data: dict = {"machine": machine(), "quick": quick}
    print(report[0], flush=True)

    if not any(options.only.lower() in wl.name.lower() for wl in w.WORKLOADS):
        parser.error(f"--only {options.only!r} matches no workload; the workloads are: "
                     + ", ".join(wl.name for wl in w.WORKLOADS))
    rows = []
    for wl in w.WORKLOADS:
        if options.only.lower() in wl.name.lower():
            print(f"  {wl.name} ...", flush=True)
            rows.append(measure(wl, quick))
    data["workloads"] = rows
    limit = f"> limit: stopped after {UNROLL_LIMIT[quick]:.0f} s; —: does not apply (a traced condition, or vmap)."
    sections = [("Workloads: laxify against eager Python, Python unrolling and the hand-written program",
                 workload_tables(rows) + f"\n\n{limit}")]
    for key, title, section in (
        ("cached_call", "Cached call of a dispatch-bound function", cached_call),
        ("first_call_phases", "First call, phase by phase", first_call_phases),
        ("trip_count", "First call and compile time against a static loop's trip count", trip_count),
        ("early_exit", "`loop_options(early_exit=True)`: a `break` at step 3 of 10,000", early_exit),
    ):
        print(f"  {key} ...", flush=True)
        text, data[key] = section(quick)
        sections.append((title, text))
    for title, text in sections:
        report.append(f"### {title}\n\n{text}")
    data["seconds"] = time.perf_counter() - started
    report.append(f"Load average at the end: {os.getloadavg()[0]:.2f}; the run took {data['seconds']:.0f} s.")
    text = "\n\n".join(report) + "\n"
    print("\n" + text)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "latest.md").write_text(text)
    (options.out / "latest.json").write_text(json.dumps(_jsonable(data), indent=1, default=str) + "\n")
    print(f"written: {options.out / 'latest.md'}, {options.out / 'latest.json'}")


if __name__ == "__main__":
    main()
