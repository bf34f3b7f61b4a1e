"""The analyses: names read and written, liveness, statement positions and static rules."""

from __future__ import annotations

import libcst as cst
import pytest

from laxify.transpiler.analysis.liveness import Liveness
from laxify.transpiler.analysis.names import block_access, expr_reads, stmt_access, target_names
from laxify.transpiler.analysis.positions import statement_positions
from laxify.transpiler.analysis.staticness import literal_value, static_rule, stmt_static_rule
from laxify.transpiler.source import get_source


def access(code: str) -> tuple[list[str], list[str], list[str]]:
    stmt = cst.parse_module(code).body[0]
    acc = stmt_access(stmt)
    return list(acc.reads), list(acc.writes), list(acc.mutates)


# -- names ------------------------------------------------------------------------------

@pytest.mark.parametrize("code, reads, writes, mutates", [
    # assignments: reads in evaluation order, then the targets
    ("y = x + z\n", ["x", "z"], ["y"], []),
    ("a = b = c\n", ["c"], ["a", "b"], []),
    ("y: int = x\n", ["x"], ["y"], []),
    ("y: int\n", [], [], []),
    ("x += y\n", ["x", "y"], ["x"], []),
    # tuple and starred targets
    ("a, (b, *c) = t\n", ["t"], ["a", "b", "c"], []),
    ("[a, b] = b, a\n", ["b", "a"], ["a", "b"], []),
    # subscript and attribute targets mutate their base: it is read and gets a new value
    ("x[i] = v\n", ["v", "x", "i"], ["x"], ["x"]),
    ("x.a.b = v\n", ["v", "x"], ["x"], ["x"]),
    ("x[i][j] += 1\n", ["x", "i", "j"], ["x"], ["x"]),
    ("f(a)[0] = v\n", ["v", "f", "a"], [], []),
    # calls read the callee; a method call is not a write
    ("x.append(v)\n", ["x", "v"], ["x"], ["x"]),
    ("s += xs.pop()\n", ["s", "xs"], ["s", "xs"], ["xs"]),
    ("y = f(*a, **kw)\n", ["f", "a", "kw"], ["y"], []),
    ("y = x[1:n]\n", ["x", "n"], ["y"], []),
    ("y = x if c else z\n", ["c", "x", "z"], ["y"], []),  # the test is evaluated first
    # comprehensions: the bound names are not reads; the first iterable is read outside
    ("y = [a * k for a in xs if a > t]\n", ["xs", "t", "k"], ["y"], []),
    ("y = {k: v for k, v in d.items()}\n", ["d"], ["y"], []),
    ("y = [b for a in xs for b in a]\n", ["xs"], ["y"], []),
    ("y = [x for x in x]\n", ["x"], ["y"], []),
    ("y = sum(v * w for v in vs)\n", ["sum", "vs", "w"], ["y"], []),
    # lambdas: parameters are bound, defaults and free names are read
    ("f = lambda a, b=d: a + b + c\n", ["d", "c"], ["f"], []),
    # nested defs and classes: their free names, then the name they bind
    ("def g(a):\n    u = a + w\n    return u + v\n", ["w", "v"], ["g"], []),
    ("@dec(p)\ndef h(a=dflt):\n    return a\n", ["dec", "p", "dflt"], ["h"], []),
    ("class K(B):\n    z = q\n", ["B", "q"], ["K"], []),
    # walrus writes its target, also inside conditions
    ("if (n := len(x)) > 2:\n    pass\n", ["len", "x"], ["n"], []),
    ("while (k := k - 1):\n    pass\n", ["k"], ["k"], []),
    # imports bind the first component or the alias
    ("import os.path\n", [], ["os"], []),
    ("import numpy as np\n", [], ["np"], []),
    ("from a import b, c as d\n", [], ["b", "d"], []),
    ("from a import *\n", [], [], []),
    # del, global
    ("del a\n", ["a"], ["a"], []),  # del needs `a` bound: a read, then unbinds it
    ("del xs[i], b\n", ["xs", "i", "b"], ["xs", "b"], ["xs"]),
    ("global g\n", [], [], []),
    # compound statements: everything inside
    ("for i, j in zip(a, b):\n    s += i\n", ["zip", "a", "b", "s", "i"], ["i", "j", "s"], []),
    ("while k:\n    k -= 1\n", ["k"], ["k"], []),
    ("if c:\n    y = 1\nelif d:\n    z = 2\nelse:\n    w = y\n", ["c", "d", "y"], ["y", "z", "w"], []),
    ("with open(p) as (fh, g):\n    z = y\n", ["open", "p", "y"], ["fh", "g", "z"], []),
], ids=lambda v: v if isinstance(v, str) else None)
def test_reads_and_writes(code, reads, writes, mutates):
    assert access(code) == (reads, writes, mutates)


def test_walrus_in_an_expression_statement_writes_its_target():
    reads, writes, _ = access("print(m := x + 1)\n")
    assert reads == ["print", "x"]
    assert writes == ["m"]


def test_expr_reads_skips_attributes_and_bound_names():
    expr = cst.parse_expression("jnp.sum(x.shape[0] + [v for v in ys]) + (lambda q: q + r)(1)")
    assert list(expr_reads(expr)) == ["jnp", "x", "ys", "r"]


def test_target_names():
    assert target_names(cst.parse_expression("a, (b, *c)")) == ["a", "b", "c"]
    assert target_names(cst.parse_expression("x[i]")) == []
    assert target_names(cst.parse_expression("x.a")) == []


def test_block_access_merges_in_order():
    body = cst.parse_module("a = x\nb = a + y\nx[0] = b\n").body
    acc = block_access(body)
    assert list(acc.reads) == ["x", "a", "y", "b"]
    assert list(acc.writes) == ["a", "b", "x"]
    assert list(acc.mutates) == ["x"]


# -- liveness ---------------------------------------------------------------------------

LIVENESS_SAMPLE = """
def f(x, n):
    a = x + 1
    t = n * 2
    if a > 0:
        b = a
        u = 1
    else:
        b = t
    c = b + x
    i = 0
    while i < n:
        tmp = c * 2
        c = tmp + i
        i += 1
    for j in range(n):
        d = c + j
        c = d
    k = 5
    return c
"""


@pytest.fixture(scope="module")
def liveness():
    fn = cst.parse_module(LIVENESS_SAMPLE).body[0]
    stmts = list(fn.body.body)
    return Liveness(fn.body), stmts


def test_live_out_after_straight_line_and_if(liveness):
    live, stmts = liveness
    a, t, if_, c = stmts[:4]
    assert live.live_out[id(a)] == {"a", "n", "x", "range"}
    assert live.live_out[id(t)] == {"a", "t", "n", "x", "range"}
    # `u` is written in one branch and never read again: not live after the `if`.
    assert live.live_out[id(if_)] == {"b", "n", "x", "range"}
    assert live.live_out[id(c)] == {"c", "n", "range"}


def test_live_out_inside_branches(liveness):
    live, stmts = liveness
    if_ = stmts[2]
    b_then, u_then = if_.body.body
    (b_else,) = if_.orelse.body.body
    assert live.live_out[id(b_then)] == {"b", "n", "x", "range"}
    assert live.live_out[id(u_then)] == {"b", "n", "x", "range"}
    assert live.live_out[id(b_else)] == {"b", "n", "x", "range"}


def test_while_head_and_live_out(liveness):
    live, stmts = liveness
    while_ = stmts[5]
    # At the top of each iteration: the counter, the bound and the carried `c`; not `tmp`.
    assert live.live_out[("head", id(while_))] == {"c", "i", "n", "range"}
    assert live.live_out[id(while_)] == {"c", "n", "range"}
    tmp, c_stmt, i_stmt = while_.body.body
    assert live.live_out[id(tmp)] == {"tmp", "i", "n", "range"}
    assert live.live_out[id(c_stmt)] == {"c", "i", "n", "range"}
    assert live.live_out[id(i_stmt)] == {"c", "i", "n", "range"}


def test_for_head_and_live_out(liveness):
    live, stmts = liveness
    for_ = stmts[6]
    head = live.live_out[("head", id(for_))]
    assert "c" in head and "j" not in head and "d" not in head
    assert live.live_out[id(for_)] == {"c"}
    d_stmt, c_stmt = for_.body.body
    assert "d" in live.live_out[id(d_stmt)] and "c" not in live.live_out[id(d_stmt)]
    assert "c" in live.live_out[id(c_stmt)]


def test_dead_store_and_return(liveness):
    live, stmts = liveness
    k, ret = stmts[7:]
    assert live.live_out[id(k)] == {"c"}
    assert live.live_out[id(ret)] == frozenset()


def test_live_in_of_function_body(liveness):
    live, stmts = liveness
    assert live.block_in(stmts, frozenset()) == {"x", "n", "range"}


def test_loop_target_is_live_after_loop_when_read():
    fn = cst.parse_module("def f(xs):\n    for x in xs:\n        pass\n    return x\n").body[0]
    live = Liveness(fn.body)
    for_ = fn.body.body[0]
    assert live.live_out[id(for_)] == {"x"}


def test_variable_written_in_loop_and_used_after_is_live_at_head():
    code = "def f(x):\n    while x < 3:\n        y = x\n        x = x + 1\n    return y\n"
    fn = cst.parse_module(code).body[0]
    live = Liveness(fn.body)
    while_ = fn.body.body[0]
    # `y` may be read after the loop without any iteration: it flows through the head.
    assert live.live_out[("head", id(while_))] == {"x", "y"}


def test_walrus_bound_name_is_not_live_before_its_statement():
    code = "def f(x):\n    while x.sum() < 10:\n        x = (m := x * 2) + m\n    return x\n"
    fn = cst.parse_module(code).body[0]
    live = Liveness(fn.body)
    assert live.live_out[("head", id(fn.body.body[0]))] == {"x"}


def test_except_name_is_not_live_before_the_try():
    code = ("def f(x):\n    while x.sum() < 10:\n        try:\n            x = x * 2\n"
            "        except ValueError as e:\n            print(e)\n    return x\n")
    fn = cst.parse_module(code).body[0]
    live = Liveness(fn.body)
    assert live.live_out[("head", id(fn.body.body[0]))] == {"x", "print", "ValueError"}


# -- positions --------------------------------------------------------------------------

with open(__file__) as _fh:
    FILE_LINES = _fh.read().splitlines()


def line_of(marker: str) -> int:
    found = [k for k, text in enumerate(FILE_LINES, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


def _keep(fn):
    return fn


@_keep
def tricky(x, n):  # <def>
    """One line."""  # <doc>
    # a comment

    a = (x +  # <a>
         1)
    if (a > 0 and  # <if1>
            n > 1):
        b = a  # <b>
        # trailing comment in block
    elif n:  # <elif>

        b = 2  # <b2>
    else:  # <else>
        # lead
        b = 3  # <b3>
    # between
    while b < 10:  # <while>
        b += 1; c = b  # <semi>
        for i in range(  # <for>
                n):
            if i: b = b + i  # <oneline>
            else: c = 0  # <onelineelse>
        # after for
    s = """line
      two"""  # <s-end>
    t = 1 + \
        2  # <t-end>
    for q in [1,  # <for2>
              2]:
        pass  # <pass>
    else:  # <forelse>
        pass  # <pass2>
    try:  # <try>
        pass  # <try-pass>
    except Exception:  # <except>
        pass  # <except-pass>
    finally:  # <finally>
        # comment
        t = t + 1  # <finally-t>
    with open(__file__) as fh:  # <with>

        t = t + 2  # <with-t>
    return b + c + s + t  # <ret>


def _make_nested():
    def nested(x):  # <ndef>
        if x:  # <nif>
            x = 1  # <nx>
        return x  # <nret>

    return nested


def _positions(fn):
    src = get_source(fn)
    return src, statement_positions(src.text, src.node, src.first_line, src.indent)


def _by_type(table) -> set[tuple[str, int, int]]:
    return {(type(node).__name__, line, col) for node, (line, col) in table.items()}


def test_positions_of_every_statement():
    _, table = _positions(tricky)
    L = line_of
    expected = {
        ("FunctionDef", L("<def>"), 0),
        ("SimpleStatementLine", L("<doc>"), 4), ("Expr", L("<doc>"), 4),
        ("SimpleStatementLine", L("<a>"), 4), ("Assign", L("<a>"), 4),
        ("If", L("<if1>"), 4),
        ("SimpleStatementLine", L("<b>"), 8), ("Assign", L("<b>"), 8),
        ("If", L("<elif>"), 4),
        ("SimpleStatementLine", L("<b2>"), 8), ("Assign", L("<b2>"), 8),
        ("Else", L("<else>"), 4),
        ("SimpleStatementLine", L("<b3>"), 8), ("Assign", L("<b3>"), 8),
        ("While", L("<while>"), 4),
        ("SimpleStatementLine", L("<semi>"), 8), ("AugAssign", L("<semi>"), 8), ("Assign", L("<semi>"), 8),
        ("For", L("<for>"), 8),
        ("If", L("<oneline>"), 12), ("Assign", L("<oneline>"), 12),
        ("Else", L("<onelineelse>"), 12), ("Assign", L("<onelineelse>"), 12),
        ("SimpleStatementLine", L("<s-end>") - 1, 4), ("Assign", L("<s-end>") - 1, 4),
        ("SimpleStatementLine", L("<t-end>") - 1, 4), ("Assign", L("<t-end>") - 1, 4),
        ("For", L("<for2>"), 4),
        ("SimpleStatementLine", L("<pass>"), 8), ("Pass", L("<pass>"), 8),
        ("Else", L("<forelse>"), 4),
        ("SimpleStatementLine", L("<pass2>"), 8), ("Pass", L("<pass2>"), 8),
        ("Try", L("<try>"), 4),
        ("SimpleStatementLine", L("<try-pass>"), 8), ("Pass", L("<try-pass>"), 8),
        ("ExceptHandler", L("<except>"), 4),
        ("SimpleStatementLine", L("<except-pass>"), 8), ("Pass", L("<except-pass>"), 8),
        ("Finally", L("<finally>"), 4),
        ("SimpleStatementLine", L("<finally-t>"), 8), ("Assign", L("<finally-t>"), 8),
        ("With", L("<with>"), 4),
        ("SimpleStatementLine", L("<with-t>"), 8), ("Assign", L("<with-t>"), 8),
        ("SimpleStatementLine", L("<ret>"), 4), ("Return", L("<ret>"), 4),
    }
    assert _by_type(table) == expected


def test_positions_match_the_file_text():
    """Each compound or line statement starts at its position in the real file."""
    src, table = _positions(tricky)
    for node, (line, col) in table.items():
        if not isinstance(node, (cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else,
                                 cst.ExceptHandler, cst.Finally)):
            continue
        bare = node.with_changes(leading_lines=())
        if isinstance(node, cst.FunctionDef):
            bare = bare.with_changes(decorators=())
        first = src.module.code_for_node(bare).lstrip().splitlines()[0]
        text = FILE_LINES[line - 1]
        # An `elif` is an `If` node whose own code starts at `if`.
        if isinstance(node, cst.If) and text.lstrip().startswith("elif"):
            text = text.replace("elif", "if", 1)
        assert text.strip().startswith(first.strip()[:12]), (type(node).__name__, line, text)
        assert col == len(text) - len(text.lstrip()), (type(node).__name__, line, text)


def test_positions_of_a_nested_function_add_its_indentation():
    _, table = _positions(_make_nested())
    assert _by_type(table) == {
        ("FunctionDef", line_of("<ndef>"), 4),
        ("If", line_of("<nif>"), 8),
        ("SimpleStatementLine", line_of("<nx>"), 12), ("Assign", line_of("<nx>"), 12),
        ("SimpleStatementLine", line_of("<nret>"), 8), ("Return", line_of("<nret>"), 8),
    }


def wide_signature(a,  # <wide-def>
                   b):
    return a + b  # <wide-ret>


def test_body_positions_after_a_multiline_signature():
    _, table = _positions(wide_signature)
    assert {(type(n).__name__, pos) for n, pos in table.items() if not isinstance(n, cst.FunctionDef)} == {
        ("SimpleStatementLine", (line_of("<wide-ret>"), 4)), ("Return", (line_of("<wide-ret>"), 4)),
    }


def test_def_position_with_a_multiline_signature():
    _, table = _positions(wide_signature)
    (pos,) = [pos for n, pos in table.items() if isinstance(n, cst.FunctionDef)]
    assert pos == (line_of("<wide-def>"), 0)


# -- staticness -------------------------------------------------------------------------

@pytest.mark.parametrize("code, rule", [
    # shapes, ndim, dtype, len(): always known while tracing
    ("x.shape[0] > 2", ("always", ())),
    ("x.ndim == 2", ("always", ())),
    ("x.dtype", ("always", ())),
    ("len(x)", ("always", ())),
    ("len(x) + x.shape[1]", ("always", ())),
    ("isinstance(x, tuple)", ("always", ())),
    ("3", ("always", ())),
    ("-1.5", ("always", ())),
    ("'abc'", ("always", ())),
    ("None", ("always", ())),
    # arithmetic and comparisons on names: static when the names are
    ("n + 1", ("operands", ("n",))),
    ("n", ("operands", ("n",))),
    ("a * b > x.shape[0]", ("operands", ("a", "b"))),
    ("(n, m)", ("operands", ("n", "m"))),
    ("xs[i]", ("operands", ("xs", "i"))),
    ("int(n) + abs(m)", ("operands", ("n", "m"))),
    ("n if flag else 0", ("operands", ("flag", "n"))),
    ("not flag", ("operands", ("flag",))),
    ("a and b", ("operands", ("a", "b"))),
    # calls we cannot see through: never
    ("jnp.sum(x)", ("never", ())),
    ("x.sum() > 0", ("never", ())),
    ("f(n)", ("never", ())),
    ("n + jnp.sum(x)", ("never", ())),
    ("[v for v in x]", ("never", ())),
])
def test_static_rule(code, rule):
    assert static_rule(cst.parse_expression(code)) == rule


@pytest.mark.parametrize("code, rule", [
    ("k = 0\n", ("always", ())),
    ("k = n + 1\n", ("operands", ("n",))),
    ("k += i\n", ("operands", ("k", "i"))),
    ("a, b = n, m\n", ("operands", ("n", "m"))),
    ("s = x.shape[0]; t = s * 2\n", ("operands", ("s",))),
    ("y = jnp.sum(x)\n", ("never", ())),
    ("x[0] = 1\n", ("never", ())),
    ("x.a = 1\n", ("never", ())),
    ("pass\n", ("always", ())),
    ("import math\n", ("never", ())),
    # A statement that changes what it calls a method of: as static as the call.
    ("lst.pop()\n", ("never", ())),
    ("(n := k + 1)\n", ("never", ())),
])
def test_statement_static_rule(code, rule):
    line = cst.parse_module(code).body[0]
    assert stmt_static_rule(line) == rule


@pytest.mark.parametrize("code, value", [("3", 3), ("-2", -2), ("1.5", 1.5), ("'s'", "s"), ("True", True),
                                         ("None", None)])
def test_literal_value(code, value):
    assert literal_value(cst.parse_expression(code)) == value


@pytest.mark.parametrize("code", ["n", "n + 1", "f()", "[1]"])
def test_literal_value_rejects_non_literals(code):
    with pytest.raises(ValueError):
        literal_value(cst.parse_expression(code))
