"""The conversion's shortcuts give what the general path gives: a def's lines found from
indentation are inspect.getblock's, text taken from the source and text laxify writes itself
are libcst's code generation, and converters hand back the nodes they did not change."""

from __future__ import annotations

import inspect
import textwrap
import types

import libcst as cst
import pytest

from laxify.transpiler.analysis.codegen import code_for_node
from laxify.transpiler.analysis.positions import statement_positions
from laxify.transpiler.analysis.walk import children, descendants, preorder, statement_children, walk
from laxify.transpiler.converters import break_statements, calls
from laxify.transpiler.converters.base import Context, OwnCodeConverter, _statements_only, apply, transform_above
from laxify.transpiler.source import _indented_block, get_source

# Each source holds one def (with its decorators) at its first line, then other code.
BLOCKS = {
    "plain": "def f(x):\n    y = x\n    return y\nz = 1\n",
    "decorated": "@deco\n@other(1,\n       2)\ndef f(x):\n    return x\n\nz = 1\n",
    "one line": "def f(x): return x\nz = 1\n",
    "blank lines inside": "def f(x):\n    y = x\n\n\n    return y\n\n\nz = 1\n",
    "comment at column 0 inside": "def f(x):\n    y = x\n# note\n    return y\nz = 1\n",
    "trailing comment at body depth": "def f(x):\n    return x\n    # trailing\nz = 1\n",
    "trailing comment at def depth": "def f(x):\n    return x\n# after\nz = 1\n",
    "string line at column 0": 'def f(x):\n    s = """a\nb"""\n    return s\nz = 1\n',
    "bracket line at column 0": "def f(x):\n    y = (x +\n1)\n    return y\nz = 1\n",
    "header over lines": "def f(\n    x,\n):\n    return x\nz = 1\n",
    "header closing at column 0": "def f(x,\n      y\n):\n    return x\nz = 1\n",
    "backslash continuation": "def f(x):\n    y = x + \\\n1\n    return y\nz = 1\n",
    "indented method": "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
    "tabs": "def f(x):\n\ty = x\n\treturn y\nz = 1\n",
    "end of file": "def f(x):\n    return x",
}


# Where the scan must find the block itself (the tokenizer is the exception).
SCANNED = {"plain", "decorated", "one line", "blank lines inside", "comment at column 0 inside",
           "trailing comment at def depth", "indented method", "end of file"}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_indentation_scan_finds_getblocks_lines_or_gives_up(name):
    lines = BLOCKS[name].splitlines(keepends=True)
    start = 1 if name == "indented method" else 0
    found = _indented_block(lines, start)
    want = inspect.getblock(lines[start:])
    if name in SCANNED:
        assert found == want
    if found is None or found == want:
        return
    # A shorter block may only end inside a string or brackets: text that does not compile
    # (get_source then asks getblock).
    with pytest.raises(SyntaxError):
        compile(textwrap.dedent("".join(found)), "<block>", "exec")


def _function(source: str, name: str, tmp_path) -> types.FunctionType:
    path = tmp_path / f"{name}_module.py"
    path.write_text(source)
    namespace: dict = {"__name__": f"{name}_module", "deco": lambda f: f, "other": lambda *a: (lambda f: f)}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("name", ["decorated", "string line at column 0", "bracket line at column 0",
                                  "header closing at column 0", "backslash continuation",
                                  "trailing comment at body depth", "tabs"])
def test_get_source_reads_the_same_text_as_getblock(name, tmp_path):
    fn = _function(BLOCKS[name], "f", tmp_path)
    lines = BLOCKS[name].splitlines(keepends=True)
    assert get_source(fn).text == textwrap.dedent("".join(inspect.getblock(lines)))


TRICKY = '''
def f(x, ys):
    a = x + 1  # a comment
    b = "é"; c = 2
    # a comment line above
    d = (x +
         1)
    if x.sum() > 0 and (x[0] < 1):
        e = [y for y in ys]
    elif (x.sum() < -1):
        e = ys
    else:
        e = """two
lines"""
    while x.sum() < 10:
        x = x * 2
    for i, y in enumerate(ys):
        x = x + y
    for (k, v) in ys:
        pass
    for q, in ys:
        pass
    s = f"{x!r:>10}" ;
    return x, a, b, c, d, e
'''


def test_text_taken_from_the_source_is_libcsts_code_generation(tmp_path):
    fn = _function(TRICKY, "f", tmp_path)
    src = get_source(fn)
    verbatim: dict = {}
    statement_positions(src.text, src.node, src.first_line, src.indent, verbatim)
    assert len(verbatim) >= 8
    for node, text in verbatim.items():
        assert text == src.module.code_for_node(node), text
    kinds = {type(node) for node in verbatim}
    assert {cst.SimpleStatementLine, cst.Comparison, cst.Call} <= kinds  # statements, tests, iterables
    assert not any(type(node) is cst.Tuple for node in verbatim)  # `q,` spans differ


class _ChangesNothing(OwnCodeConverter):
    def leave_Return(self, original_node, updated_node):
        return updated_node


class _RenamesY(OwnCodeConverter):
    def leave_Name(self, original_node, updated_node):
        return updated_node.with_changes(value="z") if updated_node.value == "y" else updated_node


def _tree(code: str) -> cst.FunctionDef:
    return cst.parse_module(textwrap.dedent(code)).body[0]


def test_a_converter_keeps_the_nodes_it_does_not_change():
    node = _tree('''
        def f(x):
            a = x + 1
            if a > 0:
                y = a
            return y
        ''')
    ctx = Context({})
    assert node.visit(_ChangesNothing(ctx)) is node
    new = node.visit(_RenamesY(ctx))
    assert new is not node
    first, branch, last = new.body.body
    assert first is node.body.body[0]  # untouched statement: the original object
    assert branch is not node.body.body[1] and last is not node.body.body[2]
    assert branch.test is node.body.body[1].test
    assert cst.Module([new]).code.count("z") == 2 and "y" not in cst.Module([new]).code


def test_statement_converters_do_not_enter_expressions():
    assert _statements_only(break_statements.BreakTransformer)
    assert not _statements_only(calls.CallTransformer)  # calls are expressions
    assert not _statements_only(_RenamesY)


def test_walks_agree_and_leave_layout_out():
    node = _tree(TRICKY)
    ordered = list(walk(node))
    assert {id(n) for n in ordered} == {id(n) for n in descendants(node)}
    nodes, depths = preorder(node)
    assert nodes == ordered and preorder(node)[0] is nodes  # remembered for the same tree
    assert depths[0] == 0 and all(depths[k] == depths[nodes.index(p)] + 1 for k, n in enumerate(nodes)
                                  for p in nodes[:k] if any(c is n for c in children(p)))
    assert len(ordered) == len(descendants(node))
    kinds = {type(n) for n in ordered}
    assert not kinds & {cst.SimpleWhitespace, cst.Comma, cst.LeftParen, cst.EmptyLine, cst.Newline}
    assert {cst.Comparison, cst.Call, cst.Name, cst.ListComp, cst.FormattedString} <= kinds
    assert all(isinstance(c, cst.CSTNode) for c in children(node))
    # statement_children: the statements of suites and clauses, never an expression
    stack, seen = [node], []
    while stack:
        current = stack.pop()
        seen.append(current)
        stack.extend(statement_children(current))
    assert not any(isinstance(n, cst.BaseExpression) for n in seen)
    assert sum(type(n) is cst.Return for n in seen) == 1
    assert sum(type(n) is cst.Pass for n in seen) == 2


def _nodes(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)  # layout included: whitespace, commas, parentheses


WRITTEN_TEXT = TRICKY + '''
def g(a, *args, b: int = 1, c=2, **kw) -> "g":
    h = lambda p, *q, r=3, **s: p
    t = x[1:2, ::3, a:b:c][ 0 ] , y [1]
    u = - a ** ~ b // (c @ d) % e << 1 >> 2 | 3 & 4 ^ 5
    v = a < b <= c == d >= e > f is g in h ; w = (1,) ; z = ()
    a .b . c ( * args , k = 1 , ** kw , )
    del a ; pass
    a += 1 ; a -= 2 ; a *= 3 ; a //= 4 ; a /= 5 ; a %= 6 ; a **= 7
    return
'''


def test_the_nodes_laxify_writes_itself_are_written_as_libcst_writes_them():
    module = cst.parse_module(textwrap.dedent(WRITTEN_TEXT))
    fast = 0
    for node in _nodes(module):
        if type(node) is cst.Annotation:  # (written by its parent, which gives its `:` or `->`)
            continue
        assert code_for_node(module, node) == module.code_for_node(node)
        fast += _writes_itself(module, node)
    assert fast > 300


def test_nodes_built_with_default_layout_are_written_as_libcst_writes_them():
    name, one, two = cst.Name("x"), cst.Integer("1"), cst.Integer("2")
    built = [
        cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name("f")), [cst.Arg(name), cst.Arg(one, keyword=cst.Name("k")),
                                                                  cst.Arg(two, star="*")]),
        cst.Call(cst.Name("f"), []),
        cst.Lambda(cst.Parameters(), name),
        cst.Lambda(cst.Parameters([cst.Param(cst.Name("p")), cst.Param(cst.Name("q"), default=one)],
                                  star_arg=cst.Param(cst.Name("r")), kwonly_params=[cst.Param(cst.Name("s"))],
                                  star_kwarg=cst.Param(cst.Name("t"))), name),
        cst.Lambda(cst.Parameters([cst.Param(cst.Name("p"))], kwonly_params=[cst.Param(cst.Name("s"))]), name),
        cst.Parameters([cst.Param(cst.Name("p"), cst.Annotation(cst.Name("int")), default=one)]),
        cst.Tuple([cst.Element(name)]),
        cst.Tuple([cst.Element(name), cst.Element(one)], lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
        cst.List([cst.Element(name), cst.Element(one)]),
        cst.Subscript(name, [cst.SubscriptElement(cst.Index(one)),
                             cst.SubscriptElement(cst.Slice(one, two, step=one))]),
        cst.BinaryOperation(name, cst.Add(), one, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
        cst.UnaryOperation(cst.Not(), name),
        cst.Comparison(name, [cst.ComparisonTarget(cst.LessThan(), one), cst.ComparisonTarget(cst.Is(), two)]),
        cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(name)], one), cst.Expr(name), cst.Return(),
                                 cst.Return(one), cst.Pass(), cst.AugAssign(name, cst.AddAssign(), one)]),
        cst.SimpleStatementLine([]),
    ]
    module = cst.Module([])
    for node in built:
        assert _writes_itself(module, node), node
        assert code_for_node(module, node) == module.code_for_node(node)
    # A node of a kind written by libcst only: libcst's text.
    lines = cst.parse_module("if x:\n    y = {1: 2}\n").body
    assert code_for_node(module, lines[0]) == module.code_for_node(lines[0])


def _writes_itself(module: cst.Module, node: cst.CSTNode) -> bool:
    """Whether ``code_for_node`` writes ``node`` without libcst."""
    from laxify.transpiler.analysis import codegen

    try:
        codegen._Writer([], module.default_newline).node(node)
    except codegen._Unsupported:
        return False
    return True


class _Statements(OwnCodeConverter):
    """Removes `pass`, splits `a = b = v` in two lines, drops `if` statements whose test is
    `False`, and counts the loops it enters."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.loops = 0

    def visit_For(self, node):
        self.loops += 1

    def leave_Pass(self, original_node, updated_node):
        return cst.RemoveFromParent()

    def leave_SimpleStatementLine(self, original_node, updated_node):
        small = updated_node.body[0] if len(updated_node.body) == 1 else None
        if type(small) is cst.Assign and len(small.targets) == 2:
            return cst.FlattenSentinel([updated_node.with_changes(body=[small.with_changes(targets=[t])])
                                        for t in small.targets])
        return updated_node

    def leave_If(self, original_node, updated_node):
        if type(updated_node.test) is cst.Name and updated_node.test.value == "False":
            return cst.RemoveFromParent()
        return updated_node


def test_the_walk_of_statements_gives_what_libcsts_visit_gives():
    node = _tree('''
        def f(x):
            a = b = x
            for i in x:
                pass
                if False:
                    y = 1
                else:
                    pass
            while x:
                pass; z = 2
            def g():
                pass
            return a
        ''')
    ctx = Context({})
    converter = _Statements(ctx)
    assert converter.statements_only
    new = apply(node, converter)
    want_converter = _Statements(ctx)
    want = node.visit(want_converter)
    assert cst.Module([new]).code == cst.Module([want]).code
    assert converter.loops == want_converter.loops == 1
    assert "g():\n        pass" in cst.Module([new]).code  # a nested def is not entered
    assert apply(node, _ChangesNothing(ctx)) is node


def test_the_walk_above_targets_gives_what_libcsts_visit_gives():
    node = _tree(TRICKY)
    ctx = Context({})
    new = transform_above(node, _RenamesY(ctx), lambda n: type(n) is cst.Name and n.value == "y")
    assert cst.Module([new]).code == cst.Module([node.visit(_RenamesY(ctx))]).code != cst.Module([node]).code
    assert new.body.body[0] is node.body.body[0]  # a line without `y`: the same object
