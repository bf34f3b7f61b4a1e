"""Lists appended to inside loops: a Python list in a Python loop, a stacked per-iteration
output in a traced loop (the name then holds the stacked array: ``len``, ``[-1]``, iteration
and ``jnp.stack`` behave as on the list of its rows)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from laxify.ir.errors import ConversionError
from laxify.runtime.lowering import Site
from laxify.runtime.messages import site_error

__all__ = ["Accumulator", "StackedList", "append", "appended_carries", "appended_once", "list_carries", "stacked_result"]


class Accumulator:
    """Stands for a list inside a traced loop body: records the one value appended per iteration."""

    __slots__ = ("name", "values")

    def __init__(self, name: str):
        self.name = name
        self.values: list = []

    def append(self, value) -> None:
        self.values.append(value)

    def __repr__(self) -> str:
        return f"<list {self.name} being accumulated>"


def append(lst, value):
    """``lst.append(value)``, returning ``lst`` (what converted code assigns back to the name)."""
    lst.append(value)
    return lst


def list_carries(init) -> list[int]:
    """Indexes of loop carries that are Python lists (candidates for stacked outputs)."""
    return [k for k, v in enumerate(init) if isinstance(v, list)]


def appended_carries(init, names, step) -> list[int]:
    """Indexes of the list carries that one iteration appends to (found by tracing ``step``
    once abstractly); other lists are fixed-length pytrees carried as they are."""
    lists = list_carries(init)
    if not lists:
        return []
    probes = {k: AppendProbe(init[k]) for k in lists}
    args = [k for k, v in enumerate(init) if k not in probes and _abstractable(v)]

    def run(*values):
        full = list(init)
        for k, probe in probes.items():
            full[k] = probe
        for k, v in zip(args, values):
            full[k] = v
        step(tuple(full))

    jax.eval_shape(run, *[init[k] for k in args])
    return [k for k in lists if probes[k].appended]


class AppendProbe(list):
    """A copy of a list that notes whether the loop body appends to it. It is a pytree of its
    items, so inner loops and branches carry it like a list; the copies they rebuild report an
    append to the probe they came from."""

    def __init__(self, items=(), origin: "AppendProbe | None" = None):
        super().__init__(items)
        self.origin = origin
        self.appended = False

    def append(self, value) -> None:
        probe = self
        while probe is not None:
            probe.appended = True
            probe = probe.origin
        super().append(value)


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
            f"The list `{name}` gets {len(out.values)} appends in one iteration of this traced "
            f"loop; a traced loop stacks exactly one value per iteration.",
            f"Append exactly once per iteration (append a tuple to collect several values).",
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
        stacked = jax.tree_util.tree_map(
            lambda s, *items: jnp.concatenate([jnp.stack(items), s]), stacked, *prefix)
    if isinstance(stacked, jax.Array) or hasattr(stacked, "shape"):
        return stacked
    return StackedList(stacked)


def traced_length_error(name: str, site: Site) -> ConversionError:
    return site_error(
        site,
        f"The list `{name}` is appended to in this loop, whose number of iterations is traced: "
        f"one XLA program cannot hold a list of traced length.",
        f"Give the loop a bound with `with laxify.loop_options(max_iters=N):` (the list becomes an "
        f"(N, ...) array, zero after the last iteration), or make the trip count static.",
    )
