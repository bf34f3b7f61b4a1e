"""Turning lowered source into a function object that runs with the user's globals, closure
cells, defaults, file name and line numbers (so tracebacks point at the user's lines)."""

from __future__ import annotations

import ast
import types

from laxify.runtime import dispatch
from laxify.runtime.lowering import LoweredSource

__all__ = ["compile_lowered", "make_function"]

FACTORY = "_lx_factory"


def _remap(tree: ast.AST, mapping: list[tuple[int, int]], wrapper_lines: int) -> None:
    """Give every node the user's line number (and column) instead of the generated one."""
    for node in ast.walk(tree):
        if not hasattr(node, "lineno"):
            continue
        k = node.lineno - 1 - wrapper_lines
        if 0 <= k < len(mapping):
            user_line, shift = mapping[k]
            node.lineno = user_line
            node.col_offset = max(node.col_offset + shift, 0)
        end = getattr(node, "end_lineno", None)
        if end is not None:
            k = end - 1 - wrapper_lines
            if 0 <= k < len(mapping):
                user_line, shift = mapping[k]
                node.end_lineno = max(user_line, node.lineno)
                node.end_col_offset = max((node.end_col_offset or 0) + shift, 0)
        if getattr(node, "end_lineno", None) == node.lineno and node.end_col_offset < node.col_offset:
            node.end_col_offset = node.col_offset


def compile_lowered(lowered: LoweredSource, freevars: tuple[str, ...], filename: str) -> types.CodeType:
    """The code object of the converted function (shared by every closure of one ``def``)."""
    # A nested function of converted code may already close over the runtime's names.
    handles = (lowered.runtime, lowered.sites_name)
    params = ", ".join((*handles, *(v for v in freevars if v not in handles)))
    body, mapping = lowered.emitter.render(base_depth=1)
    # The factory binds the names closures capture, so that a generated function's `nonlocal`
    # always finds them, even where the converted function itself no longer assigns one.
    cells = "".join(f"    {name} = None\n" for name in lowered.cells)
    text = f"def {FACTORY}({params}):\n{cells}{body}    return {lowered.name}\n"
    tree = ast.parse(text, filename)
    _remap(tree, mapping, wrapper_lines=1 + len(lowered.cells))
    code = compile(tree, filename, "exec", dont_inherit=True)
    factory = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == FACTORY)
    inner = next(c for c in factory.co_consts if isinstance(c, types.CodeType) and c.co_name == lowered.name)
    return _without_factory(inner)


def _without_factory(code: types.CodeType) -> types.CodeType:
    """``code`` and the code nested in it with qualified names as in the user's source: the
    factory is laxify's, so ``_lx_factory.<locals>.f.<locals>.g`` becomes ``f.<locals>.g``."""
    prefix = f"{FACTORY}.<locals>."
    consts = tuple(
        _without_factory(c) if isinstance(c, types.CodeType)
        else c.removeprefix(prefix) if isinstance(c, str) and c.startswith(prefix)  # a class's __qualname__
        else c
        for c in code.co_consts
    )
    qualname = code.co_qualname.removeprefix(prefix)
    return code.replace(co_consts=consts, co_qualname=qualname)


def make_function(code: types.CodeType, lowered: LoweredSource, original: types.FunctionType) -> types.FunctionType:
    """Bind ``code`` to ``original``'s globals, closure cells, defaults and metadata."""
    cells = dict(zip(original.__code__.co_freevars, original.__closure__ or ()))
    cells[lowered.runtime] = types.CellType(dispatch)
    cells[lowered.sites_name] = types.CellType(lowered.sites)
    for name in lowered.cells:  # captured names the converted code no longer assigns itself
        cells.setdefault(name, types.CellType())
    closure = tuple(cells[name] for name in code.co_freevars)
    fn = types.FunctionType(code, original.__globals__, original.__name__, original.__defaults__, closure)
    fn.__kwdefaults__ = original.__kwdefaults__
    fn.__annotations__ = dict(getattr(original, "__annotations__", {}))
    fn.__qualname__ = original.__qualname__
    fn.__module__ = original.__module__
    fn.__doc__ = original.__doc__
    fn.__dict__.update(original.__dict__)
    return fn
