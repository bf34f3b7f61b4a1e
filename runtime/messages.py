"""Building the located, two-sided error messages of DESIGN §6 from lowering sites."""

from __future__ import annotations

import linecache

import jax

from laxify.ir.errors import ConversionError, Location
from laxify.ir.naming import users_words
from laxify.runtime.lowering import Site

__all__ = ["location", "site_error", "describe", "tree_lines", "users_line"]


def location(site: Site) -> Location:
    text = linecache.getline(site.filename, site.line).rstrip("\n")
    return Location(site.filename, site.line, site.col, text)


def users_line(frame, library) -> Location | None:
    """The line of the first frame from ``frame`` outwards that ``library(frame)`` does not
    claim (the user's line that called into the runtime; generated code keeps the user's file
    names and line numbers), at the call's own column where the code records it; ``None``
    where every frame is the library's."""
    while frame is not None and library(frame):
        frame = frame.f_back
    if frame is None:
        return None
    filename, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, line).rstrip("\n")
    col = len(text) - len(text.lstrip())
    positions = list(frame.f_code.co_positions())
    here = positions[frame.f_lasti // 2] if frame.f_lasti // 2 < len(positions) else None
    if here is not None and here[0] == line and here[2] is not None:
        col = here[2]  # the call's own column (lowering maps it onto the user's expression)
    return Location(filename, line, col, text)


def site_error(site: Site, message: str, fix: str, cls: type = ConversionError) -> ConversionError:
    return cls(users_words(message), location(site), users_words(fix))


def describe(x) -> str:
    """A short type description of one leaf: ``float32[3]``, ``weak int32[]``, ``Python str``."""
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        weak = "weak " if getattr(x, "weak_type", False) else ""
        return f"{weak}{x.dtype}[{','.join(map(str, x.shape))}]"
    kind = type(x)
    if kind.__repr__ is object.__repr__:  # `<Box object at 0x...>` says no more than its type
        return f"Python `{kind.__name__}` object"
    text = repr(x)
    if " at 0x" in text:  # a function's or object's address: its name says more
        name = getattr(x, "__qualname__", None) or getattr(x, "__name__", None)
        return f"Python {kind.__name__} `{name}`" if isinstance(name, str) else f"Python `{kind.__name__}` object"
    return f"Python {kind.__name__} {text}"[:80]


def tree_lines(name: str, tree) -> dict[str, str]:
    """``{'y', "float32[3]"}`` or, for containers, one entry per leaf keyed by its pytree path."""
    flat, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda v: v is None)
    if len(flat) == 1 and not flat[0][0]:
        return {name: describe(flat[0][1])}
    return {name + jax.tree_util.keystr(path): describe(leaf) for path, leaf in flat}
