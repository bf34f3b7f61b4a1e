"""One failing case per verifier rule (ops' own rules and scoping), plus a passing function."""

from __future__ import annotations

import re

import pytest

from laxify.ir.core import Function, Region, Value, VerifyError
from laxify.ir.ops import UndefOp
from laxify.ir.parser import parse_function
from laxify.ir.verify import verify


def func(body: str, params: str = "%p.0, %x.0") -> Function:
    return parse_function(f"func @f({params}) {{\n{body}\n}}")


SET_X = "%x.1 = py() {code = 'x = 1', kind = 'stmt'}"
SET_X2 = "%x.2 = py() {code = 'x = 1', kind = 'stmt'}"


def cond(regions: list[str], operands: str = "%p.0, %x.0", results: str = "%x.9 = ") -> str:
    inner = " } { ".join(regions)
    return f"{results}cond({operands}) {{ {inner} }}"


def loop(name: str, operands: str, regions: list[str], attrs: str = "num_carries = 1",
         results: str = "%x.9 = ") -> str:
    inner = " } { ".join(regions)
    return f"{results}{name}({operands}) {{{attrs}}} {{ {inner} }}"


BODY = "^(%x.2): yield(%x.2)"
RANGE_BODY = "^(%i.1, %x.2): yield(%x.2)"
WHILE_COND = "^(%x.1): yield(%p.0)"

CASES: list[tuple[str, str, str]] = [
    # verify.py: scoping and terminators
    ("use-before-def", f"%y.1 = py(%x.1) {{code = 'y = x', kind = 'stmt'}}\n{SET_X}",
     "operand %x.1 is not defined before its use"),
    ("defined-twice", f"{SET_X}\n{SET_X}", "%x.1 (result of 'py') is defined more than once"),
    ("block-arg-redefines", cond(["^(%x.0): yield(%x.0)", "^(%x.1): yield(%x.1)"]),
     "%x.0 (block argument) is defined more than once"),
    ("yield-not-last", cond(["^(%x.1): yield(%x.1) yield(%x.1)", "^(%x.3): yield(%x.3)"]),
     "'yield' must be the last op of a control-flow region"),
    ("yield-in-body", "yield()", "'yield' must be the last op of a control-flow region"),
    ("return-in-region", cond(["^(%x.1): return(%x.1) yield()", "^(%x.3): yield()"], results=""),
     "'return' may only appear in the function body, not inside a region"),
    # core.Op.expect_regions / expect_yield
    ("while-one-region", loop("while", "%x.0", [BODY]), "expected 2 region(s), found 1"),
    ("scan-two-regions", loop("scan", "%x.0, %x.0", [BODY, BODY]), "expected 1 region(s), found 2"),
    ("region-without-yield", cond([f"^(%x.1): {SET_X2}", "^(%x.3): yield(%x.3)"]),
     "region 0 must end with 'yield'"),
    ("empty-region", cond(["^(%x.1):", "^(%x.3): yield(%x.3)"]), "region 0 must end with 'yield'"),
    # cond
    ("cond-no-selector", cond(["^(): yield()", "^(): yield()"], operands="", results=""),
     "'cond' needs a selector operand"),
    ("cond-one-region", cond(["^(%x.1): yield(%x.1)"]), "'cond' needs at least 2 regions, found 1"),
    ("cond-arg-count", cond(["^(%x.1): yield(%x.1)", "^(): yield(%p.0)"]),
     "region 1 has 0 argument(s) but the op has 1 input(s)"),
    ("cond-yield-count", cond(["^(%x.1): yield(%x.1)", "^(%x.3): yield()"]),
     "region 1 yields 0 value(s) but 1 are expected"),
    # cond: an elif chain (test regions, then branches)
    ("cond-num-tests-negative", cond(["^(%x.1): yield(%x.1)", "^(%x.3): yield(%x.3)"],
                                     results="%x.9 = ").replace("cond(%p.0, %x.0)", "cond(%p.0, %x.0) {num_tests = -1}"),
     "'num_tests' must be a non-negative int"),
    ("cond-chain-region-count", cond(["^(%x.4): yield(%p.0)", "^(%x.1): yield(%x.1)", "^(%x.3): yield(%x.3)"]
                                     ).replace("cond(%p.0, %x.0)", "cond(%p.0, %x.0) {num_tests = 1}"),
     "'cond' with 1 test(s) needs 1 test and 3 branch regions, found 3 region(s)"),
    ("cond-test-yields-one", cond(["^(%x.4): yield()", "^(%x.1): yield(%x.1)", "^(%x.3): yield(%x.3)",
                                   "^(%x.5): yield(%x.5)"]
                                  ).replace("cond(%p.0, %x.0)", "cond(%p.0, %x.0) {num_tests = 1}"),
     "test 0 yields 0 value(s) but 1 are expected"),
    ("cond-test-arg-count", cond(["^(): yield(%p.0)", "^(%x.1): yield(%x.1)", "^(%x.3): yield(%x.3)",
                                  "^(%x.5): yield(%x.5)"]
                                 ).replace("cond(%p.0, %x.0)", "cond(%p.0, %x.0) {num_tests = 1}"),
     "test 0 has 0 argument(s) but the op has 1 input(s)"),
    ("cond-chain-branch-yield-count", cond(["^(%x.4): yield(%p.0)", "^(%x.1): yield(%x.1)",
                                            "^(%x.3): yield()", "^(%x.5): yield(%x.5)"]
                                           ).replace("cond(%p.0, %x.0)", "cond(%p.0, %x.0) {num_tests = 1}"),
     "region 1 yields 0 value(s) but 1 are expected"),
    # loops
    ("num-carries-missing", loop("while", "%x.0", [WHILE_COND, BODY], attrs="max_iters = 3"),
     "'num_carries' must be an int between 0 and 1"),
    ("num-carries-too-big", loop("while", "%x.0", [WHILE_COND, BODY], attrs="num_carries = 2"),
     "'num_carries' must be an int between 0 and 1"),
    ("num-carries-negative", loop("scan", "%p.0, %x.0", [BODY], attrs="num_carries = -1"),
     "'num_carries' must be an int between 0 and 1"),
    ("num-carries-not-int", loop("scan", "%p.0, %x.0", [BODY], attrs="num_carries = '1'"),
     "'num_carries' must be an int between 0 and 1"),
    ("carries-vs-results", loop("while", "%x.0", [WHILE_COND, BODY], results=""),
     "defines 0 result(s) but carries 1 value(s)"),
    ("max-iters-negative", loop("scan", "%p.0, %x.0", [BODY], attrs="num_carries = 1, max_iters = -1"),
     "'max_iters' must be a non-negative int"),
    ("max-iters-not-int", loop("scan", "%p.0, %x.0", [BODY], attrs="num_carries = 1, max_iters = 2.5"),
     "'max_iters' must be a non-negative int"),
    ("while-condition-args", loop("while", "%x.0", ["^(): yield(%p.0)", BODY]),
     "condition has 0 argument(s), expected 1"),
    ("while-condition-yields", loop("while", "%x.0", ["^(%x.1): yield(%p.0, %x.1)", BODY]),
     "condition yields 2 value(s) but 1 are expected"),
    ("while-body-args", loop("while", "%x.0", [WHILE_COND, "^(): yield(%x.0)"]),
     "body has 0 argument(s), expected 1"),
    ("while-body-yields", loop("while", "%x.0", [WHILE_COND, "^(%x.2): yield()"]),
     "body yields 0 value(s) but 1 are expected"),
    ("for-range-bounds", loop("for_range", "%p.0, %p.0", [RANGE_BODY], attrs="num_carries = 0", results=""),
     "'for_range' needs start, stop and step operands"),
    ("for-range-args", loop("for_range", "%p.0, %p.0, %p.0, %x.0", [RANGE_BODY],
                            attrs="num_carries = 1, range_args = 4"),
     "'range_args' must be 1, 2 or 3"),
    ("for-range-no-index", loop("for_range", "%p.0, %p.0, %p.0, %x.0", [BODY]),
     "body has 1 argument(s), expected 2"),
    ("for-range-body-yield", loop("for_range", "%p.0, %p.0, %p.0, %x.0", ["^(%i.1, %x.2): %x.3 = undef()"]),
     "body must end with 'yield'"),
    ("scan-no-sequence", loop("scan", "", [BODY], attrs="num_carries = 0", results=""),
     "'scan' needs the sequence as its first operand"),
    ("scan-no-element", loop("scan", "%p.0, %x.0", [BODY]), "body has 1 argument(s), expected 2"),
    # py
    ("py-code-not-str", "%x.1 = py() {code = 3, kind = 'stmt'}", "'code' attribute must be a string"),
    ("py-no-code", "%x.1 = py() {kind = 'stmt'}", "'code' attribute must be a string"),
    ("py-bad-kind", "%x.1 = py() {code = 'x = 1', kind = 'decl'}",
     "'kind' must be 'stmt' or 'expr', found 'decl'"),
    ("py-bad-static", "%x.1 = py() {code = 'x = 1', kind = 'stmt', static = 'sometimes'}",
     "'static' must be one of ('always', 'operands', 'never')"),
    ("py-with-region", "%x.1 = py() {code = 'x = 1', kind = 'stmt'} { ^(): yield() }", "'py' has no regions"),
    ("py-expr-two-results", "%1, %2 = py(%x.0) {code = 'x + 1', kind = 'expr'}",
     "an expression defines exactly one result, found 2"),
    ("py-expr-no-result", "py(%x.0) {code = 'x + 1', kind = 'expr'}",
     "an expression defines exactly one result, found 0"),
    ("py-stmt-temp-result", "%1 = py() {code = 'x = 1', kind = 'stmt'}",
     "every result of a statement must name the Python variable it writes"),
    ("py-temp-operand", "%1 = py() {code = '1', kind = 'expr'}\n%2 = py(%1) {code = 't + 1', kind = 'expr'}",
     "every operand must name the Python variable the code reads"),
    # with
    ("with-code-not-str", "%x.9 = with(%x.0) {code = 3, num_targets = 0} { ^(%x.1): yield(%x.1) }",
     "'code' attribute must be a string"),
    ("with-targets-missing", "%x.9 = with(%x.0) {code = 'with c:'} { ^(%x.1): yield(%x.1) }",
     "'num_targets' must be a non-negative int"),
    ("with-two-regions", "%x.9 = with(%x.0) {code = 'with c:', num_targets = 0} "
     "{ ^(%x.1): yield(%x.1) } { ^(%x.2): yield(%x.2) }", "expected 1 region(s), found 2"),
    ("with-arg-count", "%x.9 = with(%x.0) {code = 'with c as s:', num_targets = 1} { ^(%x.1): yield(%x.1) }",
     "region has 1 argument(s), expected 1 input(s) and 1 target(s)"),
    ("with-yield-count", "%x.9 = with(%x.0) {code = 'with c:', num_targets = 0} { ^(%x.1): yield() }",
     "region yields 0 value(s) but 1 are expected"),
    # try
    ("try-headers-not-strings", "%x.9 = try(%x.0) {headers = (1, 2), targets = (0, 0), places = ((1, 0), (2, 0))} "
     "{ ^(%x.1): yield(%x.1) } { ^(%x.2): yield(%x.2) }", "'headers' attribute must be a list of strings"),
    ("try-one-region", "%x.9 = try(%x.0) {headers = ('try:',), targets = (0,), places = ((1, 0),)} "
     "{ ^(%x.1): yield(%x.1) }", "'try' needs one header per region and at least 2 regions"),
    ("try-handler-target-count", "%x.9 = try(%x.0) {headers = ('try:', 'except E as e:'), targets = (0, 1), "
     "places = ((1, 0), (2, 0))} { ^(%x.1): yield(%x.1) } { ^(%x.2): yield(%x.2) }",
     "region 1 has 1 argument(s), expected 1 input(s) and 1 target(s)"),
    ("try-yield-count", "%x.9 = try(%x.0) {headers = ('try:', 'finally:'), targets = (0, 0), "
     "places = ((1, 0), (2, 0))} { ^(%x.1): yield(%x.1) } { ^(%x.2): yield() }",
     "region 1 yields 0 value(s) but 1 are expected"),
    # undef
    ("undef-operands", "%x.1 = undef(%x.0)", "'undef' takes no operands and has no regions"),
    ("undef-region", "%x.1 = undef() { ^(): yield() }", "'undef' takes no operands and has no regions"),
    ("undef-no-result", "undef()", "'undef' defines exactly one result that names a Python variable"),
    ("undef-temp-result", "%1 = undef()", "'undef' defines exactly one result that names a Python variable"),
    ("undef-two-results", "%x.1, %y.1 = undef()",
     "'undef' defines exactly one result that names a Python variable"),
    # terminators
    ("yield-with-result", cond(["^(%x.1): %x.2 = yield(%x.1)", "^(%x.3): yield(%x.3)"]),
     "'yield' defines no results and has no regions"),
    ("return-two-operands", "return(%p.0, %x.0)", "'return' takes at most one operand, found 2"),
    ("return-with-result", "%x.1 = return()", "'return' defines no results and has no regions"),
]


@pytest.mark.parametrize(("body", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(body: str, message: str) -> None:
    fn = func(body)
    with pytest.raises(VerifyError, match=re.escape(message)):
        verify(fn)


def test_parameter_defined_twice() -> None:
    with pytest.raises(VerifyError, match=re.escape("%x.0 (parameter) is defined more than once")):
        verify(func("return()", params="%x.0, %x.0"))


def test_error_names_op_location_and_prints_the_function() -> None:
    fn = func("%x.1 = undef(%x.0) loc(7:4)")
    with pytest.raises(VerifyError) as info:
        verify(fn)
    message = str(info.value)
    assert message.startswith("'undef' op at line 7:4: 'undef' takes no operands")
    assert "in:\nfunc @f(%p.0, %x.0) {\n  %x.1 = undef(%x.0) loc(7:4)\n}" in message


def test_hand_built_op_without_results() -> None:
    fn = Function("f", [], Region(ops=[UndefOp(results=[])]))
    with pytest.raises(VerifyError, match="defines exactly one result"):
        verify(fn)
    fn.body.ops[0].results.append(Value("z", 1))
    verify(fn)


WELL_FORMED = """func @f(%xs.0: float32[4,3], %n.0: static(int), %p.0) {
  %acc.1 = py(%xs.0) {code = 'acc = xs[0]', kind = 'stmt'} loc(2:4)
  %acc.2 = scan(%xs.0, %acc.1) {num_carries = 1} {
  ^(%x.1, %acc.3):
    %acc.4 = py(%acc.3, %x.1) {code = 'acc = acc + x', kind = 'stmt'}
    yield(%acc.4)
  } loc(3:4)
  %acc.5, %z.1 = cond(%p.0, %acc.2) {
  ^(%acc.6):
    %z.2 = undef()
    yield(%acc.6, %z.2)
  } {
  ^(%acc.7):
    %z.3 = py(%acc.7) {code = 'z = -acc', kind = 'stmt'}
    yield(%acc.7, %z.3)
  } {
  ^(%acc.8):
    %acc.9 = for_range(%n.0, %n.0, %n.0, %acc.8) {num_carries = 1, max_iters = 10} {
    ^(%i.1, %acc.10):
      yield(%acc.10)
    }
    while() {num_carries = 0} {
    ^():
      %1 = py() {code = 'True', kind = 'expr', static = 'always', value = True}
      yield(%1)
    } {
    ^():
      yield()
    }
    yield(%acc.9, %acc.9)
  }
  return(%acc.5)
}"""


def test_well_formed_function_passes() -> None:
    verify(parse_function(WELL_FORMED))
