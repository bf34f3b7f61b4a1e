"""Core IR structures: values, ops, regions and functions.

The IR is structured SSA: a :class:`Function` has parameters and a body :class:`Region`;
a region has block arguments and a list of :class:`Op`; an op has operands (values defined
before it), results (values it defines), attributes (plain Python data), nested regions and
the source :class:`Span` it came from. Every value carries the Python name it stands for
(``hint``), so lowering back to Python can reuse the user's names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

from laxify.ir.types import UNKNOWN, Type

__all__ = ["Value", "Span", "Op", "Region", "Function", "VerifyError", "OP_CLASSES", "register_op"]


class VerifyError(Exception):
    """An IR invariant is broken; the message names the op and the rule."""


@dataclass(eq=False)
class Value:
    """An SSA value. ``hint`` is the Python name it holds ('' for a temporary)."""

    hint: str
    version: int
    type: Type = UNKNOWN

    def __str__(self) -> str:
        return f"%{self.hint}.{self.version}" if self.hint else f"%{self.version}"

    __repr__ = __str__


@dataclass(frozen=True)
class Span:
    """Where an op came from in the user's source (1-based line, 0-based column)."""

    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


OP_CLASSES: dict[str, type["Op"]] = {}


def register_op(cls: type["Op"]) -> type["Op"]:
    """Class decorator: make the op known to the parser by its ``name``."""
    OP_CLASSES[cls.name] = cls
    return cls


@dataclass(eq=False)
class Region:
    """A block of ops with block arguments; control-flow regions end with ``yield``."""

    args: list[Value] = field(default_factory=list)
    ops: list["Op"] = field(default_factory=list)

    def walk(self) -> Iterator["Op"]:
        """Every op of the region and every op nested in them (pre-order)."""
        return _walk(self.ops)

    @property
    def terminator(self) -> "Op | None":
        return self.ops[-1] if self.ops else None


@dataclass(eq=False)
class Op:
    """Base class of all ops. Subclasses set ``name`` and implement ``verify``."""

    name: ClassVar[str] = ""

    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)
    span: Span | None = None

    def walk(self) -> Iterator["Op"]:
        """This op, then every op nested in its regions (pre-order)."""
        return _walk([self])

    def verify(self) -> None:
        """Check this op's own invariants (not its regions' ops); raise VerifyError."""

    def fail(self, rule: str) -> None:
        where = f" at line {self.span}" if self.span else ""
        raise VerifyError(f"'{self.name}' op{where}: {rule}")

    # Helpers shared by verifiers.
    def expect_regions(self, count: int) -> None:
        if len(self.regions) != count:
            self.fail(f"expected {count} region(s), found {len(self.regions)}")

    def expect_yield(self, region: Region, count: int, what: str) -> None:
        from laxify.ir.ops.terminators import YieldOp

        term = region.terminator
        if not isinstance(term, YieldOp):
            self.fail(f"{what} must end with 'yield'")
        if len(term.operands) != count:
            self.fail(f"{what} yields {len(term.operands)} value(s) but {count} are expected")


def _walk(ops: list[Op]) -> Iterator[Op]:
    """``ops`` and the ops nested in them, pre-order; a stack, not a generator per level (a
    generator per level costs each op a step through every level above it)."""
    stack = list(reversed(ops))
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            stack.extend(reversed(region.ops))


@dataclass(eq=False)
class Function:
    """A converted Python function: parameters, a body region, its name and location."""

    name: str
    params: list[Value] = field(default_factory=list)
    body: Region = field(default_factory=Region)
    attributes: dict[str, Any] = field(default_factory=dict)
    span: Span | None = None

    def walk(self) -> Iterator[Op]:
        return self.body.walk()

    def __str__(self) -> str:
        from laxify.ir.printer import print_function

        return print_function(self)
