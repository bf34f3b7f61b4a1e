"""Pure-Python twins of C functions of the standard library.

``bisect`` defines ``bisect_left`` and ``bisect_right`` in Python, then replaces them with
the C versions of ``_bisect`` (the same algorithm, faster). A C function cannot be converted
(it has no source), and on a traced value it stops the trace (it needs Python's truth values):
``to_static`` would run the whole function eagerly. Its Python definition, which the module
documents as its equivalent, can be converted: a binary search whose bounds become traced is
a ``lax.while_loop``, with Python's exact semantics by construction. Decision: take those
definitions from the module's own file, executed again apart where importing the C module
fails (the ``from _bisect import *`` at its end then does nothing, as the module allows),
never copied; only
functions that change no argument (``insort`` inserts into a list: it stays C).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import threading
import types

__all__ = ["pure_twin"]

# Module -> its accelerator, and the functions the accelerator replaces that have a twin.
_TWINS = {"bisect": ("_bisect", ("bisect_left", "bisect_right"))}

_table: dict[int, tuple[types.BuiltinFunctionType, types.FunctionType]] | None = None
_lock = threading.Lock()


def pure_twin(fn) -> types.FunctionType | None:
    """The Python definition of the C function ``fn`` (``bisect.bisect_left``), or ``None``."""
    if type(fn) is not types.BuiltinFunctionType:
        return None
    table = _table if _table is not None else _load()
    entry = table.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def _load() -> dict:
    global _table
    with _lock:
        if _table is not None:
            return _table
        table: dict = {}
        for name, (accelerator, names) in _TWINS.items():
            try:
                module = importlib.import_module(name)
                pure = _without(name, accelerator)
            except Exception:  # noqa: BLE001 - no twin: the C function runs as it is
                continue
            for attr in names:
                c_fn, py_fn = getattr(module, attr, None), getattr(pure, attr, None)
                if type(c_fn) is types.BuiltinFunctionType and type(py_fn) is types.FunctionType:
                    table[id(c_fn)] = (c_fn, py_fn)
        _table = table
        return table


def _without(name: str, accelerator: str) -> types.ModuleType:
    """Module ``name`` executed again from its file, apart (not in ``sys.modules``), where
    importing its C accelerator fails: its pure-Python definitions stay. (Its own ``import``
    only is refused; nothing global changes.)"""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not spec.origin:
        raise ImportError(name)
    source = spec.loader.get_source(name)
    if source is None:
        raise ImportError(name)

    def importing(module, *args, **kwargs):
        if module == accelerator:
            raise ImportError(f"{accelerator} is hidden")
        return builtins.__import__(module, *args, **kwargs)

    pure = types.ModuleType(name)
    pure.__file__ = spec.origin
    pure.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": importing}
    exec(compile(source, spec.origin, "exec", dont_inherit=True), pure.__dict__)
    return pure
