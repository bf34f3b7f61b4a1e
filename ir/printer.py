"""The text form of the IR (the parser in ``parser.py`` reads it back).

Grammar, informally::

    func @name(%x.0, %n.0: static(int)) {
      %y.1: float32[3] = py(%x.0) {code = "y = x * 2", kind = "stmt"} loc(3:4)
      %y.2 = cond(%1, %y.1) {
      ^(%y.3):
        yield(%y.3)
      } {
      ^(%y.4):
        yield(%y.4)
      } loc(4:4)
      return(%y.2)
    }

A value prints with its type after a colon when the type is known. Attribute values are
Python literals.
"""

from __future__ import annotations

from laxify.ir.core import Function, Op, Region, Value
from laxify.ir.types import Unknown

__all__ = ["print_function", "print_op", "format_value"]

INDENT = "  "


def format_value(v: Value, with_type: bool = True) -> str:
    if with_type and not isinstance(v.type, Unknown):
        return f"{v}: {v.type}"
    return str(v)


def _values(values: list[Value], with_type: bool) -> str:
    return ", ".join(format_value(v, with_type) for v in values)


def _attributes(attrs: dict) -> str:
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k} = {v!r}" for k, v in attrs.items()) + "}"


def _region(region: Region, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    out.append(f"{pad}^({_values(region.args, True)}):")
    for op in region.ops:
        _op(op, depth + 1, out)


def _op(op: Op, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    head = f"{_values(op.results, True)} = " if op.results else ""
    line = f"{pad}{head}{op.name}({_values(op.operands, False)}){_attributes(op.attributes)}"
    loc = f" loc({op.span})" if op.span else ""
    if not op.regions:
        out.append(line + loc)
        return
    out.append(line + " {")
    for k, region in enumerate(op.regions):
        if k:
            out.append(f"{pad}}} {{")
        _region(region, depth, out)
    out.append(f"{pad}}}{loc}")


def print_op(op: Op, depth: int = 0) -> str:
    out: list[str] = []
    _op(op, depth, out)
    return "\n".join(out)


def print_function(fn: Function) -> str:
    out = [f"func @{fn.name}({_values(fn.params, True)}){_attributes(fn.attributes)} {{"]
    for op in fn.body.ops:
        _op(op, 1, out)
    out.append("}")
    return "\n".join(out)
