"""f.ir(*args): typed SSA text; once specialised, every value it defines has a type."""

from __future__ import annotations

import re
import textwrap

import jax
import numpy as np
import pytest

from laxify.ir.parser import parse_function
from laxify.ir.printer import print_function

F3 = jax.ShapeDtypeStruct((3,), np.float32)
F4 = jax.ShapeDtypeStruct((4,), np.float32)
I32 = jax.ShapeDtypeStruct((), np.int32)

SIGNATURES = {
    "counter": (F3,), "search": (F3,), "branches": (F3, I32), "dispatch": (F3, 1),
    "prefix_sums": (F4,), "tiny": (jax.ShapeDtypeStruct((), np.float32),),
    "first_big": (F3, jax.ShapeDtypeStruct((), np.float32)),  # a counter in a branch of a loop
}
DEFINED = re.compile(r"(%[\w.]+)(:\s*[^,=)]+)?")


def test_counter_carried_by_a_traced_while_is_typed(static):
    # `k = 0` carried by a traced while is typed (not a bare `%k.1`).
    assert static("counter").ir(F3) == textwrap.dedent("""\
        func @counter(%x.0: float32[3]) {params_code = 'x'} {
          %k.0: static(0) = py() {code = 'k = 0', kind = 'stmt', static = 'always', value = 0} loc(11:4)
          %x.4: float32[3], %k.4: int32~[] = while(%x.0, %k.0) {num_carries = 2, static = False} {
          ^(%x.1: float32[3], %k.1: int32~[]):
            %0: bool[] = py(%x.1) {code = 'x.sum() > 1.0', kind = 'expr', static = 'never'} loc(12:4)
            yield(%0)
          } {
          ^(%x.2: float32[3], %k.2: int32~[]):
            %x.3: float32[3] = py(%x.2) {code = 'x = x / 2', kind = 'stmt', static = 'operands'} loc(13:8)
            %k.3: int32~[] = py(%k.2) {code = 'k += 1', kind = 'stmt', static = 'operands'} loc(14:8)
            yield(%x.3, %k.3)
          } loc(12:4)
          %1: (float32[3], int32~[]) = py(%x.4, %k.4) {code = 'x, k', kind = 'expr', static = 'operands'} loc(15:4)
          return(%1) loc(15:4)
        }""")


def _definitions(text: str) -> list[str]:
    """Every value definition: results (left of ' = '), block and function arguments."""
    out = []
    for line in text.splitlines():
        body = line.strip()
        if body.startswith("^(") or body.startswith("func @"):
            inner = body[body.index("(") + 1: body.rindex(")")]
            out += [part.strip() for part in re.split(r",\s*(?=%)", inner) if part.strip()]
        elif " = " in body and body.startswith("%"):
            head = body.split(" = ", 1)[0]
            out += [part.strip() for part in re.split(r",\s*(?=%)", head)]
    return out


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_every_value_is_typed_once_specialised(static, name):
    text = static(name).ir(*SIGNATURES[name])
    untyped = [d for d in _definitions(text) if ":" not in d or d.endswith(": ?")]
    assert not untyped, f"untyped values {untyped} in\n{text}"


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_specialised_text_parses_back(static, name):
    text = static(name).ir(*SIGNATURES[name])
    assert print_function(parse_function(text)) == text
