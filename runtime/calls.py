"""``_lx.call``: user functions called from converted code are converted too (cached)."""

from __future__ import annotations

import os
import sys
import sysconfig
import types
import weakref
from typing import Callable

from laxify.ir.errors import ConversionError

__all__ = ["call", "set_converter"]

_converter: Callable | None = None
_converted: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

_LIBRARY_ROOTS = tuple(
    os.path.normcase(os.path.realpath(p)) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)
_LIBRARY_MODULES = frozenset({"jax", "jaxlib", "numpy", "laxify", "libcst", "flax", "optax", "equinox"})


def set_converter(converter: Callable) -> None:
    """Installed by ``laxify``: turns a Python function into its converted function."""
    global _converter
    _converter = converter


def _is_user_code(fn: types.FunctionType) -> bool:
    if getattr(fn, "__laxify_do_not_convert__", False):
        return False
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module in _LIBRARY_MODULES or module in sys.stdlib_module_names:
        return False
    filename = os.path.normcase(os.path.realpath(fn.__code__.co_filename))
    return not filename.startswith(_LIBRARY_ROOTS)


def _converted_version(fn):
    if isinstance(fn, types.MethodType):
        inner = _converted_version(fn.__func__)
        return None if inner is None else types.MethodType(inner, fn.__self__)
    if not isinstance(fn, types.FunctionType) or _converter is None or not _is_user_code(fn):
        return None
    hit = _converted.get(fn)
    if hit is None:
        try:
            hit = _converter(fn)
        except ConversionError:
            hit = fn  # no source: it runs as written
        _converted[fn] = hit
    return hit


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, with ``fn`` converted first when it is user code."""
    target = _converted_version(fn)
    return (fn if target is None else target)(*args, **kwargs)
