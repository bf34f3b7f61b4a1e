"""``make hunt``: a hunt for silent differences in Python's numbers, functions written from scratch in the style of textbook
numeric code (tests/hunt/numbers/*.py, each module a list ``CASES = [(fn, [args, ...]), ...]``),
each run on each of its inputs three ways:

- eager: ``fn(*args)`` (the oracle: Python's and JAX's own meaning);
- ``laxify.to_static(fn)(*args)``;
- ``laxify.checked(jax.jit(laxify.convert(fn)))(*args)``, the JAX arrays traced, the Python
  values (numbers, lists of numbers) closed over as ``static_argnums`` would keep them.

For each route the value or the exception class, what the call printed, and the laxify
``FallbackWarning``s are kept. Classes of ``to_static``:

- ``same``: no warning, eager's result: the same exception class, or equal values (ints and
  bools exactly, floats with rtol 1e-5; an array result of eager's dtype; a Python number may
  come back as a 0-d array of its kind: bool, int, float), and the same printed text;
- ``fallback-same``: the same, with a ``FallbackWarning``;
- ``located``: a laxify error (``laxify.ConversionError``, ``NumberNotHeld``) where eager gave
  another result: a located refusal, not silent, but a crash to report;
- ``crash``: another exception where eager did not raise it, raised inside JAX or laxify
  (``TracerBoolConversionError``, an internal error): loud, but a crash to report;
- ``hang``: no result after ``HANG_S`` seconds (a compiled loop that never ends: no signal
  interrupts it, so each module runs in a worker process, killed and restarted after the row);
- ``skipped``: eager itself did not finish in ``TIMEOUT_S`` seconds (a bad input: fix it);
- ``warned-differs``: a different result after a ``FallbackWarning``;
- ``WRONG``: a different result (value, dtype, printed text, a missing or extra exception
  raised at the user's line) with no warning: a silent difference.

Classes of ``jit(convert)``: ``equal``, ``located`` (a laxify error), ``n/a`` (eager returns a
Python int past int32, which ``jax.jit`` itself cannot return: its ``OverflowError``), ``crash``
(another error raised inside JAX or laxify), ``hang``, ``skipped`` (not run: ``to_static``
hung on the row), ``WRONG`` (anything else: a silent difference).

Usage: ``python tests/hunt/run.py [--only SUBSTRING] [--module NAME] [--no-jit] [--quiet]``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import io
import json
import math
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

import jax  # noqa: E402
import numpy as np  # noqa: E402

import laxify  # noqa: E402
from laxify.runtime.numbers import NumberNotHeld  # noqa: E402

MODULES = ("series", "integers", "simulation", "utilities", "matrices", "carried", "chaos")
STATIC_CLASSES = ("same", "fallback-same", "located", "crash", "hang", "skipped", "warned-differs", "WRONG")
JIT_CLASSES = ("equal", "located", "n/a", "crash", "hang", "skipped", "WRONG")
LAXIFY_ERRORS = (laxify.ConversionError, NumberNotHeld)
TIMEOUT_S = 60  # a row that Python can interrupt
HANG_S = 90  # a row that no signal interrupts (a compiled loop): the worker is killed


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


@dataclass
class Outcome:
    value: object = None
    error: BaseException | None = None
    stdout: str = ""
    fallbacks: list = field(default_factory=list)

    def show(self) -> str:
        if self.error is not None:
            text = str(self.error).splitlines()[0] if str(self.error) else ""
            return f"{type(self.error).__name__}: {text[:160]}"
        return _short(self.value)


def _short(value) -> str:
    text = repr(value).replace("\n", " ")
    return text if len(text) < 200 else text[:200] + "..."


def load(name: str):
    """tests/hunt/numbers/<name>.py, loaded by its path (a folder named `numbers` must not be
    put on sys.path: it would hide the standard library's module)."""
    qualified = f"laxify_hunt_numbers_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, HERE / "numbers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


def cases(module_names=MODULES):
    """(module, fn, args) for every input of every case."""
    for name in module_names:
        module = load(name)
        for fn, inputs in module.CASES:
            for args in inputs:
                yield name, fn, tuple(args)


def _call(thunk) -> Outcome:
    out = Outcome()
    buffer = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(buffer):
            try:
                out.value = thunk()
                out.value = jax.block_until_ready(out.value)
            except _Timeout:
                raise
            except Exception as e:  # noqa: BLE001 - the outcome compared
                out.error = e
            try:
                jax.effects_barrier()
            except Exception:  # noqa: BLE001
                pass
    out.stdout = buffer.getvalue()
    out.fallbacks = [str(w.message) for w in caught if issubclass(w.category, laxify.FallbackWarning)]
    return out


# -- comparison --------------------------------------------------------------------------------

_KIND_OF_PYTHON = {bool: "b", int: "i", float: "f", complex: "c"}


def same_value(expected, actual) -> bool:
    """Whether ``actual`` is ``expected``: containers item by item, Python numbers by value and
    kind (a 0-d array of the same kind counts), arrays by dtype, shape and value."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            # a list of numbers eager builds in a static-length loop may come back stacked
            # (docs/semantics.md: a list appended in a loop comes back as its stacked array)
            if isinstance(actual, (jax.Array, np.ndarray)) and isinstance(expected, list):
                arr = np.asarray(actual)
                return arr.ndim >= 1 and arr.shape[0] == len(expected) and all(
                    same_value(e, a) for e, a in zip(expected, list(arr)))
            return False
        return all(same_value(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(same_value(expected[k], actual[k]) for k in expected))
    if expected is None or isinstance(expected, str):
        return expected == actual
    if type(expected) in _KIND_OF_PYTHON:
        kind = _KIND_OF_PYTHON[type(expected)]
        if type(actual) in _KIND_OF_PYTHON:
            if _KIND_OF_PYTHON[type(actual)] != kind:
                return False
            return _numbers_equal(expected, actual, kind)
        if isinstance(actual, (jax.Array, np.ndarray, np.generic)):
            arr = np.asarray(actual)
            if arr.shape != () or arr.dtype.kind != kind:
                return False
            return _numbers_equal(expected, arr.item(), kind)
        return False
    if isinstance(expected, (jax.Array, np.ndarray, np.generic)):
        e = np.asarray(expected)
        if not isinstance(actual, (jax.Array, np.ndarray, np.generic)):
            return False
        a = np.asarray(actual)
        if a.dtype != e.dtype or a.shape != e.shape:
            return False
        if e.dtype.kind in "biu":
            return bool(np.array_equal(e, a))
        return bool(np.allclose(e, a, rtol=1e-5, atol=0, equal_nan=True))
    return repr(expected) == repr(actual)


def _numbers_equal(e, a, kind) -> bool:
    if kind in "bi":
        return int(e) == int(a)
    if kind == "c":
        return complex(e) == complex(a)
    e, a = float(e), float(a)
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    return math.isclose(e, a, rel_tol=1e-5, abs_tol=0)


def _same_outcome(expected: Outcome, actual: Outcome) -> tuple[bool, str]:
    if expected.error is not None or actual.error is not None:
        if expected.error is None or actual.error is None:
            return False, "exception"
        if type(expected.error) is not type(actual.error):
            return False, "exception class"
        return (expected.stdout == actual.stdout), "stdout"
    if not same_value(expected.value, actual.value):
        return False, "value"
    if expected.stdout != actual.stdout:
        return False, "stdout"
    return True, ""


def _raised_inside_library(error: BaseException, fn) -> bool:
    """Whether the innermost frame of ``error`` is outside the user's module (JAX, laxify)."""
    frames = traceback.extract_tb(error.__traceback__)
    return not frames or frames[-1].filename != fn.__code__.co_filename


def classify_static(fn, eager: Outcome, static: Outcome) -> tuple[str, str]:
    ok, what = _same_outcome(eager, static)
    if ok:
        return ("fallback-same" if static.fallbacks else "same"), ""
    if static.error is not None and (eager.error is None or type(eager.error) is not type(static.error)):
        if isinstance(static.error, LAXIFY_ERRORS):
            return "located", what
        if static.fallbacks:
            return "warned-differs", what
        if _raised_inside_library(static.error, fn) and not isinstance(static.error, ArithmeticError):
            return "crash", what
    if static.fallbacks:
        return "warned-differs", what
    return "WRONG", what


def _big_int_in(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_big_int_in(v) for v in value)
    return type(value) is int and not -(2**31) <= value < 2**31


def classify_jit(fn, eager: Outcome, jitted: Outcome) -> tuple[str, str]:
    ok, what = _same_outcome(eager, jitted)
    if ok:
        return "equal", ""
    if (eager.error is None and _big_int_in(eager.value) and type(jitted.error) is OverflowError
            and _raised_inside_library(jitted.error, fn)):
        return "n/a", "jax.jit cannot return eager's Python int"
    if jitted.error is not None and (eager.error is None or type(eager.error) is not type(jitted.error)):
        if isinstance(jitted.error, LAXIFY_ERRORS):
            return "located", what
        if _raised_inside_library(jitted.error, fn) and not isinstance(jitted.error, ArithmeticError):
            return "crash", what
    return "WRONG", what


# -- the routes --------------------------------------------------------------------------------

def _traced(arg) -> bool:
    return isinstance(arg, (jax.Array, np.ndarray))


def jit_route(fn, args):
    """``laxify.checked(jax.jit(laxify.convert(fn)))``: arrays traced, Python values closed over."""
    traced = [i for i, a in enumerate(args) if _traced(a)]
    converted = laxify.convert(fn)

    def program(*values):
        full = list(args)
        for i, v in zip(traced, values):
            full[i] = v
        return converted(*full)

    program.__name__ = fn.__name__
    return laxify.checked(jax.jit(program))(*(args[i] for i in traced))


def _summary(out: Outcome | None) -> dict:
    if out is None:
        return {"show": "", "stdout": "", "warning": ""}
    return {"show": out.show(), "stdout": out.stdout,
            "warning": out.fallbacks[0].splitlines()[0][:300] if out.fallbacks else ""}


def _signal(text: str) -> None:
    print(text, flush=True)


def run_row(module, fn, args, index, with_jit=True) -> dict:
    """One input, both routes; the routes announce themselves on stdout first, so that the
    parent knows which one hung (a compiled loop that never ends cannot be interrupted)."""
    row = {"module": module, "fn": fn.__name__, "index": index, "args": _short(args),
           "static_class": "", "static_what": "", "jit_class": "", "jit_what": ""}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        try:
            eager = _call(lambda: fn(*copy.deepcopy(args)))
        except _Timeout:
            row.update(static_class="skipped", static_what="eager timed out", jit_class="skipped" if with_jit else "")
            blank = _summary(None)
            row.update(eager=dict(blank, show=f"timed out after {TIMEOUT_S} s"), static=blank, jit=blank)
            return row
        _signal("PART " + json.dumps({"eager": _summary(eager)}))
        _signal(f"ROUTE {index} static")
        try:
            static = _call(lambda: laxify.to_static(fn)(*copy.deepcopy(args)))
        except _Timeout:
            static = Outcome(error=TimeoutError(f"timed out after {TIMEOUT_S} s"))
        row["static_class"], row["static_what"] = classify_static(fn, eager, static)
    finally:
        signal.alarm(0)
    row["eager"], row["static"] = _summary(eager), _summary(static)
    row["jit"] = _summary(None)
    _signal("PART " + json.dumps({k: row[k] for k in ("static", "static_class", "static_what")}))
    if with_jit:
        _signal(f"ROUTE {index} jit")
        signal.alarm(TIMEOUT_S)
        try:
            jitted = _call(lambda: jit_route(fn, copy.deepcopy(args)))
        except _Timeout:
            jitted = Outcome(error=TimeoutError(f"timed out after {TIMEOUT_S} s"))
        finally:
            signal.alarm(0)
        row["jit_class"], row["jit_what"] = classify_jit(fn, eager, jitted)
        row["jit"] = _summary(jitted)
    return row


def worker(module: str, start: int, with_jit: bool, only: str | None) -> None:
    """Run the rows of one module from ``start`` on, one JSON line each (``ROW {...}``)."""
    for index, (mod, fn, args) in enumerate(cases((module,))):
        if index < start or (only and only not in fn.__name__):
            continue
        row = run_row(mod, fn, args, index, with_jit)
        _signal("ROW " + json.dumps(row))


def _hung_row(module, index, route, with_jit, parts, died=False) -> dict:
    mod_fn_args = list(cases((module,)))[index]
    _, fn, args = mod_fn_args
    text = f"no result after {HANG_S} s: a compiled loop that does not end (killed)"
    if died:
        text = "the worker process died on this row"
    row = {"module": module, "fn": fn.__name__, "index": index, "args": _short(args),
           "static_class": "hang" if route == "static" else "", "static_what": "",
           "jit_class": ("hang" if route == "jit" else "skipped") if with_jit else "", "jit_what": ""}
    blank = _summary(None)
    row["eager"], row["static"], row["jit"] = blank, dict(blank), dict(blank)
    row.update(parts)
    row[route]["show"] = text
    if route == "static":
        row["static_what"] = "hang"
    else:
        row["jit_what"] = "hang"
    return row


def collect(modules=MODULES, with_jit=True, only=None, echo=None) -> list[dict]:
    """Every row of ``modules``, each module run in a worker process that is killed and
    restarted after a row that hangs (recorded as ``hang``) or on which it dies."""
    rows = []

    def add(row):
        rows.append(row)
        if echo:
            echo(row)

    for module in modules:
        total = len(list(cases((module,))))
        start = 0
        failed_starts = 0
        while start < total:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", module, "--start", str(start)]
            if not with_jit:
                cmd.append("--no-jit")
            if only:
                cmd += ["--only", only]
            with tempfile.TemporaryFile("w+") as err:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
                route, parts, last_done, stalled = None, {}, None, False
                last = time.monotonic()
                while True:
                    ready, _, _ = select.select([proc.stdout], [], [], 5)
                    if ready:
                        line = proc.stdout.readline()
                        if not line:
                            break
                        last = time.monotonic()
                        if line.startswith("ROUTE "):
                            _, idx, name = line.split()
                            route = (int(idx), name)
                        elif line.startswith("PART "):
                            parts.update(json.loads(line[5:]))
                        elif line.startswith("ROW "):
                            row = json.loads(line[4:])
                            route, parts, last_done = None, {}, row["index"]
                            add(row)
                    elif time.monotonic() - last > HANG_S:
                        stalled = True
                        break
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                if not stalled and proc.returncode == 0 and route is None:
                    break  # the module is done
                if route is not None:  # the row in progress hung, or the worker died on it
                    add(_hung_row(module, route[0], route[1], with_jit, parts, died=not stalled))
                    start, failed_starts = route[0] + 1, 0
                    continue
                # stalled or died between rows (slow start under load): go on after the last row
                nxt = start if last_done is None else last_done + 1
                failed_starts = failed_starts + 1 if nxt == start else 0
                if failed_starts >= 3:
                    err.seek(0)
                    tail = err.read()[-500:]
                    raise RuntimeError(f"the hunt's worker for {module} does not start at row {start}: {tail}")
                start = nxt
    return rows


def table(rows, key, classes, title) -> str:
    counts = Counter(r[key] for r in rows)
    lines = [f"| {title} | rows |", "|---|---:|"]
    lines += [f"| {c} | {counts.get(c, 0)} |" for c in classes]
    lines.append(f"| total | {len(rows)} |")
    return "\n".join(lines)


def label(row) -> str:
    return f"{row['module']}.{row['fn']}{row['args']}"


def _detail(row, route: str) -> str:
    eager, other = row["eager"], row[route]
    what = row[f"{route}_what"]
    text = f"- {label(row)} [{what}]\n    eager:   {eager['show']}\n    laxify:  {other['show']}"
    if eager["stdout"] != other["stdout"]:
        text += f"\n    stdout eager {eager['stdout']!r} vs laxify {other['stdout']!r}"
    if other["warning"]:
        text += f"\n    warning: {other['warning'][:200]}"
    return text


def _echo(row) -> None:
    good = row["static_class"] in ("same", "fallback-same") and row["jit_class"] in ("equal", "")
    flag = "" if good else "  <--"
    print(f"{row['static_class']:>14} {row['jit_class']:>8}  {label(row)}{flag}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=None, help="only functions whose name holds this")
    parser.add_argument("--module", default=None, help="only this module of tests/hunt/numbers")
    parser.add_argument("--no-jit", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.worker:
        worker(ns.worker, ns.start, not ns.no_jit, ns.only)
        return 0
    modules = (ns.module,) if ns.module else MODULES
    started = time.perf_counter()
    rows = collect(modules, with_jit=not ns.no_jit, only=ns.only, echo=None if ns.quiet else _echo)
    functions = {(r["module"], r["fn"]) for r in rows}
    print(f"\n{len(functions)} functions, {len(rows)} inputs, {time.perf_counter() - started:.0f} s\n")
    print(table(rows, "static_class", STATIC_CLASSES, "to_static"))
    if not ns.no_jit:
        print()
        print(table(rows, "jit_class", JIT_CLASSES, "checked(jit(convert))"))
    bad = [r for r in rows if r["static_class"] not in ("same", "fallback-same")]
    if bad:
        print("\n## to_static rows that differ, crash or hang\n")
        for r in bad:
            print(f"{r['static_class']}: " + _detail(r, "static"))
    if not ns.no_jit:
        bad = [r for r in rows if r["jit_class"] not in ("equal", "")]
        if bad:
            print("\n## checked(jit(convert)) rows that differ, crash or hang\n")
            for r in bad:
                print(f"{r['jit_class']}: " + _detail(r, "jit"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
