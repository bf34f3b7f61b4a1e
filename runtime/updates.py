"""``x[i] = v`` and ``x[i] op= v`` in converted code (``x = _lx.setitem(x, i, v)``).

A JAX array (or a tracer) cannot change in place: it gets JAX's functional update,
``x.at[i].set(v)`` (``.add``, ``.subtract``, ``.multiply``, ``.divide``, ``.power`` for the
augmented operators that have one), and the name is rebound to the new array. Anything else
(a list, a dict, a NumPy array, a user object) is assigned in place exactly as Python does,
and the same object is returned, so the rebinding changes nothing. A NumPy array that is given
a traced index or value cannot hold it: it becomes a JAX array updated functionally.

``state["h"][i] = v`` and ``self.buf[i] = v`` update through a path (``_lx.at["h"][i]``,
``_lx.at.buf[i]``): each container on the way is read once, as Python reads it, the last one
is updated, and a container whose item became a new object (a JAX array updated
functionally) gets it back, in turn functionally when it is a JAX array itself.
"""

from __future__ import annotations

import linecache
import sys


import jax
import jax.numpy as jnp
import numpy as np

from laxify.ir.errors import ConversionError
from laxify.runtime import effects, numbers, trace
from laxify.runtime.dispatch.values import any_traced, is_traced
from laxify.runtime.lowering import Site
from laxify.runtime.messages import location

__all__ = ["Path", "at", "setitem", "setitem_op"]


class _Attr:
    """One attribute step of a path: ``.buf``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class Path:
    """The items and attributes from a name to the array it updates, written as the user wrote
    them: ``_lx.at["h"][i]`` is ``["h"][i]``, ``_lx.at.buf[i]`` is ``.buf[i]``, ``_lx.at[1:3]``
    the one item ``[1:3]`` (as ``np.s_`` writes a slice)."""

    __slots__ = ("_lx_steps",)

    def __init__(self, steps: tuple = ()):
        object.__setattr__(self, "_lx_steps", steps)

    def __getitem__(self, key):
        if not self._lx_steps:
            return Path((key,))
        return Path(self._lx_steps + (key,))

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # protocols (copy, pickle) look these up
        return Path(self._lx_steps + (_Attr(name),))


at = Path()

# The augmented operators JAX's ``.at[]`` has a method for; the others use ``.set(x[i] op v)``.
_AT_METHODS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "**": "power"}
_UPDATED = ("+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>")
_INPLACE = {op: numbers.OPERATORS[op + "="] for op in _UPDATED}
_BINARY = {op: numbers.OPERATORS[op] for op in _UPDATED}


def setitem(obj, index, value, alias: tuple[str, ...] | None = None, also: tuple[str, ...] = ()):
    """``obj[index] = value`` (``index`` may be a :class:`Path`); returns what the name holds
    after it: a new array for a JAX array, else ``obj`` itself, changed in place."""
    return _update(obj, index, None, value, alias, also)


def setitem_op(obj, index, op: str, value, alias: tuple[str, ...] | None = None, also: tuple[str, ...] = ()):
    """``obj[index] op= value`` (``op`` is ``"+"``, ``"//"``, ...), as :func:`setitem`.

    ``alias``: ``(name, other)`` where the conversion saw ``other = name`` (or the reverse)
    before this update and ``other`` read after it, ``(name, other, "for")`` where ``name`` is
    the target of ``for name in other``: a functional update is then an error. ``also``: the
    further names that share the object there."""
    return _update(obj, index, op, value, alias, also)


def live_rows(array):
    """``array``, marked for the ``for`` loop that iterates over it: its body updates items of
    it, so the loop reads each row from the array as the earlier iterations left it."""
    trace.current().marked = {id(array): array}  # (the strong reference keeps the id unique meanwhile)
    return array


def marked_rows() -> dict[int, object]:
    """The arrays ``live_rows`` marked (taken: a mark is for one loop)."""
    state = trace.current()
    found, state.marked = state.marked, {}
    return found


def _update(obj, index, op, value, alias, also=()):
    steps = index._lx_steps if isinstance(index, Path) else (index,)
    # Read the containers on the way once, in order, as Python does.
    chain = [obj]
    for step in steps[:-1]:
        chain.append(_get(chain[-1], step))
    new = _store(chain[-1], steps[-1], op, value)
    if alias is not None and new is not chain[-1] and alias[2:] in _SHARING:
        raise _alias_error(*alias)  # a JAX array another name holds (or views) became a new one
    if (
        alias is not None
        and new is chain[-1]
        and effects.watching()
        and not (alias[2:] == ("holds",) and len(steps) < 2)
    ):
        # A Python object changed in place inside a traced branch or loop body works on a copy:
        # unless the construct carries it out (and writes it back), another name (or the
        # caller, for a parameter) would not see the change. (`lst[0] = v` where
        # `lst = [a, ...]` replaces an item: `a` itself is not changed.)
        effects.note_aliased_change(obj, alias[0], (alias[1], *also))
    for k in range(len(steps) - 2, -1, -1):
        if new is chain[k + 1]:
            return obj  # changed in place: the containers above hold it already
        new = _store(chain[k], steps[k], None, new)
    if new is obj:
        return obj
    if alias is not None:
        raise _alias_error(*alias)
    return new


def shared_change(obj, names: tuple[str, str], also: tuple[str, ...] = ()) -> None:
    """Before ``a.append(v)`` (a method that changes a list, dict or set in place, or ``a += ...``)
    where the conversion saw ``b = a`` and ``b`` read after: inside a traced branch or loop body
    ``a`` is the construct's copy, so the change reaches ``b`` only if the construct carries
    ``a`` out (and writes it back); otherwise the construct is Python (effects.alias_error)."""
    if effects.watching() and type(obj) in (list, dict, set):
        effects.note_aliased_change(obj, names[0], (names[1], *also))


def _get(container, step):
    if isinstance(step, _Attr):
        return getattr(container, step.name)
    return container[step]


def _store(container, step, op, value):
    """``container[step] (op)= value``; returns ``container``, or its new value when it is a
    JAX array (or a NumPy array given a traced index or value)."""
    if isinstance(step, _Attr):
        if op is None:
            setattr(container, step.name, value)
        else:
            setattr(container, step.name, _INPLACE[op](getattr(container, step.name), value))
        return container
    if isinstance(container, np.ndarray) and any_traced((step, value)):
        container = jnp.asarray(container)
    if not isinstance(container, jax.Array):
        if op is None:
            container[step] = value
        else:
            old = container[step]
            if is_traced(old) or is_traced(value):  # Python numbers keep Python's meaning
                container[step] = numbers.at_users_line(op + "=", old, value)
            else:
                container[step] = _INPLACE[op](old, value)
        return container
    return _functional(container, step, op, value)


def _functional(x, index, op, value):
    new = _functional_update(x, index, op, value)
    if new.dtype != x.dtype:
        # As NumPy stores into an array: the array keeps its dtype (`a[0] /= 2` on an int
        # array truncates, where `.at[].divide` would make the whole array float).
        new = new.astype(x.dtype)
    return new


def _functional_update(x, index, op, value):
    if isinstance(index, list):
        index = jnp.asarray(index)  # NumPy's `x[[0, 2]]`; JAX asks for an array
    mask = _traced_mask(x, index)
    if mask is not None:
        return _masked(x, mask, op, value)
    _check_bounds(x, index)
    ref = x.at[index]
    widens = _widens(x, value)
    if op is None:
        return ref.set(jnp.asarray(value).astype(x.dtype) if widens else value)
    method = _AT_METHODS.get(op)
    if widens:  # computed as NumPy does (`x[i] / v` in the wider dtype), stored in x's dtype
        return ref.set(_BINARY[op](x[index], value).astype(x.dtype))
    if method is not None and not _may_repeat(index):
        return getattr(ref, method)(value)
    # NumPy's `x[idx] op= v` reads x[idx] once and writes it back: a repeated index in an
    # integer-array index is changed once (`.add` would add once per repetition).
    return ref.set(_BINARY[op](x[index], value))


def _widens(x, value) -> bool:
    """Whether ``x op value`` has another dtype than ``x`` (a float value into an int array)."""
    try:
        return jnp.result_type(x, value if hasattr(value, "dtype") else jnp.asarray(value)) != x.dtype
    except (TypeError, ValueError):
        return False


def _may_repeat(index) -> bool:
    """Whether an index holds an integer array of one or more elements (which may repeat)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (list, np.ndarray, jax.Array)) and np.ndim(part) > 0:
            if not jnp.issubdtype(jnp.result_type(part), jnp.bool_):
                return True
    return False


def _check_bounds(x, index) -> None:
    """NumPy's IndexError for a Python int index out of range (``.at[]`` would drop the update)."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(p is Ellipsis or p is None for p in parts):
        return
    for axis, part in enumerate(parts):
        if axis >= x.ndim:
            return
        if isinstance(part, (int, np.integer)) and not isinstance(part, bool):
            size = x.shape[axis]
            if not -size <= part < size:
                raise IndexError(f"index {part} is out of bounds for axis {axis} with size {size}")


def _traced_mask(x, index):
    """The traced boolean array of a mask index (``x[mask] = v``), else None."""
    if is_traced(index) and index.dtype == jnp.bool_:
        return index
    return None


def _masked(x, mask, op, value):
    """``x[mask] (op)= value`` with a traced mask: ``jnp.where``, where the value is the same for
    every selected element (a scalar, or a row for a mask of the leading axes)."""
    value_ndim = np.ndim(value)
    if mask.shape != x.shape[: mask.ndim] or value_ndim > x.ndim - mask.ndim:
        raise _error(
            f"This assignment selects elements of an array `{_describe_shape(x)}` with a traced "
            f"boolean mask `{_describe_shape(mask)}` and gives them a value "
            f"`{_describe_shape(value)}`: how many elements the mask selects is only known when "
            f"the program runs, so the value cannot be matched to them.",
            "Assign one value to every selected element (a scalar, or one row for a mask of the "
            "leading axes), or write `x = jnp.where(mask, new_values, x)` with `new_values` of "
            "the shape of `x`.",
        )
    cond = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
    new = value if op is None else _BINARY[op](x, value)
    return jnp.where(cond, new, x).astype(x.dtype)


def _describe_shape(x) -> str:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return f"{x.dtype}[{','.join(map(str, x.shape))}]"
    return type(x).__name__


def _caller_site() -> Site:
    """The user's line of the update: the first frame outside this module."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename == __file__:
        frame = frame.f_back
    filename, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, line)
    return Site("update", filename, line, len(text) - len(text.lstrip()))


def _error(message: str, fix: str) -> ConversionError:
    return ConversionError(message, location(_caller_site()), fix)


_SHARING = (("holds",), ("held",), ("view",), ("viewed",))


def _alias_error(name: str, alias: str, kind: str | None = None) -> ConversionError:
    if kind == "param":
        return _error(
            f"This assignment updates the JAX array `{name}`, a parameter of the function, and "
            f"nothing reads `{name}` after it: in NumPy the update would change the caller's "
            f"array, but a JAX array cannot change in place, so laxify's functional update of "
            f"`{name}` would be lost.",
            f"Return the new `{name}` (`return {name}`, or with the other results) and use the "
            f"returned value where the function is called.",
        )
    if kind in ("holds", "held"):
        return _error(
            f"This assignment updates a JAX array that both `{name}` and `{alias}` refer to (one "
            f"was built holding the other, with `=` before), and `{alias}` is used after this line. "
            f"A JAX array cannot change in place: laxify's update makes a new array, so `{alias}` "
            f"would keep the old values where NumPy would show the new ones.",
            "Update the array through one name and build the other after the update (for example "
            "make the dict or list after changing the array), or read the new value through the "
            "name that was updated.",
        )
    if kind in ("view", "viewed"):
        view, base = (name, alias) if kind == "view" else (alias, name)
        what = (
            f"`{view}`, which was taken from the JAX array `{base}` by indexing"
            if kind == "view"
            else f"the JAX array `{base}`, and `{view}` was taken from it by indexing"
        )
        return _error(
            f"This assignment updates {what} (in NumPy a view, which shares the items), and "
            f"`{alias}` is used after this line. A JAX array cannot change in place: laxify's "
            f"update makes a new array, so `{alias}` would keep the old values where NumPy would "
            f"show the new ones.",
            f"Update `{base}` itself (`{base}[i, j] = v`) and index it again after the update, or "
            f"write `{view} = {base}[...].copy()` if `{view}` should be a copy.",
        )
    if kind == "for":
        return _error(
            f"This assignment updates `{name}`, the target of a `for` loop over the JAX array "
            f"`{alias}`, which is used after this line. A JAX array cannot change in place: laxify "
            f"makes `{name}` a new, updated array, so `{alias}` would keep the old values where "
            f"NumPy would show the new ones.",
            f"Index `{alias}` itself instead (`for i in range(len({alias})):` with "
            f"`{alias}[i][...] = ...`), or collect the new rows in a list and stack them "
            f"(`jnp.stack(rows)`).",
        )
    return _error(
        f"This assignment updates the JAX array `{name}`, and `{alias}` refers to the same "
        f"array (one was assigned from the other with `=` before) and is used after this line. "
        f"A JAX array cannot change in place: laxify makes `{name}` a new, updated array, so "
        f"`{alias}` would keep the old values where NumPy would show the new ones.",
        f"Write `{alias} = {name}.copy()` if `{alias}` should keep the old values; if it should "
        f"see the new ones, assign `{alias} = {name}` again after the update (or use `{name}`, "
        f"or return the new `{name}`).",
    )
