"""IR passes, one per file, each a small named object with ``apply(fn)``.

``run_passes`` applies a list in order; with ``debug=True`` it verifies after every pass
and keeps the IR text between passes in the returned log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from laxify.ir.core import Function
from laxify.ir.passes.dce import DeadCodeElimination
from laxify.ir.passes.fold_static import StaticFolding
from laxify.ir.passes.infer_types import TypeInference
from laxify.ir.passes.verify_pass import Verify
from laxify.ir.printer import print_function
from laxify.ir.verify import verify

__all__ = [
    "DeadCodeElimination",
    "StaticFolding",
    "TypeInference",
    "Verify",
    "PassLog",
    "run_passes",
    "default_passes",
]


@dataclass
class PassLog:
    """The IR text after each pass (filled only in debug mode)."""

    stages: list[tuple[str, str]] = field(default_factory=list)


def default_passes(param_types=None, evaluate=None) -> list:
    """The standard pipeline: verify, infer types, fold static control flow, remove dead code."""
    return [
        Verify(),
        TypeInference(param_types=param_types, evaluate=evaluate),
        StaticFolding(),
        DeadCodeElimination(),
    ]


def run_passes(fn: Function, passes: list, debug: bool = False) -> PassLog:
    log = PassLog()
    for p in passes:
        p.apply(fn)
        if debug:
            verify(fn)
            log.stages.append((p.name, print_function(fn)))
    return log
