"""The op set of the IR. Importing this package registers every op with the parser."""

from laxify.ir.ops.cond import CondOp
from laxify.ir.ops.loops import ForRangeOp, ScanOp, WhileOp
from laxify.ir.ops.py import PyOp, UndefOp
from laxify.ir.ops.terminators import ReturnOp, YieldOp
from laxify.ir.ops.try_block import TryOp
from laxify.ir.ops.with_block import WithOp

__all__ = ["CondOp", "ForRangeOp", "PyOp", "ReturnOp", "ScanOp", "TryOp", "UndefOp", "WhileOp", "WithOp", "YieldOp"]
