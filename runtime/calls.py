"""``_lx.call``: the callables that converted code calls are converted too, when they are user code.

What a call may reach, and what runs: a Python function → its converted function; a bound
method → the converted function bound to the same object; ``functools.partial`` → the converted
function with the same bound arguments; an object whose class defines ``__call__`` in Python →
that ``__call__`` converted and bound to the object; a method object of a library that keeps
``__func__``/``__self__`` (equinox) → the same as a bound method; a C function of the standard
library with a pure-Python twin (``bisect.bisect_left``, see ``runtime.pure_twins``) → that
twin converted. Library code (see
``laxify.ir.user_code``), classes, ``laxify.do_not_convert`` and code laxify made run as they are.

Nothing is cached here: the conversion is cached per code object (``laxify.conversion``), and
binding it to the function called costs a few microseconds, at trace time. (A cache keyed by
the function would keep it alive: a converted function refers to its original through its
closure cells.)

Recursion unrolls while tracing, one converted call per level: a depth known while tracing
ends it. A recursion whose end depends on a traced value never ends: it becomes a located
:class:`ConversionError` instead of Python's ``RecursionError`` (a function that calls itself
at most once on each path is written as loops before, by ``transpiler/converters/recursion.py``).
"""

from __future__ import annotations

import functools
import linecache
import sys
import types
import weakref
from typing import Callable

import jax

from laxify.ir.errors import ConversionError, Location, NeedsPython
from laxify.ir.user_code import converts_calls_of, is_library_function
from laxify.runtime import effects, numbers, trace
from laxify.runtime.pure_twins import pure_twin

__all__ = ["call", "register_converted", "resolve", "set_converter"]

_converter: Callable | None = None


class _CodeSet:
    """Code objects held weakly and by identity (CPython compares code objects by value)."""

    def __init__(self):
        self._refs: dict[int, weakref.ref] = {}

    def add(self, code: types.CodeType) -> None:
        key, refs = id(code), self._refs

        def forget(ref: weakref.ref) -> None:
            if refs.get(key) is ref:
                refs.pop(key, None)

        refs[key] = weakref.ref(code, forget)

    def __contains__(self, code: types.CodeType) -> bool:
        ref = self._refs.get(id(code))
        return ref is not None and ref() is code


_COMPILED = _CodeSet()  # laxify's output: converted code is not converted again
_UNCONVERTIBLE = _CodeSet()  # no source, a generator...: tried once, then run as written


def set_converter(converter: Callable) -> None:
    """Installed by ``laxify``: turns a Python function into its converted function (or raises
    :class:`ConversionError` when it cannot)."""
    global _converter
    _converter = converter


def register_converted(code: types.CodeType) -> None:
    """Remember that ``code`` is laxify's output."""
    _COMPILED.add(code)


def _converted_function(fn: types.FunctionType) -> Callable | None:
    code = fn.__code__
    if (
        _converter is None
        or code in _COMPILED
        or code in _UNCONVERTIBLE
        or getattr(fn, "__laxify_do_not_convert__", False)
        or not converts_calls_of(fn)
    ):
        return None
    try:
        return _converter(fn)
    except ConversionError:
        _UNCONVERTIBLE.add(code)
        return None  # no source (or not convertible): it runs as written


def _bound(func: types.FunctionType, owner) -> tuple[Callable, types.FunctionType] | None:
    inner = _converted_function(func)
    return None if inner is None else (types.MethodType(inner, owner), func)


def resolve(fn) -> tuple[Callable, types.FunctionType] | None:
    """What to call instead of ``fn`` (its converted version) and the Python function converted
    for it; ``None`` to call ``fn`` itself."""
    kind = type(fn)
    if kind is types.FunctionType:
        inner = _converted_function(fn)
        return None if inner is None else (inner, fn)
    if kind is types.MethodType:  # methods, classmethods (bound to the class), super().method
        found = resolve(fn.__func__)
        return None if found is None else (types.MethodType(found[0], fn.__self__), found[1])
    if kind is functools.partial:
        found = resolve(fn.func)
        return None if found is None else (functools.partial(found[0], *fn.args, **fn.keywords), found[1])
    if kind is staticmethod:  # the raw descriptor, taken from a class __dict__
        return resolve(fn.__func__)
    if kind is types.BuiltinFunctionType:  # C: its pure-Python twin where it has one
        twin = pure_twin(fn)
        return None if twin is None else resolve(twin)
    if isinstance(fn, type) or _attribute(fn, "__laxify_do_not_convert__"):
        return None  # a class: instantiating runs as written
    dunder_call = getattr(kind, "__call__", None)
    if type(dunder_call) is types.FunctionType and not is_library_function(dunder_call):
        return _bound(dunder_call, fn)
    # A library's own bound-method object (equinox's BoundMethod): its __func__ bound to __self__.
    func, owner = _attribute(fn, "__func__"), _attribute(fn, "__self__")
    if type(func) is types.FunctionType and owner is not None:
        return _bound(func, owner)
    return None


def _attribute(obj, name: str):
    """``obj.name``, or ``None`` when it has none (or its ``__getattr__`` fails)."""
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - such an object is called as it is
        return None


# -- recursion ------------------------------------------------------------------------------


_PICKED = numbers.Picked  # (an item a traced index picks: `_call_picked`)


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with ``fn`` converted first when it is user code."""
    if (
        type(fn) is _PICKED or _PICKED in map(type, args) or (kwargs and _PICKED in map(type, kwargs.values()))
    ):  # (every call of converted code passes here: the test runs in C)
        return _call_picked(fn, args, kwargs)
    found = resolve(fn)
    watched = effects.watching()
    if found is None:
        if watched:
            effects.note_call(fn, None, args, kwargs)
        return fn(*args, **kwargs)
    target, original = found
    if watched:
        effects.note_call(fn, original, args, kwargs)
    key = id(original.__code__)  # the code stays alive while the call is under way
    state = trace.current()  # (calls under way per code object, and the most at once)
    depth, deepest = state.recursion, state.deepest
    level = depth.get(key, 0) + 1
    depth[key] = level
    if level > deepest.get(key, 0):
        deepest[key] = level
    from laxify.runtime.error_channel import calling  # (imports this module)

    try:
        with calling():  # a `raise` the callee always reaches stops this caller too
            result = target(*args, **kwargs)
        return numbers.of_python_floats(result, args, kwargs)
    except RecursionError:
        if level == 1 and deepest.get(key, 0) > 1:
            raise _endless_recursion(original.__code__, deepest[key], sys._getframe(1)) from None
        raise
    finally:
        if level == 1:
            del depth[key]
            deepest.pop(key, None)
        else:
            depth[key] = level - 1


def _call_picked(fn, args: tuple, kwargs: dict):
    """A call of ``items[i]`` at a traced ``i`` (:class:`numbers.Picked`), or a call given one:
    the call made with each item in a branch of its own, as the arms of an ``if`` chain on ``i``
    (effects, prints and raises as in those), the program picks the branch. Results of
    different structures, shapes or dtypes are the ``if``'s located fallback."""
    from laxify.runtime.dispatch.conditionals import cond  # (imports this module)
    from laxify.runtime.lowering import Site

    picked = [v for v in (fn, *args, *kwargs.values()) if type(v) is _PICKED]
    first = picked[0]
    if any(p.index is not first.index or len(p.items) != len(first.items) for p in picked):
        raise jax.errors.TracerIntegerConversionError(first.index)  # (two picks: Python decides)

    def at(v, k):
        return v.items[k] if type(v) is _PICKED else v

    def branch(k):
        return (call(at(fn, k), *(at(a, k) for a in args), **{name: at(a, k) for name, a in kwargs.items()}),)

    branches = [functools.partial(branch, k) for k in range(len(first.items))]
    if len(branches) == 1:
        return branches[0]()[0]
    site = Site(f"{first.what}[i]", first.filename, first.line, 0, names=("the value it gives",))
    pred = first.index == 0 if len(branches) == 2 else first.index
    return cond(pred, branches, (), site)[0]


def _endless_recursion(code: types.CodeType, levels: int, caller) -> NeedsPython:
    """A recursion that did not end while tracing, at its outermost call site: its depth
    depends on a traced value, which eager Python runs (``to_static`` falls back)."""
    lambda_ = code.co_name == "<lambda>"
    name = "this lambda" if lambda_ else f"`{code.co_name}`"
    filename, line = caller.f_code.co_filename, caller.f_lineno
    text = linecache.getline(filename, line).rstrip("\n")
    col = text.find(code.co_name) if code.co_name in text else len(text) - len(text.lstrip())
    return NeedsPython(
        f"{name} calls itself {levels} levels deep while laxify traces "
        f"it, and reached Python's recursion limit (raised while laxify traces): a recursive call is "
        f"unrolled while tracing, so the recursion must end at a depth known then; when the test that "
        f"ends it depends on a traced value, both branches of that `if` are traced, and the one that "
        f"recurses calls {name} again, without end",
        Location(filename, line, col, text),
        "Make the depth a Python value (an int argument, static under jax.jit through "
        "static_argnums/static_argnames), or rewrite the recursion as a `while` loop, which laxify "
        "converts to lax.while_loop (a static recursion this deep needs a loop too). A function "
        "that calls itself at most once on each path is such a loop already, where it keeps "
        'Python\'s order (docs/semantics.md, "Linear recursion on a traced depth is a loop"); '
        "this one calls itself more often, or in a place the loop cannot follow.",
    )
