"""The base class of converters: a libcst transformer that keeps statement positions.

Converters change only ``updated_node`` in ``leave_*``; this base class copies the original
node's position to its replacement, so errors and tracebacks keep pointing at user lines.
"""

from __future__ import annotations

import builtins
import dataclasses
import types
from dataclasses import dataclass, field
from typing import Mapping

import libcst as cst

from laxify.transpiler.analysis.positions import Positions
from laxify.transpiler.analysis.walk import SMALL_STATEMENTS, STATEMENT_HOLDERS, code_fields, preorder, statement_fields

__all__ = [
    "Context",
    "Converter",
    "OwnCodeConverter",
    "apply",
    "holds_builtin",
    "parenthesized_generator",
    "transform_above",
]


@dataclass
class Context:
    """What converters share: positions, a counter for fresh names, the function's names."""

    positions: Positions
    counter: int = 0
    notes: list[str] = field(default_factory=list)
    pushes_loop_options: bool = False  # set when `with loop_options(...)` blocks were unwrapped
    # The function's module globals, and the names its code (nested code included) binds
    # itself: which calls may reach user code.
    namespace: Mapping[str, object] = field(default_factory=dict)
    local_names: frozenset[str] = frozenset()
    # The code object of the function converted (``None`` for a tree converted on its own).
    code: types.CodeType | None = None
    # Item updates rewritten by the array-updates converter, by the user's statement position:
    # the user's form and the functional one, for explain() (``[("x[i] += v", "x = ...")]``).
    updates: dict[tuple[int, int], list[tuple[str, str]]] = field(default_factory=dict)
    # Set by the array-updates converter when an update got ``alias=(name, other)``: the IR
    # builder then looks for the objects constructs change through another name.
    aliased_updates: bool = False
    # Whether the user's function may change a list, dict or set in place (an item assigned or
    # deleted, a mutating method, `a += [v]`): the IR builder then looks for the objects each
    # construct changes (to_ir `_changed_objects`). Set by ``pipeline.canonicalize``.
    changes_objects: bool = False
    # The local names whose object nothing else can reach (transpiler/analysis/objects.py).
    private: frozenset[str] = frozenset()
    # The user's names that start like laxify's, hidden behind placeholders while the
    # converters run (see transpiler/naming.py): placeholder → the user's name.
    hidden: dict[str, str] = field(default_factory=dict)
    # Set by the raise converter: some `raise` became a `return` (whose value nothing reads).
    raises: bool = False
    # Statement lines whose int arithmetic the int-arithmetic converter routed through the
    # runtime, by position (in their order there: converters put several lines at one
    # position): the lines before it did, kept where the IR proves every value the line reads
    # static (a Python loop on Python ints needs no check).
    plain: dict[tuple[int, int], list[cst.SimpleStatementLine]] = field(default_factory=dict)
    # Set by the raising-calls converter: a call in a loop may raise (the function keeps the
    # raise converter's flag).
    loop_raises: bool = False

    def global_value(self, name: str) -> tuple[bool, object]:
        """(whether ``name`` is a global of the module that the function does not bind itself,
        its value)."""
        if name in self.local_names or name not in self.namespace:
            return False, None
        return True, self.namespace[name]

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"_lx_{stem}_{self.counter}"


_STATEMENT_NAMES = frozenset(kind.__name__ for kind in (*SMALL_STATEMENTS, *STATEMENT_HOLDERS))


def _statements_only(kind: type) -> bool:
    """Whether every ``visit_*``/``leave_*`` handler of ``kind`` is for a statement (or a clause
    or suite): then its walk needs no expression's insides."""
    handled = {
        name.split("_")[1]
        for name in dir(kind)
        if name.startswith(("visit_", "leave_")) and getattr(kind, name) is not getattr(cst.CSTTransformer, name, None)
    }
    return handled <= _STATEMENT_NAMES


def _attribute_handlers(kind: type) -> bool:
    """Whether ``kind`` has a handler of a node's field (``visit_If_test``) of its own."""
    return any(
        name.startswith(("visit_", "leave_"))
        and name.count("_") > 1
        and isinstance(getattr(cst, name.split("_")[1], None), type)
        and getattr(kind, name) is not getattr(cst.CSTTransformer, name, None)
        for name in dir(kind)
    )


class Converter(cst.CSTTransformer):
    """A transformer that keeps positions. One whose handlers are all for statements does
    not enter expressions (most of a tree): it has nothing to change there, and libcst would
    rebuild every node it enters."""

    _STATEMENTS_ONLY: dict[type, tuple[bool, bool]] = {}

    def __init__(self, ctx: Context):
        super().__init__()
        self.ctx = ctx
        kind = type(self)
        known = Converter._STATEMENTS_ONLY.get(kind)
        if known is None:
            known = Converter._STATEMENTS_ONLY[kind] = (_statements_only(kind), _attribute_handlers(kind))
        # Whether every handler is for a statement; whether some handler is for a node's field
        # (`visit_If_test`), which only libcst's own walk runs (see `_visit`).
        self.statements_only, self.attribute_handlers = known
        # Per node being visited: whether something below it was replaced.
        self._changed: list[bool] = []
        # ``id``s of the only nodes to enter (see :func:`transform_above`); ``None``: all.
        self.path: set[int] | None = None

    def on_visit(self, node) -> bool:
        self._changed.append(False)
        if self.path is not None and id(node) not in self.path:
            return False  # nothing to rewrite in it: left as it is, its handlers not run
        enter = super().on_visit(node)
        if enter and self.statements_only:
            return type(node) in STATEMENT_HOLDERS or type(node) is cst.Module
        return enter

    def on_leave(self, original_node, updated_node):
        if self.path is not None and id(original_node) not in self.path:
            self._changed.pop()
            return original_node
        result = super().on_leave(original_node, updated_node)
        changed = self._changed.pop()
        if result is updated_node and not changed:
            # libcst rebuilds every node it visits; where nothing was replaced, the original
            # stands (a converter that changes nothing returns the very tree it was given).
            return original_node
        if self._changed:
            self._changed[-1] = True
        pos = self.ctx.positions.get(original_node)
        if pos is not None:
            if isinstance(result, cst.CSTNode):
                self.ctx.positions.setdefault(result, pos)
            elif isinstance(result, cst.FlattenSentinel):
                for node in result.nodes:
                    self.ctx.positions.setdefault(node, pos)
        return result


def transform_above(node: cst.CSTNode, converter: Converter, is_target) -> cst.CSTNode:
    """``node.visit(converter)``, entering only the nodes ``is_target`` accepts and the nodes
    above them (libcst rebuilds every node it enters). For converters whose handlers change
    only target nodes, and whose ``visit_*`` handlers record only facts about targets and
    their children. ``node`` itself when nothing is a target."""
    # Each target with every node above it where it stands: a node the converters placed twice
    # has two ways up, and both are entered.
    nodes, depths = preorder(node)
    path: set[int] = set()
    above: list[cst.CSTNode] = []  # the nodes from `node` down to the current one
    for current, depth in zip(nodes, depths):
        del above[depth:]
        above.append(current)
        if is_target(current):
            path.update(map(id, above))
    if not path:
        return node
    converter.path = path
    if converter.attribute_handlers:
        return node.visit(converter)
    return _visit(node, converter, path, code_fields)


def apply(node: cst.CSTNode, converter: Converter) -> cst.CSTNode:
    """``node.visit(converter)``. A converter whose handlers are all for statements enters
    only statements, suites and clauses (see :func:`_visit`)."""
    if converter.statements_only and not converter.attribute_handlers:
        return _visit(node, converter, None, statement_fields)
    return node.visit(converter)


def _visit(node: cst.CSTNode, converter: Converter, path: set[int] | None, fields):
    """What ``node.visit(converter)`` gives, entering only the children in ``fields(kind)`` and,
    with ``path``, only those whose ``id`` is in it: the other children libcst would enter
    only for ``on_visit``/``on_leave`` to keep them as they are, which this walk leaves out
    (``Converter`` runs no handler for them), and a node whose children are all kept is not
    rebuilt. A sequence a handler changed gets libcst's treatment of sentinels (a
    ``FlattenSentinel`` spliced in, a ``RemovalSentinel`` dropped, an emptied statement line
    dropped from a block); a single child a handler removed becomes ``None`` (or the default
    sentinel) where its field allows it."""
    if not converter.on_visit(node):
        return converter.on_leave(node, node)
    changes = None
    for name in fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            items = None
            for k, item in enumerate(value):
                new = item if path is not None and id(item) not in path else _visit(item, converter, path, fields)
                if new is item:
                    if items is not None:
                        items.append(item)
                    continue
                if items is None:
                    items = list(value[:k])
                for kept in (
                    new.nodes
                    if type(new) is cst.FlattenSentinel
                    else ()
                    if type(new) is cst.RemovalSentinel
                    else (new,)
                ):
                    if (
                        name == "body"
                        and type(node) is cst.IndentedBlock
                        and type(kept) is cst.SimpleStatementLine
                        and not kept.body
                        and not (type(item) is cst.SimpleStatementLine and not item.body)
                    ):
                        continue  # (libcst's visit_body_sequence: a line emptied by a removal goes)
                    items.append(kept)
            if items is not None:
                changes = changes or {}
                changes[name] = tuple(items)
        elif id(value) in path if path is not None else isinstance(value, cst.CSTNode):
            new = _visit(value, converter, path, fields)
            if new is value:
                continue
            if type(new) is cst.FlattenSentinel:
                raise TypeError(f"a {type(value).__name__} in `{name}` cannot be replaced by a sequence")
            if type(new) is cst.RemovalSentinel:
                new = _removed(node, name, value)
            changes = changes or {}
            changes[name] = new
    return converter.on_leave(node, node.with_changes(**changes) if changes else node)


def _removed(node: cst.CSTNode, name: str, value: cst.CSTNode):
    """What a removed child of the field ``name`` becomes (libcst's ``visit_optional`` and
    ``visit_sentinel``)."""
    default = next(f.default for f in dataclasses.fields(node) if f.name == name)
    if default is None or default is cst.MaybeSentinel.DEFAULT:
        return default
    raise TypeError(f"a {type(value).__name__} in `{name}` cannot be removed")


class OwnCodeConverter(Converter):
    """A converter that changes only the function's own code, not nested ``def``s (those are
    converted on their own when they are called)."""

    def __init__(self, ctx: Context):
        super().__init__(ctx)
        self.def_depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self.def_depth += 1
        return self.def_depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.def_depth -= 1
        return updated_node


def holds_builtin(ctx: Context, func: cst.BaseExpression, names: frozenset) -> bool:
    """Whether ``func`` is a name among ``names`` that holds the builtin of that name where the
    function stands (not a name it binds, nor a module global holding something else)."""
    if type(func) is not cst.Name or func.value not in names or func.value in ctx.local_names:
        return False
    is_global, value = ctx.global_value(func.value)
    return not is_global or value is getattr(builtins, func.value)


def parenthesized_generator(arg: cst.Arg) -> cst.Arg:
    """A generator expression that was a call's only argument (``any(v > 0 for v in xs)``)
    needs its own parentheses once the call has another argument (``_lx.call(any, (...))``)."""
    value = arg.value
    if isinstance(value, cst.GeneratorExp) and not value.lpar:
        return arg.with_changes(value=value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
    return arg
