"""Cold conversion over the e2e corpus: how long laxify takes to convert a function it has not
seen, for every user-style function of ``tests/e2e/test_*.py``.

    .venv/bin/python benchmarks/conversion.py [--quick] [--json PATH] [--md PATH] [--top N]

Each function is converted through the decorator's entry (``laxify.conversion.convert_function``)
from a fresh copy of its code object (``code.replace()``: same source, new identity, so the
per-code-object cache misses), imports and ``linecache`` warm, and laxify's memory of the
texts it parsed and compiled before cleared (``transpiler.recent``): the text is new to it.
The time per function is the median of a few repeats (process CPU time, so that other
processes on a shared machine count less). Reported: median, p90 and max over the corpus, the number of
functions under 50 lines
that take more than 5 ms, and a phase breakdown summed over the corpus (exclusive times: a
phase that calls another does not count the other's time).

Functions whose conversion raises (the error tests' subjects) are timed too (their error is
part of the conversion path) and counted apart. Without ``--json``/``--md`` the results go to
``benchmarks/results/conversion.json`` and ``conversion.md``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import statistics
import sys
import time
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
E2E = ROOT / "tests" / "e2e"
RESULTS = ROOT / "benchmarks" / "results"

LIMIT_MS = 5.0
SHORT_LINES = 50


# -- the corpus --------------------------------------------------------------------------------

def corpus() -> list[types.FunctionType]:
    """Module-level functions of tests/e2e/test_*.py, defined there (``__module__`` is the test
    module), that are not tests: the functions the tests convert, plus helpers of the same
    kind. Functions nested in test functions are left out (they need their test's closure)."""
    sys.path.insert(0, str(E2E))
    found = []
    for path in sorted(E2E.glob("test_*.py")):
        name = path.stem
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (isinstance(value, types.FunctionType) and value.__module__ == name
                    and not attr.startswith("test_") and not value.__name__.startswith("test_")
                    and value.__code__.co_filename == str(path)
                    and not (value.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE))):
                found.append(value)
    return found


def fresh(fn: types.FunctionType) -> types.FunctionType:
    """A copy of ``fn`` with a new code object (equal to the old one, but not the same)."""
    copy = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy


def source_lines(fn) -> int:
    try:
        return len(inspect.getsourcelines(fn)[0])
    except (OSError, TypeError):
        return 0


# -- phases ------------------------------------------------------------------------------------

class Phases:
    """Exclusive time per phase: wrappers around the pipeline's functions push onto a stack, and
    a phase's time excludes the time of the phases it calls."""

    def __init__(self):
        self.totals: dict[str, float] = {}
        self.stack: list[list] = []  # [name, start, child time]
        self.patched: list[tuple[object, str, object]] = []

    def wrap(self, owner, attr: str, name: str) -> None:
        original = getattr(owner, attr, None)
        if original is None or not callable(original):
            return
        phases = self

        def timed(*args, **kwargs):
            frame = [name, time.process_time(), 0.0]
            phases.stack.append(frame)
            try:
                return original(*args, **kwargs)
            finally:
                phases.stack.pop()
                spent = time.process_time() - frame[1]
                phases.totals[name] = phases.totals.get(name, 0.0) + spent - frame[2]
                if phases.stack:
                    phases.stack[-1][2] += spent

        setattr(owner, attr, timed)
        self.patched.append((owner, attr, original))

    def restore(self) -> None:
        for owner, attr, original in reversed(self.patched):
            setattr(owner, attr, original)
        self.patched.clear()


def instrument() -> Phases:
    """Wrap each stage of the conversion path (whatever of it this version has)."""
    from laxify import conversion
    from laxify.transpiler import pipeline, source

    phases = Phases()
    phases.wrap(conversion, "_convert", "other (conversion glue)")
    phases.wrap(pipeline, "_convert_source", "other (pipeline glue)")
    phases.wrap(pipeline, "get_source", "find + parse source")
    phases.wrap(source, "_check_current", "staleness check (compile of the source)")
    phases.wrap(pipeline, "statement_positions", "positions")
    phases.wrap(pipeline, "local_names", "analyses")
    phases.wrap(pipeline, "features", "analyses")
    phases.wrap(pipeline, "hide_user_names", "analyses")
    for converter in pipeline.CONVERTERS:
        short = converter.__name__.rsplit(".", 1)[-1]
        phases.wrap(converter, "transform", f"converter: {short}")
    phases.wrap(pipeline, "build_ir", "to_ir")
    phases.wrap(conversion, "_run_passes", "IR passes")
    phases.wrap(conversion, "lower_function", "lowering (codegen)")
    phases.wrap(conversion, "compile_lowered", "compile()")
    return phases


# -- measuring ---------------------------------------------------------------------------------

def forget_texts() -> None:
    """Forget the texts laxify has parsed and compiled (where this version keeps them), so
    that a conversion starts from text it has never seen."""
    try:
        from laxify.transpiler.recent import clear_caches
    except ImportError:
        return
    clear_caches()


def convert_once(fn, seen: bool = False) -> tuple[float, str | None]:
    """CPU seconds for one cold conversion of ``fn`` (a fresh copy), and the error's type name;
    the text is new to laxify unless ``seen`` (then its parse may be remembered)."""
    from laxify.conversion import convert_function

    copy = fresh(fn)
    if not seen:
        forget_texts()
    error = None
    t0 = time.process_time()
    try:
        convert_function(copy)
    except Exception as e:  # the error tests' subjects: their error is part of the path
        error = type(e).__name__
    return time.process_time() - t0, error


def measure(functions, repeats: int) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in functions:  # warm-up: imports, linecache, lazily built tables
            convert_once(fn)
        rows = []
        for fn in functions:
            times, error = [], None
            for _ in range(repeats):
                spent, error = convert_once(fn)
                times.append(spent)
            rows.append({"name": f"{fn.__module__}.{fn.__qualname__}", "lines": source_lines(fn),
                         "ms": statistics.median(times) * 1e3, "error": error})
    return rows


def disk_hits(functions, repeats: int) -> dict | None:
    """Median and p90 of a conversion read from a warm on-disk cache (``laxify.set_cache_dir``),
    a fresh code object each time; ``None`` where this laxify has no such cache."""
    import tempfile

    import laxify
    from laxify import conversion

    if not hasattr(laxify, "set_cache_dir"):
        return None
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        laxify.set_cache_dir(folder)
        try:
            for fn in functions:  # fill the cache
                convert_once(fn)
            times = []
            for fn in functions:
                times.append(statistics.median(convert_once(fn)[0] for _ in range(repeats)) * 1e3)
        finally:
            laxify.set_cache_dir(None)
            conversion.clear_cache()
    return {"median_ms": statistics.median(times), "p90_ms": percentile(times, 0.9), "max_ms": max(times)}


def text_seen(functions, repeats: int) -> dict:
    """Median and p90 of a conversion of a new code object whose text laxify has converted
    before, while the function converted then is alive (a notebook cell or a module re-run
    unchanged: the old function is replaced only after the new one is made; a reconversion)."""
    from laxify.conversion import convert_function

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        times = []
        for fn in functions:
            forget_texts()
            earlier = fresh(fn)
            try:
                convert_function(earlier)
            except Exception:
                pass
            times.append(statistics.median(convert_once(fn, seen=True)[0] for _ in range(repeats)) * 1e3)
            del earlier
    return {"median_ms": statistics.median(times), "p90_ms": percentile(times, 0.9), "max_ms": max(times)}


def phase_totals(functions) -> dict[str, float]:
    """Milliseconds per phase, one cold conversion of each function."""
    import gc

    phases = instrument()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for fn in functions:
                copy = fresh(fn)
                forget_texts()
                gc.disable()
                try:
                    from laxify.conversion import convert_function
                    convert_function(copy)
                except Exception:
                    pass
                finally:
                    gc.enable()
    finally:
        phases.restore()
    return {name: ms * 1e3 for name, ms in sorted(phases.totals.items(), key=lambda kv: -kv[1])}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(rows: list[dict]) -> dict:
    ms = [r["ms"] for r in rows]
    slow = [r for r in rows if r["lines"] < SHORT_LINES and r["ms"] > LIMIT_MS]
    return {
        "functions": len(rows),
        "errors": sum(r["error"] is not None for r in rows),
        "median_ms": statistics.median(ms),
        "p90_ms": percentile(ms, 0.9),
        "max_ms": max(ms),
        "mean_ms": statistics.fmean(ms),
        "over_5ms_under_50_lines": len(slow),
    }


def markdown(result: dict, top: int) -> str:
    s = result["summary"]
    lines = [
        "# Cold conversion over the e2e corpus",
        "",
        f"{s['functions']} functions ({s['errors']} of them raise a ConversionError by design), "
        f"{result['repeats']} repeats each, CPU time; Python {result['python']}, {result['machine']}.",
        "",
        "| median | p90 | max | mean | > 5 ms (under 50 lines) |",
        "|---|---|---|---|---|",
        f"| {s['median_ms']:.2f} ms | {s['p90_ms']:.2f} ms | {s['max_ms']:.2f} ms | {s['mean_ms']:.2f} ms "
        f"| {s['over_5ms_under_50_lines']} |",
    ]
    seen = result.get("text_seen")
    if seen:
        lines += ["", f"A new code object of a text converted before (a cell or module re-run unchanged): "
                  f"median {seen['median_ms']:.2f} ms, p90 {seen['p90_ms']:.2f} ms, max {seen['max_ms']:.2f} ms."]
    hit = result.get("disk_cache_hit")
    if hit:
        lines += ["", f"Read from a warm on-disk cache (`laxify.set_cache_dir`): median {hit['median_ms']:.2f} ms, "
                  f"p90 {hit['p90_ms']:.2f} ms, max {hit['max_ms']:.2f} ms."]
    lines += [
        "",
        "## Phases (summed over the corpus, one conversion each, exclusive times)",
        "",
        "| phase | ms | share |",
        "|---|---|---|",
    ]
    total = sum(result["phases_ms"].values()) or 1.0
    for name, ms in result["phases_ms"].items():
        lines.append(f"| {name} | {ms:.1f} | {100 * ms / total:.0f}% |")
    lines += ["", f"## Slowest {top}", "", "| function | lines | ms |", "|---|---|---|"]
    for r in sorted(result["rows"], key=lambda r: -r["ms"])[:top]:
        lines.append(f"| {r['name']} | {r['lines']} | {r['ms']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat per function")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--md", type=Path, default=None, help="write a Markdown table here")
    parser.add_argument("--top", type=int, default=10, help="list the N slowest functions")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)

    sys.path.insert(0, str(ROOT))
    import laxify  # noqa: F401  (imports warm)

    functions = corpus()
    rows = measure(functions, repeats)
    result = {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "repeats": repeats,
        "summary": summary(rows),
        "phases_ms": phase_totals(functions),
        "text_seen": text_seen(functions, repeats),
        "disk_cache_hit": disk_hits(functions, repeats),
        "rows": rows,
    }
    text = markdown(result, args.top)
    print(text)
    json_path, md_path = args.json, args.md
    if json_path is None and md_path is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        json_path, md_path = RESULTS / "conversion.json", RESULTS / "conversion.md"
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=1) + "\n")
    if md_path is not None:
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
