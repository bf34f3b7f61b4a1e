"""laxify's typed SSA IR: ops, types, printer, parser, verifier and passes.

This layer imports neither libcst nor the other layers of laxify.
"""

from laxify.ir.core import Function, Op, Region, Span, Value, VerifyError
from laxify.ir.ops import CondOp, ForRangeOp, PyOp, ReturnOp, ScanOp, TryOp, UndefOp, WhileOp, WithOp, YieldOp
from laxify.ir.printer import print_function
from laxify.ir.types import UNKNOWN, Array, PyTree, Static, Type, TypeJoinError, Unknown, join
from laxify.ir.verify import verify

__all__ = [
    "Array",
    "CondOp",
    "ForRangeOp",
    "Function",
    "Op",
    "PyOp",
    "PyTree",
    "Region",
    "ReturnOp",
    "ScanOp",
    "Span",
    "Static",
    "TryOp",
    "Type",
    "TypeJoinError",
    "UNKNOWN",
    "UndefOp",
    "Unknown",
    "Value",
    "VerifyError",
    "WhileOp",
    "WithOp",
    "YieldOp",
    "join",
    "print_function",
    "verify",
]
