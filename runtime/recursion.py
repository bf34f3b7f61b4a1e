"""A function that calls itself at most once on each path (linear recursion), run as loops.

``transpiler/converters/recursion.py`` writes the function's body as a loop going down (each
iteration is one call: the arguments of the call become the parameters, and the values the
rest of the caller reads after the call are saved as a *frame*), then a loop coming up (each
iteration finishes one caller: its frame is restored, the value of the call below is the call's
value). This module holds what those loops need:

- :func:`recursion` at the top: whether the loops run at all. The body as written runs instead
  where no value its tests read is traced (the calls unroll while tracing, as before) or where
  the name the function calls itself by no longer holds it (rebound since the conversion);
- :func:`deeper` at each call: the next level, and Python's ``RecursionError`` past the limit
  (``sys.getrecursionlimit()``, or ``loop_options(max_iters=N)``), through the run-time report
  where the depth is traced; :func:`within`, the test of the loop down;
- :func:`push` / :func:`frame`: the frames. In a loop that runs as Python (a depth known while
  tracing) they are a Python list of the values as they are. In a traced loop they are
  :class:`Frames`: one buffer of ``limit`` rows per array of the frame, written at the traced
  depth; a Python number saved is read back as a traced value marked with its Python type
  (``runtime/numbers.py``), and a value that is no array or number (``None``, a string) is
  kept in the frame's layout, the same at every level.
"""

from __future__ import annotations

import linecache
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from laxify.ir.errors import Location, NeedsPython
from laxify.ir.user_code import behind_laxify_wrappers
from laxify.runtime import error_channel, numbers, options
from laxify.runtime.compile import converted_from
from laxify.runtime.dispatch.values import Undefined, any_traced, is_traced

__all__ = ["Frames", "deeper", "frame", "push", "recursion", "within"]

# The bytes one saved value's buffer may take (`limit` rows of it): past that the function
# runs as Python (a frame of large arrays a thousand levels deep is no program to compile).
_BUFFER_BYTES = 1 << 28


class Recursion:
    """What the loops of one call share: the limit, where the calls stand, and the depth of
    traced regions at the call (a frame pushed deeper than that is pushed in a traced loop)."""

    __slots__ = ("limit", "region", "filename", "line", "name")

    def __init__(self, limit: int, region: int, filename: str, line: int, name: str):
        self.limit, self.region, self.filename, self.line, self.name = limit, region, filename, line, name


def recursion(target, qualname: str, first_line: int, call_line: int, tested) -> Recursion | None:
    """At the top of a function converted into loops: what its loops share, or ``None`` where
    its own body runs as written: ``target``, what its name holds now, is no longer the
    function (rebound since the conversion: its calls are no calls of itself), or no value its
    tests read (``tested``) is traced (the depth is known while tracing: the calls unroll, one
    traced level per call, as any call of a converted function)."""
    if not any_traced(tested):
        return None
    fn = behind_laxify_wrappers(target)
    if type(fn) is types.FunctionType:
        fn = converted_from(fn) or fn
    code = getattr(fn, "__code__", None)
    if code is None or code.co_qualname != qualname or code.co_firstlineno != first_line:
        return None
    filename = code.co_filename
    limit = options.current().max_iters or sys.getrecursionlimit()
    return Recursion(int(limit), error_channel.region_depth(), filename, call_line, qualname.rsplit(".", 1)[-1])


def deeper(rec: Recursion, level):
    """``level + 1``, the level of the call about to be made; where it passes the limit,
    Python's ``RecursionError`` (after the call, from the report, where the level is traced)."""
    nxt = level + 1
    if is_traced(nxt):
        error_channel.check_at(
            nxt <= rec.limit,
            lambda: RecursionError("maximum recursion depth exceeded"),
            rec.filename,
            sys._getframe(1).f_lineno,
        )
    elif nxt > rec.limit:
        raise RecursionError("maximum recursion depth exceeded")
    return nxt


def within(rec: Recursion, level):
    """Whether ``level`` is within the limit: the loop down the calls stops past it (where
    :func:`deeper` recorded Python's ``RecursionError``), before a bound loop's last step."""
    return level <= rec.limit


@jax.tree_util.register_pytree_node_class
class Frames:
    """The frames of a traced loop: ``rows``, one buffer per array of a frame (``limit`` rows);
    ``layout``: the frame's tree, and for each leaf either ``("row", k, kind)`` (buffer ``k``,
    the Python type it stands for or ``None``) or ``("value", v)`` (a Python value kept)."""

    __slots__ = ("rows", "layout")

    def __init__(self, rows: tuple, layout: tuple):
        self.rows, self.layout = rows, layout

    def tree_flatten(self):
        return self.rows, self.layout

    @classmethod
    def tree_unflatten(cls, layout, rows):
        return cls(tuple(rows), layout)


def push(rec: Recursion, frames, depth, values: tuple):
    """``frames`` with ``values`` (the frame of the call at ``depth``) written at ``depth``."""
    in_loop = error_channel.region_depth() > rec.region
    if type(depth) is int and not in_loop and isinstance(frames, (list, Undefined)):
        held = list(frames[:depth]) if type(frames) is list else []
        held.append(values)
        return held
    leaves, tree = jax.tree_util.tree_flatten(values, is_leaf=lambda x: x is None)
    layout, arrays = [], []
    for leaf in leaves:
        if is_traced(leaf) or isinstance(leaf, (jax.Array, np.ndarray, np.generic)) or type(leaf) in (int, float, bool):
            kind = numbers.python_type(leaf)
            layout.append(("row", len(arrays), kind))
            arrays.append(jnp.asarray(leaf))
        else:
            layout.append(("value", leaf))
    layout = (tree, tuple(layout), rec.limit)
    if type(frames) is list:  # (frames of a Python loop met in a traced one: not one recursion's)
        raise _changed_layout(rec)
    if isinstance(frames, Frames):
        if frames.layout != layout:
            raise _changed_layout(rec)
        rows = frames.rows
    else:  # (the first frame: a traced loop's carry starts as this, zeros, before its first step)
        for a in arrays:
            if rec.limit * a.size * a.dtype.itemsize > _BUFFER_BYTES:
                raise _too_big(rec, a)
        rows = tuple(jnp.zeros((rec.limit, *a.shape), a.dtype) for a in arrays)
    at = jnp.clip(jnp.asarray(depth, jnp.int32), 0, rec.limit - 1)
    rows = tuple(lax.dynamic_update_index_in_dim(r, a.astype(r.dtype), at, 0) for r, a in zip(rows, arrays))
    return Frames(rows, layout)


def frame(frames, depth) -> tuple:
    """The values saved at ``depth``."""
    if type(frames) is list:
        return frames[int(depth)]
    tree, slots, limit = frames.layout
    at = jnp.clip(jnp.asarray(depth, jnp.int32), 0, limit - 1)
    leaves = []
    for slot in slots:
        if slot[0] == "value":
            leaves.append(slot[1])
            continue
        value = lax.dynamic_index_in_dim(frames.rows[slot[1]], at, 0, keepdims=False)
        leaves.append(numbers.mark(value, slot[2]) if slot[2] is not None else value)
    return jax.tree_util.tree_unflatten(tree, leaves)


def _at_call(rec: Recursion) -> Location:
    """Where the function calls itself (its first call of itself in the source)."""
    text = linecache.getline(rec.filename, rec.line).rstrip("\n")
    return Location(rec.filename, rec.line, max(text.find(rec.name), 0), text)


def _changed_layout(rec: Recursion) -> NeedsPython:
    return NeedsPython(
        f"`{rec.name}` calls itself on a traced value, which laxify runs as a loop, and the values a "
        f"call keeps for after its inner call change type from one level to the next (a Python value "
        f"that is not a number, or an array whose shape changes), which one loop cannot carry",
        _at_call(rec),
        "Keep the values the function reads after its call of itself arrays of one shape and dtype.",
    )


def _too_big(rec: Recursion, a) -> NeedsPython:
    return NeedsPython(
        f"`{rec.name}` calls itself on a traced value, which laxify runs as a loop that saves, for "
        f"each of up to {rec.limit:,} levels, a {a.dtype}{list(a.shape)} array the call reads after "
        f"its inner call: {rec.limit * a.size * a.dtype.itemsize / 2**20:,.0f} MiB",
        _at_call(rec),
        f"Bound the depth with @laxify.loop_options(max_iters=N) on `{rec.name}`.",
    )
