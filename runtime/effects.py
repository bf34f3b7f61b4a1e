"""Effects on Python objects while a traced construct is traced.

A branch of a traced ``if``, the body of a traced loop and a lazy operand of a traced
``and``/``or``/conditional expression run in Python while they are traced: every branch
(also the one the program will not take), once per loop (not once per iteration), and
sometimes more than once (laxify and JAX probe them). A change they make in place to a
Python object that exists outside them would happen on the wrong path or the wrong number
of times. So, while such a function is traced, the Python objects it can reach are watched:

- what it receives from the construct (its carried values) arrives as fresh lists, dicts and
  tuples; a change to those is the function's own, and is kept where the function returns
  the changed object (the construct carries it out, as any other value); a variable of an
  enclosing function that it reads and that holds one of those objects under another name
  holds the fresh copy while it runs (``_swap_cells``), so that it shows the function's
  changes as in Python;
- everything else it can reach (the variables it reads, what they hold, the arguments,
  defaults and globals of the functions it calls, the list whose method it calls; the
  attributes of the user's objects, classes and functions among them: ``Tally.hits += 1``,
  ``BOX.n += 1``, ``bump.calls += 1``) is compared with a snapshot when it returns; a
  change there, and a call of a function that assigns a global or an enclosing function's
  variable, is a :class:`NeedsPython` at the construct: the objects get their contents
  back, and a ``to_static`` function runs eagerly (with its warning), where Python makes
  each change exactly as written.

A ``for`` loop that the conversion keeps as Python because it changes such an object (or
assigns a global or nonlocal name) runs while tracing; over a traced array it would make its
change once per compilation, with traced values: :func:`kept_effects` makes it a
:class:`NeedsPython` there.

Nothing here runs when the compiled program runs: only while tracing, and only for the
constructs that trace Python functions under a traced condition.
"""

from __future__ import annotations

import dis
import functools
import inspect
import operator
import sys
import types
import weakref
from typing import Callable

import jax
import numpy as np
from jax.core import Tracer

from laxify.ir.errors import Location, NeedsPython
from laxify.ir.naming import DEFAULT_PREFIX
from laxify.ir.user_code import is_library_function, is_library_type
from laxify.runtime import trace
from laxify.runtime.dispatch.values import ATOMS

__all__ = ["Identity", "alias_error", "guarded", "kept_effects", "note_aliased_change", "note_call", "watching"]

_UNWATCHED = (*ATOMS, type, types.ModuleType)  # never snapshotted (but the user's classes)
_UNWATCHED_KINDS = frozenset((*ATOMS, type, types.ModuleType, types.FunctionType))
_FUNCTION_DEPTH = 2  # how deep into the closures of functions reachable from a watched one
_LARGE = 1 << 20  # NumPy arrays of more elements are not snapshotted
_MISSING = object()


def _state_of(obj):
    """What is compared to see whether ``obj`` changed in place (``None``: never changes)."""
    kind = type(obj)
    if kind is types.FunctionType or isinstance(obj, type):
        return _own_attributes(obj)
    if kind is list:
        return tuple(obj)
    if kind is dict:
        return tuple(obj.items())
    if kind is set:
        return frozenset(obj)
    if kind is bytearray:
        return bytes(obj)
    if kind is np.ndarray:
        # (a large array is not copied while tracing: changes to it are not watched)
        return obj.copy() if obj.flags.writeable and obj.size <= _LARGE else None
    return _attributes(obj)


def _attributes(obj):
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict (slots), or a proxy that refuses
        return None
    return tuple(attrs.items()) if type(attrs) is dict else None


def _own_attributes(obj) -> tuple:
    """The attributes a class or a function holds itself (``Tally.hits``, ``bump.calls``), but
    the dunder ones that Python and libraries set on their own (``__slotnames__``, ...)."""
    return tuple(item for item in vars(obj).items() if not (item[0].startswith("__") and item[0].endswith("__")))


def _attribute_changed(before, now) -> str | None:
    """The name of the first attribute that ``now`` (attributes, as ``_attributes`` gives them)
    holds differently from ``before`` (``None``: none, or not attributes)."""
    old, new = dict(before), dict(now)
    for key in (*old, *new):
        if type(key) is str and (key not in old or key not in new or old[key] is not new[key]):
            return key
    return None


def _same(kind: type, before, now) -> bool:
    if kind is np.ndarray:
        return before.shape == now.shape and bool(np.array_equal(before, now, equal_nan=True))
    if kind is set or kind is bytearray:
        return before == now
    if len(before) != len(now):
        return False
    if kind is list:
        return all(map(operator.is_, before, now))
    # dict items and attributes: the same keys, holding the same objects
    return all((a[0] is b[0] or a[0] == b[0]) and a[1] is b[1] for a, b in zip(before, now))


def _restore(obj, before) -> None:
    kind = type(obj)
    if kind is list:
        obj[:] = before
    elif kind is dict:
        obj.clear()
        obj.update(before)
    elif kind is set:
        obj.clear()
        obj.update(before)
    elif kind is bytearray:
        obj[:] = before
    elif kind is np.ndarray:
        obj[...] = before
    elif kind is types.FunctionType or isinstance(obj, type):
        old, now = dict(before), dict(_own_attributes(obj))
        for key in now:
            if key not in old:
                delattr(obj, key)
        for key, value in old.items():
            if now.get(key, _MISSING) is not value:
                setattr(obj, key, value)
    else:
        attrs = object.__getattribute__(obj, "__dict__")
        attrs.clear()
        attrs.update(before)


_USER_CLASSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _user_type(cls: type) -> bool:
    """A class of the user's: its attributes (``Tally.hits``) are watched like an object's."""
    return type(cls) is type and not any(is_library_type(c) for c in cls.__mro__[:-1])


def _user_class(kind: type) -> bool:
    """A class of the user's (no library class among its bases) whose objects have a ``__dict__``."""
    known = _USER_CLASSES.get(kind)
    if known is None:
        known = _USER_CLASSES[kind] = (
            bool(getattr(kind, "__dictoffset__", 0))
            and not issubclass(kind, BaseException)
            and not any(is_library_type(cls) for cls in kind.__mro__[:-1])
        )
    return known


class _Watch:
    """The Python objects one traced function can reach, and their contents before it ran."""

    def __init__(self, construct: str, where: Callable[[], Location | None]):
        self.construct, self.where = construct, where
        self.saved: dict[int, tuple] = {}  # id -> (object, its state, the user's word for it)
        self.own: set[int] = set()  # fresh containers the construct passed in
        # Own ones changed that other names refer to: id -> (the name changed, the others).
        self.aliased: dict[int, tuple[str, tuple[str, ...]]] = {}
        self.started: frozenset | None = None  # ids watched when the function started (see made_here)

    def add(self, root, name: str, own: bool = False, depth: int = 0, shared: frozenset = frozenset()) -> None:
        """Watch ``root`` and what it holds. ``own``: fresh containers a construct passed in
        (``shared``: the ids of objects in them that are not fresh)."""
        stack = [(root, name, own, depth)]
        saved = self.saved
        while stack:
            obj, word, mine, level = stack.pop()
            if id(obj) in saved:
                continue
            kind = type(obj)
            if kind is type and _user_type(obj):
                # A class's own attributes (`Tally.hits += 1` in a helper), and what they hold.
                state = _own_attributes(obj)
                saved[id(obj)] = (obj, state, f"the class `{obj.__qualname__}`")
                stack.extend((value, word, False, level) for _, value in state if type(value) is not types.FunctionType)
                continue
            if isinstance(obj, _UNWATCHED):
                continue
            if kind is tuple:
                stack.extend((item, word, mine, level) for item in obj)
                continue
            if kind is types.FunctionType:
                if not is_library_function(obj):
                    # Its attributes (`bump.calls += 1`), then what it reads.
                    saved[id(obj)] = (obj, _own_attributes(obj), f"the function `{obj.__qualname__}`")
                    if level < _FUNCTION_DEPTH:
                        _function_roots(obj, stack, level + 1)
                continue
            if kind is types.MethodType:
                stack.append((obj.__self__, word, False, level))
                stack.append((obj.__func__, word, False, level))
                continue
            if kind is functools.partial:
                stack.extend((item, word, False, level) for item in (*obj.args, *obj.keywords.values()))
                continue
            if kind in (list, dict, set, bytearray, np.ndarray):
                state = _state_of(obj)
            elif _user_class(kind):
                state = _attributes(obj)
                stack.append((kind, word, False, level))  # (`type(self).count += 1`)
            else:
                continue
            if state is None:
                continue
            saved[id(obj)] = (obj, state, word)
            if mine and id(obj) not in shared:
                self.own.add(id(obj))
            if kind is list:
                stack.extend((item, word, mine, level) for item in obj)
            elif kind is dict or kind not in (set, bytearray, np.ndarray):
                stack.extend((value, word, mine, level) for _, value in state)

    def made_here(self, obj) -> bool:
        """Whether ``obj`` is a list, dict or set the watched function made while it runs: not
        watched, since nothing outside it could reach it when it started (``started`` holds the
        ids of the objects watched then; ``kept`` keeps them alive meanwhile)."""
        return type(obj) in (list, dict, set) and self.started is not None and id(obj) not in self.started

    def changed(self, outputs, private: frozenset = frozenset()) -> str | None:
        """The user's word for the first watched object that changed where it may not
        (``private``: the words of the construct's names whose object nothing else reaches)."""
        returned = None
        for key, (obj, state, word) in self.saved.items():
            now = _state_of(obj)
            if _same(type(obj), state, now):
                continue
            if key in self.own:
                # A copy the construct gave it: carried out (and written back) when returned.
                # The conversion carries every name a construct changes in place (to_ir
                # `_changed_objects`); one it did not see (a helper's `lst.pop()`) would be
                # a change lost for the names that refer to the object: Python runs it.
                if returned is None:
                    returned = _reachable(outputs)
                if key in returned or word in private:
                    continue
            if type(obj) not in (list, dict, set, bytearray, np.ndarray):
                attribute = _attribute_changed(state, now)
                if attribute is not None:
                    return f"the attribute `{attribute}` of {word}"
            return word
        return None

    def changed_own(self) -> bool:
        """Whether a copy the construct gave the function was changed in place."""
        saved = self.saved
        return any(not _same(type(saved[k][0]), saved[k][1], _state_of(saved[k][0])) for k in self.own)

    def changed_in_place(self, obj) -> bool:
        """Whether ``obj`` or a watched container it holds was changed in place."""
        for key in _reachable(obj):
            entry = self.saved.get(key)
            if entry is not None and not _same(type(entry[0]), entry[1], _state_of(entry[0])):
                return True
        return False

    def restore(self) -> None:
        for obj, state, _ in self.saved.values():
            if not _same(type(obj), state, _state_of(obj)):
                _restore(obj, state)


def _function_roots(fn: types.FunctionType, stack: list, level: int) -> None:
    """What ``fn`` reads besides its arguments, onto ``stack`` as ``add`` takes it: its closure
    variables, defaults and the globals it names that are containers."""
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        stack.append((value, f"`{name}`" if not name.startswith(DEFAULT_PREFIX) else "a value it reads", False, level))
    for value in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):
        stack.append((value, f"a default argument of `{fn.__name__}`", False, level))
    for name in _global_containers(fn):
        stack.append((fn.__globals__[name], f"the global `{name}`", False, level))


def _global_containers(fn: types.FunctionType) -> list[str]:
    """The globals ``fn`` names that may change in place: containers, the user's objects,
    classes and functions (their attributes)."""
    found = []
    namespace = fn.__globals__
    for name in fn.__code__.co_names:
        value = namespace.get(name)
        kind = type(value)
        if (
            kind in (list, dict, set, bytearray, np.ndarray)
            or (kind is type and _user_type(value))
            or kind is types.FunctionType
            or (kind not in _UNWATCHED_KINDS and _user_class(kind))
        ):
            found.append(name)
    return found


def _reachable(tree) -> set[int]:
    """The ids of the lists, dicts and user objects in ``tree`` (through tuples too)."""
    found, stack = set(), [tree]
    while stack:
        obj = stack.pop()
        kind = type(obj)
        if isinstance(obj, _UNWATCHED) or id(obj) in found:
            continue
        if kind is tuple:
            stack.extend(obj)
        elif kind is list:
            found.add(id(obj))
            stack.extend(obj)
        elif kind is dict:
            found.add(id(obj))
            stack.extend(obj.values())
        elif _user_class(kind):
            attrs = _attributes(obj)
            if attrs is not None:
                found.add(id(obj))
                stack.extend(value for _, value in attrs)
    return found


def _fresh(args: tuple) -> tuple:
    """``args`` with their pytree containers rebuilt, as JAX gives them to a traced function."""
    from laxify.runtime.dispatch.values import fresh

    return fresh(args)


def sharing(tree) -> tuple:
    """Where ``tree`` (a construct's values: tuples, lists, dicts) holds one list, dict or set at
    more than one place (``al = lst``, ``grid = [row, row]``): a group of paths (the keys from
    the top) for each such object, in a canonical order; ``()`` where nothing is shared. A lax
    primitive flattens its values, so the places would come out of it as separate objects."""
    places: dict[int, list] = {}
    stack = [(tree, ())]
    while stack:
        obj, path = stack.pop()
        kind = type(obj)
        if kind is tuple:
            stack.extend((item, (*path, k)) for k, item in enumerate(obj))
            continue
        if not isinstance(obj, (list, dict, set)):
            continue  # (subclasses too: laxify's probe of a list, a user's dict type)
        seen = places.get(id(obj))
        if seen is not None:
            seen.append(path)
            continue  # (its contents are reached through its first place)
        places[id(obj)] = [path]
        if len(path) > 20:
            continue
        if isinstance(obj, list):
            stack.extend((item, (*path, k)) for k, item in enumerate(obj))
        elif isinstance(obj, dict):
            stack.extend((value, (*path, key)) for key, value in obj.items())
    groups = [tuple(sorted(paths, key=repr)) for paths in places.values() if len(paths) > 1]
    return tuple(sorted(groups, key=repr))


def _at(tree, path: tuple):
    for key in path:
        tree = tree[key]
    return tree


def _put(tree, path: tuple, value):
    """``tree`` with ``value`` at ``path``: lists and dicts changed in place, tuples rebuilt."""
    key = path[0]
    new = value if len(path) == 1 else _put(tree[key], path[1:], value)
    if type(tree) is tuple:
        return (*tree[:key], new, *tree[key + 1 :])
    if tree[key] is not new:
        tree[key] = new
    return tree


def relink(tree, groups: tuple, prefer=()):
    """``tree`` whose places in each group of ``groups`` (see :func:`sharing`) hold one object
    again: the one at the group's first place, or one of ``prefer`` (the caller's own objects,
    written back into) found in the group."""
    for paths in groups:
        try:
            found = [_at(tree, p) for p in paths]
        except (KeyError, IndexError, TypeError):
            continue  # (a shape the values do not have: a construct's placeholder)
        one = next((v for v in found if any(v is q for q in prefer)), found[0])
        for path, value in zip(paths, found):
            if value is not one:
                tree = _put(tree, path, one)
    return tree


class Identity:
    """Which outputs of a traced function are which of its inputs (the very list or dict it
    received, changed in place or not), over every run of it: ``of[j] == i`` when output ``j``
    was input ``i`` on every run, ``-1`` when it was not on some run.

    It also keeps which lists and dicts two names (or two places) share (:func:`sharing`):
    ``given`` among the construct's operands, which each run receives shared alike
    (``offset``: the run's arguments before the operands, a scan's item); ``shared`` among a
    run's outputs, the same on every run (else which names share an object depends on the
    path: an error), given back shared after the construct. A loop's body (``loop``) must give
    back its carries shared as it received them: else whether two names share an object
    depends on how many times it ran."""

    def __init__(self, operands: tuple = (), site=None, offset: int = 0, loop: bool = False, may_skip: bool = False):
        self.loop, self.may_skip = loop, may_skip  # may_skip: a loop that may run zero times
        # The names the construct assigns (its outputs'), in the user's frame; whether the
        # function changes objects in place (else which names share one object is never seen,
        # and a sharing that depends on the path is no error: nothing is relinked).
        self.names, self.changes = (site.names, site.changes_in_place) if site is not None else ((), True)
        self.private = frozenset(f"`{n}`" for n in site.private) if site is not None else frozenset()
        self.kept: dict[int, int] = {}  # outputs some run gave back as the input (which)
        self.replaced: set[int] = set()  # outputs some run gave as a new list or dict
        self.of: dict[int, int] = {}
        self.changed: set[int] = set()  # outputs some run changed in place
        self.aliased: dict[int, tuple[str, tuple[str, ...]]] = {}  # changed through a name others refer to
        self.where = ("this construct", lambda: None)
        self.operands, self.offset = tuple(operands), offset
        self.given = sharing(self.operands) if operands else ()
        self.shared: tuple | None = None  # the outputs' sharing, once a run has given it
        self.mixed = False  # runs that share differently

    def receive(self, args: tuple) -> tuple:
        """A run's arguments (fresh copies) sharing as the construct's operands do (a loop's body
        then must give them back shared alike, or the function runs as Python: its traced body
        stands for every iteration). Where the function changes no object in place, sharing is
        never seen, and nothing is relinked."""
        if not (self.given and self.changes):
            return args
        shift = self.offset
        return relink(args, tuple(tuple((p[0] + shift, *p[1:]) for p in g) for g in self.given))

    def note(self, args: tuple, outs, watch: _Watch) -> None:
        if type(outs) not in (tuple, list):
            return
        shared = sharing(tuple(outs))
        if self.shared is None:
            self.shared = shared
        elif shared != self.shared:
            self.mixed = True
        inputs = [k for k, a in enumerate(args) if type(a) in (list, dict)]
        for j, out in enumerate(outs):
            if type(out) not in (list, dict):
                continue  # (laxify's probes stand for lists while it probes a loop's body)
            found = next((k for k in inputs if args[k] is out), -1)
            if found >= 0 and watch.changed_in_place(out):
                self.changed.add(j)
            if found >= 0:
                self.kept.setdefault(j, found)
            else:
                self.replaced.add(j)
            if self.of.get(j, found) != found:
                found = -1
            self.of[j] = found

    def write_back(self, outs) -> tuple:
        """``outs`` of the construct, with each list or dict that its function changed in place
        (returned as the input it received) written into the object the construct was given,
        which is returned in its place: as in Python, every name that refers to that object
        (in the caller too) sees the change."""
        inputs, offset = self.operands, self.offset
        shared = self.shared
        if self.mixed or (self.loop and shared is not None and shared != self.given):
            if self.changes:
                raise _path_sharing_error(self.where, loop=not self.mixed)
            shared = None
        for j in self.replaced if self.changes else ():
            # The name holds a new object on some path and the object it held before on another
            # (a loop's body replaces it, and the loop may not run): a change in place after the
            # construct reaches the other names of that object on one path only.
            i = self.kept.get(j, j + offset if self.may_skip else None)
            if i is None or not 0 <= i - offset < len(inputs) or type(inputs[i - offset]) not in (list, dict):
                continue
            if _held_elsewhere(inputs[i - offset], self.names):
                raise _path_identity_error(self.where, replaced=True)
        outs = list(outs)
        for j, i in self.of.items():
            if i < 0 and j in self.changed:
                # Changed in place on some path, replaced by another object on another: which
                # object the names refer to afterwards depends on the path.
                raise _path_identity_error(self.where)
            k = i - offset
            if i < 0 or j >= len(outs) or not 0 <= k < len(inputs):
                continue
            original, new = inputs[k], outs[j]
            if type(original) is type(new) and type(new) in (list, dict) and original is not new:
                if j in self.changed:  # (unchanged: the same contents, which it still holds)
                    _write_into(original, new)
                    if j in self.aliased and trace.current().watches:
                        name, others = self.aliased[j]
                        missed = tuple(n for n in others if not self._carries(original, n))
                        if missed:
                            note_aliased_change(original, name, missed)
                outs[j] = original
        if shared:
            return relink(tuple(outs), shared, prefer=inputs)
        return tuple(outs)

    def _carries(self, obj, name: str) -> bool:
        """Whether the construct carried ``obj`` under ``name`` too (its operands align with its
        names): then it gave back ``name`` changed as well, and no other name misses it."""
        names, operands = self.names, self.operands
        return any(n == name and k < len(operands) and operands[k] is obj for k, n in enumerate(names))


def _write_into(original, new) -> None:
    """``original`` (a list or dict) given the contents of ``new``, keeping the identity of the
    lists and dicts it holds where ``new`` holds one of the same kind at the same place."""
    if type(original) is list and len(original) != len(new):
        original[:] = new
        return
    keys = range(len(new)) if type(original) is list else list(new)
    if type(original) is dict:
        for key in [k for k in original if k not in new]:
            del original[key]
    for key in keys:
        old = original[key] if type(original) is list or key in original else None
        value = new[key]
        if type(old) is type(value) and type(value) in (list, dict) and old is not value:
            _write_into(old, value)
        else:
            original[key] = value


def guarded(
    fn: Callable, construct: str, where: Callable[[], Location | None], identity: Identity | None = None
) -> Callable:
    """``fn`` (a branch, a loop body or condition, a lazy operand) run with its effects on
    Python objects watched: see the module's docstring. ``construct`` says what traces it
    ("this `if` on a traced value"); ``where()`` is the user's line to report; ``identity``
    notes which outputs are which inputs."""
    if getattr(fn, "__laxify_guarded__", False):
        return fn

    def run(*args):
        watch = _Watch(construct, where)
        before = _reachable(args)
        args = _fresh(args)
        if identity is not None:
            args = identity.receive(args)
        names = fn.__code__.co_varnames if isinstance(fn, types.FunctionType) else ()
        for k, arg in enumerate(args):
            name = names[k] if k < len(names) else ""
            word = f"`{name}`" if name and not name.startswith(DEFAULT_PREFIX) else "a value it carries"
            watch.add(arg, word, own=True, shared=before)
        given = frozenset(watch.saved)
        swapped = _swap_cells(fn, identity, args)
        for item in _roots(fn):
            watch.add(*item)
        # Objects it reads from outside (a closure's `e`) that it also received as a copy (`d`,
        # `e = ident(d)`): a change to the copy would not be seen through `e`.
        originals = _reachable(identity.operands) if identity is not None and identity.operands else before
        copied = originals.difference(given)
        shadowed = [k for k in watch.saved if k in copied and k not in given] if copied else ()
        watch.started = frozenset(watch.saved)  # (the saved objects are held: ids stay theirs)
        watches = trace.current().watches
        watches.append(watch)
        try:
            out = fn(*args)
            word = watch.changed(out, identity.private if identity is not None else frozenset())
            if word is None and shadowed and watch.changed_own():
                raise _shadowed_error(watch.saved[shadowed[0]][2], watch)
            outside = _changed_for_others(fn, watch, out) if word is None and watch.aliased else {}
        except BaseException:
            watch.restore()
            raise
        finally:
            watches.pop()
            for cell, original in swapped:
                cell.cell_contents = original
        if word is not None:
            watch.restore()
            raise _changed_error(word, watch)
        if identity is not None:
            identity.where = (construct, where)
            identity.note(args, out, watch)
            if outside and type(out) in (tuple, list):
                # Returned (else an error above): the construct writes it back into its operand,
                # which the enclosing watched function must see changed through `name` too.
                for j, item in enumerate(out):
                    if id(item) in outside:
                        identity.aliased[j] = outside[id(item)]
        return out

    run.__laxify_guarded__ = True
    return run


def _swap_cells(fn, identity: Identity | None, args: tuple) -> list:
    """The variables of the enclosing functions that ``fn`` (or the user's function a laxify
    wrapper ``fn`` calls) reads and that hold a list, dict or set the construct gave it a copy
    of (`e = helper(d)`, then `e` read in a loop body that changes `d`): each holds the copy
    while ``fn`` runs, as in Python `e` shows the change. Returns ``(cell, original)`` pairs
    to put back."""
    if identity is None or not identity.operands or type(fn) is not types.FunctionType:
        return []
    copies, offset = {}, identity.offset
    for k, original in enumerate(identity.operands):
        if type(original) in (list, dict, set) and 0 <= k + offset < len(args):
            copy = args[k + offset]
            if type(copy) is type(original) and copy is not original:
                copies.setdefault(id(original), copy)
    if not copies:
        return []
    swapped, seen = [], set()
    for user_fn in _user_functions(fn):
        for cell in user_fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            copy = copies.get(id(value))
            if copy is not None and id(cell) not in seen:
                seen.add(id(cell))
                swapped.append((cell, value))
                cell.cell_contents = copy
    return swapped


def _user_functions(fn) -> list:
    """``fn`` if it is the user's, else the user's functions laxify's wrapper ``fn`` calls
    (held in its closure or defaults, alone or in a tuple or list)."""
    if type(fn) is not types.FunctionType:
        return []
    if not is_library_function(fn):
        return [fn]
    found, values = [], list(fn.__defaults__ or ())
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            continue
    for value in values:
        for item in value if type(value) in (tuple, list) else (value,):
            found += _user_functions(item)
    return found


def _changed_for_others(fn, watch: _Watch, out) -> dict[int, tuple[str, tuple[str, ...]]]:
    """The own objects ``fn`` changed through a name that names outside it refer to too:
    ``{id: (name, those names)}``. A name that ``fn`` binds itself (``al = d`` in the branch)
    holds the branch's copy and sees the change; one it received or reads from outside holds
    another object, so the object must be returned (the construct writes it back into the
    one they share), else the change is lost for them: an error."""
    bound = _bound_in(fn)
    returned = _reachable(out)
    found = {}
    for key, (name, others) in watch.aliased.items():
        missed = tuple(n for n in others if n not in bound)
        if not missed:
            continue
        if key not in returned:
            raise alias_error(name, missed[0])
        found[key] = (name, missed)
    return found


def _bound_in(fn) -> frozenset[str]:
    """The names the user's function ``fn`` assigns that are not its parameters (none for
    laxify's own wrappers: their variables are not the user's)."""
    if type(fn) is not types.FunctionType or is_library_function(fn):
        return frozenset()
    code = fn.__code__
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    params = code.co_varnames[:count]
    return frozenset((*code.co_varnames[count:], *code.co_cellvars)).difference(params)


def _roots(fn) -> list:
    """What ``fn`` reads besides its arguments; for laxify's own wrappers, what the user's
    functions they wrap read (not the wrappers' own bookkeeping)."""
    stack: list = []
    for user_fn in _user_functions(fn):
        _function_roots(user_fn, stack, 0)
    return stack


def watching() -> bool:
    """Whether a watched function is being traced (in this thread)."""
    return bool(trace.current().watches)


def note_call(fn, original, args, kwargs) -> None:
    """A call made while a watched function is traced: what it may change is watched too,
    and a function that assigns a global or an enclosing function's variable is an error
    (the assignment would happen on every traced path)."""
    watches = trace.current().watches
    if not watches:
        return
    watch = watches[-1]
    if original is not None:
        shared = sum(shared_stores(original.__code__), ())
        if shared:
            raise _assigns_error(original, shared, watch)
        watch.add(original, f"what `{original.__name__}` reads", depth=0)
    # The receiver and the arguments: watched if the function could reach them when it started
    # (anything reachable from its roots is watched already; what `original` reads was just
    # added). One it made itself while it runs (`log = [...]; log.pop()` in a loop body) is
    # its own: a new object each time the construct runs it, as in Python (not a change that
    # would need a fallback).
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType) and not watch.made_here(owner):
        watch.add(owner, "the object whose method it calls")
    for k, arg in enumerate((*args, *kwargs.values())):
        if not watch.made_here(arg):
            watch.add(arg, "an argument of a call")


_STORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # code -> its shared stores


def shared_stores(code: types.CodeType) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The globals and the enclosing functions' variables (free cells) ``code`` assigns or
    deletes, read from its bytecode once (held weakly: a code object, and the conversion kept
    with it, is freed with its function)."""
    known = _STORES.get(code)
    if known is None:
        globals_, cells = {}, {}
        for ins in dis.get_instructions(code):
            if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                globals_[ins.argval] = None
            elif ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars:
                cells[ins.argval] = None
        known = _STORES[code] = (tuple(globals_), tuple(cells))
    return known


def kept_effects(site, *values) -> None:
    """Before an ``if``, ``while`` or ``for`` kept as Python because it changes an object from
    outside the function in place or assigns a global or nonlocal name (``site.names[0]``):
    ``values`` are the names it reads. Run while tracing, its change would be made once per
    compilation (with traced values) instead of each time the function runs; where one of them
    is traced, the function runs as Python (``for v in x: LOG.append(v)`` over an array)."""
    if not any(isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(values)):
        return
    from laxify.runtime.messages import location  # (messages imports the lowering)

    name = site.names[0] if site.names else "an object"
    reason, fix = site.kept
    raise NeedsPython(
        f"this `{site.construct}` over a traced value is kept as Python: {reason or f'it changes `{name}`'}",
        location(site),
        fix
        or f"Return the new value from the function and apply it to `{name}` where the function is "
        f"called, or keep such state in an array that the function carries.",
    )


def _changed_error(word: str, watch: _Watch) -> NeedsPython:
    return NeedsPython(
        f"{word} is changed in place while {watch.construct} is traced: laxify traces each branch "
        f"(and a loop's body once, not once per iteration), so the change would not happen "
        f"exactly where and as often as in Python",
        watch.where(),
        "Build a new value and assign it (`xs = xs + [v]`, `d = {**d, k: v}`), return it from a "
        "helper and assign it where the helper is called, or keep such state in an array that "
        "the function carries.",
    )


def _shadowed_error(word: str, watch: _Watch) -> NeedsPython:
    return NeedsPython(
        f"{word} refers to an object that {watch.construct} changes in place under another name: "
        f"the construct works on a copy of that object, which {word} would not show while it runs",
        watch.where(),
        "Read the object through the name the construct changes, or keep such state in an array "
        "that the function carries.",
    )


def _assigns_error(original, names: tuple[str, ...], watch: _Watch) -> NeedsPython:
    listed = ", ".join(f"`{n}`" for n in names)
    return NeedsPython(
        f"`{original.__qualname__}` assigns {listed} (global or nonlocal) and is called while "
        f"{watch.construct} is traced: every branch is traced, so the assignment would happen "
        f"also where Python does not make it",
        watch.where(),
        f"Return the new value from `{original.__name__}` and assign it where it is called, or keep "
        f"such state in an array passed in and returned.",
    )


def note_aliased_change(obj, name: str, others: tuple[str, ...]) -> None:
    """``obj``, the value of ``name``, was changed in place, and ``others`` refer to it too (the
    conversion saw ``other = name``, or ``other`` is ``name``: a parameter the caller holds)."""
    watch = trace.current().watches[-1]
    if id(obj) in watch.own:
        known = watch.aliased.get(id(obj))
        if known is not None:
            others = tuple(dict.fromkeys((*known[1], *others)))
        watch.aliased[id(obj)] = (name if known is None else known[0], others)
    # (an object the function did not receive from the construct is compared on return)


def alias_error(name: str, other: str) -> NeedsPython:
    """An object changed in place inside a traced construct, which another name (or the
    caller, when ``other`` is ``name``: a parameter) refers to."""
    watch = trace.current().watches[-1]
    if other == name:
        return NeedsPython(
            f"the parameter `{name}` is changed in place while {watch.construct} is traced and "
            f"nothing reads it after: the construct works on a copy, so the caller would not see "
            f"the change",
            watch.where(),
            f"Return `{name}` and use the returned value where the function is called.",
        )
    return NeedsPython(
        f"`{name}` is changed in place while {watch.construct} is traced, and `{other}` refers to "
        f"the same object: the construct carries out a changed copy of `{name}`, which `{other}` "
        f"would not see",
        watch.where(),
        f"Assign `{other} = {name}` again after the construct, or use one name for the object.",
    )


def _path_sharing_error(where, loop: bool = False) -> NeedsPython:
    construct, location = where
    how = (
        (
            "its body gives back two names sharing one list or dict where they did not share it "
            "before the loop (or the reverse), so whether they share it after the loop depends on "
            "how many times it ran"
        )
        if loop
        else (
            "two names (or two places) refer to one list or dict on one of its paths and to separate "
            "ones on another, so whether a change through one is seen through the other depends on "
            "the path"
        )
    )
    return NeedsPython(
        f"while {construct} is traced, {how}",
        location(),
        "Give each name its own object on every path (`b = list(a)`), or share it on every path.",
    )


def _held_elsewhere(obj, names: tuple) -> bool:
    """Whether a variable of the user's frames on the stack other than the construct's own
    ``names`` (in the innermost one, which assigns them after it) refers to ``obj`` (or to a
    list, tuple or dict holding it): another name, or the caller that passed it in."""
    from laxify.runtime.lists import _library_frame  # (lists imports this module)

    innermost = True
    frame = sys._getframe(1)
    while frame is not None:
        if not _library_frame(frame):
            own = names if innermost else ()
            innermost = False
            for name, value in frame.f_locals.items():
                if name in own:
                    continue
                kind = type(value)
                if (
                    value is obj
                    or (kind in (list, tuple) and any(v is obj for v in value))
                    or (kind is dict and any(v is obj for v in value.values()))
                ):
                    return True
        frame = frame.f_back
    return False


def _path_identity_error(where, replaced: bool = False) -> NeedsPython:
    construct, location = where
    if replaced:
        return NeedsPython(
            f"a list or dict that another name also refers to is replaced by a new object on one "
            f"path of {construct} and kept on another, so whether a later change through one name "
            f"is seen through the other depends on the path",
            location(),
            "Replace it on every path (`xs = list(xs)` on the other path too), or change it in place on every path.",
        )
    return NeedsPython(
        f"a list or dict is changed in place on one path of {construct} and replaced by another "
        f"object on another, so which object its other names see depends on the path",
        location(),
        "Change it the same way on every path (in place, or by assigning a new list or dict).",
    )
