"""The conversion pipeline: source → canonical tree (converters, in order) → IR.

The converter order is the one list below; each entry says why it stands where it does.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from laxify.ir import Function
from laxify.transpiler.analysis.positions import statement_positions
from laxify.transpiler.converters.base import Context
from laxify.transpiler.source import FunctionSource, get_source
from laxify.transpiler.to_ir import Fallback, build_ir

__all__ = ["CONVERTERS", "Conversion", "convert_source", "canonicalize"]

# Applied in this order. Each converter module has a ``transform(node, ctx)`` entry.
CONVERTERS: list = []


@dataclass
class Conversion:
    """Everything one conversion produced."""

    source: FunctionSource
    canonical: cst.FunctionDef
    ir: Function
    fallbacks: list[Fallback]


def canonicalize(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    for converter in CONVERTERS:
        node = converter.transform(node, ctx)
    return node


def convert_source(fn) -> Conversion:
    """Parse ``fn``, run the converters, build its IR (not yet typed or folded)."""
    src = get_source(fn)
    positions = statement_positions(src.module, src.node, src.first_line, src.indent)
    ctx = Context(positions)
    src.node = canonicalize(src.node, ctx)
    freevars = frozenset(fn.__code__.co_freevars)
    ir_fn, fallbacks = build_ir(src, ctx.positions, freevars)
    return Conversion(src, src.node, ir_fn, fallbacks)
