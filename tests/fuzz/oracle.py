"""Run a generated program eagerly (the oracle), through ``to_static`` and through
``jax.jit(convert)``, and describe any difference as a labelled :class:`FuzzFailure`.

A difference is: a result of another pytree structure, shape, dtype or value (float
tolerance), another exception type, other printed output (order included), any
``FallbackWarning``, and any ``ConversionError`` (generated programs avoid the documented
classes that are genuinely not one static program). Python scalars in results compare as
the array JAX makes of them (``int`` as int32, ``float`` as float32), as inside ``jit``.

Every user-facing text laxify produces on the way (error messages, warnings, ``explain()``)
is appended to :data:`MESSAGES`.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import linecache
import math
import re
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

import laxify
from generator import FALLBACK_FEATURES, FALLBACK_RULES, Program

MESSAGES: list[str] = []  # every user-facing text laxify produced during the fuzz run

_filenames = itertools.count()


@dataclass
class Run:
    """What one way of running the program gave on one input."""

    result: Any = None
    error: BaseException | None = None
    stdout: str = ""
    warnings: list[str] = field(default_factory=list)
    warned_at: list[tuple[str, int]] = field(default_factory=list)  # (file, line) of each warning
    allowed: set[str] = field(default_factory=set)  # the features whose FallbackWarnings it gave


class FuzzFailure(AssertionError):
    """A difference between eager and converted runs; ``label`` is its class."""

    label = "failure"

    def __init__(self, detail: str, program: Program):
        super().__init__(f"[{self.label}] {detail}\n\n--- program ---\n{program.describe()}")
        self.detail = detail
        self.program = program


_FAILURE_TYPES: dict[str, type[FuzzFailure]] = {}


def failure_type(label: str) -> type[FuzzFailure]:
    """One ``FuzzFailure`` subclass per label, so Hypothesis shrinks each class apart."""
    if label not in _FAILURE_TYPES:
        slug = re.sub(r"\W+", "_", label)[:60]
        _FAILURE_TYPES[label] = type(f"FuzzFailure_{slug}", (FuzzFailure,), {"label": label})
    return _FAILURE_TYPES[label]


def load(program: Program) -> Callable:
    """``f`` of ``program``, exec'd under a fresh file name registered in linecache."""
    return load_source(program.source)


def load_source(src: str) -> Callable:
    """``f`` of the module text ``src``, exec'd under a fresh file name registered in linecache."""
    filename = f"<laxify-fuzz-{next(_filenames)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    # Bound here rather than by `import` lines in the source: CPython 3.11 compiles
    # `jnp.f(...)` differently when `jnp` is a module-level import, which laxify's stale-source
    # check takes for an edited file (finding F1 in /tmp/fuzz_findings.md).
    namespace: dict = {"__name__": f"laxify_fuzz_{filename[13:-1]}", "jax": jax, "jnp": jnp, "math": math}
    exec(compile(src, filename, "exec", dont_inherit=True), namespace)
    return namespace["f"]


def outcome(fn: Callable, args: tuple) -> tuple[str, object]:
    """``("value", its numbers as Python floats)`` or ``("error", the exception's class name)``
    (an ``UnboundLocalError`` of any subclass is ``"UnboundLocalError"``)."""
    try:
        return "value", np.asarray(fn(*args), dtype=np.float64).tolist()
    except UnboundLocalError:
        return "error", "UnboundLocalError"
    except Exception as e:  # noqa: BLE001 - the exception class is the outcome compared
        return "error", type(e).__name__


def eager_and_static(fn: Callable, static: Callable, args: tuple) -> tuple[tuple, tuple, bool]:
    """The outcomes of eager ``fn`` and of ``static`` (its ``to_static``) on ``args``, and
    whether ``static`` warned."""
    want = outcome(fn, args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = outcome(static, args)
    return want, got, bool(caught)


def arrays(inputs: tuple) -> tuple:
    """The input tuple as arrays: x float32[n], y int32[n], a float32, k int32."""
    x, y, a, k = inputs
    return (jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.int32), jnp.float32(a), jnp.int32(k))


def _laxify_warning(w: warnings.WarningMessage) -> bool:
    return issubclass(w.category, laxify.FallbackWarning) or type(w.category).__module__.startswith("laxify")


def execute(fn: Callable, args: tuple, *, barrier: bool) -> Run:
    """Call ``fn(*args)``, capturing its result or exception, stdout and laxify warnings."""
    run = Run()
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            run.result = fn(*args)
            if barrier:
                jax.block_until_ready(run.result)
        except Exception as exc:  # noqa: BLE001 - any exception is an observation
            run.error = exc
        if barrier:
            jax.effects_barrier()
    run.stdout = out.getvalue()
    run.warnings = [str(w.message) for w in caught if _laxify_warning(w)]
    run.warned_at = [(w.filename, w.lineno) for w in caught if _laxify_warning(w)]
    MESSAGES.extend(run.warnings)
    if isinstance(run.error, laxify.ConversionError):
        MESSAGES.append(str(run.error))
    return run


# -- comparison -------------------------------------------------------------------------

def _leaf(value: Any) -> np.ndarray:
    return np.asarray(jnp.asarray(value))


INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _beyond_int32(value: Any) -> bool:
    """A Python int (not a bool) that int32 cannot hold."""
    return type(value) is int and not INT32_MIN <= value <= INT32_MAX


def passes_int32(result: Any) -> bool:
    """Whether an eager result holds a Python int beyond int32 (an int-overflow witness)."""
    return any(_beyond_int32(leaf) for leaf in jax.tree_util.tree_leaves(result))


def result_difference(expected: Any, actual: Any) -> tuple[str, str] | None:
    """(kind, detail) of the first difference between two results, or None. Integers compare
    exactly; a Python int beyond int32 only equals the same Python int."""
    exp_leaves, exp_def = jax.tree_util.tree_flatten(expected)
    act_leaves, act_def = jax.tree_util.tree_flatten(actual)
    if exp_def != act_def:
        return "structure", f"pytree {exp_def} vs {act_def}"
    for n, (e, a) in enumerate(zip(exp_leaves, act_leaves)):
        if _beyond_int32(e) or _beyond_int32(a):
            if type(e) is not type(a) or e != a:
                return "value", f"leaf {n}: {e!r} vs {a!r} (integers beyond int32)"
            continue
        e_arr, a_arr = _leaf(e), _leaf(a)
        if e_arr.shape != a_arr.shape:
            return "shape", f"leaf {n}: shape {e_arr.shape} vs {a_arr.shape}"
        if e_arr.dtype != a_arr.dtype:
            return "dtype", f"leaf {n}: dtype {e_arr.dtype} vs {a_arr.dtype} ({e!r} vs {a!r})"
        if e_arr.dtype.kind in "biu":
            if not np.array_equal(e_arr, a_arr):
                return "value", f"leaf {n}: {e_arr.tolist()} vs {a_arr.tolist()}"
        elif not np.allclose(e_arr, a_arr, rtol=1e-5, atol=1e-6, equal_nan=True):
            return "value", f"leaf {n}: {e_arr.tolist()} vs {a_arr.tolist()}"
    return None


def _tokens(text: str) -> list[Any]:
    out: list[Any] = []
    for tok in text.replace("[", " ").replace("]", " ").split():
        try:
            out.append(float(tok))
        except ValueError:
            out.append(tok)
    return out


def stdout_difference(expected: str, actual: str) -> str | None:
    """Printed output compared token by token, numbers up to float tolerance."""
    e, a = _tokens(expected), _tokens(actual)
    same = len(e) == len(a) and all(
        (isinstance(p, float) and isinstance(q, float) and np.isclose(p, q, rtol=1e-5, atol=1e-6))
        or p == q for p, q in zip(e, a))
    return None if same else f"stdout {expected!r} vs {actual!r}"


def _short(message: str) -> str:
    """The first line of a message with names, numbers and locations made generic."""
    line = next((ln for ln in message.splitlines() if ln.strip()), "")
    line = re.sub(r"<laxify-fuzz-\d+>(:\d+)?", "<file>", line)
    line = re.sub(r"`[^`]*`", "`_`", line)
    line = re.sub(r"'[^']*'", "'_'", line)
    line = re.sub(r"\d+", "N", line)
    return line[:90]


def label_for(kind: str, detail: str, program: Program) -> str:
    """The failure class: the kind of difference, with the message made generic for errors.
    (The four bug classes the first campaigns found, K1-K4, are fixed; their constructs are
    still tagged in ``program.features`` and can be left out with ``LAXIFY_FUZZ_AVOID``.)"""
    if kind in ("value", "dtype", "shape", "structure", "stdout"):
        return f"{kind} mismatch"
    if kind in _OWN_LABELS:
        return kind
    return f"{kind}: {_short(detail)}"


def _describe(way: str, n: int, args: tuple, expected: Run, actual: Run) -> tuple[str, str] | None:
    """(kind, detail) when ``actual`` differs from the eager run ``expected``."""
    where = f"{way} on input #{n}"
    if actual.warnings:
        return "fallback", f"{where}: FallbackWarning: {actual.warnings[0]}"
    if expected.error is not None or actual.error is not None:
        # The same class and message (a generated `raise` formats values of the run).
        if type(expected.error) is type(actual.error) and str(expected.error) == str(actual.error):
            return None
        kind = type(actual.error).__name__ if actual.error is not None else "missing exception"
        if type(expected.error) is type(actual.error):
            kind = "message"
        return kind, (f"{where}: eager {type(expected.error).__name__}: {expected.error}; "
                      f"{way} {type(actual.error).__name__}: {actual.error}")
    diff = result_difference(expected.result, actual.result)
    if diff is not None:
        return diff[0], f"{where}: {diff[1]} (eager {expected.result!r} vs {way} {actual.result!r})"
    out = stdout_difference(expected.stdout, actual.stdout)
    if out is not None:
        return "stdout", f"{where}: {out}"
    return None


# What the int-overflow check says (runtime/int_overflow.py), in the to_static warning and in
# the OverflowError of laxify.checked(jax.jit(convert)).
INT32_OVERFLOW_TEXT = "passed int32's range"


def check_program(program: Program) -> FuzzFailure | None:
    """Run ``program`` three ways on each of its inputs; the first difference, or None."""
    fn = load(program)
    static_fn = laxify.to_static(fn)
    # convert errors count per call; a program that raises, or whose Python ints may pass
    # int32, reports its errors through laxify.checked (plain jax.jit would return a value
    # where Python raises, and a wrapped int32: documented)
    checked = bool(program.features & {"raise", "int_overflow"})
    jitted = _lazy(lambda: laxify.checked(jax.jit(laxify.convert(fn))) if checked
                   else jax.jit(laxify.convert(fn)))
    split = bool(program.features & FALLBACK_FEATURES)  # holds a construct that must fall back
    for n, inputs in enumerate(program.inputs):
        args = arrays(inputs)
        expected = execute(fn, args, barrier=False)
        if expected.error is not None and not generated_raise(expected.error):
            detail = f"eager run raised {type(expected.error).__name__}: {expected.error}"
            return failure_type("invalid program (generator bug)")(detail, program)
        # int_overflow: whether eager's ints passed int32 on this input (f returns the largest;
        # unknown when eager raised before returning)
        overflow = passes_int32(expected.result) if expected.error is None else None
        static_overflowed = False
        for way, callee in (("to_static", static_fn), ("jit(convert)", jitted)):
            if split and way == "jit(convert)":
                continue  # refused with the located error: tests/e2e/test_split.py
            actual = execute(callee, args, barrier=True)
            if split:
                actual.warnings = [w for w in actual.warnings if "cannot be one XLA program" not in w]
            found = None
            if way == "to_static":
                found = _expected_fallbacks(program, actual, overflow)
                static_overflowed = "int_overflow" in actual.allowed
            # (first: a program that also holds int arithmetic is refused at trace time, before
            # any overflow can be seen)
            elif "traced_effect" in program.features and _expected_conversion_error(program, fn, actual):
                continue
            elif "int_overflow" in program.features and (overflow or (overflow is None and (
                    # eager raised before returning its ints: where they passed int32 first, the
                    # checked program reports that (it cannot compute on past it) rather than the
                    # later raise; to_static runs eagerly there and gives Python's exception
                    static_overflowed or _int32_overflow(actual.error)))):
                if _int32_overflow(actual.error):
                    found = _unlocated(fn, actual.error)
                    if found is None:
                        continue
                elif actual.error is None and overflow:
                    found = ("silent int32 overflow",
                             f"a value where eager's Python ints pass int32: {actual.result!r}")
            found = found or _describe(way, n, args, expected, actual)
            if found is not None:
                kind, detail = found
                if kind in _OWN_LABELS:
                    detail = f"{way} on input #{n}: {detail}"
                return failure_type(label_for(kind, detail, program))(detail, program)
    _collect_explain(static_fn, arrays(program.inputs[0]))
    return None


_OWN_LABELS = ("silent int32 overflow", "spurious int32 fallback", "located")


def _expected_fallbacks(program: Program, actual: Run, overflow: bool | None) -> tuple[str, str] | None:
    """Drop from ``actual.warnings`` the FallbackWarnings the program's features call for
    (noted in ``actual.allowed``); (kind, detail) when one is there that must not be."""
    kept, allowed = [], set()
    source = program.source.splitlines()
    for text, (filename, line) in zip(actual.warnings, actual.warned_at):
        if "int_overflow" in program.features and INT32_OVERFLOW_TEXT in text:
            if overflow is False:
                return ("spurious int32 fallback",
                        f"an int32 overflow FallbackWarning where eager's ints stay in int32: {text}")
            allowed.add("int_overflow")
            continue
        if "traced_effect" in program.features and FALLBACK_RULES["traced_effect"] in text:
            if not _names_a_log_at(source, text, filename, line):
                return "located", f"a FallbackWarning not at the changed list's line ({filename}:{line}): {text}"
            allowed.add("traced_effect")
            continue
        kept.append(text)
    actual.warnings = kept
    actual.allowed = allowed
    return None


def _names_a_log_at(source: list[str], text: str, filename: str, line: int) -> bool:
    """Whether ``text`` names a generated list (`logN`) that the program's line ``line`` of
    ``filename`` (a fuzz program's file) changes."""
    names = re.findall(r"`(log\d+)`", text)
    if not filename.startswith("<laxify-fuzz-") or not 1 <= line <= len(source) or not names:
        return False
    return any(f"{name}.append(" in source[line - 1] or f"{name}.pop(" in source[line - 1]
               for name in names)


def _expected_conversion_error(program: Program, fn: Callable, actual: Run) -> bool:
    """Whether jit(convert) refused the program with the located ConversionError that an effect
    under a traced condition calls for (it names the list and shows the line that changes it)."""
    error = actual.error
    if not isinstance(error, laxify.ConversionError) or FALLBACK_RULES["traced_effect"] not in str(error):
        return False
    filename = fn.__code__.co_filename
    located = re.search(rf'File "{re.escape(filename)}", line (\d+)', str(error))
    return bool(located) and _names_a_log_at(program.source.splitlines(), str(error), filename,
                                             int(located.group(1)))


def _int32_overflow(error: BaseException | None) -> bool:
    return isinstance(error, OverflowError) and INT32_OVERFLOW_TEXT in str(error)


def _unlocated(fn: Callable, error: BaseException) -> tuple[str, str] | None:
    """(kind, detail) when ``error`` is not raised at a line of the program's file."""
    frames = traceback.extract_tb(error.__traceback__)
    if frames and frames[-1].filename == fn.__code__.co_filename:
        return None
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "nowhere"
    return "located", f"the int32 OverflowError is raised at {where}, not at the program's line"


def generated_raise(error: BaseException) -> bool:
    """Whether ``error`` comes from a ``raise`` the generator wrote (its message starts with
    ``fuzz``; ``KeyError`` quotes it)."""
    return str(error).lstrip("'\"").startswith("fuzz ")


def _lazy(make: Callable[[], Callable]) -> Callable:
    """A function that builds its callee on first call (so that errors building it are
    observed like errors calling it), and reuses it afterwards."""
    built: list[Callable] = []

    def call(*args):
        if not built:
            built.append(make())
        return built[0](*args)

    return call


def _collect_explain(static_fn: Any, args: tuple) -> None:
    try:
        MESSAGES.append(str(static_fn.explain(*args)))
    except Exception as exc:  # noqa: BLE001 - explain() failing is itself worth reporting
        MESSAGES.append(f"explain() raised {type(exc).__name__}: {exc}")
