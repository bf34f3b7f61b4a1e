"""IR passes: type inference, static folding, dead-code elimination and the pass runner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from laxify.ir.core import Function, Value, VerifyError
from laxify.ir.ops import CondOp, ForRangeOp, PyOp, WhileOp
from laxify.ir.parser import parse_function
from laxify.ir.passes import (
    DeadCodeElimination,
    StaticFolding,
    TypeInference,
    default_passes,
    run_passes,
)
from laxify.ir.passes.infer_types import MergeTypeError, predicate_type
from laxify.ir.printer import print_function
from laxify.ir.types import UNDEFINED, UNKNOWN, Array, Static, Type

F32 = Array((), "float32")


def by_code(table: dict[str, Callable[..., Type]]) -> Callable[[PyOp, list[Type]], list[Type]]:
    """An evaluator that types a py op's single result from its operand types, by its code."""
    return lambda op, types: [table[op.code](*types)]


def values(fn: Function) -> dict[str, Value]:
    """Every value of ``fn`` by its printed name."""
    found = {str(p): p for p in fn.params}
    for op in fn.walk():
        found.update((str(v), v) for v in op.results)
        found.update((str(a), a) for r in op.regions for a in r.args)
    return found


def infer(text: str, param_types: list[Type] | None = None, evaluate=None) -> dict[str, Value]:
    fn = parse_function(text)
    TypeInference(param_types=param_types, evaluate=evaluate).apply(fn)
    return values(fn)


# -- type inference --------------------------------------------------------------------------
PREDICATES = """func @f(%x.0, %n.0) {
  %1 = py(%x.0) {code = 'x.shape[0] > 2', kind = 'expr', static = 'always'}
  %2 = py(%x.0) {code = 'x.sum() > 0', kind = 'expr'}
  %3 = py(%n.0) {code = 'n + 1', kind = 'expr', static = 'operands'}
  %4 = py() {code = '2 > 1', kind = 'expr', static = 'always', value = True}
  %y.1 = undef()
  return()
}"""


def test_inference_without_signature() -> None:
    v = infer(PREDICATES)
    assert v["%x.0"].type == UNKNOWN
    assert v["%1"].type == Static()
    assert v["%2"].type == UNKNOWN
    assert v["%3"].type == UNKNOWN  # its operand may be traced
    assert v["%4"].type == Static(True)
    assert v["%y.1"].type == UNDEFINED


def test_inference_with_signature() -> None:
    seen: list[list[Type]] = []

    def evaluate(op: PyOp, types: list[Type]) -> list[Type]:
        seen.append(types)
        return [Array((), "bool")]

    v = infer(PREDICATES, [Array((3,), "float32"), Static(5)], evaluate)
    assert v["%x.0"].type == Array((3,), "float32")
    assert v["%1"].type == Static()
    assert v["%2"].type == Array((), "bool")
    assert v["%3"].type == Static()  # every operand is static now (the evaluator's array is no value)
    # Static ops are evaluated too, for their values (arrays abstractly, Python values known).
    assert seen == [[Array((3,), "float32")], [Array((3,), "float32")], [Static(5)]]


def test_evaluator_is_not_called_on_unknown_operands() -> None:
    def evaluate(op: PyOp, types: list[Type]) -> list[Type]:
        raise AssertionError("called")

    assert infer(PREDICATES, evaluate=evaluate)["%2"].type == UNKNOWN


COND_ON = """func @f(%x.0, %n.0) {
  %1 = py(%x.0) {code = 'x.ndim == 2', kind = 'expr', static = 'always'}
  %2 = py(%x.0) {code = 'x.sum() > 0', kind = 'expr'}
  %y.3 = cond(%SEL, %n.0) {
  ^(%n.1):
    yield(%n.1)
  } {
  ^(%n.2):
    yield(%n.2)
  }
  return(%y.3)
}"""


@pytest.mark.parametrize(("selector", "expected"), [("%1", Static()), ("%2", UNKNOWN)])
def test_predicate_type(selector: str, expected: Type) -> None:
    fn = parse_function(COND_ON.replace("%SEL", selector))
    TypeInference().apply(fn)
    cond = fn.body.ops[2]
    assert isinstance(cond, CondOp)
    assert predicate_type(cond) == expected


FOR_ACC = """func @f(%x.0) {
  %0 = py() {code = '0', kind = 'expr', static = 'always', value = 0}
  %1 = py() {code = '1', kind = 'expr', static = 'always', value = 1}
  %n.1 = py(%x.0) {code = 'n = x.shape[0]', kind = 'stmt', static = 'always'}
  %acc.1 = py() {code = 'acc = 0', kind = 'stmt', static = 'always', value = 0}
  %acc.4 = for_range(%0, %n.1, %1, %acc.1, %x.0) {num_carries = 1} {
  ^(%i.1, %acc.2, %x.1):
    %acc.3 = py(%acc.2, %x.1, %i.1) {code = 'acc = acc + x[i]', kind = 'stmt'}
    yield(%acc.3)
  } loc(5:4)
  return(%acc.4)
}"""

WHILE_ACC = """func @f(%x.0) {
  %acc.1 = py() {code = 'acc = 0', kind = 'stmt', static = 'always', value = 0}
  %acc.4 = while(%acc.1, %x.0) {num_carries = 1} {
  ^(%acc.5, %x.2):
    %2 = py(%acc.5) {code = 'acc < 10', kind = 'expr'}
    yield(%2)
  } {
  ^(%acc.2, %x.1):
    %acc.3 = py(%acc.2, %x.1) {code = 'acc = acc + x[0]', kind = 'stmt'}
    yield(%acc.3)
  } loc(5:4)
  return(%acc.4)
}"""

ADD_FLOAT = by_code({
    "acc = acc + x[i]": lambda acc, x, i: F32,
    "acc = acc + x[0]": lambda acc, x: F32,
    "acc < 10": lambda acc: Array((), "bool"),
})


@pytest.mark.parametrize("text", [FOR_ACC, WHILE_ACC], ids=["for_range", "while"])
def test_carry_widening(text: str) -> None:
    v = infer(text, [Array((5,), "float32")], ADD_FLOAT)
    assert v["%acc.1"].type == Static(0)
    assert v["%acc.2"].type == F32  # the loop starts with acc as float32
    assert v["%acc.4"].type == F32


STATIC_LOOP = """func @f(%n.0) {
  %acc.1 = py() {code = 'acc = 0', kind = 'stmt', static = 'always', value = 0}
  %acc.4 = for_range(%n.0, %n.0, %n.0, %acc.1) {num_carries = 1} {
  ^(%i.1, %acc.2):
    %acc.3 = py(%acc.2, %i.1) {code = 'acc = acc + i', kind = 'stmt', static = 'operands'}
    yield(%acc.3)
  }
  return(%acc.4)
}"""


@pytest.mark.parametrize(("n", "index", "acc"), [
    (Static(4), Static(pytype=int), Static()),  # a Python loop: the carry stays a Python value
    (UNKNOWN, Array((), "int32"), UNKNOWN),
])
def test_for_range_index_and_carry_follow_the_bounds(n: Type, index: Type, acc: Type) -> None:
    v = infer(STATIC_LOOP, [n])
    assert v["%i.1"].type == index
    assert v["%acc.4"].type == acc


DOUBLING = """func @f(%x.0) {
  %x.4 = while(%x.0) {num_carries = 1} {
  ^(%x.1):
    %1 = py(%x.1) {code = 'x.size < 100', kind = 'expr', static = 'always'}
    yield(%1)
  } {
  ^(%x.2):
    %x.3 = py(%x.2) {code = 'x = concat(x, x)', kind = 'stmt'}
    yield(%x.3)
  } loc(2:4)
  return(%x.4)
}"""


def test_merge_error_across_a_loop_iteration() -> None:
    evaluate = by_code({"x = concat(x, x)": lambda x: Array((x.shape[0] * 2,), "float32")})
    with pytest.raises(MergeTypeError) as info:
        infer(DOUBLING, [Array((3,), "float32")], evaluate)
    assert str(info.value) == (
        "'x' at line 2:4: before the loop gives float32[3], after one iteration gives float32[6] "
        "(shapes (3,) and (6,) differ)"
    )
    assert info.value.name == "x"


def test_merge_error_keeps_sides_when_a_python_number_meets_an_array() -> None:
    evaluate = by_code({"acc = acc + x[0]": lambda acc, x: Array((3,), "float32"),
                        "acc < 10": lambda acc: Array((), "bool")})
    with pytest.raises(MergeTypeError) as info:
        infer(WHILE_ACC, [Array((5,), "float32")], evaluate)
    assert "before the loop gives int32~[], after one iteration gives float32[3]" in str(info.value)


BRANCHES = """func @f(%k.0, %x.0) {
  %y.9 = cond(%k.0, %x.0) {
  ^(%x.1):
    %y.1 = py(%x.1) {code = 'y = x[:2]', kind = 'stmt'}
    yield(%y.1)
  } {
  ^(%x.2):
    yield(%x.2)
  }THIRD loc(4:4)
  return(%y.9)
}"""
THIRD = """ {
  ^(%x.3):
    yield(%x.3)
  }"""


@pytest.mark.parametrize(
    ("third", "sides"),
    [("", ("the true branch", "the false branch")), (THIRD, ("branch 0", "branch 1"))],
    ids=["2-way", "3-way"],
)
def test_merge_error_across_branches(third: str, sides: tuple[str, str]) -> None:
    evaluate = by_code({"y = x[:2]": lambda x: Array((2,), "float32")})
    with pytest.raises(MergeTypeError) as info:
        infer(BRANCHES.replace("THIRD", third), [Array((), "int32"), Array((3,), "float32")], evaluate)
    assert str(info.value) == (
        f"'y' at line 4:4: {sides[0]} gives float32[2], {sides[1]} gives float32[3] "
        "(shapes (2,) and (3,) differ)"
    )


def test_traced_cond_turns_python_numbers_into_arrays() -> None:
    one = "'y = 1', kind = 'stmt', static = 'always', value = 1"
    text = BRANCHES.replace("THIRD", "").replace("'y = x[:2]', kind = 'stmt'", one)
    v = infer(text, [Array((), "bool"), Static(2)])
    assert v["%y.9"].type == Array((), "int32", weak=True)


# -- static folding --------------------------------------------------------------------------
def fold(text: str, param_types: list[Type] | None = None) -> Function:
    fn = parse_function(text)
    TypeInference(param_types=param_types).apply(fn)
    StaticFolding().apply(fn)
    return fn


SELECT = """func @f(%x.0) {
  %1 = py() {code = 'SEL', kind = 'expr', static = 'always', value = SEL}
  %y.9 = cond(%1, %x.0) {
  ^(%x.1):
    %y.1 = py(%x.1) {code = 'y = x + 1', kind = 'stmt'}
    yield(%y.1)
  } {
  ^(%x.2):
    %y.2 = py(%x.2) {code = 'y = x - 1', kind = 'stmt'}
    yield(%y.2)
  } {
  ^(%x.3):
    yield(%x.3)
  }
  return(%y.9)
}"""


def test_fold_known_selector_golden() -> None:
    two_way = SELECT.replace(" {\n  ^(%x.3):\n    yield(%x.3)\n  }", "").replace("SEL", "True")
    assert print_function(fold(two_way)) == """func @f(%x.0) {
  %1: static(True) = py() {code = 'True', kind = 'expr', static = 'always', value = True}
  %y.1 = py(%x.0) {code = 'y = x + 1', kind = 'stmt'}
  return(%y.1)
}"""


@pytest.mark.parametrize(("selector", "code", "returned"), [
    ("0", "y = x + 1", "%y.1"),
    ("1", "y = x - 1", "%y.2"),
    ("2", None, "%x.0"),  # the region yields its argument: uses go back to the input
])
def test_fold_known_selector(selector: str, code: str | None, returned: str) -> None:
    fn = fold(SELECT.replace("SEL", selector))
    assert not any(isinstance(op, CondOp) for op in fn.walk())
    inlined = [op for op in fn.body.ops if isinstance(op, PyOp) and op.attributes["kind"] == "stmt"]
    assert [op.code for op in inlined] == ([code] if code else [])
    assert all(str(v) == "%x.0" for op in inlined for v in op.operands)
    assert str(fn.body.ops[-1].operands[0]) == returned


UNKNOWN_VALUE = """func @f(%x.0, %n.0) {
  %1 = py(%x.0) {code = 'x.ndim == 2', kind = 'expr', static = 'always'}
  %2 = py(%x.0) {code = 'x.sum() > 0', kind = 'expr'}
  %y.3 = cond(%SEL, %n.0) {
  ^(%n.1):
    yield(%n.1)
  } {
  ^(%n.2):
    yield(%n.2)
  }
  %n.5 = for_range(%n.0, %n.0, %n.0, %n.0) {num_carries = 1} {
  ^(%i.1, %n.3):
    yield(%n.3)
  }
  %n.9 = while(%n.0) {num_carries = 1} {
  ^(%n.6):
    yield(%SEL)
  } {
  ^(%n.7):
    yield(%n.7)
  }
  return(%y.3)
}"""


@pytest.mark.parametrize(("selector", "params", "static"), [
    ("%1", None, True),  # static type, value unknown: decided by Python while tracing
    ("%2", None, False),  # unknown: decided by the runtime dispatcher
    ("%2", [Array((3,), "float32"), Static(2)], False),
])
def test_fold_marks_static_control_flow(selector: str, params: list[Type] | None, static: bool) -> None:
    fn = fold(UNKNOWN_VALUE.replace("%SEL", selector), params)
    cond, loop, while_op = fn.body.ops[2:5]
    assert isinstance(cond, CondOp) and isinstance(loop, ForRangeOp) and isinstance(while_op, WhileOp)
    assert cond.attributes["static"] is static
    assert while_op.attributes["static"] is static
    assert loop.attributes["static"] is (params is not None)  # bounds and carry known only with a signature


CHAIN = """func @f(%x.0) {
  %1 = py() {code = 'C0', kind = 'expr'S0}
  %y.9 = cond(%1, %x.0) {num_tests = 2} {
  ^(%x.4):
    %2 = py(%x.4) {code = 'C1', kind = 'expr'S1}
    yield(%2)
  } {
  ^(%x.5):
    %3 = py(%x.5) {code = 'C2', kind = 'expr'S2}
    yield(%3)
  } {
  ^(%x.1):
    %y.1 = py(%x.1) {code = 'y = x + 1', kind = 'stmt'}
    yield(%y.1)
  } {
  ^(%x.2):
    %y.2 = py(%x.2) {code = 'y = x - 1', kind = 'stmt'}
    yield(%y.2)
  } {
  ^(%x.3):
    %y.3 = py(%x.3) {code = 'y = x * 2', kind = 'stmt'}
    yield(%y.3)
  } {
  ^(%x.6):
    yield(%x.6)
  }
  return(%y.9)
}"""

KNOWN, TRACED, PYTHON = ", value = {}", "", ", static = 'always'"


def chain(c0: str, c1: str, c2: str) -> str:
    """``CHAIN`` whose three conditions are known (``"True"``/``"False"``), traced or static."""
    text = CHAIN
    for k, c in enumerate((c0, c1, c2)):
        known = c in ("True", "False")
        text = text.replace(f"'C{k}'", repr(c if known else f"c{k}"))
        text = text.replace(f"S{k}", (PYTHON + KNOWN.format(c)) if known else
                            (TRACED if c == "traced" else PYTHON))
    return text


def bodies(fn: Function) -> list[str]:
    return [op.code for op in fn.walk() if isinstance(op, PyOp) and op.attributes["kind"] == "stmt"]


@pytest.mark.parametrize(("conds", "tests", "kept"), [
    # A known-false first condition hands the choice to the next test, which then runs first.
    (("False", "traced", "traced"), 1, ["y = x - 1", "y = x * 2", None]),
    (("False", "False", "traced"), 0, ["y = x * 2", None]),
    (("False", "False", "False"), None, []),
    (("False", "True", "traced"), None, ["y = x - 1"]),
    (("True", "traced", "traced"), None, ["y = x + 1"]),
    # Known later conditions: false drops the arm, true ends the chain there.
    (("static", "False", "traced"), 1, ["y = x + 1", "y = x * 2", None]),
    (("static", "True", "traced"), 0, ["y = x + 1", "y = x - 1"]),
    (("traced", "traced", "True"), 1, ["y = x + 1", "y = x - 1", "y = x * 2"]),
])
def test_fold_elif_chain(conds, tests, kept) -> None:
    fn = fold(chain(*conds))
    conds_left = [op for op in fn.walk() if isinstance(op, CondOp)]
    if tests is None:
        assert not conds_left and bodies(fn) == [k for k in kept if k]
        return
    (op,) = conds_left
    assert op.num_tests == tests and len(op.branches) == len(kept)
    assert [next((o.code for o in b.ops if isinstance(o, PyOp)), None) for b in op.branches] == kept


@pytest.mark.parametrize(("conds", "static"), [
    (("static", "static", "static"), True),
    (("static", "traced", "static"), False),
    (("traced", "static", "static"), False),
])
def test_fold_marks_an_elif_chain_static_only_when_every_condition_is(conds, static) -> None:
    (op,) = [op for op in fold(chain(*conds)).walk() if isinstance(op, CondOp)]
    assert op.num_tests == 2 and op.attributes["static"] is static


def test_elif_chain_results_join_only_the_arms_that_may_run() -> None:
    """A condition known to be true ends the chain: the arms after it (here one whose `y` has
    another shape) are not joined, and the traced first condition makes the result traced."""
    vec, other, flag = Array((2,), "float32"), Array((5,), "float32"), Array((), "bool")
    table = {"c0": lambda: flag, "c1": lambda x: flag, "c2": lambda x: flag, "y = x + 1": lambda x: vec,
             "y = x - 1": lambda x: vec, "y = x * 2": lambda x: other}
    fn = parse_function(chain("traced", "True", "traced"))
    TypeInference(param_types=[vec], evaluate=by_code(table)).apply(fn)
    (op,) = [op for op in fn.walk() if isinstance(op, CondOp)]
    assert predicate_type(op) == flag
    assert op.results[0].type == vec
    fn = parse_function(chain("traced", "traced", "traced"))
    with pytest.raises(MergeTypeError, match="the `if` branch gives .*, `elif` branch 2 gives"):
        TypeInference(param_types=[vec], evaluate=by_code(table)).apply(fn)


def test_dce_of_an_elif_chain_keeps_its_tests() -> None:
    fn = parse_function(chain("traced", "traced", "traced").replace("return(%y.9)", "return()"))
    DeadCodeElimination().apply(fn)
    (op,) = [op for op in fn.walk() if isinstance(op, CondOp)]
    assert not op.results and [len(b.terminator.operands) for b in op.branches] == [0, 0, 0, 0]
    assert [len(t.terminator.operands) for t in op.tests] == [1, 1]


# -- dead-code elimination -------------------------------------------------------------------
def dce(text: str) -> str:
    fn = parse_function(text)
    DeadCodeElimination().apply(fn)
    return print_function(fn)


def test_dce_removes_unused_cond_outputs_and_their_yields() -> None:
    before = """func @f(%p.0, %x.0) {
  %y.9, %z.9 = cond(%p.0, %x.0) {
  ^(%x.1):
    %y.1, %z.1 = py(%x.1) {code = 'y, z = x, x', kind = 'stmt'}
    yield(%y.1, %z.1)
  } {
  ^(%x.2):
    %3 = py(%x.2) {code = '-x', kind = 'expr', static = 'operands'}
    yield(%x.2, %3)
  }
  return(%y.9)
}"""
    assert dce(before) == """func @f(%p.0, %x.0) {
  %y.9 = cond(%p.0, %x.0) {
  ^(%x.1):
    %y.1, %z.1 = py(%x.1) {code = 'y, z = x, x', kind = 'stmt'}
    yield(%y.1)
  } {
  ^(%x.2):
    yield(%x.2)
  }
  return(%y.9)
}"""


def test_dce_removes_a_dead_loop_carry() -> None:
    before = """func @f(%n.0, %acc.0, %t.0) {
  %acc.3, %t.3 = for_range(%n.0, %n.0, %n.0, %acc.0, %t.0, %n.0) {num_carries = 2} {
  ^(%i.1, %acc.1, %t.1, %n.1):
    %acc.2 = py(%acc.1, %i.1) {code = 'acc = acc + i', kind = 'stmt'}
    %t.2 = py(%n.1) {code = 't = n * 2', kind = 'stmt'}
    yield(%acc.2, %t.2)
  }
  return(%acc.3)
}"""
    assert dce(before) == """func @f(%n.0, %acc.0, %t.0) {
  %acc.3 = for_range(%n.0, %n.0, %n.0, %acc.0, %n.0) {num_carries = 1} {
  ^(%i.1, %acc.1, %n.1):
    %acc.2 = py(%acc.1, %i.1) {code = 'acc = acc + i', kind = 'stmt'}
    %t.2 = py(%n.1) {code = 't = n * 2', kind = 'stmt'}
    yield(%acc.2)
  }
  return(%acc.3)
}"""


def test_dce_keeps_a_carry_that_feeds_a_live_one() -> None:
    before = """func @f(%acc.0, %t.0) {
  %acc.3, %t.3 = while(%acc.0, %t.0) {num_carries = 2} {
  ^(%acc.4, %t.4):
    %1 = py(%acc.4) {code = 'acc < 9', kind = 'expr'}
    yield(%1)
  } {
  ^(%acc.1, %t.1):
    %acc.2 = py(%acc.1, %t.1) {code = 'acc = acc + t', kind = 'stmt'}
    yield(%acc.2, %t.1)
  }
  return(%acc.3)
}"""
    assert dce(before) == before


def test_dce_removes_unused_undef_and_keeps_a_live_one() -> None:
    before = """func @f() {
  %y.1 = undef()
  %z.1 = undef()
  return(%z.1)
}"""
    assert dce(before) == "func @f() {\n  %z.1 = undef()\n  return(%z.1)\n}"


@pytest.mark.parametrize(("attrs", "removed"), [
    (", static = 'always'", True),
    (", static = 'operands'", True),
    (", static = 'never'", False),
    ("", False),  # the default rule is 'never': the expression may have effects
])
def test_dce_unused_expression(attrs: str, removed: bool) -> None:
    before = f"func @f(%x.0) {{\n  %1 = py(%x.0) {{code = 'g(x)', kind = 'expr'{attrs}}}\n  return()\n}}"
    assert ("py(" not in dce(before)) is removed


# -- the pass runner -------------------------------------------------------------------------
def test_run_passes_debug_logs_every_stage() -> None:
    fn = parse_function(SELECT.replace("SEL", "1"))
    log = run_passes(fn, default_passes(), debug=True)
    assert [name for name, _ in log.stages] == ["verify", "infer-types", "fold-static", "dce"]
    assert "cond(" in log.stages[1][1] and "cond(" not in log.stages[2][1]
    for _, text in log.stages:
        assert print_function(parse_function(text)) == text
    assert log.stages[-1][1] == print_function(fn)


def test_run_passes_without_debug_logs_nothing() -> None:
    fn = parse_function(SELECT.replace("SEL", "1"))
    assert run_passes(fn, default_passes()).stages == []


@dataclass(frozen=True)
class DropReturnOperandDefinition:
    """A broken pass: removes the op that defines what the function returns."""

    name = "break-ir"

    def apply(self, fn: Function) -> None:
        fn.body.ops = fn.body.ops[1:]


def test_run_passes_debug_verifies_after_each_pass() -> None:
    text = "func @f() {\n  %y.1 = undef()\n  return(%y.1)\n}"
    run_passes(parse_function(text), [DropReturnOperandDefinition()])  # unchecked
    with pytest.raises(VerifyError, match=r"operand %y.1 is not defined before its use"):
        run_passes(parse_function(text), [DropReturnOperandDefinition()], debug=True)
