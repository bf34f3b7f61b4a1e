"""The guards shared by the jump converters (transpiler/converters/guards.py) alone: the nodes
its helpers build, golden tests of `LoopJumpConverter` with the smallest `rebuild` (source
before, source after), and functions whose jumps stand where those guards must reach (an
`elif` arm, a `try`, a `with`, one-line blocks, an inner loop's `else`) run eagerly and
converted."""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import libcst as cst
import pytest

from golden import check, check_unchanged
from harness import CASE_FIELDS, case, check as check_equivalent
from laxify.transpiler.converters.base import Context
from laxify.transpiler.converters.guards import (
    LOOPS, LoopJumpConverter, as_indented, assign, contains, guard_block, lazy_lambda, loop_test, not_flag,
    rewrite_blocks, runtime_call,
)

_MODULE = cst.Module([])


def code(node: cst.CSTNode) -> str:
    return _MODULE.code_for_node(node)


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def function(text: str) -> cst.FunctionDef:
    return cst.parse_module(text).body[0]


# -- the nodes the helpers build -------------------------------------------------------------

def test_runtime_call_calls_the_runtime_with_its_arguments():
    assert code(runtime_call("not_", expr("x > 0"))) == "_lx.not_(x > 0)"
    assert code(runtime_call("leaving", expr("flag"), expr("None"))) == "_lx.leaving(flag, None)"
    assert code(runtime_call("pop_options")) == "_lx.pop_options()"


def test_runtime_call_parenthesizes_a_bare_tuple_that_would_be_two_arguments():
    # `return 0.0, x` as one argument: `_lx.f((0.0, x))`, not `_lx.f(0.0, x)`.
    bare = cst.parse_statement("return 0.0, x").body[0].value
    assert code(runtime_call("leaving", expr("flag"), bare)) == "_lx.leaving(flag, (0.0, x))"
    assert code(runtime_call("leaving", expr("(0.0, x)"))) == "_lx.leaving((0.0, x))"


def test_the_flag_helpers():
    assert code(not_flag("_lx_break_1")) == "_lx.not_(_lx_break_1)"
    assert code(assign("_lx_break_1", cst.Name("True"))) == "_lx_break_1 = True\n"
    assert code(lazy_lambda(expr("x.sum()"))) == "lambda: x.sum()"


def test_loop_test_stops_the_loop_on_the_flag_and_evaluates_the_test_lazily():
    assert code(loop_test("_lx_break_1", expr("x.sum() < 10"))) == (
        "_lx.and_(_lx.not_(_lx_break_1), lambda: x.sum() < 10, condition=True)")


def test_as_indented_makes_a_one_line_body_a_block_of_one_line():
    loop = cst.parse_statement("while c: a = 1; break")
    block = as_indented(loop.body)
    assert isinstance(block, cst.IndentedBlock)
    assert code(loop.with_changes(body=block)) == "while c:\n    a = 1; break\n"
    indented = cst.parse_statement("while c:\n    a = 1\n").body
    assert as_indented(indented) is indented


# -- contains --------------------------------------------------------------------------------

def test_contains_finds_a_statement_at_any_depth_of_blocks():
    loop = cst.parse_statement("while c:\n    if a:\n        with m:\n            try:\n                break\n"
                               "            except E:\n                pass\n")
    assert contains(loop.body, (cst.Break,))
    assert not contains(loop.body, (cst.Continue,))


def test_contains_does_not_look_into_nested_scopes():
    """A nested def, class or lambda holds nothing of the enclosing function's."""
    loop = cst.parse_statement("for i in x:\n    def g():\n        return h()\n    class C:\n        k = h()\n"
                               "    y = lambda: h()\n")
    assert not contains(loop.body, (cst.Return,))
    assert not contains(loop.body, (cst.Call,))
    assert contains(cst.parse_statement("for i in x:\n    y = lambda: h()\n    z = h()\n").body, (cst.Call,))
    assert not contains(function("def g():\n    return 1\n"), (cst.Return,))


def test_contains_stops_at_inner_loops_but_sees_their_else():
    """A `break` in an inner loop's body is the inner loop's; one in its `else:` (which runs
    after the inner loop) is the enclosing loop's."""
    inner = cst.parse_statement("for i in x:\n    for j in y:\n        break\n")
    assert contains(inner.body, (cst.Break,))
    assert not contains(inner.body, (cst.Break,), stop=LOOPS)
    in_else = cst.parse_statement("for i in x:\n    for j in y:\n        pass\n    else:\n        break\n")
    assert contains(in_else.body, (cst.Break,), stop=LOOPS)


def test_contains_finds_expressions_too():
    stmt = cst.parse_statement("if a:\n    y = f(x)\n")
    assert contains(stmt, (cst.Call,))
    assert not contains(stmt, (cst.Lambda,))


# -- guard_block and rewrite_blocks ---------------------------------------------------------

def _guard_statements(source: str, positions: dict | None = None) -> list:
    """``guard_block`` over the body of the function in ``source``: each ``break`` becomes
    ``flag = True``."""
    fn = function(source)

    def replace(_jump):
        return [assign("flag", cst.Name("True"))]

    def rewrite(stmt):
        return rewrite_blocks(stmt, block, positions)

    def block(stmts):
        return guard_block(stmts, "flag", (cst.Break,), replace, rewrite, LOOPS, positions)

    return block(list(fn.body.body))


def test_guard_block_leaves_a_block_without_jumps_as_it_is():
    fn = function("def f(x):\n    a = 1\n    if a:\n        b = 2\n")
    out = guard_block(list(fn.body.body), "flag", (cst.Break,), None, None, LOOPS)
    assert out == list(fn.body.body)


def test_guard_block_keeps_the_statements_before_a_jump_on_its_line_and_drops_the_rest():
    out = _guard_statements("def f(x):\n    a = 1; break; b = 2\n    c = 3\n")
    assert "".join(code(s) for s in out) == "a = 1\nflag = True\n"


def test_guard_block_gives_the_guard_the_position_of_the_statement_that_may_jump():
    fn = function("def f(x):\n    if x:\n        break\n    y = 1\n")
    stmt = fn.body.body[0]
    positions = {stmt: (2, 4)}

    def block(stmts):
        return guard_block(stmts, "flag", (cst.Break,), lambda _: [assign("flag", cst.Name("True"))],
                           lambda s: rewrite_blocks(s, block, positions), LOOPS, positions)

    rewritten, guard = block(list(fn.body.body))
    assert code(guard) == "if _lx.not_(flag):\n    y = 1\n"
    assert positions[guard] == (2, 4)
    assert positions[rewritten] == (2, 4)


def test_rewrite_blocks_rebuilds_a_long_elif_chain_without_recursing():
    arms = 1200  # deeper than Python's recursion limit
    text = "if x == 0:\n    break\n" + "".join(f"elif x == {k}:\n    break\n" for k in range(1, arms)) + \
           "else:\n    break\n"
    chain = cst.parse_statement(text)
    seen = []

    def block(stmts):
        seen.append(len(stmts))
        return [assign("flag", cst.Name("True"))]

    new = rewrite_blocks(chain, block)
    assert len(seen) == arms + 1
    bodies, node = [], new  # (walked, not printed: printing recurses per arm)
    while isinstance(node, cst.If):
        bodies.append(node.body)
        node = node.orelse
    bodies.append(node.body)
    assert len(bodies) == arms + 1
    assert all(code(body.body[0]) == "flag = True\n" for body in bodies)


def test_the_base_class_leaves_rebuilding_the_loop_to_each_jump():
    fn = function("def f(x):\n    while x:\n        break\n")
    with pytest.raises(NotImplementedError):
        fn.visit(LoopJumpConverter(Context({})))


# -- golden: LoopJumpConverter with the smallest rebuild ------------------------------------

class _FlagJumps(LoopJumpConverter):
    """Each `break` sets a flag that starts `False` before its loop; the loop stays as it was
    (its test and `else` untouched): what the shared guarding alone does."""

    jump = cst.Break
    stem = "jump"

    def rebuild(self, loop, flag: str, body: list):
        return cst.FlattenSentinel([assign(flag, cst.Name("False")),
                                    loop.with_changes(body=loop.body.with_changes(body=body))])


flag_jumps = types.SimpleNamespace(transform=lambda node, ctx: node.visit(_FlagJumps(ctx)))


def test_a_jump_guards_the_rest_of_its_iteration_at_every_level():
    check(flag_jumps, """
    def f(x):
        while x < 8:
            if x > 1:
                x = 1
            elif x > 2:
                break
            elif x > 3:
                x = 3
            else:
                break
            x = x + 1
            try:
                x = g(x)
            except E:
                break
            finally:
                x = 0
            with m:
                if x: break
            y = 2
        return x
    """, """
    def f(x):
        _lx_jump_1 = False
        while x < 8:
            if x > 1:
                x = 1
            elif x > 2:
                _lx_jump_1 = True
            elif x > 3:
                x = 3
            else:
                _lx_jump_1 = True
            if _lx.not_(_lx_jump_1):
                x = x + 1
                try:
                    x = g(x)
                except E:
                    _lx_jump_1 = True
                finally:
                    x = 0
                if _lx.not_(_lx_jump_1):
                    with m:
                        if x:
                            _lx_jump_1 = True
                    if _lx.not_(_lx_jump_1):
                        y = 2
        return x
    """)


def test_a_one_line_loop_body_becomes_a_block_and_its_unreachable_rest_goes():
    check(flag_jumps, """
    def f(x):
        while x: x = x + 1; break; x = 0
        return x
    """, """
    def f(x):
        _lx_jump_1 = False
        while x:
            x = x + 1
            _lx_jump_1 = True
        return x
    """)


def test_each_loop_owns_the_jumps_of_its_body_and_an_inner_else_belongs_outside():
    check(flag_jumps, """
    def f(x):
        for i in x:
            for j in x:
                break
            else:
                break
            x = x + i
        return x
    """, """
    def f(x):
        _lx_jump_2 = False
        for i in x:
            _lx_jump_1 = False
            for j in x:
                _lx_jump_1 = True
            else:
                _lx_jump_2 = True
            if _lx.not_(_lx_jump_2):
                x = x + i
        return x
    """)


def test_loops_without_their_jump_and_loops_of_nested_defs_are_left_alone():
    check_unchanged(flag_jumps, """
    def f(x):
        while x:
            if x > 1:
                continue
            x = x - 1
        def g(v):
            for k in v:
                break
            return v
        h = lambda: [v for v in x]
        return g(x)
    """)


# -- equivalence: jumps where the guards must reach ------------------------------------------

def break_in_an_elif_arm(x):
    i = 0
    while i < 10:
        if x[0] > 5:
            x = x - 1
        elif x.sum() > 8:
            break
        else:
            x = x + 1
        i += 1
        x = x * 1.5
    return x, i


def continue_on_one_line(xs):
    total = xs[0] * 0
    for v in xs:
        if v < 0: continue
        total = total + v
    return total


def break_inside_with(x):
    for k in range(6):
        with jax.named_scope("step"):
            if x.sum() > 20:
                break
            x = x * 2
        x = x + 1
    return x


def break_in_an_inner_loops_else(x):
    for i in range(4):
        for j in range(3):
            if x[j] > 100:
                break
            x = x + j
        else:
            if x.sum() > 30:
                break
        x = x * 2
    return x


def one_line_loop_body(x):
    while x.sum() < 100: x = x * 3; break
    return x


X = jnp.array([1.0, 2.0, 3.0], jnp.float32)


@pytest.mark.parametrize(CASE_FIELDS, [
    case(break_in_an_elif_arm, (X,), (X * 3,), (X * 10,), prims={"cond", "while"}),
    case(continue_on_one_line, (jnp.array([1.0, -2.0, 3.0]),), (-X,), prims={"cond", "scan"}),
    case(break_inside_with, (X,), (X * 10,), prims={"cond", "scan"}),
    case(break_in_an_inner_loops_else, (X,), (X * 0.1,), (X * 50,), prims={"cond", "scan"}),
    case(one_line_loop_body, (X,), (X * 100,), prims={"while"}),
])
def test_guarded_jumps_take_pythons_paths(fn, inputs, prims, static_argnums):
    check_equivalent(fn, *inputs, expect_prims=prims, static_argnums=static_argnums)
