"""Lists appended to inside loops: a Python list in a Python loop, a stacked per-iteration
output in a traced loop (the name then holds the stacked array: ``len``, ``[-1]``, iteration
and ``jnp.stack`` behave as on the list of its rows). Inside the traced loop the list is an
:class:`Accumulator`, which reads items as Python would at that point of the iteration."""

from __future__ import annotations

import builtins
import functools
import json
import operator
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import export as _jax_export
from jax import lax

from laxify.ir.errors import ConversionError, Location, NeedsPython
from laxify.ir.user_code import LIBRARY_PACKAGES
from laxify.runtime.lowering import Site
from laxify.runtime import options, report
from laxify.runtime.messages import location, site_error, users_line

__all__ = [
    "Accumulator",
    "BoundedList",
    "ListIndexError",
    "UnknownLength",
    "NeedsPythonLoop",
    "NeedsRows",
    "Rows",
    "StackedList",
    "append",
    "appended_carries",
    "appended_once",
    "bounded_result",
    "branch_of",
    "buffer_result",
    "list_carries",
    "list_len",
    "materialized",
    "probe_appends",
    "stacked_result",
]


class NeedsPythonLoop(ConversionError):
    """A list being stacked is used where Python needs a value that changes from one iteration
    to the next as a Python object (``len``, a slice, iteration): the loop must run as Python
    (unrolled) to give Python's result; where it cannot, this is the located error."""


class UnknownLength(NeedsPython):
    """A list appended to in a loop whose trip count is traced (bounded by ``max_iters``) is
    used where the result's shape depends on its number of items (stacked, iterated, sliced):
    ``to_static`` runs the function eagerly, ``jax.jit(laxify.convert(f))`` reports it."""


class ListIndexError(ConversionError, IndexError):
    """A static index that is out of range on every iteration of the loop building the list."""


class NeedsRows(Exception):
    """Raised while a scan body is traced, when a stacked list reads an item appended in an
    earlier iteration: the scan is traced again with that list carried as a buffer. ``key``
    names the scan and the carry."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


class Rows:
    """The items a list held before the current iteration of a scan that reads it: rows
    ``[0, length)`` of ``buf`` (a pytree of ``(n, ...)`` arrays; ``length`` traced)."""

    __slots__ = ("buf", "length", "n")

    def __init__(self, buf, length, n: int):
        self.buf, self.length, self.n = buf, length, n

    @classmethod
    def initial(cls, prefix: list, element, n: int):
        """The buffer before the first iteration: ``prefix``'s items, then zeros."""

        def leaf(aval, *items):
            dtype = jnp.result_type(aval.dtype, *items) if items else aval.dtype
            rest = jnp.zeros((n - len(items), *aval.shape), dtype)
            if not items:
                return rest
            return jnp.concatenate([jnp.stack([jnp.asarray(i, dtype) for i in items]), rest])

        return jax.tree_util.tree_map(leaf, element, *prefix)

    def written(self, value):
        """The buffer with ``value`` as row ``length``."""

        def write(b, v):
            row = lax.expand_dims(lax.convert_element_type(v, b.dtype), (0,))
            return lax.dynamic_update_slice(b, row, (self.length,) + (0,) * (b.ndim - 1), allow_negative_indices=False)

        return jax.tree_util.tree_map(write, self.buf, value)

    def read(self, index, static: int | None, tail: list, acc: "Accumulator"):
        """Item ``index`` of the list ``rows ++ tail`` (``tail``: this iteration's appends);
        zeros where the list has no such item yet."""
        m = len(tail)
        total = self.length + m
        if static is not None:
            if not -self.n <= static < self.n:
                raise site_error(
                    acc.site,
                    f"`{acc.name}[{static}]` is read inside this loop, but `{acc.name}` has at most "
                    f"{self.n} items in it: Python raises IndexError.",
                    f"Read an index below {self.n}.",
                    ListIndexError,
                )
            pos = static if static >= 0 else total + static
        else:
            index = jnp.asarray(index, jnp.int32)
            pos = jnp.where(index < 0, index + total, index)
        # A position outside [0, n) is clamped by XLA and masked below.
        value = jax.tree_util.tree_map(
            lambda b: lax.squeeze(
                lax.dynamic_slice(b, (pos,) + (0,) * (b.ndim - 1), (1, *b.shape[1:]), allow_negative_indices=False),
                (0,),
            ),
            self.buf,
        )
        if m and not (static is not None and static < 0):  # `pos` may be one of this iteration's items
            which = jnp.clip(pos - self.length + 1, 0, m)
            value = jax.tree_util.tree_map(
                lambda r, *ts: lax.select_n(
                    which, r, *[jnp.broadcast_to(lax.convert_element_type(t, r.dtype), r.shape) for t in ts]
                ),
                value,
                *tail,
            )
        valid = jnp.logical_and(pos >= 0, pos < total)
        # Python raises IndexError where the list has no such item yet; one XLA program cannot
        # raise, so the read gives zeros and says so at run time, on the iterations it happens.
        shown = f"{acc.name}[{static}]" if static is not None else f"{acc.name}[...]"
        if options.run_time_warnings():
            jax.debug.callback(functools.partial(_warn_missing_item, acc.site, shown, acc.name), jnp.logical_not(valid))
        return jax.tree_util.tree_map(lambda a: lax.select_n(valid, jnp.zeros_like(a), a), value)


def _warn_missing_item(site: Site | None, shown: str, name: str, missing) -> None:
    """Run time: a read of a stacked list inside its loop found no item there."""
    if not np.any(np.asarray(missing)):
        return
    message = (
        f"laxify: `{shown}` is read inside this loop at an iteration where `{name}` does "
        f"not have that item yet; Python raises IndexError there, the converted loop read "
        f"zeros. Read an index the list already has at that point."
    )
    if site is None:
        warnings.warn(message, RuntimeWarning)
    else:
        warnings.warn_explicit(message, RuntimeWarning, site.filename, site.line)


_LIST_METHODS = frozenset({"extend", "insert", "pop", "remove", "index", "count", "reverse", "sort", "copy", "clear"})


class Accumulator:
    """Stands for a list inside a traced loop body (or one branch of a traced ``if`` in it):
    records the one value appended per iteration and reads items as Python would there.

    The list at a point of iteration ``k`` is ``prefix`` (its items before the loop), the
    ``k`` items of earlier iterations, then this iteration's appends (``values``, after the
    parent's for a branch copy). Reads of ``prefix`` items and of this iteration's appends
    are Python values; reads of earlier iterations' items need ``rows`` (a :class:`Rows`
    buffer): without one they raise :class:`NeedsRows`, and the scan is traced again with one.
    ``len``, slices and iteration differ per iteration as Python values: :class:`NeedsPythonLoop`.
    While a body is probed (``probe`` set), ``prefix`` is the whole list before this iteration.
    """

    __slots__ = ("name", "site", "values", "parent", "prefix", "rows", "element", "key", "probe", "wants_rows")

    def __init__(
        self,
        name: str,
        site: Site | None = None,
        *,
        prefix=(),
        rows: Rows | None = None,
        element=None,
        key=None,
        probe: "AppendProbe | None" = None,
        parent: "Accumulator | None" = None,
    ):
        self.name, self.site = name, site
        self.values: list = []
        self.parent = parent
        self.prefix = list(prefix)
        self.rows, self.element, self.key, self.probe = rows, element, key, probe
        self.wants_rows = False

    def append(self, value) -> None:
        self.values.append(value)

    def _root(self) -> "Accumulator":
        acc = self
        while acc.parent is not None:
            acc = acc.parent
        return acc

    def _tail(self) -> list:
        return [*self.parent._tail(), *self.values] if self.parent is not None else list(self.values)

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise self._needs_python(f"`{self.name}[...]` with a slice")
        root, tail = self._root(), self._tail()
        static = _static_index(index)
        if static is not None:
            if -len(tail) <= static < 0:
                return tail[static]
            if 0 <= static < len(root.prefix):
                return root.prefix[static]
        if root.probe is not None:
            items = [*root.prefix, *tail]
            if static is not None and -len(items) <= static < len(items):
                return items[static]
            return root.probe.unknown_item()
        if root.rows is None:
            root.wants_rows = True
            raise NeedsRows(root.key)
        return root.rows.read(index, static, tail, self)

    def __len__(self) -> int:
        root = self._root()
        if root.probe is not None:
            return len(root.prefix) + len(self._tail())
        raise self._needs_python(f"`len({self.name})`")

    def __iter__(self):
        root = self._root()
        if root.probe is not None:
            return iter([*root.prefix, *self._tail()])
        raise self._needs_python(f"iterating over `{self.name}`")

    def count(self, value):
        """``xs.count(v)``: how many items equal ``v`` changes per iteration, as ``len``."""
        root = self._root()
        if root.probe is not None:
            return [*root.prefix, *self._tail()].count(value)
        raise self._needs_python(f"`{self.name}.count(...)`")

    def index(self, value, *args):
        """``xs.index(v)``: the items searched change per iteration, as for ``len``."""
        root = self._root()
        if root.probe is not None:
            return [*root.prefix, *self._tail()].index(value, *args)
        raise self._needs_python(f"`{self.name}.index(...)`")

    def __getattr__(self, attr: str):
        # Another list method (`pop`, `insert`, `extend`, ...) on the list being stacked: its
        # length would change otherwise than by one item per iteration (a located fallback,
        # never an AttributeError naming this class).
        if attr in _LIST_METHODS:
            raise self._needs_python(f"`{self.name}.{attr}(...)`")
        raise AttributeError(f"'list' object has no attribute '{attr}'")

    def _needs_python(self, what: str) -> NeedsPythonLoop:
        return site_error(
            self.site,
            f"{what} inside this loop, which runs as one `lax.scan`, is a Python value that "
            f"changes from one iteration to the next (the list `{self.name}` grows by one item "
            f"per iteration); one XLA program cannot hold it.",
            f"Read single items (`{self.name}[-1]`, `{self.name}[i]`), count with a variable you "
            f"update in the loop (`n = n + 1`), or loop over `range(...)` so that the loop can run "
            f"as Python.",
            NeedsPythonLoop,
        )

    def __repr__(self) -> str:
        return f"<list {self.name} being accumulated>"


def branch_of(lst, name: str, site: Site | None = None) -> Accumulator:
    """The list as one branch of a traced ``if`` (or one bounded-loop step) sees it: it reads
    ``lst``, and its own appends stay in the copy until the ``if`` picks one."""
    if isinstance(lst, Accumulator):
        return Accumulator(lst.name, lst.site, parent=lst)
    return Accumulator(name, site, prefix=lst, probe=lst._top())


def _static_index(index) -> int | None:
    """``index`` as a Python int, or None where it is traced."""
    if isinstance(index, jax.core.Tracer):
        if not jnp.issubdtype(index.dtype, jnp.integer) or index.shape != ():
            raise TypeError(f"list indices must be integers or slices, not {index.dtype}{list(index.shape)}")
        return None
    return operator.index(index)


def append(lst, value):
    """``lst.append(value)``, returning ``lst`` (what converted code assigns back to the name)."""
    lst.append(value)
    return lst


def as_list(x):
    """A name that holds a list in Python, before an operation only a list has (``+``, ``*``,
    ``==``, slicing, ``extend``...): the same object for a Python list (or anything else), the
    list of its rows for the stacked array (or :class:`StackedList`) an append loop left (a
    :class:`BoundedList` whose count is traced: the located error, its length being unknown)."""
    if isinstance(x, BoundedList):
        return list(x)
    if isinstance(x, StackedList) or (isinstance(x, (jax.Array, jax.core.Tracer)) and x.ndim >= 1):
        return list(x)
    return x


def list_carries(init) -> list[int]:
    """Indexes of loop carries that are Python lists (candidates for stacked outputs)."""
    return [k for k, v in enumerate(init) if isinstance(v, list)]


def appended_carries(init, names, step) -> list[int]:
    """Indexes of the list carries that one iteration appends to (found by tracing ``step``
    once abstractly); other lists are fixed-length pytrees carried as they are."""
    return list(probe_appends(init, names, step))


def probe_appends(init, names, step, site: Site | None = None) -> dict:
    """The list carries that one iteration appends to (by tracing ``step`` once abstractly),
    each with the type of the value it appends. A read the probe cannot answer (an item the
    first iteration does not have yet, a traced index) gives zeros of the items' type; where
    no item is known yet, it guesses, and probes again once an append shows the type."""
    lists = list_carries(init)
    if not lists:
        return {}
    known: dict[int, object] = {}
    while True:
        # (Its items rebuilt: the probe's body may change a nested list in place.)
        probes = {k: AppendProbe(_rebuilt(init[k]), element=known.get(k)) for k in lists}
        args = [k for k, v in enumerate(init) if k not in probes and _abstractable(v)]

        def run(*values):
            full = list(init)
            for k, probe in probes.items():
                full[k] = probe
            for k, v in zip(args, values):
                full[k] = v
            step(tuple(full))

        try:
            jax.eval_shape(report.discarded(run), *[init[k] for k in args])
        except (ConversionError, jax.errors.JAXTypeError):
            raise
        except (TypeError, ValueError) as e:
            guessed = [k for k in lists if probes[k].guessed]
            if not guessed:
                raise
            name = names[guessed[0]] if guessed[0] < len(names) else "list"
            raise site_error(
                site,
                f"`{name}` is read inside this loop before anything is appended to it, and the "
                f"type of its items is not known there ({type(e).__name__}: {e}).",
                f"Give `{name}` an item before the loop, or read it after `{name}.append(...)`.",
                NeedsPythonLoop,
            ) from e
        again = {
            k: probes[k].seen for k in lists if probes[k].guessed and probes[k].seen is not None and k not in known
        }
        if not again:
            return {k: probes[k].seen for k in lists if probes[k].appended}
        known.update(again)


def _rebuilt(items: list) -> list:
    return jax.tree_util.tree_map(lambda x: x, list(items), is_leaf=lambda x: not isinstance(x, (list, tuple, dict)))


def _aval(value):
    return jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), value)


class AppendProbe(list):
    """A copy of a list that notes whether the loop body appends to it, and the type of what
    it appends. It is a pytree of its items, so inner loops and branches carry it like a list;
    the copies they rebuild report to the probe they came from. A read of an item it does not
    hold gives zeros of the items' type (only types matter while probing)."""

    def __init__(self, items=(), origin: "AppendProbe | None" = None, element=None):
        super().__init__(items)
        self.origin = origin
        self.appended = False
        self.seen = None  # the type of the first appended value
        self.element = element  # the type of an item, known from an earlier probe
        self.guessed = False

    def _top(self) -> "AppendProbe":
        probe = self
        while probe.origin is not None:
            probe = probe.origin
        return probe

    def append(self, value) -> None:
        probe = self
        while probe is not None:
            probe.appended = True
            if probe.seen is None:
                probe.seen = _aval(value)
            probe = probe.origin
        super().append(value)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return super().__getitem__(index)
        static = _static_index(index)
        if static is not None and -len(self) <= static < len(self):
            return super().__getitem__(static)
        return self._top().unknown_item()

    def unknown_item(self):
        """Zeros of the items' type, for a read this probe cannot answer."""
        if self.element is not None:
            aval = self.element
        elif self.seen is not None:
            aval = self.seen
        elif len(self):
            aval = _aval(list.__getitem__(self, 0))
        else:
            self.guessed = True
            aval = jax.ShapeDtypeStruct((), jnp.float32)
        return jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aval)


class _ProbeLink:
    """The pytree metadata of an :class:`AppendProbe`: the probe its rebuilt copies report to.
    All links compare equal, so a loop's carry keeps one structure from step to step."""

    __slots__ = ("probe",)

    def __init__(self, probe: AppendProbe):
        self.probe = probe

    def __eq__(self, other) -> bool:
        return isinstance(other, _ProbeLink)

    def __hash__(self) -> int:
        return hash(_ProbeLink)


jax.tree_util.register_pytree_node(
    AppendProbe,
    lambda probe: (list(probe), _ProbeLink(probe)),
    lambda link, items: AppendProbe(items, origin=link.probe),
)


def _abstractable(value) -> bool:
    try:
        leaves = jax.tree_util.tree_leaves(value)
    except Exception:
        return False
    return all(hasattr(leaf, "dtype") or isinstance(leaf, (bool, int, float, complex)) for leaf in leaves)


def appended_once(out, name: str, site: Site):
    """The value appended in one iteration, or a located error if it was not exactly one."""
    if not isinstance(out, Accumulator):
        raise site_error(
            site,
            f"The list `{name}` is rebound inside this traced loop; only `{name}.append(...)` "
            f"can build a list in a loop that becomes one XLA program.",
            f"Build `{name}` with `{name}.append(value)` once per iteration.",
        )
    if len(out.values) != 1:
        raise site_error(
            site,
            f"the list `{name}` gets {len(out.values)} appends in one iteration of this traced "
            f"loop, and a traced loop stacks exactly one value per iteration",
            "Append exactly once per iteration (append a tuple to collect several values).",
            NeedsPython,
        )
    return out.values[0]


@jax.tree_util.register_pytree_node_class
class StackedList:
    """The list built by appending tuples (or other pytrees) in a traced loop: one stacked
    array per leaf, seen as a list of rows (``len``, indexing, slicing, iteration)."""

    def __init__(self, stacked):
        self.stacked = stacked

    def __len__(self) -> int:
        return jax.tree_util.tree_leaves(self.stacked)[0].shape[0]

    def __getitem__(self, index):
        rows = jax.tree_util.tree_map(lambda a: a[index], self.stacked)
        return StackedList(rows) if isinstance(index, slice) else rows

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def tree_flatten(self):
        return (self.stacked,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])

    def __repr__(self) -> str:
        return f"StackedList({self.stacked!r})"


def stacked_result(prefix: list, stacked):
    """The list after the loop: its earlier items followed by the stacked per-iteration values
    (an array when one array was appended per iteration, else a :class:`StackedList`)."""
    if prefix:
        stacked = jax.tree_util.tree_map(lambda s, *items: jnp.concatenate([jnp.stack(items), s]), stacked, *prefix)
    return buffer_result(stacked)


def buffer_result(stacked):
    """The list after the loop from its rows (a :class:`Rows` buffer holds the earlier items
    too): an array when each item is one array, else a :class:`StackedList`."""
    if isinstance(stacked, jax.Array) or hasattr(stacked, "shape"):
        return stacked
    return StackedList(stacked)


def _library_frame(frame) -> bool:
    """A frame that is never the user's line that used a list (the converted code runs with the
    user's module globals; laxify's runtime, JAX and NumPy call into the list)."""
    return (frame.f_globals.get("__name__") or "").partition(".")[
        0
    ] in LIBRARY_PACKAGES or frame.f_code.co_filename.startswith("<frozen")


def _user_location(site: Site | None) -> Location | None:
    """The innermost line of the user's code on the stack (the line that read the list)."""
    here = users_line(sys._getframe(1), _library_frame)
    return here if here is not None or site is None else location(site)


class _ListInfo:
    """The pytree metadata of a :class:`BoundedList`: the list's name and its loop (for
    messages), and the number of items it surely holds. Two compare equal when that number
    is the same (a traced ``if`` that joins lists of two loops keeps one structure; one whose
    lists differ there is a structure mismatch, never a read left unchecked)."""

    __slots__ = ("name", "site", "max_iters", "least")

    def __init__(self, name: str, site: Site | None, max_iters: int | None, least: int = 0):
        # `least`: the items it surely holds (those it had before the loop)
        self.name, self.site, self.max_iters, self.least = name, site, max_iters, least

    def __eq__(self, other) -> bool:
        return isinstance(other, _ListInfo) and other.least == self.least

    def __hash__(self) -> int:
        return hash((_ListInfo, self.least))


_NON_MUTATING = frozenset({"count", "index", "copy"})


@jax.tree_util.register_pytree_node_class
class BoundedList:
    """The list a loop bounded by ``loop_options(max_iters=N)`` appended to, when its number of
    iterations is traced: ``rows`` holds its items, then zeros (one stacked array per leaf of
    an item: the items the list had before the loop, then N rows), ``count`` how many items it
    holds (an int32 array). A pytree: traced ``if``s and loops carry it, ``jax.jit`` returns it.

    It reads as Python's list where one program can: :func:`list_len` is ``count``; an item,
    at a static or traced index (negative too), is read at the position ``count`` gives, and
    an index past ``count`` raises ``IndexError`` after the call (the run-time error channel).
    A use whose result's shape depends on ``count`` (``jnp.stack``, ``jnp.asarray``, iteration,
    a slice, truth, another list method) is the located ``NeedsPython`` (``to_static`` falls
    back to eager Python, ``jax.jit(laxify.convert(f))`` reports it). Where ``count`` is
    concrete (outside any trace: what ``jax.jit`` returned, a loop run eagerly) it is the list
    of its first ``count`` rows in every use."""

    def __init__(self, rows, count, info: _ListInfo):
        self.rows, self.count, self.info = rows, count, info

    def tree_flatten(self):
        return (self.rows, self.count), self.info

    @classmethod
    def tree_unflatten(cls, info, children):
        return cls(children[0], children[1], info)

    @property
    def traced(self) -> bool:
        return isinstance(self.count, jax.core.Tracer)

    def exact(self):
        """The list's items as a loop with a static trip count leaves them (an array, or a
        :class:`StackedList` for tuples): its first ``count`` rows (``count`` concrete)."""
        n = int(self.count)
        return buffer_result(jax.tree_util.tree_map(lambda a: a[:n], self.rows))

    def _size(self) -> int:
        return jax.tree_util.tree_leaves(self.rows)[0].shape[0]

    def _unknown_length(self, what: str) -> UnknownLength:
        name, site = self.info.name, self.info.site
        loop = f"the loop at line {site.line}" if site is not None else "a loop"
        bound = f"loop_options(max_iters={self.info.max_iters})" if self.info.max_iters is not None else "max_iters"
        return UnknownLength(
            f"{what} needs the number of items of the list `{name}`, appended to in {loop}, whose "
            f"number of iterations is traced (bounded by {bound}): that number is known only when "
            f"the program runs, and one XLA program cannot give a value whose shape depends on it",
            _user_location(site),
            f"Read `len({name})` (a traced int32 array) and items `{name}[i]` (a static or traced "
            f"index, negative too), or write the rows into an array made before the loop "
            f"(`buf = jnp.zeros((N, ...))` before it, `buf = buf.at[k].set(v)` in it) and use "
            f"it with the count.",
        )

    def __len__(self) -> int:
        if self.traced:
            raise self._unknown_length(
                f"this use of `{self.info.name}` (stacked, converted to an array, iterated or measured)"
            )
        return int(self.count)

    def __bool__(self) -> bool:
        if self.traced:
            raise self._unknown_length(f"the truth value of `{self.info.name}`")
        return int(self.count) > 0

    def __iter__(self):
        if self.traced:
            raise self._unknown_length(f"iterating over `{self.info.name}`")
        return iter(self.exact())

    def __jax_array__(self):
        if self.traced:
            raise self._unknown_length(f"`{self.info.name}` as an array")
        exact = self.exact()
        return exact if hasattr(exact, "shape") else jnp.asarray(list(exact))

    def __array__(self, dtype=None, copy=None):
        if self.traced:
            raise self._unknown_length(f"`{self.info.name}` as an array")
        return np.asarray(self.__jax_array__(), dtype=dtype)

    def __getitem__(self, index):
        name = self.info.name
        if not self.traced:
            exact = self.exact()
            if isinstance(index, slice):
                return exact[index]
            i, n = operator.index(index), int(self.count)
            if not -n <= i < n:
                raise IndexError("list index out of range")
            return exact[i]
        if isinstance(index, slice):
            raise self._unknown_length(f"`{name}[...]` with a slice")
        static = _static_index(index)
        count = self.count
        if static is not None:
            pos = count + static if static < 0 else jnp.asarray(static, jnp.int32)
        else:
            index = lax.convert_element_type(index, jnp.int32)
            pos = jnp.where(index < 0, index + count, index)
        where = None
        if static is None or not -self.info.least <= static < self.info.least:  # may be past the end
            where = _user_location(self.info.site)
        if where is not None:
            from laxify.runtime import error_channel

            # Python raises IndexError past the list's end: after the call, from the program's
            # check (the read itself gives a clamped row, never returned then).
            error_channel.check_at(
                jnp.logical_and(pos >= 0, pos < count),
                lambda: IndexError("list index out of range"),
                where.filename,
                where.line,
            )
        size = self._size()
        if size == 0:
            return jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape[1:], a.dtype), self.rows)
        pos = jnp.clip(pos, 0, size - 1)
        return jax.tree_util.tree_map(lambda a: lax.dynamic_index_in_dim(a, pos, keepdims=False), self.rows)

    def __getattr__(self, attr: str):
        if attr.startswith("__") or attr not in _LIST_METHODS:
            raise AttributeError(f"'list' object has no attribute '{attr}'")
        if self.traced:
            raise self._unknown_length(f"`{self.info.name}.{attr}(...)`")
        if attr in _NON_MUTATING:
            return getattr(list(self.exact()), attr)
        raise AttributeError(f"'{type(self.exact()).__name__}' object has no attribute '{attr}'")

    def __repr__(self) -> str:
        if self.traced:
            return f"<list {self.info.name}: {self._size()} rows, count {self.count}>"
        return f"BoundedList({self.exact()!r})"


def _info_bytes(info: _ListInfo) -> bytes:
    return json.dumps([info.name, info.max_iters, info.least]).encode()


def _info_of(data: bytes) -> _ListInfo:
    name, max_iters, least = json.loads(bytes(data).decode())
    return _ListInfo(name, None, max_iters, least)


# A function that returns such a list exports (`f.export(...)`, `laxify.load`): its output
# tree names the list's type, which jax.export serializes only when registered.
_jax_export.register_pytree_node_serialization(
    BoundedList, serialized_name="laxify.BoundedList", serialize_auxdata=_info_bytes, deserialize_auxdata=_info_of
)


class _Made:
    """Whether a :class:`BoundedList` was ever made (results of ``to_static`` are looked at only then)."""

    made = False


def bounded_result(stacked, count, name: str, site: Site | None, max_iters: int | None, least: int = 0):
    """The list after a bounded loop with a traced trip count: ``stacked`` (its rows then
    zeros, as :func:`buffer_result` gives them) and ``count`` items (at least ``least``: those
    it had before the loop, whose reads need no check). A concrete ``count``
    (the loop ran eagerly) gives its first ``count`` rows, as a static trip count would."""
    rows = stacked.stacked if isinstance(stacked, StackedList) else stacked
    if not isinstance(count, jax.core.Tracer):
        return buffer_result(jax.tree_util.tree_map(lambda a: a[: int(count)], rows))
    _Made.made = True
    return BoundedList(rows, count, _ListInfo(name, site, max_iters, least))


def list_len(x):
    """``len(xs)`` of a name that holds a list appended to in a loop: the traced count of a
    :class:`BoundedList` (an int32 array), Python's ``len`` otherwise (a concrete count: an int)."""
    if isinstance(x, BoundedList):
        return x.count if x.traced else int(x.count)
    return builtins.len(x)


def materialized(out):
    """A result of ``to_static`` with each :class:`BoundedList` whose count is concrete given
    as the stacked rows it holds (the array a static trip count gives); nothing to do (and no
    cost) in a process that never made one."""
    if not _Made.made or not isinstance(out, (BoundedList, tuple, list, dict)):
        return out  # (a Python object an eager run gave, a generator: JAX would warn on it)
    is_list = lambda v: isinstance(v, BoundedList)  # noqa: E731
    if not any(is_list(v) for v in jax.tree_util.tree_leaves(out, is_leaf=is_list)):
        return out
    return jax.tree_util.tree_map(lambda v: v.exact() if is_list(v) and not v.traced else v, out, is_leaf=is_list)


def traced_length_error(name: str, site: Site) -> ConversionError:
    return site_error(
        site,
        f"the list `{name}` is appended to in this loop, whose number of iterations is traced, "
        f"and one XLA program cannot hold a list of traced length",
        f"Give the loop a bound with `with laxify.loop_options(max_iters=N):` (the list then holds "
        f"at most N rows: `len({name})` is a traced int32 and `{name}[i]` reads an item), or make "
        f"the trip count static.",
        NeedsPython,
    )
