"""A ``to_static`` function's list and dict arguments, changed in place, seen by the caller.

``jax.jit`` hands the traced function fresh lists and dicts of tracers (the arguments' pytree
rebuilt), so what the function changes in them (``mat.reverse()``, ``xs[i], xs[j] = xs[j],
xs[i]``, ``state["h"] = ...``, ``lst.append(v)``) would never reach the caller's objects,
where Python (and NumPy-backed code) changes them. So:

- while the function is traced (:func:`writing_back`), the lists and dicts among its
  arguments, and every container and leaf in them, are noted as they came in; when it returns,
  each argument whose structure or leaves differ is described by a *plan*: which of its
  containers are the caller's own (by their place in the argument), which leaves are the
  caller's leaves moved (by their place) and which are values the program computes (outputs of
  the program). The result is then a :class:`Changes` (a pytree whose static part is the plan),
  so a cached call carries the plan too;
- after the compiled call, :func:`written_back` gives the caller's objects their new contents,
  keeping their identity: slice assignment for lists, per key for dicts, recursively for the
  lists and dicts they hold.

A function that changes no argument returns its result as it is: the cached call pays one
type test. Everything else runs while tracing, or after a call that changed an argument.
"""

from __future__ import annotations

import functools
from typing import Callable

import jax
import numpy as np

from laxify.ir.errors import NeedsPython
from laxify.runtime import trace

__all__ = ["Changes", "marking_numpy", "numpy_in_place", "writing_back", "written_back"]

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


class Changes:
    """The function's result ``out``, with the new contents of the arguments it changed in
    place: ``plan`` (static) says where each value goes, ``leaves`` are the computed values."""

    __slots__ = ("out", "leaves", "plan")

    def __init__(self, out, leaves, plan):
        self.out, self.leaves, self.plan = out, leaves, plan


jax.tree_util.register_pytree_node(
    Changes, lambda c: ((c.out, c.leaves), c.plan), lambda plan, children: Changes(*children, plan)
)


def _shape(value) -> tuple:
    """What a container is, as a hashable structure of identities (compared, never stored)."""
    kind = type(value)
    if kind is list:
        return ("l", id(value), tuple(_shape(v) for v in value))
    if kind is dict:
        return ("d", id(value), tuple((k, _shape(v)) for k, v in value.items()))
    if kind is tuple:
        return ("t", tuple(_shape(v) for v in value))
    return ("x", id(value))


def _index(value, path: tuple, places: dict) -> None:
    """``places[id(obj)] = (path, shape, obj)`` for every container and leaf in ``value`` (the
    object is held, so that no object made while tracing can take its identity)."""
    kind = type(value)
    places[id(value)] = (path, _shape(value) if kind in (list, dict) else None, value)
    if kind is list or kind is tuple:
        for k, v in enumerate(value):
            _index(v, path + (k,), places)
    elif kind is dict:
        for k, v in value.items():
            _index(v, path + (k,), places)


def _plan(value, places: dict, leaves: list, name: str):
    """How to make ``value`` (the argument, or a part of it, as the function left it) from the
    caller's objects and the computed ``leaves``."""
    kind = type(value)
    place = places.get(id(value))
    if kind in (list, dict) and place is not None and _shape(value) == place[1]:
        return ("same", place[0])  # the caller's container, unchanged
    if kind is list:
        return ("list", place and place[0], tuple(_plan(v, places, leaves, name) for v in value))
    if kind is dict:
        return ("dict", place and place[0], tuple(value), tuple(_plan(v, places, leaves, name) for v in value.values()))
    if kind is tuple:
        return ("tuple", tuple(_plan(v, places, leaves, name) for v in value))
    if place is not None and not isinstance(value, _SCALARS):
        return ("same", place[0])  # the caller's leaf, maybe moved
    if isinstance(value, _SCALARS):
        try:
            hash(value)
            return ("const", value)
        except TypeError:
            pass
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        leaves.append(value)
        return ("new", len(leaves) - 1)
    raise NeedsPython(
        f"the function puts a Python {type(value).__name__} into its argument `{name}` in place, "
        f"and one XLA program returns only arrays and numbers",
        None,
        f"Return the changed `{name}` (or the {type(value).__name__}) instead of changing the argument, "
        f"or call the function unconverted.",
    )


def _holds_original(value, places: dict) -> bool:
    kind = type(value)
    if kind in (list, dict) and id(value) in places:
        return True
    if kind is list or kind is tuple:
        return any(_holds_original(v, places) for v in value)
    if kind is dict:
        return any(_holds_original(v, places) for v in value.values())
    return False


def writing_back(fn: Callable, names: tuple[str, ...] = ()) -> Callable:
    """``fn``, traced: its result, or a :class:`Changes` when it changed a list or dict argument
    in place (decided here, while tracing). ``names``: the parameters' names, for messages."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        where = [k for k, a in enumerate(args) if type(a) in (list, dict)]
        where += [k for k, a in kwargs.items() if type(a) in (list, dict)]
        if not where:
            return fn(*args, **kwargs)
        places: dict = {}
        roots = [args[k] if type(k) is int else kwargs[k] for k in where]
        for k, root in zip(where, roots):
            _index(root, (k,), places)
        before = [_shape(root) for root in roots]
        out = fn(*args, **kwargs)
        leaves: list = []
        plan = []
        for k, root, shape in zip(where, roots, before):
            if _shape(root) != shape:
                name = k if type(k) is str else (names[k] if k < len(names) else f"argument {k}")
                plan.append((k, _plan(root, places, leaves, name)))
        # A result that holds an argument's list or dict (`return mat`) is the caller's object.
        own = _holds_original(out, places)
        if not plan and not own:
            return out
        returned = _plan(out, places, leaves, "the result") if own else None
        return Changes(None if own else out, leaves, (tuple(plan), returned))

    return run


def written_back(result, args: tuple, kwargs: dict):
    """``result`` of the compiled call; for a :class:`Changes`, its ``out`` after the caller's
    arguments got what the function changed in them."""
    if type(result) is not Changes:
        return result
    plans, returned = result.plan
    roots = {}
    for k, _ in plans:
        roots[k] = args[k] if type(k) is int else kwargs[k]
    if returned is not None:
        for k in _roots_of(returned):
            roots[k] = args[k] if type(k) is int else kwargs[k]

    def at(path):
        value = roots[path[0]]
        for key in path[1:]:
            value = value[key]
        return value

    # Everything the plan takes from the caller's objects is read before any of them changes.
    writes: list = []

    def build(node):
        tag = node[0]
        if tag == "same":
            return at(node[1])
        if tag == "const":
            return node[1]
        if tag == "new":
            return result.leaves[node[1]]  # a value the program computed: an array
        if tag == "tuple":
            return tuple(build(n) for n in node[1])
        if tag == "list":
            items = [build(n) for n in node[2]]
            if node[1] is None:
                return items
            target = at(node[1])
            writes.append((target, items))
            return target
        keys, values = node[2], [build(n) for n in node[3]]
        if node[1] is None:
            return dict(zip(keys, values))
        target = at(node[1])
        writes.append((target, dict(zip(keys, values))))
        return target

    for k, node in plans:
        build(node)
    out = result.out if returned is None else build(returned)
    for target, new in writes:
        if type(target) is list:
            target[:] = new
            continue
        for key in [key for key in target if key not in new]:
            del target[key]
        for key, value in new.items():
            if key not in target or target[key] is not value:
                target[key] = value
    return out


def _roots_of(node) -> set:
    """The arguments a plan reads from."""
    found: set = set()
    stack = [node]
    while stack:
        node = stack.pop()
        tag = node[0]
        if tag == "same" or (tag in ("list", "dict") and node[1] is not None):
            found.add(node[1][0])
        if tag == "tuple":
            stack.extend(node[1])
        elif tag == "list":
            stack.extend(node[2])
        elif tag == "dict":
            stack.extend(node[3])
    return found


# -- NumPy array arguments ---------------------------------------------------------------------
# NumPy changes an array in place (`x += 1`, `x[0] = 5`, `a = x; a += 1`, `np.add(x, 1, out=x)`):
# the caller sees the change, and so does every name of the array or of a view of it. A traced
# value is never changed in place, so a function that may change a parameter's array in place
# (transpiler/analysis/in_place.py) runs as Python where a NumPy array is given for it.


def numpy_leaves(args: tuple, kwargs: dict) -> tuple[int, ...]:
    """Which leaves of the call's arguments (``jax.tree_util.tree_leaves((args, kwargs))``) are
    NumPy arrays; ``()`` where none is (the common case costs a type test per argument)."""
    if not any(type(a) is np.ndarray or type(a) in (list, tuple, dict) for a in (*args, *kwargs.values())):
        return ()
    leaves = jax.tree_util.tree_leaves((args, kwargs))
    return tuple(k for k, leaf in enumerate(leaves) if type(leaf) is np.ndarray)


def marking_numpy(fn: Callable, where: tuple[int, ...]) -> Callable:
    """``fn``, traced, with the traced values of the NumPy arrays at ``where`` (see
    :func:`numpy_leaves`) noted on the trace state, for :func:`numpy_in_place`."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        noted = trace.current().numpy
        for k in where:
            if k < len(leaves):
                noted[id(leaves[k])] = leaves[k]
        return fn(*args, **kwargs)

    return run


def numpy_in_place(site, value) -> None:
    """At the start of a converted function that may change the array of its parameter
    ``site.names[0]`` in place (at ``site``'s line): ``value``, the parameter's value, must not
    be (or hold) a NumPy array argument being traced, else the function runs as Python."""
    noted = trace.current().numpy
    if not noted:
        return
    if not any(noted.get(id(leaf)) is leaf for leaf in jax.tree_util.tree_leaves(value)):
        return
    from laxify.runtime.messages import location  # (messages imports the lowering)

    name = site.names[0]
    raise NeedsPython(
        f"`{name}` is a NumPy array (or holds one) that the function changes in place here: NumPy "
        f"changes the caller's array, which every name of it and of its views then shows, where "
        f"one XLA program computes a new array",
        location(site),
        f"Pass a JAX array (`jnp.asarray(...)`) to compile the function (it then leaves the "
        f"caller's array as it is, as JAX arrays do), or assign a new array (`{name} = {name} + 1` "
        f"instead of `{name} += 1`) and return it.",
    )
