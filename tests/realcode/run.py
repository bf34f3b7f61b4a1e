"""``make realcode``: run the real-code corpus (tests/realcode/corpus.py) eagerly and through
``laxify.to_static``, and count each case's class.

Classes, for the cases that eager JAX runs to a value (the oracle):
- ``converted, agrees``: no FallbackWarning, the value of eager Python;
- ``fell back, agrees``: a FallbackWarning at the user's line, the value of eager Python;
- ``located error``: a ``laxify.ConversionError`` (file:line, the construct, a fix);
- ``raises where eager runs``: the function's own exception (or Python's) on a valid input;
- ``unclear error``: any other exception (JAX's, laxify's internals);
- ``as jax.jit``: a value other than eager's that plain ``jax.jit(f)`` gives too (a function
  with no construct for laxify to convert: XLA's own float arithmetic, such as flushing a
  float32 below 1e-38 to zero inside a fused product, where eager JAX runs op by op);
- ``float32 rounding``: a value other than eager's (float32, op by op) that is as close to
  Python's own value (the function run on the case's Python numbers: float64) as eager's,
  or closer: rounding in another order (XLA fuses `a * b + c`), no more wrong than eager;
- ``WRONG``: a value other than eager's, or arguments changed in place otherwise than by
  eager Python, with no error and none of the explanations above: must be zero.
Cases eager JAX rejects are counted apart (``eager raises``).

The table is followed by the reasons of the fallbacks (the first line of each case's
FallbackWarning, names left out, most frequent first) and by the classes of the same cases
through ``jax.jit(laxify.convert(f))``, where nothing can run eagerly: a case that falls back
under ``to_static`` must be a located ``ConversionError`` there, never JAX's raw error. (An
argument jax.jit cannot trace, such as a string, is closed over there, as a static argument;
a function whose result holds a Python string is counted apart: jax.jit refuses to return it.)

Each collection of the corpus (``algorithms``, ``fluids``: tests/realcode/corpus.py) gets its
own tables.

Usage: ``python tests/realcode/run.py [--collection NAME] [--limit N] [--only SUBSTRING] [--show CLASS]
[--no-jit]``.
"""

from __future__ import annotations

import argparse
import copy
import re
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import laxify  # noqa: E402
from corpus import COLLECTIONS, Case, cases, collection_of, jax_arguments  # noqa: E402

JIT_CLASSES = ("converted, agrees", "located error", "returns a Python value", "raw JAX error", "other error",
               "as jax.jit", "float32 rounding", "WRONG")
RAW_JAX = ("TracerBoolConversionError", "TracerIntegerConversionError", "ConcretizationTypeError",
           "TracerArrayConversionError", "UnexpectedTracerError")
CLASSES = ("converted, agrees", "fell back, agrees", "located error", "raises where eager runs",
           "unclear error", "as jax.jit", "float32 rounding", "WRONG")
TIMEOUT_S = 60


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _normal(value):
    """A comparable form: numbers and arrays as float64 arrays, containers item by item."""
    if value is None or isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _normal(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
            if arr.dtype.kind in "biuf":
                return ("num", arr.astype(np.float64))
        except (ValueError, TypeError):
            pass
        return (type(value).__name__, tuple(_normal(v) for v in value))
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - an object: compared by its repr
        return ("obj", repr(value))
    if arr.dtype.kind in "biuf":
        return ("num", arr.astype(np.float64))
    return ("obj", repr(value))


def agree(expected, actual) -> bool:
    a, b = _normal(expected), _normal(actual)
    return _same(a, b)


def _same(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == 2 and a[0] == "num" == b[0]:
        return a[1].shape == b[1].shape and bool(np.allclose(a[1], b[1], rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return False
        if len(a) == 2 and a[0] in ("list", "tuple") and b[0] in ("list", "tuple"):
            return len(a[1]) == len(b[1]) and all(_same(x, y) for x, y in zip(a[1], b[1]))
        return all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _close_to(reference, got, expected) -> bool:
    """Whether ``got`` is as close to ``reference`` (Python's float64 value) as ``expected`` is,
    number by number (or within float32's rounding of it)."""
    r, g, e = _normal(reference), _normal(got), _normal(expected)
    if not all(isinstance(v, tuple) and len(v) == 2 and v[0] == "num" for v in (r, g, e)):
        if isinstance(r, tuple) and isinstance(g, tuple) and isinstance(e, tuple) and len(r) == len(g) == len(e):
            pairs = list(zip(r[1], g[1], e[1])) if len(r) == 2 and isinstance(r[1], tuple) else []
            return bool(pairs) and all(_close_to_normal(*p) for p in pairs)
        return False
    return _close_to_normal(r, g, e)


def _close_to_normal(r, g, e) -> bool:
    if not all(isinstance(v, tuple) and len(v) == 2 and v[0] == "num" for v in (r, g, e)):
        return _same(g, e)
    r, g, e = r[1], g[1], e[1]
    if not (r.shape == g.shape == e.shape) or np.isnan(g).any() != np.isnan(e).any():
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(g - r) <= 2 * np.abs(e - r) + 1e-6 * np.abs(r) + 1e-12))


def _explained(case: Case, expected, actual) -> str | None:
    """Why ``actual`` differs from eager's ``expected`` without being laxify's error, if it is
    one of the two explanations of the module's docstring."""
    try:
        plain = _jit_call(case.fn, jax_arguments(case.args), convert=False)
    except Exception:  # noqa: BLE001 - jax.jit cannot run it as written: not jax.jit's value
        plain = None
    if plain is not None and agree(plain, actual):
        return "as jax.jit"
    try:
        reference = case.fn(*copy.deepcopy(case.args))  # Python's own numbers
    except Exception:  # noqa: BLE001
        return None
    return "float32 rounding" if _close_to(reference, actual, expected) else None


def _from_user_code(error: BaseException, case: Case) -> bool:
    """Whether ``error`` was raised by the function's own module (its `raise`, or Python on
    its line) rather than by JAX or laxify."""
    filename = case.fn.__code__.co_filename
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1].filename == filename


def run_case(case: Case) -> tuple[str, str]:
    """(class, detail) of one case; class ``eager raises`` when eager JAX rejects it."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eager_args = jax_arguments(case.args)
            try:
                expected = case.fn(*eager_args)
            except _Timeout:
                raise
            except Exception as e:  # noqa: BLE001 - the oracle rejects this input
                return "eager raises", f"{type(e).__name__}: {e}"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            static_args = jax_arguments(case.args)
            try:
                actual = laxify.to_static(case.fn)(*static_args)
            except _Timeout:
                raise
            except laxify.ConversionError as e:
                return "located error", str(e).splitlines()[0]
            except Exception as e:  # noqa: BLE001
                kind = "raises where eager runs" if _from_user_code(e, case) else "unclear error"
                return kind, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        fell_back = [str(w.message) for w in caught if issubclass(w.category, laxify.FallbackWarning)]
        if fell_back:
            FALLBACK_REASONS[case.name] = fell_back[0]
        if not agree(expected, actual):
            return _explained(case, expected, actual) or "WRONG", f"eager {expected!r} vs {actual!r}"
        if not agree(eager_args, static_args):  # a list argument changed in place, or not
            return "WRONG", f"arguments after the call: eager {eager_args!r} vs {static_args!r}"
        return ("fell back, agrees" if fell_back else "converted, agrees"), ""
    except _Timeout:
        return "unclear error", f"timed out after {TIMEOUT_S} s"
    finally:
        signal.alarm(0)


FALLBACK_REASONS: dict[str, str] = {}  # case name -> the text of its first FallbackWarning


def _reason(text: str) -> str:
    """A fallback's reason without the names in it (so that alike reasons count together)."""
    first = text.splitlines()[0]
    first = re.sub(r"`[^`]*`", "`_`", first)
    first = re.sub(r"\b(so|because) [A-Za-z_][\w.]* (cannot|returns)", r"\1 _ \2", first)
    first = re.sub(r"Tracing [\w.]+ stopped", "Tracing _ stopped", first)
    first = re.sub(r"cannot convert [\w.]+:", "cannot convert _:", first)
    first = re.sub(r"\b\d+ levels deep", "N levels deep", first)
    return first[:150]


def reasons(results) -> str:
    counts = Counter(_reason(FALLBACK_REASONS[case.name]) for case, kind, _ in results
                     if kind == "fell back, agrees" and case.name in FALLBACK_REASONS)
    lines = ["| fallbacks by reason | cases |", "|---|---:|"]
    lines += [f"| {text} | {n} |" for text, n in counts.most_common()]
    return "\n".join(lines)


_JIT_LEAVES = (jax.Array, np.ndarray, np.generic, bool, int, float, complex)


def _jit_returnable(value) -> bool:
    return all(isinstance(leaf, _JIT_LEAVES) for leaf in jax.tree_util.tree_leaves(value))


def _jit_call(fn, args: tuple, convert: bool = True):
    """``jax.jit(laxify.convert(fn))(*args)`` (``convert=False``: ``jax.jit(fn)``) as a JAX user
    calls it: an argument jax.jit cannot
    trace (a string, bytes, a set, a list holding strings) is a Python value the function
    closes over, as ``static_argnums`` would keep it (jax.jit itself refuses it otherwise,
    before laxify sees the call); arrays and numbers are traced."""
    def traceable(arg) -> bool:
        leaves = jax.tree_util.tree_leaves(arg)
        return all(isinstance(leaf, _JIT_LEAVES) for leaf in leaves)

    traced = [i for i, a in enumerate(args) if traceable(a)]
    converted = laxify.convert(fn) if convert else fn

    def program(*values):
        full = list(args)
        for i, v in zip(traced, values):
            full[i] = v
        return converted(*full)

    return jax.jit(program)(*(args[i] for i in traced))


def jit_case(case: Case) -> tuple[str, str]:
    """The class of ``jax.jit(laxify.convert(fn))(*args)`` (nothing can run eagerly there)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = case.fn(*jax_arguments(case.args))
            try:
                actual = _jit_call(case.fn, jax_arguments(case.args))
            except _Timeout:
                raise
            except laxify.ConversionError as e:
                return "located error", str(e).splitlines()[0]
            except Exception as e:  # noqa: BLE001
                kind = "raw JAX error" if type(e).__name__ in RAW_JAX else "other error"
                if kind == "other error" and not _jit_returnable(expected):
                    # JAX's refusal of jit's output (a Python str the function computes from
                    # its static arguments): one XLA program returns arrays only, and
                    # laxify.convert(f) cannot know that jit's edge is its caller.
                    kind = "returns a Python value"
                return kind, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if agree(expected, actual):
            return "converted, agrees", ""
        return _explained(case, expected, actual) or "WRONG", f"eager {expected!r} vs {actual!r}"
    except _Timeout:
        return "other error", f"timed out after {TIMEOUT_S} s"
    finally:
        signal.alarm(0)


def jit_summary(jit_results) -> str:
    counts = Counter(kind for _, kind, _ in jit_results)
    lines = ["| through jax.jit(laxify.convert(f)) | cases |", "|---|---:|"]
    lines += [f"| {c} | {counts[c]} |" for c in JIT_CLASSES]
    return "\n".join(lines)


def summary(results: list[tuple[Case, str, str]]) -> str:
    counts = Counter(kind for _, kind, _ in results)
    runs = sum(counts[c] for c in CLASSES)
    lines = [f"{len(results)} cases; eager JAX runs {runs} to a value, rejects {counts['eager raises']}.", "",
             "| class | cases | share of the cases eager runs |", "|---|---:|---:|"]
    for c in CLASSES:
        share = f"{100 * counts[c] / runs:.0f}%" if runs else "-"
        lines.append(f"| {c} | {counts[c]} | {share} |")
    by_source = Counter()
    good = Counter()
    for case, kind, _ in results:
        if kind in CLASSES:
            key = case.source.split(":")[0].rsplit(".", 1)[0] if case.source[:1] in "af" else case.source
            by_source[key] += 1
            good[key] += kind in CLASSES[:2]
    lines += ["", "| source | cases eager runs | converted or fell back, agreeing |", "|---|---:|---:|"]
    for key in sorted(by_source):
        lines.append(f"| {key} | {by_source[key]} | {good[key]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", choices=COLLECTIONS, default=None, help="one collection (default: both)")
    parser.add_argument("--limit", type=int, default=None, help="run the first N cases only")
    parser.add_argument("--only", default=None, help="cases whose name contains this text")
    parser.add_argument("--show", default=None, help="print the cases of this class (e.g. WRONG)")
    parser.add_argument("--no-jit", action="store_true", help="leave out the jax.jit(laxify.convert(f)) route")
    options = parser.parse_args(argv)
    selected = [c for c in cases(options.collection) if options.only is None or options.only in c.name]
    if options.limit is not None:
        selected = selected[:options.limit]
    start = time.perf_counter()
    wrong = False
    for collection in COLLECTIONS:
        chosen = [c for c in selected if collection_of(c) == collection]
        if chosen:
            wrong |= _run_collection(collection, chosen, options)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 1 if wrong else 0


def _run_collection(collection: str, selected: list[Case], options) -> bool:
    """Run and report one collection; whether any case was WRONG."""
    print(f"## {collection}\n")
    results = []
    for case in selected:
        kind, detail = run_case(case)
        results.append((case, kind, detail))
        if options.show and options.show.lower() in kind.lower():
            print(f"{kind}: {case.name} [{case.source}] {detail}")
    print(summary(results))
    print()
    print(reasons(results))
    jit_results = []
    if not options.no_jit:
        for case, kind, _ in results:
            if kind in CLASSES:
                jit_kind, detail = jit_case(case)
                jit_results.append((case, jit_kind, detail))
                if options.show and options.show.lower() in f"jit {jit_kind}".lower():
                    print(f"jit {jit_kind}: {case.name} [{case.source}] {detail}")
        print()
        print(jit_summary(jit_results))
    print()
    return any(kind == "WRONG" for _, kind, _ in results + jit_results)


if __name__ == "__main__":
    sys.exit(main())
