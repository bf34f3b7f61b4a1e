"""Printer/parser round trips: every op, every type, and random well-formed functions."""

from __future__ import annotations

import itertools
import math
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laxify.ir.core import Function, Op, Region, Span, Value
from laxify.ir.ops import CondOp, ForRangeOp, PyOp, ReturnOp, ScanOp, UndefOp, WhileOp, WithOp, YieldOp
from laxify.ir.ops.py import STATIC_RULES
from laxify.ir.parser import ParseError, parse_function
from laxify.ir.printer import print_function
from laxify.ir.types import UNDEFINED, UNKNOWN, Array, PyTree, Static, Type
from laxify.ir.verify import verify

F32 = Array((), "float32")


def assert_roundtrip(fn: Function) -> Function:
    text = print_function(fn)
    parsed = parse_function(text)
    assert print_function(parsed) == text
    verify(parsed)
    return parsed


def stmt(code: str, reads: list[Value], writes: list[Value], line: int | None = None) -> PyOp:
    span = Span(line, 4) if line else None
    return PyOp(reads, writes, attributes={"code": code, "kind": "stmt"}, span=span)


# -- one hand-built function per op ----------------------------------------------------
def py_stmt() -> Function:
    x, y = Value("x", 0, Array((3,), "float32")), Value("y", 1, Array((3,), "float32"))
    op = PyOp([x], [y], attributes={"code": "y = x * 2", "kind": "stmt"}, span=Span(3, 4))
    return Function("f", [x], Region(ops=[op, ReturnOp([y])]))


def py_expr_with_value() -> Function:
    n, t = Value("n", 0, Static(pytype=int)), Value("", 1, Static(4))
    attrs = {"code": "n + 1", "kind": "expr", "static": "operands", "value": 4}
    return Function("f", [n], Region(ops=[PyOp([n], [t], attributes=attrs), ReturnOp([t])]))


def undef() -> Function:
    z = Value("z", 1)
    return Function("f", [], Region(ops=[UndefOp(results=[z], span=Span(2, 0)), ReturnOp([z])]))


def branch(hint: str, code: str | None, version: int) -> Region:
    arg = Value(hint, version)
    if code is None:
        return Region([arg], [YieldOp([arg])])
    new = Value(hint, version + 1, F32)
    return Region([arg], [stmt(code, [arg], [new]), YieldOp([new])])


def cond_two_way() -> Function:
    p, y = Value("p", 0), Value("y", 0, F32)
    out = Value("y", 5, F32)
    regions = [branch("y", "y = y + 1", 1), branch("y", None, 3)]
    op = CondOp([p, y], [out], regions, {"static": False}, Span(4, 4))
    return Function("f", [p, y], Region(ops=[op, ReturnOp([out])]))


def cond_three_way() -> Function:
    k, y = Value("k", 0, Array((), "int32")), Value("y", 0, F32)
    out = Value("y", 9, F32)
    regions = [branch("y", "y = y + 1", 1), branch("y", "y = -y", 3), branch("y", None, 5)]
    op = CondOp([k, y], [out], regions, span=Span(4, 4))
    return Function("f", [k, y], Region(ops=[op, ReturnOp([out])]))


def cond_elif_chain() -> Function:
    p, y = Value("p", 0), Value("y", 0, F32)
    out = Value("y", 20, F32)
    tests = []
    for k in (11, 13):
        arg, pred = Value("y", k), Value("", k + 1, Array((), "bool"))
        tests.append(Region([arg], [PyOp([arg], [pred], attributes={"code": "y.sum() > 0", "kind": "expr"}),
                                    YieldOp([pred])]))
    branches = [branch("y", "y = y + 1", 1), branch("y", "y = -y", 3), branch("y", "y = y * 2", 5),
                branch("y", None, 7)]
    op = CondOp([p, y], [out], tests + branches, {"num_tests": 2, "static": False}, Span(4, 4))
    return Function("f", [p, y], Region(ops=[op, ReturnOp([out])]))


def while_loop() -> Function:
    i, n = Value("i", 0, Static(0)), Value("n", 0, Static(pytype=int))
    ci, cn, pred = Value("i", 1), Value("n", 1), Value("", 2, Array((), "bool"))
    before = Region([ci, cn], [PyOp([ci, cn], [pred], attributes={"code": "i < n", "kind": "expr"}),
                               YieldOp([pred])])
    bi, bn, nxt = Value("i", 3), Value("n", 2), Value("i", 4)
    body = Region([bi, bn], [stmt("i = i + 1", [bi], [nxt]), YieldOp([nxt])])
    out = Value("i", 5, Array((), "int32", weak=True))
    op = WhileOp([i, n], [out], [before, body], {"num_carries": 1, "max_iters": 100}, Span(2, 4))
    return Function("f", [i, n], Region(ops=[op, ReturnOp([out])]))


def for_range() -> Function:
    start, stop, step = Value("start", 0, Static(0)), Value("n", 0), Value("step", 0, Static(1))
    acc, idx = Value("acc", 0), Value("i", 1, Array((), "int32"))
    a, new, out = Value("acc", 1), Value("acc", 2), Value("acc", 3)
    body = Region([idx, a], [stmt("acc = acc + i", [a, idx], [new]), YieldOp([new])])
    op = ForRangeOp([start, stop, step, acc], [out], [body], {"num_carries": 1}, Span(3, 4))
    return Function("f", [start, stop, step, acc], Region(ops=[op, ReturnOp([out])]))


def scan() -> Function:
    xs, acc = Value("xs", 0, Array((5, 3), "float32")), Value("acc", 0, Array((3,), "float32"))
    x, a, new = Value("x", 1, Array((3,), "float32")), Value("acc", 1), Value("acc", 2)
    body = Region([x, a], [stmt("acc = acc + x", [a, x], [new]), YieldOp([new])])
    out = Value("acc", 3, Array((3,), "float32"))
    op = ScanOp([xs, acc], [out], [body], {"num_carries": 1, "static": False}, Span(2, 4))
    return Function("f", [xs, acc], Region(ops=[op, ReturnOp([out])]))


def with_block() -> Function:
    x, s, y = Value("x", 0, F32), Value("s", 0), Value("y", 0, F32)
    arg = Value("x", 1, F32)
    body = Region([arg, s], [stmt("y = x * s", [arg, s], [y], line=3), YieldOp([y])])
    out = Value("y", 1, F32)
    attrs = {"code": 'with jax.named_scope("blk") as s:', "num_targets": 1}
    op = WithOp([x], [out], [body], attrs, Span(2, 4))
    return Function("f", [x], Region(ops=[op, ReturnOp([out])]))


def return_value() -> Function:
    x = Value("x", 0, PyTree("tuple", (0, 1), (F32, Static())))
    return Function("f", [x], Region(ops=[ReturnOp([x], span=Span(9, 4))]))


def return_none() -> Function:
    return Function("f", [], Region(ops=[ReturnOp(span=Span(1, 0))]), attributes={"source": "f.py"})


def yield_many() -> Function:
    a, b = Value("a", 0), Value("b", 0)
    regions = [Region([Value("a", k), Value("b", k)]) for k in (1, 2)]
    for r in regions:
        r.ops.append(YieldOp(list(reversed(r.args))))
    outs = [Value("a", 3), Value("b", 3)]
    op = CondOp([Value("p", 0), a, b], outs, regions)
    return Function("f", [op.operands[0], a, b], Region(ops=[op, ReturnOp([outs[0]])]))


OP_CASES: dict[str, Callable[[], Function]] = {
    "py-stmt": py_stmt,
    "py-expr-value": py_expr_with_value,
    "undef": undef,
    "cond-2-way": cond_two_way,
    "cond-3-way": cond_three_way,
    "cond-elif-chain": cond_elif_chain,
    "while": while_loop,
    "for_range": for_range,
    "scan": scan,
    "with": with_block,
    "return-value": return_value,
    "return-none": return_none,
    "yield": yield_many,
}


@pytest.mark.parametrize("build", OP_CASES.values(), ids=OP_CASES.keys())
def test_op_roundtrip(build: Callable[[], Function]) -> None:
    fn = build()
    verify(fn)
    assert_roundtrip(fn)


def test_parse_restores_structure() -> None:
    parsed = assert_roundtrip(while_loop())
    op = parsed.body.ops[0]
    assert isinstance(op, WhileOp)
    assert op.attributes == {"num_carries": 1, "max_iters": 100}
    assert op.span == Span(2, 4)
    assert op.operands == parsed.params  # same Value objects, resolved by name
    body_arg = op.regions[1].args[0]
    assert (body_arg.hint, body_arg.version) == ("i", 3)
    assert op.results[0].type == Array((), "int32", weak=True)


def test_attribute_strings_with_syntax_characters() -> None:
    code = "d = {'a': (1, 2)}, \"}\" + ')' + '\\n' # {x = y}"
    x, d = Value("x", 0), Value("d", 1)
    fn = Function("f", [x], Region(ops=[stmt(code, [x], [d]), ReturnOp([d])]))
    assert_roundtrip(fn)
    assert parse_function(print_function(fn)).body.ops[0].attributes["code"] == code


# -- types ---------------------------------------------------------------------------------
TYPE_CASES: list[tuple[str, Type]] = [
    ("undef", UNDEFINED),
    ("static", Static()),
    ("static(int)", Static(pytype=int)),
    ("static(NoneType)", Static(pytype=type(None))),
    ("static(tuple)", Static(pytype=tuple)),
    ("static(3)", Static(3)),
    ("static(None)", Static(None)),
    ("static(-1.5)", Static(-1.5)),
    ("static(inf)", Static(math.inf)),
    ("static('a)b, c}')", Static("a)b, c}")),
    ("static((1, 'x'))", Static((1, "x"))),
    ("static({'k': [1, 2]})", Static({"k": [1, 2]})),
    ("float32[3,4]", Array((3, 4), "float32")),
    ("float32~[]", Array((), "float32", weak=True)),
    ("int32[?]", Array(None, "int32")),
    ("?[?]", Array(None, None)),
    ("?~[2]", Array((2,), None, weak=True)),
    ("(float32[3], static)", PyTree("tuple", (0, 1), (Array((3,), "float32"), Static()))),
    ("(?)", PyTree("tuple", (0,), (UNKNOWN,))),
    ("()", PyTree("tuple", (), ())),
    ("[int32[], undef]", PyTree("list", (0, 1), (Array((), "int32"), UNDEFINED))),
    ("{}", PyTree("dict", (), ())),
    (
        "{'k': float32[2], 1: (static(int), ?[?])}",
        PyTree("dict", ("k", 1), (Array((2,), "float32"),
                                  PyTree("tuple", (0, 1), (Static(pytype=int), Array(None, None))))),
    ),
]


@pytest.mark.parametrize(("text", "expected"), TYPE_CASES, ids=[t for t, _ in TYPE_CASES])
def test_type_roundtrip(text: str, expected: Type) -> None:
    source = f"func @f(%x.0: {text}) {{\n  %y.1: {text} = py(%x.0) {{code = 'y = x', kind = 'stmt'}}\n}}"
    fn = parse_function(source)
    assert fn.params[0].type == expected
    assert str(fn.params[0].type) == text
    assert print_function(fn) == source


PARSE_ERRORS = [
    ("func @f() {\n  %x.1 = frob()\n}", "2:9: unknown op 'frob'"),
    ("func @f(%x.0: blah) {\n}", "1:14: unknown type 'blah'"),
    ("func @f(%x.0: static(foo())) {\n}", "'foo()' is neither a Python type name nor a literal"),
    ("func @f() {\n  py() {code = open('x')}\n}", "attribute 'code' is not a Python literal: open('x')"),
    ("func @f() {\n  return(%x.0\n}", "expected ',' or ')'"),
    ("func @f() {\n  return(%x)\n}", "value '%x' must end with a version number"),
    ("func @f() {\n  return()\n", "expected '}' before the end of the text"),
    ("func @f() {\n}\nfunc @g() {\n}", "3:0: unexpected text after the function"),
    ("func @f() {\n  py() {code = 'x}\n}", "unterminated string"),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS, ids=[m for _, m in PARSE_ERRORS])
def test_parse_error(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_function(text)
    assert message in str(info.value)


def test_parse_error_points_at_the_column() -> None:
    with pytest.raises(ParseError) as info:
        parse_function("func @f() {\n  %x.1 = frob()\n}")
    assert (info.value.line, info.value.col) == (2, 9)
    assert str(info.value).endswith("  %x.1 = frob()\n           ^")


# -- random well-formed functions ----------------------------------------------------------
LITERALS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=6),
    st.tuples(st.integers(-3, 3), st.text(max_size=3)),
)
LEAF_TYPES = st.one_of(
    st.just(UNKNOWN),
    st.just(UNDEFINED),
    st.just(Static()),
    st.sampled_from([int, float, bool, str, tuple, type(None)]).map(lambda t: Static(pytype=t)),
    LITERALS.map(Static),
    st.builds(
        Array,
        st.none() | st.lists(st.integers(0, 9), max_size=3).map(tuple),
        st.sampled_from([None, "float32", "int32", "bool", "complex64"]),
        st.booleans(),
    ),
)


def _sequence(kind: str) -> Callable[[list[Type]], PyTree]:
    return lambda children: PyTree(kind, tuple(range(len(children))), tuple(children))


TYPES = st.recursive(
    LEAF_TYPES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(_sequence("tuple")),
        st.lists(inner, max_size=3).map(_sequence("list")),
        st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3).map(
            lambda d: PyTree("dict", tuple(d), tuple(d.values()))
        ),
    ),
    max_leaves=4,
)
NAMES = st.sampled_from(["x", "y", "acc", "i", "n_2"])
SPANS = st.none() | st.builds(Span, st.integers(1, 500), st.integers(0, 80))
MAX_DEPTH = 2


@st.composite
def functions(draw: st.DrawFn) -> Function:
    """A random function that verifies: py/undef ops and nested conds and loops."""
    versions = itertools.count()

    def fresh(hint: str | None = None) -> Value:
        return Value(draw(NAMES | st.just("")) if hint is None else hint, next(versions), draw(TYPES))

    def subset(scope: list[Value], size: int) -> list[Value]:
        return draw(st.lists(st.sampled_from(scope), max_size=size)) if scope else []

    def py(scope: list[Value], kinds: tuple[str, ...] = ("stmt", "expr")) -> PyOp:
        kind = draw(st.sampled_from(kinds))
        attrs: dict = {"code": draw(st.text(max_size=12)), "kind": kind}
        if draw(st.booleans()):
            attrs["static"] = draw(st.sampled_from(STATIC_RULES))
        if kind == "expr" and draw(st.booleans()):
            attrs["value"] = draw(LITERALS)
        reads = subset([v for v in scope if v.hint], 3)
        writes = [fresh()] if kind == "expr" else [fresh(draw(NAMES)) for _ in range(draw(st.integers(0, 2)))]
        return PyOp(reads, writes, attributes=attrs, span=draw(SPANS))

    def region(lead: int, inputs: list[Value], depth: int, yields: int) -> Region:
        args = [fresh() for _ in range(lead)] + [fresh(v.hint) for v in inputs]
        return Region(args, block(args, depth, yields))

    def block(scope: list[Value], depth: int, yields: int | None) -> list[Op]:
        scope = list(scope)
        ops: list[Op] = []
        for _ in range(draw(st.integers(0, 3))):
            ops.append(op(scope, depth))
            scope += ops[-1].results
        if yields is not None:
            if yields and not scope:
                ops.append(py(scope, ("expr",)))
                scope += ops[-1].results
            ops.append(YieldOp([draw(st.sampled_from(scope)) for _ in range(yields)]))
        return ops

    def op(scope: list[Value], depth: int) -> Op:
        nested = depth < MAX_DEPTH and scope
        choices = ["py", "undef"] + (["cond", "while", "for_range", "scan"] if nested else [])
        kind = draw(st.sampled_from(choices))
        if kind == "py":
            return py(scope)
        if kind == "undef":
            return UndefOp(results=[fresh(draw(NAMES))], span=draw(SPANS))
        if kind == "cond":
            inputs = subset(scope, 3)
            n_out = draw(st.integers(0, 2))
            regions = [region(0, inputs, depth + 1, n_out) for _ in range(draw(st.integers(2, 3)))]
            selector = draw(st.sampled_from(scope))
            return CondOp([selector, *inputs], [fresh() for _ in range(n_out)], regions, span=draw(SPANS))
        lead = [draw(st.sampled_from(scope)) for _ in range({"while": 0, "for_range": 3, "scan": 1}[kind])]
        carries, consts = subset(scope, 2), subset(scope, 2)
        attrs: dict = {"num_carries": len(carries)}
        if draw(st.booleans()):
            attrs["max_iters"] = draw(st.integers(0, 1000))
        inputs = carries + consts
        regions = [region(0 if kind == "while" else 1, inputs, depth + 1, len(carries))]
        if kind == "while":
            regions.insert(0, region(0, inputs, depth + 1, 1))
        cls = {"while": WhileOp, "for_range": ForRangeOp, "scan": ScanOp}[kind]
        results = [fresh(v.hint) for v in carries]
        return cls(lead + inputs, results, regions, attrs, draw(SPANS))

    params = [fresh(draw(NAMES)) for _ in range(draw(st.integers(0, 3)))]
    ops = block(params, 0, None)
    scope = params + [r for o in ops for r in o.results]
    ops.append(ReturnOp(subset(scope, 1), span=draw(SPANS)))
    attrs = draw(st.dictionaries(st.sampled_from(["source", "static_argnums"]), LITERALS, max_size=2))
    return Function(draw(st.sampled_from(["f", "step", "_g2"])), params, Region(ops=ops), attrs)


@settings(max_examples=200, deadline=None)
@given(functions())
def test_random_function_roundtrip(fn: Function) -> None:
    verify(fn)
    assert_roundtrip(fn)


MUTATIONS = st.sampled_from(["", "(", ")", "{", "}", ",", "'", ":", "%", "^", "=", "[", "]", "?", "~"])


@settings(max_examples=200, deadline=None)
@given(functions(), st.data())
def test_damaged_text_raises_parse_error_only(fn: Function, data: st.DataObject) -> None:
    text = print_function(fn)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 8)))
    try:
        parse_function(text[:start] + data.draw(MUTATIONS) + text[end:])
    except ParseError:
        pass
