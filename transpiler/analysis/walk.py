"""Fast traversal of libcst trees: children from the node's fields.

libcst's ``node.children`` runs a visitor to collect them, which costs more than all of
laxify's own analysis; the dataclass fields give the same nodes at a fraction of the cost.
The fields that hold only layout (whitespace, comments, parentheses, commas, colons, brackets)
are skipped: no analysis looks at them, and they are most of a tree's nodes.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterator

import libcst as cst

from laxify.transpiler.analysis.codegen import code_for_node

__all__ = [
    "below",
    "children",
    "code_fields",
    "code_of",
    "concrete_kinds",
    "descendants",
    "forget_preorder",
    "nesting_depth",
    "preorder",
    "statement_children",
    "statement_fields",
    "SMALL_STATEMENTS",
    "STATEMENT_HOLDERS",
    "walk",
]

_FIELDS: dict[type, tuple[str, ...]] = {}

# Fields of libcst nodes that hold only layout: whitespace, comments, parentheses, separators.
_LAYOUT_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "colon",
        "first_colon",
        "second_colon",
        "dot",
        "equal",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "leading_lines",
        "lines_after_decorators",
        "trailing_whitespace",
        "leading_whitespace",
        "header",
        "footer",
        "newline",
        "empty_lines",
        "first_line",
        "last_line",
        "comment",
        "indent",
        "separator",
        "trailing_comma",
        "relative",
    }
)


def _code_fields(kind: type) -> tuple[str, ...]:
    names = tuple(
        f.name for f in dataclasses.fields(kind) if f.name not in _LAYOUT_FIELDS and not f.name.startswith("whitespace")
    )
    _FIELDS[kind] = names
    return names


def code_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node class that :func:`children` looks into, in field order."""
    names = _FIELDS.get(kind)
    return names if names is not None else _code_fields(kind)


_IS_NODE: dict[type, bool] = {}


def _is_node(value) -> bool:
    # CSTNode is an ABC, and isinstance against an ABC is slow: decide once per class.
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def concrete_kinds(*bases: type) -> frozenset[type]:
    """The node classes that are or derive from ``bases``, for ``type(node) in kinds``:
    ``isinstance`` against libcst's abstract classes goes through ``ABCMeta`` each time."""
    found: set[type] = set()
    stack = list(bases)
    while stack:
        kind = stack.pop()
        found.add(kind)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The direct child nodes of ``node``, in field order, layout (whitespace, parentheses,
    separators) left out."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _code_fields(type(node))
    out = []
    is_node = _IS_NODE
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            for item in value:
                known = is_node.get(type(item))
                if known is None:
                    known = _is_node(item)
                if known:
                    out.append(item)
        else:
            known = is_node.get(kind)
            if known is None:
                known = _is_node(value)
            if known:
                out.append(value)
    return out


# The fields that hold statements, of the statements and clauses that hold them. A search for
# statements (`return`, `break`, `global` ...) enters only these: expressions, which are most
# of a tree, hold no statements (a lambda's body is an expression; a nested def is a scope).
_STATEMENT_FIELDS: dict[type, tuple[str, ...]] = {
    cst.IndentedBlock: ("body",),
    cst.SimpleStatementSuite: ("body",),
    cst.SimpleStatementLine: ("body",),
    cst.If: ("body", "orelse"),
    cst.Else: ("body",),
    cst.While: ("body", "orelse"),
    cst.For: ("body", "orelse"),
    cst.With: ("body",),
    cst.Try: ("body", "handlers", "orelse", "finalbody"),
    cst.TryStar: ("body", "handlers", "orelse", "finalbody"),
    cst.ExceptHandler: ("body",),
    cst.ExceptStarHandler: ("body",),
    cst.Finally: ("body",),
    cst.Match: ("cases",),
    cst.MatchCase: ("body",),
    cst.FunctionDef: ("body",),
    cst.ClassDef: ("body",),
}

# Nodes that hold statements (statements, suites, clauses).
STATEMENT_HOLDERS = frozenset(_STATEMENT_FIELDS)

# Statements that hold no statements.
SMALL_STATEMENTS = frozenset(
    {
        cst.AnnAssign,
        cst.Assert,
        cst.Assign,
        cst.AugAssign,
        cst.Break,
        cst.Continue,
        cst.Del,
        cst.Expr,
        cst.Global,
        cst.Import,
        cst.ImportFrom,
        cst.Nonlocal,
        cst.Pass,
        cst.Raise,
        cst.Return,
    }
)


def statement_fields(kind: type) -> tuple[str, ...]:
    """The fields that hold statements, suites or clauses, of a node class (none for an
    expression or a small statement), in field order."""
    return _STATEMENT_FIELDS.get(kind, ())


def statement_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements, suites and clauses directly in ``node`` (none in an expression or a
    small statement), in field order."""
    for name in _STATEMENT_FIELDS.get(type(node), ()):
        value = getattr(node, name)
        if type(value) in (list, tuple):
            yield from value
        elif value is not None:
            yield value


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it, pre-order. Iterative: a chain of 5,000 ``and``
    operands or ``elif`` arms is 5,000 levels deep, and a generator per level would cost
    one Python frame per level and time quadratic in the depth."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        kids = children(current)
        kids.reverse()
        stack.extend(kids)


# The tree `preorder` was last asked for, its nodes and their depths.
_PREORDER: tuple = (None, [], [])


def preorder(node: cst.CSTNode) -> tuple[list[cst.CSTNode], list[int]]:
    """``node`` and every node below it, pre-order, and the depth of each (``node``'s is 0),
    layout left out. Remembered for the last tree asked: a converter that changes nothing
    hands the very same tree to the next, whose analyses then need no walk of their own.
    The lists are shared: callers must not change them."""
    last = _PREORDER
    if last[0] is node:
        return last[1], last[2]
    nodes: list[cst.CSTNode] = []
    depths: list[int] = []
    stack, below = [node], [0]  # the nodes to visit, and their depths
    while stack:
        current, depth = stack.pop(), below.pop()
        nodes.append(current)
        depths.append(depth)
        kids = children(current)
        if kids:
            kids.reverse()
            stack.extend(kids)
            below.extend([depth + 1] * len(kids))
    _set_preorder((node, nodes, depths))
    return nodes, depths


def _set_preorder(value: tuple) -> None:
    global _PREORDER
    _PREORDER = value


def below(tree: cst.CSTNode, node: cst.CSTNode, skip: frozenset[type] = frozenset()) -> Iterator[cst.CSTNode]:
    """The nodes below ``node`` (a node of ``tree``, ``tree`` itself included), pre-order, from
    :func:`preorder` of ``tree``; a node whose type is in ``skip`` is left out with everything
    below it."""
    nodes, depths = preorder(tree)
    count = len(nodes)
    k = next(k for k in range(count) if nodes[k] is node)
    top = depths[k]
    k += 1
    while k < count and depths[k] > top:
        current = nodes[k]
        if type(current) in skip:
            depth = depths[k]
            k += 1
            while k < count and depths[k] > depth:
                k += 1
            continue
        yield current
        k += 1


def forget_preorder() -> None:
    """Let the tree :func:`preorder` remembers go."""
    _set_preorder((None, [], []))


def descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node`` and every node below it, in no particular order (cheaper than :func:`walk`
    where only the set of nodes matters), layout left out."""
    out = [node]
    stack = [node]
    while stack:
        kids = children(stack.pop())
        out.extend(kids)
        stack.extend(kids)
    return out


_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def caught_below(fn: cst.FunctionDef, targets: set) -> set:
    """The nodes among ``targets`` (ids) in the body of a ``try`` with ``except`` clauses or of
    a ``with`` (whose context manager may suppress an error) in ``fn``'s own code: what they
    raise may be caught."""
    found: set = set()
    for node in below(fn, fn.body, _OWN_SCOPES):
        if (type(node) is cst.Try and node.handlers) or type(node) in (cst.With, cst.TryStar):
            found.update(id(n) for n in descendants(node.body) if id(n) in targets)
    return found


def nesting_depth(node: cst.CSTNode) -> int:
    """How many levels of nodes ``node`` holds (1 for a leaf), found without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(current))
    return deepest


@functools.lru_cache(maxsize=8192)
def code_of(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``, once per node (nodes are immutable)."""
    return code_for_node(module, node)
