"""Deeply nested trees: an ``elif`` chain of 500 arms or an ``and`` of 5,000 operands is one
tree level per arm or operand.

laxify's own walks of the tree use explicit stacks, but libcst's visitors and its code
generation recurse, about three Python frames per level: at Python's default recursion limit
of 1,000 they stop near 300 levels. A conversion that meets that limit runs again with a limit
raised to what the tree's depth needs (Python-to-Python calls of those visitors take no C
stack). A tree deeper than ``MAX_NESTING`` levels stays a ``RecursionError``, which the caller
reports as a function nested too deeply to convert.
"""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

from laxify.transpiler.analysis.walk import nesting_depth
from laxify.transpiler.source import get_source

__all__ = ["MAX_NESTING", "allowing_depth"]

MAX_NESTING = 20_000  # tree levels a conversion may meet (a 20,000-operand `and` chain)
FRAMES_PER_LEVEL = 4  # Python frames per tree level in libcst's visitors, with a margin
MARGIN = 2_000  # frames for everything else that runs meanwhile

T = TypeVar("T")


def allowing_depth(convert: Callable[[object], T], fn) -> T:
    """``convert(fn)``; when it meets the recursion limit, run again with a limit raised to
    what the depth of ``fn``'s tree needs, unless that is more than ``MAX_NESTING`` levels."""
    try:
        return convert(fn)
    except RecursionError:
        depth = nesting_depth(get_source(fn).node)
        if depth > MAX_NESTING:
            raise
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, _stack_depth() + FRAMES_PER_LEVEL * depth + MARGIN))
    try:
        return convert(fn)
    finally:
        sys.setrecursionlimit(before)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth
