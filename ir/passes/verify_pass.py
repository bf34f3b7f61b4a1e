"""The verifier as a pass, so a pipeline can check the IR it is given."""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Function
from laxify.ir.verify import verify


@dataclass(frozen=True)
class Verify:
    name = "verify"

    def apply(self, fn: Function) -> None:
        verify(fn)
