"""Split fallback: a function that cannot be one XLA program runs as Python only where it must.

When ``to_static`` falls back for value-dependent Python (``str(n)``, a list grown to a traced
length, ...), it runs the *converted* function on concrete values. There every converted loop
reaches its dispatcher (``_lx.while_loop``, ``_lx.for_range``, ``_lx.for_each``) with its carried
values and its condition/body functions. Under a :class:`Plan` (see :func:`splitting`), each
such loop is first tried as **one compiled program of its own**: ``jax.jit`` of the dispatcher
over the loop's carries and the array values its functions read from their closures (passed as
arguments, so that the program is reused by every call with the same signature, not traced
again). Only when that trace needs Python (a value-dependent error, ``NeedsPython``, an effect
on a Python object, a run-time check) does the loop run as a Python loop, and each of its
iterations tries the loops inside it in turn (nesting). An ``if`` whose dispatcher (``cond``,
``elif_chain``) meets a concrete condition runs its taken branch the same way
(:func:`run_branch`): one compiled program of its own unless it needs Python or does fewer
than ``LIGHT_OPS`` operations. Straight-line code between the constructs runs eagerly, as the
eager fallback did.

Each decision — compiled, or Python and why — is made once per loop and signature (its code
location, the static values it sees, the shapes and dtypes of its arrays) and kept in the
plan, which the ``StaticFunction`` holds for the input signature that fell back: later calls
run the same compiled loops without tracing or deciding again.

What may be compiled: arrays (``jax.Array``) are the program's arguments; Python atoms (ints,
floats, strings, bools, ``None``), laxify's markers, modules, classes, library functions and
functions without closure are static (part of the signature, by value); closures are rebuilt
around their cells' values; tuples, lists and dicts are walked. Anything else (a NumPy array,
an object of the user's, a tracer of an outer transformation) keeps the loop in Python.
"""

from __future__ import annotations

import functools
import threading
import types
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from laxify.ir.naming import DEFAULT_PREFIX
from laxify.ir.user_code import _library_package
from laxify.runtime import checks, effects, numbers, report, trace
from laxify.runtime.dispatch.values import ATOMS, ById, Undefined, any_traced
from laxify.runtime.lowering import Site, SiteTable

__all__ = [
    "Plan",
    "SiteRecord",
    "branch",
    "joined_python_floats",
    "run_branch",
    "run_segment",
    "runs_as_python",
    "segment",
    "splittable",
    "splitting",
]

# Distinct signatures one loop is compiled for before it stays Python (a loop inside a Python
# loop that reads the outer loop's Python index would otherwise compile once per index).
MAX_SIGNATURES = 8

_ATOM_TYPES = frozenset(ATOMS)
_ARRAY = type(jnp.zeros(()))  # the class of a concrete JAX array (the common leaf)


class _Refuse(Exception):
    """A value the compiled loop cannot take (it stays Python)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class _TraceFailed(Exception):
    """Raised out of the trace of a loop that needs Python; ``why`` says what it met, ``where``
    the places of the user's code it passed through, innermost last ((filename, line) pairs)."""

    def __init__(self, why: str, where: tuple = ()):
        super().__init__(why)
        self.why, self.where = why, where


def _places(error: BaseException) -> tuple:
    """(filename, line) of each frame of ``error``'s traceback, and of a located error's line."""
    places = []
    entry = error.__traceback__
    while entry is not None:
        places.append((entry.tb_frame.f_code.co_filename, entry.tb_lineno))
        entry = entry.tb_next
    location = getattr(error, "location", None)
    if location is not None and getattr(location, "line", None):
        places.append((location.filename, location.line))
    return tuple(places)


_PYTHON = "python"
_EAGER = "eager"  # an `if` branch of fewer than LIGHT_OPS operations


@dataclass
class SiteRecord:
    """What the plan decided for one construct (by its ``Site``) and what it ran."""

    site: Site
    compiled_runs: int = 0
    python_runs: int = 0
    eager_runs: int = 0  # an `if` branch of fewer than LIGHT_OPS operations
    python_iterations: int = 0  # of a loop run as Python, all its runs together
    signatures: set = field(default_factory=set)
    why: str | None = None  # why it runs as Python (the first reason met)
    kind: str = "loop"  # or "if" (its taken branch, see ``run_branch``), "segment" (``run_segment``)

    @property
    def is_loop(self) -> bool:
        return self.kind == "loop"

    @property
    def is_segment(self) -> bool:
        return self.kind == "segment"

    @property
    def is_guard(self) -> bool:
        """An `if` laxify made: the code after a statement that may return or raise, run
        when it did not (``Site.return_guard``)."""
        return self.kind == "if" and self.site.return_guard

    def describe(self) -> str:
        little = "its branch does too little to gain from a program"
        if self.is_segment:
            end = self.site.end_line
            lines = f"line {self.site.line}" if end == self.site.line else f"lines {self.site.line}-{end}"
            where, one = f"the code at {lines}", "one program"
            little = "it does too little to gain from a program"
        elif self.is_loop:
            where, one = f"the `{self.site.construct}` loop at line {self.site.line}", "one program"
        elif self.is_guard:
            where, one = (f"the code after the `{self.site.construct}` at line {self.site.line}", "one program")
        else:
            where, one = f"the `if` at line {self.site.line}", "its taken branch as one program"
        if self.python_runs and not self.compiled_runs:
            if self.is_loop:
                where = f"{where} runs as Python ({self.python_iterations} iteration(s) in the first run)"
                return f"{where[:-1]}: {self.why})" if self.why else where
            return f"{where} runs as Python ({self.why})" if self.why else f"{where} runs as Python"
        if self.python_runs:
            return f"{where} ran compiled {self.compiled_runs} and as Python {self.python_runs} time(s) ({self.why})"
        if self.eager_runs and not self.compiled_runs:
            return f"{where} runs eagerly ({little})"
        return f"{where} runs compiled ({one})"


# An `if` branch whose program has fewer equations than this runs eagerly, and so does every
# later run of that branch's code (``Plan.idle``: no lookup of its signature). Measured
# (benchmarks/split.py, second table; us a call of the function): one operation runs faster
# eagerly (22.2 against 24.8 compiled), two already faster compiled (26.1 against 29.2),
# sixteen 25.6 against 107.7.
LIGHT_OPS = 2


class _Entry:
    """A construct compiled for one signature: its jitted program and how its outputs are
    rebuilt."""

    __slots__ = ("jitted", "out_tree", "out_spec", "arguments", "effects", "shared")

    def __init__(self):
        self.jitted = None
        self.arguments = None  # the program's argument types (for jax.make_jaxpr in tests)
        self.out_tree = None
        self.out_spec = None  # per output leaf: ("array", k) | ("in", j) | ("const", value)
        self.effects = True  # whether its program has effects (prints): the run waits for it
        self.shared = ()  # the places of its outputs that hold one list or dict (effects.sharing)


class Plan:
    """The decisions of one function and input signature (held by its ``StaticFunction``)."""

    def __init__(self):
        self.entries: dict = {}
        # id of a code object -> (whether its function is library code, the global names it
        # reads, its namespace's token, the code object, its token): the tokens stand for them
        # in the signatures (hashed and compared by identity, in C)
        self.library: dict = {}
        self.records: dict[Site, SiteRecord] = {}
        self._sites: dict[int, tuple] = {}  # id of a site -> (the site, its record, its token)
        # id of a branch's code object -> that code, once a branch of it did fewer than
        # LIGHT_OPS operations: it runs as it is from then on, without the lookup of its
        # signature (which would cost more than the branch; a branch run eagerly is what the
        # split run does anyway where it does not compile one).
        self.idle: dict[int, types.CodeType] = {}
        # ids of the sites whose trace needed Python (a `str()`, a list grown to a traced length
        # in its code): they run as Python for every signature from then on, without the
        # gathering of their arguments' signature (a loop whose body holds the Python statement
        # ran it at every call: a quarter of "str inside"'s split run).
        self.needs_python: set[int] = set()
        # Segments whose trace needed Python, with the places it passed through: another
        # statement that needs Python, which the next variant of the code splits at too
        # (laxify/split.py, SplitRunner).
        self.failed_segments: list = []
        self._lock = threading.RLock()

    # -- reporting -----------------------------------------------------------------------
    def compiled(self) -> list[SiteRecord]:
        return [r for r in self.records.values() if r.compiled_runs]

    def python(self) -> list[SiteRecord]:
        return [r for r in self.records.values() if r.python_runs]

    def summary(self) -> str:
        """What runs compiled and what runs as Python, and why (for the FallbackWarning)."""
        records = sorted(self.records.values(), key=lambda r: (r.site.filename, r.site.line))
        if not records:
            return "It runs eagerly, op by op, which is much slower."
        compiled = [r for r in records if r.compiled_runs and not r.python_runs]
        python = [r for r in records if r.python_runs]
        parts = []
        loops = [r for r in compiled if r.is_loop]
        if loops:
            lines = ", ".join(str(r.site.line) for r in loops)
            parts.append(f"{len(loops)} loop(s) run as compiled programs of their own (line(s) {lines})")
        ifs = [r for r in compiled if r.kind == "if" and not r.is_guard]
        if ifs:
            lines = ", ".join(str(r.site.line) for r in ifs)
            parts.append(f"{len(ifs)} `if`(s) run their taken branch as a compiled program (line(s) {lines})")
        segments = [r for r in compiled if r.is_segment]
        if segments:
            spans = ", ".join(r.describe().split(" runs")[0].replace("the code at ", "") for r in segments)
            parts.append(f"the code at {spans} runs as {len(segments)} compiled program(s)")
        rest = [r for r in compiled if r.is_guard]
        if rest:
            lines = ", ".join(str(r.site.line) for r in rest)
            parts.append(f"the code after the statement(s) at line(s) {lines} runs as a compiled program")
        parts.extend(text for text in (r.describe() for r in python) if text)
        programs = len(compiled)
        if not parts:
            return "It runs eagerly, op by op, which is much slower."
        return (
            f"It is split around the Python it needs ({programs} compiled program(s); the rest runs "
            f"eagerly, op by op): " + "; ".join(parts) + "."
        )

    def lines(self) -> list[str]:
        """The segments, one line each (for ``explain()``)."""
        out = []
        for r in sorted(self.records.values(), key=lambda r: (r.site.filename, r.site.line)):
            out.append(f"line {r.site.line}: {r.describe()}")
        return out

    def _record(self, site: Site) -> SiteRecord:
        record = self.records.get(site)
        if record is None:
            record = self.records[site] = SiteRecord(site)
        return record

    # -- running a loop ------------------------------------------------------------------
    def construct(self, dispatcher, args: tuple, kwargs: dict):
        # (Runs at every call of every construct of a split run: its common case, a site last
        # among the arguments, seen before, is taken first.)
        site = (
            args[-1]
            if args and type(args[-1]) is Site
            else (next((a for a in args if isinstance(a, Site)), None) or kwargs.get("site"))
        )
        if site is None:
            return dispatcher(*args, **kwargs)
        known = self._sites.get(id(site))  # (holds the site: its id is not reused meanwhile)
        if known is None or known[0] is not site:
            record = self._record(site)
            record.kind = "if" if dispatcher is branch else "segment" if dispatcher is segment else "loop"
            known = self._sites[id(site)] = (site, record, ("T", _Token(site)))
        record = known[1]
        if id(site) in self.needs_python:
            return self._python(record, None, dispatcher, args, kwargs)
        try:
            flat = _Flat(self.library, site, known[2])
            spec = (
                (flat.spec(args), tuple(kwargs), tuple(flat.spec(v) for v in kwargs.values()))
                if kwargs
                else (flat.spec(args), (), ())
            )
        except _Refuse as e:
            return self._python(record, e.why, dispatcher, args, kwargs)
        if flat.traced:  # under an outer transformation: nothing here runs compiled on its own
            return dispatcher(*args, **kwargs)
        try:
            avals = tuple([(v.shape, v.dtype, v.weak_type) for v in [a.aval for a in flat.arrays]])
        except AttributeError:  # (an array type without `aval`)
            avals = tuple([(a.shape, a.dtype, getattr(a, "weak_type", False)) for a in flat.arrays])
        key = (dispatcher, spec, avals)
        entry = self.entries.get(key)
        if entry is None:
            with self._lock:
                entry = self.entries.get(key)
                if entry is None:
                    record.signatures.add(key)
                    if len(record.signatures) > MAX_SIGNATURES:
                        entry = self.entries[key] = _PYTHON
                        record.why = record.why or (
                            f"it was compiled for {MAX_SIGNATURES} different static values, which change "
                            f"from run to run"
                        )
                    else:
                        entry = self.entries[key] = _compile(dispatcher, spec, flat)
        if entry is _PYTHON:
            return self._python(record, None, dispatcher, args, kwargs)
        if entry is _EAGER:
            record.eager_runs += 1
            return dispatcher(*args, **kwargs)
        why = None
        try:
            if entry.out_spec is None:  # its first run: traced here, to see what it holds
                traced = entry.jitted.trace(flat.arrays).jaxpr
                entry.effects = bool(traced.effects)
                if (dispatcher is branch or dispatcher is segment) and _light(traced.jaxpr):
                    with self._lock:
                        self.entries[key] = _EAGER
                        code = args[0].__code__
                        self.idle[id(code)] = code
                    record.eager_runs += 1
                    return dispatcher(*args, **kwargs)
            out = entry.jitted(flat.arrays)
        except _TraceFailed as e:
            with self._lock:
                self.entries[key] = _PYTHON
                self.needs_python.add(id(site))  # (`_sites` holds the site: its id stays its own)
                if dispatcher is segment:
                    self.failed_segments.append((site, e.where))
            why = e.why
        if why is not None:  # outside the handler: the user's errors are not chained to it
            return self._python(record, why, dispatcher, args, kwargs)
        record.compiled_runs += 1
        if entry.effects:  # its prints come out before the Python that follows them
            jax.block_until_ready(out)
        return _outputs(entry, out, flat.objects, flat.arrays)

    def _python(self, record: SiteRecord, why, dispatcher, args, kwargs):
        record.python_runs += 1
        if why and record.why is None:
            record.why = why
        k = _BODIES.get(getattr(dispatcher, "__name__", ""))
        if k is not None and len(args) > k and callable(args[k]):  # a loop: count its Python iterations
            body = args[k]

            def counted(*values):
                record.python_iterations += 1
                return body(*values)

            args = (*args[:k], counted, *args[k + 1 :])
        return dispatcher(*args, **kwargs)


def _outputs(entry: _Entry, arrays, objects, inputs):
    leaves = []
    for kind, value in entry.out_spec:
        if kind == "array":
            leaves.append(arrays[value])
        elif kind == "number":
            leaves.append(value[1](arrays[value[0]]))
        elif kind == "in":
            leaves.append(objects[value])
        elif kind == "arg":  # an argument given back as it is: the very object, as in Python
            leaves.append(inputs[value])
        else:
            leaves.append(value)
    out = jax.tree_util.tree_unflatten(entry.out_tree, leaves)
    if entry.shared:  # one list the trace gave at two places (`al = lst`) is one object again
        out = effects.relink((out,), entry.shared)[0]
    return out


def _compile(dispatcher, spec, flat: "_Flat") -> _Entry:
    entry = _Entry()

    def traced(arrays):
        rebuilt: dict[int, int] = {}  # id of an object made in the trace -> index of its original
        rebuilt_functions: list = []
        args = _rebuild(spec[0], arrays, flat.objects, rebuilt, rebuilt_functions)
        kwargs = {k: _rebuild(v, arrays, flat.objects, rebuilt, rebuilt_functions) for k, v in zip(spec[1], spec[2])}
        watch = effects._Watch("this loop, compiled on its own", lambda: None)
        roots: list = []
        for fn in [*_functions((args, kwargs)), *rebuilt_functions]:
            # (also converted code from a library's file, which the watch would not enter)
            effects._function_roots(fn, roots, 0)
        for root in roots:
            watch.add(*root)
        state = trace.current()
        before = state.recorded
        state.split_tracing += 1
        state.watches.append(watch)
        try:
            with report.frame():
                out = checks.with_assert_mode(dispatcher, checks.AssertMode(checks=False, unchecked="error"))(
                    *args, **kwargs
                )
            if watch.changed(out) is not None:
                watch.restore()
                raise _TraceFailed("it changes a Python object in place")
            _check_python_floats(dispatcher, args, out)
        except _TraceFailed:
            raise
        except Exception as e:  # noqa: BLE001 - whatever the trace met, Python runs the loop
            watch.restore()
            raise _TraceFailed(_why(e), _places(e)) from None
        finally:
            state.watches.pop()
            state.split_tracing -= 1
        if state.recorded != before:
            raise _TraceFailed("it has a check made at run time (a `raise` or a Python error on a traced path)")
        entry.shared = effects.sharing((out,))
        unread = _unread_carries(flat, out)
        leaves, tree = jax.tree_util.tree_flatten(out, is_leaf=lambda v: isinstance(v, Undefined))
        out_spec, outs = [], []
        given = {id(a): k for k, a in enumerate(arrays)}
        for leaf in leaves:
            if id(leaf) in given and leaf is arrays[given[id(leaf)]]:
                out_spec.append(("arg", given[id(leaf)]))
            elif isinstance(leaf, (jax.Array, jax.core.Tracer)):
                # A value that stands for a Python number (a loop's count, a flag it sets) is
                # one again after the program: the Python that follows computes as Python's.
                # (One nothing reads after the loop stays an array: no wait for its value.)
                kind = numbers.marked_type(leaf) if id(leaf) not in unread else None
                out_spec.append(("number", (len(outs), kind)) if kind is not None else ("array", len(outs)))
                outs.append(leaf)
            elif id(leaf) in rebuilt:
                out_spec.append(("in", rebuilt[id(leaf)]))
            elif isinstance(leaf, (ATOMS, Undefined)):
                out_spec.append(("const", leaf))
            else:
                raise _TraceFailed(f"it gives a Python {type(leaf).__name__}")
        entry.out_tree, entry.out_spec = tree, out_spec
        return outs

    entry.jitted = jax.jit(traced)
    entry.arguments = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=bool(getattr(a, "weak_type", False))) for a in flat.arrays
    ]
    return entry


def _unread_carries(flat: "_Flat", out) -> set[int]:
    """The ids of the loop's carries (``while``: its results, in the site's order) that
    nothing reads after it (``Site.unread``) and no read carry shares."""
    site = flat.site
    if site is None or not site.unread or type(out) is not tuple or len(out) != len(site.names):
        return set()
    read = {id(v) for name, v in zip(site.names, out) if name not in site.unread}
    return {id(v) for name, v in zip(site.names, out) if name in site.unread and id(v) not in read}


_CARRIES = {"while_loop": 2, "for_range": 4, "for_each": 2}  # where each dispatcher takes its carries
_BODIES = {"while_loop": 1, "for_range": 3, "for_each": 1}  # and its body function


def _check_python_floats(dispatcher, args, out) -> None:
    """A Python float the loop changes would come out of the program as a float32 array, where
    Python keeps a float (its digits, `str` of it, and the float64 arithmetic after it differ):
    such a loop runs as Python."""
    k = _CARRIES.get(getattr(dispatcher, "__name__", ""))
    if k is None or len(args) <= k or type(out) is not tuple:
        return
    site = next((a for a in args if isinstance(a, Site)), None)
    for j, (before, after) in enumerate(zip(args[k], out)):
        if type(before) is float and type(after) is not float:
            name = site.names[j] if site is not None and j < len(site.names) else "a value"
            raise _TraceFailed(
                f"it changes the Python float `{name}`, which a compiled loop would make a float32 array"
            )


def joined_python_floats(before, after) -> None:
    """A traced ``if`` or conditional expression inside a construct that a split run compiles
    (a segment around it) made the Python floats ``before`` into arrays ``after``: Python keeps
    floats there (its digits, its float64 arithmetic), so the construct runs as Python."""
    state = trace.current()
    if state.plan is None or not state.split_tracing:
        return
    for b, a in zip(before, after):
        if type(b) is float and type(a) is not float:
            raise _TraceFailed(
                "a traced `if` there joins Python floats, which a compiled program would make float32 arrays"
            )


def _why(e: BaseException) -> str:
    """What the trace of a loop met, in one line of the user's terms: a located error's own
    text, else the error's type (JAX's texts name laxify's generated functions)."""
    message = getattr(e, "message", None)
    if isinstance(message, str):
        text = message.strip().splitlines()[0] if message.strip() else type(e).__name__
        if len(text) > 240:
            text = text[:237] + "..."
        return text.rstrip(".:")
    if isinstance(e, jax.errors.JAXTypeError) or "Tracer" in type(e).__name__ or "Concretization" in type(e).__name__:
        return f"it needs a concrete value ({type(e).__name__})"
    return f"its trace raised {type(e).__name__}"


def _functions(tree) -> list:
    found, stack = [], [tree]
    while stack:
        v = stack.pop()
        if type(v) is types.FunctionType:
            found.append(v)
        elif type(v) in (tuple, list):
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(v.values())
    return found


class _Flat:
    """The loop's dispatcher arguments as a hashable spec, the arrays it takes as arguments and
    the Python objects the spec stands for (this call's originals). Runs at every call of a
    compiled loop: the common kinds are told apart by their exact type first."""

    def __init__(self, library: dict, site: Site | None = None, site_spec: tuple | None = None):
        self.site, self._site_spec = site, site_spec  # the construct's site: its plan's token
        self.arrays: list = []
        self.objects: list = []
        self.traced = False
        self._seen: dict[int, tuple] = {}
        self._library = library  # the plan's (see Plan.library)

    def spec(self, v, depth: int = 0, closed: bool = False):
        """``closed``: ``v`` is read through a closure (a list or dict there is watched while
        the loop is traced); elsewhere (a carried value) it is refused, as the loop would
        change the very object in place where Python does."""
        kind = type(v)
        if kind is _ARRAY:
            known = self._seen.get(id(v))
            if known is None:
                self.arrays.append(v)
                known = self._seen[id(v)] = ("A", len(self.arrays) - 1)
            return known
        if kind in _ATOM_TYPES:
            return ("S", kind, v)
        if kind is types.FunctionType:
            return self._function(v, depth)
        if kind is SiteTable or kind is types.ModuleType:  # (a converted function's sites, `_lx`)
            return ("L", ById(v))
        if kind is tuple:
            if depth > 20:
                raise _Refuse("its values are nested too deeply")
            return ("tuple", self._items(v, depth + 1, closed))
        return self._other(v, kind, depth, closed)

    def _items(self, values, depth: int, closed: bool) -> tuple:
        """The specs of ``values`` (a tuple's items, a closure's values), the common leaves
        (arrays, Python atoms) without a call of ``spec`` each."""
        out = []
        seen, arrays = self._seen, self.arrays
        for e in values:
            kind = type(e)
            if kind is _ARRAY:
                known = seen.get(id(e))
                if known is None:
                    arrays.append(e)
                    known = seen[id(e)] = ("A", len(arrays) - 1)
                out.append(known)
            elif kind in _ATOM_TYPES:
                out.append(("S", kind, e))
            elif e is self.site:
                out.append(self._site_spec)
            else:
                out.append(self.spec(e, depth, closed))
        return tuple(out)

    def _other(self, v, kind, depth: int, closed: bool):
        if depth > 20:
            raise _Refuse("its values are nested too deeply")
        if isinstance(v, jax.core.Tracer):
            self.traced = True
            return ("tracer",)
        if isinstance(v, jax.Array):
            known = self._seen.get(id(v))
            if known is None:
                self.arrays.append(v)
                known = self._seen[id(v)] = ("A", len(self.arrays) - 1)
            return known
        if kind in ATOMS or isinstance(v, (Site, np.dtype, np.generic)):
            return ("S", kind, v)
        if isinstance(v, Undefined):
            return ("U", kind, v.name, v.site, self._object(v))
        if (kind is list or kind is dict) and not closed:
            raise _Refuse(f"it carries a {kind.__name__}, which Python changes in place")
        if kind is list:
            return ("list", tuple([self.spec(e, depth + 1, closed) for e in v]))
        if isinstance(v, tuple) and hasattr(kind, "_fields"):  # a named tuple
            return ("N", kind, tuple([self.spec(e, depth + 1, closed) for e in v]))
        if kind is dict:
            try:
                keys = tuple(v)
                hash(keys)
            except TypeError:
                raise _Refuse("it reads a dict with unhashable keys") from None
            return ("D", keys, tuple([self.spec(v[k], depth + 1, closed) for k in keys]))
        if isinstance(v, (types.ModuleType, type, types.BuiltinFunctionType)):
            return ("L", ById(v))
        if kind is functools.partial:
            return (
                "P",
                self.spec(v.func, depth + 1, closed),
                self.spec(v.args, depth + 1, closed),
                self.spec(v.keywords, depth + 1, True),
            )
        raise _Refuse(f"it reads a {kind.__name__}, which a compiled loop cannot take as a value")

    def _object(self, v) -> int:
        self.objects.append(v)
        return len(self.objects) - 1

    def _function(self, fn: types.FunctionType, depth: int):
        code = fn.__code__
        namespace = fn.__globals__
        known = self._library.get(id(code))  # (the value holds the code: its id stays its own)
        if known is None or known[3] is not code or known[2].obj is not namespace:
            # A tracer-aware library's function (jax, numpy, ...) is static; converted code
            # (generated names) and any other function, also from an installed package or the
            # standard library that laxify converted, is rebuilt around its closure's values.
            library = not code.co_name.startswith(DEFAULT_PREFIX) and _library_package(getattr(fn, "__module__", None))
            # The globals its code reads (kept per code object, as the namespace's key).
            known = self._library[id(code)] = (
                library,
                _global_names(code, namespace),
                _Token(namespace),
                code,
                _Token(code),
            )
        if known[0]:
            return ("L", ById(fn))
        if depth > 20:
            raise _Refuse("its values are nested too deeply")
        defaults = self.spec(fn.__defaults__, depth + 1, True) if fn.__defaults__ else None
        kwdefaults = self.spec(fn.__kwdefaults__, depth + 1, True) if fn.__kwdefaults__ else None
        closure = fn.__closure__
        cells = ()
        if closure:
            try:
                contents = [cell.cell_contents for cell in closure]
            except ValueError:  # an empty cell (a name not yet assigned)
                contents = None
            if contents is not None:
                cells = self._items(contents, depth + 1, True)
            else:
                cells = []
                for cell in closure:
                    try:
                        value = cell.cell_contents
                    except ValueError:
                        cells.append(("empty",))
                        continue
                    cells.append(self.spec(value, depth + 1, True))
                cells = tuple(cells)
        # The globals its code reads, as they are now: a global rebound between calls (a
        # number changed, another array) is another signature, not a stale constant.
        names = known[1]
        read = tuple([_global_key(namespace.get(name, _MISSING)) for name in names]) if names else ()
        self.objects.append(fn)
        return ("F", known[4], known[2], fn.__name__, defaults, kwdefaults, cells, read, len(self.objects) - 1)


_MISSING = object()


def _global_names(code: types.CodeType, namespace: dict) -> tuple[str, ...]:
    """The names ``code`` and the code objects it holds (nested functions, comprehensions) may
    read as globals that ``namespace`` has now (attribute names that are not globals drop out)."""
    found, stack = [], [code]
    while stack:
        c = stack.pop()
        found.extend(name for name in c.co_names if name in namespace)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(dict.fromkeys(found))


def _global_key(value):
    """A global's part of a signature: a Python atom by value, anything else by identity."""
    if type(value) in _ATOM_TYPES:
        return (type(value), value)
    return ById(value)


class _Token:
    """The one key of an object in a plan's signatures (a code object, a module's globals):
    made once per object and kept, so that it is hashed and compared by identity, in C."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj


def _rebuild(spec, arrays, objects, rebuilt: dict, made: list | None = None):
    tag = spec[0]
    if tag == "A":
        return arrays[spec[1]]
    if tag == "S":
        return spec[2]
    if tag == "T":
        return spec[1].obj
    if tag == "L":
        return spec[1].value
    if tag == "U":
        return objects[spec[-1]]
    if tag == "tuple":
        return tuple(_rebuild(s, arrays, objects, rebuilt, made) for s in spec[1])
    if tag == "list":
        return [_rebuild(s, arrays, objects, rebuilt, made) for s in spec[1]]
    if tag == "N":
        return spec[1](*(_rebuild(s, arrays, objects, rebuilt, made) for s in spec[2]))
    if tag == "D":
        return {k: _rebuild(s, arrays, objects, rebuilt, made) for k, s in zip(spec[1], spec[2])}
    if tag == "P":
        fn = _rebuild(spec[1], arrays, objects, rebuilt, made)
        return functools.partial(
            fn, *_rebuild(spec[2], arrays, objects, rebuilt, made), **_rebuild(spec[3], arrays, objects, rebuilt, made)
        )
    if tag == "F":
        _, code, globals_, name, defaults, kwdefaults, cells, _, index = spec
        code = code.obj
        closure = tuple(
            types.CellType() if c[0] == "empty" else types.CellType(_rebuild(c, arrays, objects, rebuilt, made))
            for c in cells
        )
        original = objects[index]
        fn = types.FunctionType(
            code,
            globals_.obj,
            name,
            _rebuild(defaults, arrays, objects, rebuilt, made) if defaults else None,
            closure or None,
        )
        if kwdefaults:
            fn.__kwdefaults__ = _rebuild(kwdefaults, arrays, objects, rebuilt, made)
        fn.__qualname__ = original.__qualname__
        fn.__module__ = original.__module__
        rebuilt[id(fn)] = index
        if made is not None:
            made.append(fn)
        return fn
    raise AssertionError(f"unknown spec {tag}")


def _light(jaxpr) -> bool:
    """Whether a branch's program does too little to gain from being compiled (LIGHT_OPS)."""
    return len(jaxpr.eqns) < LIGHT_OPS


def branch(fn, operands: tuple, site: Site):
    """The taken branch of an ``if`` whose condition is a Python value (``site``: the ``if``),
    as the construct that the plan compiles (see :func:`run_branch`)."""
    return fn(*operands)


def run_branch(fn, operands: tuple, site: Site):
    """``fn(*operands)``, the taken branch of an ``if`` on a Python condition: in a split run
    (inside :func:`splitting`, not while a construct is traced) tried as one compiled program
    of its own, cached per ``if`` and signature as a loop is (the module's docstring), unless
    it does fewer than ``LIGHT_OPS`` operations: then it runs as it is, and so does every later
    run of that branch's code (``Plan.idle``)."""
    state = trace.current()
    plan = state.plan
    if plan is None or state.split_tracing:
        return fn(*operands)
    code = getattr(fn, "__code__", None)
    if code is not None and plan.idle.get(id(code)) is code:
        return fn(*operands)
    return plan.construct(branch, (fn, operands, site), {})


def segment(fn, operands: tuple, site: Site):
    """A run of plain statements of a split function's code (``site``: its first line), as the
    construct that the plan compiles (see :func:`run_segment`)."""
    return fn(*operands)


def run_segment(fn, operands: tuple, site: Site):
    """``fn(*operands)``, a run of plain statements grouped by the split run's variant of the
    converted code (``runtime/segments.py``): in a split run tried as one compiled program of
    its own, as a taken branch is (:func:`run_branch`); elsewhere a call."""
    state = trace.current()
    plan = state.plan
    if plan is None or state.split_tracing:
        return fn(*operands)
    code = fn.__code__
    if plan.idle.get(id(code)) is code:
        return fn(*operands)
    return plan.construct(segment, (fn, operands, site), {})


def runs_as_python(values) -> bool:
    """Whether a loop's dispatcher, called with ``values``, is running a loop of a split run as
    Python (the plan decided so, or it cannot be compiled): then a loop with a static trip
    count iterates in Python too, rather than as a ``lax.scan`` made on the spot (whose trace
    would meet the same Python), so that each inner loop is tried on its own."""
    state = trace.current()
    return state.plan is not None and not state.split_tracing and not any_traced(values)


def splittable(dispatcher):
    """``dispatcher`` (a loop's runtime entry) that, inside :func:`splitting` and not while a
    loop is traced, tries the loop as one compiled program (see the module's docstring)."""

    @functools.wraps(dispatcher)
    def run(*args, **kwargs):
        state = trace.current()
        plan = state.plan
        if plan is None:
            return dispatcher(*args, **kwargs)
        if state.split_tracing:
            out = dispatcher(*args, **kwargs)
            # Inside a construct compiled on its own (a segment around it), as for the loop itself.
            _check_python_floats(dispatcher, args, out)
            return out
        return plan.construct(dispatcher, args, kwargs)

    return run


class splitting:
    """``with splitting(plan):`` around an eager run of a converted function: its loops run
    compiled where they can, as ``plan`` decided or decides."""

    def __init__(self, plan: Plan):
        self.plan = plan

    def __enter__(self):
        state = trace.current()
        self.saved = (state.plan, state.split_tracing)
        state.plan, state.split_tracing = self.plan, 0
        return self.plan

    def __exit__(self, *exc):
        state = trace.current()
        state.plan, state.split_tracing = self.saved
        return False
