"""``a is True``, ``a is not b``, ``~flag``, ``-flag`` → ``_lx.is_(...)``, ``_lx.bool_unary(...)``:
Python's identity and Python's ``bool`` operators on values that a traced construct may have
turned from Python values into arrays.

A name the function only ever assigns ``True``/``False`` literals, ``not ...`` or ``bool(...)``
holds a Python ``bool`` on every path in Python; after a traced ``if`` or loop it may be a
traced boolean. ``flag is False`` then compares by value, and ``~flag``/``-flag`` give
Python's ``int`` results. Identity the runtime cannot decide (two traced values, a traced
boolean of unknown origin against ``True``) is a located error, never a silent ``False``.
"""

from __future__ import annotations

import re

import libcst as cst

from laxify.transpiler.analysis.walk import children
from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above
from laxify.transpiler.converters.guards import runtime_call

__all__ = ["transform"]

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_PLACEHOLDER = re.compile(r"__laxify_user_\d+")  # a user's name hidden while converting
_UNARY = {cst.BitInvert: "~", cst.Minus: "-", cst.Plus: "+"}
BOOL, PARAM, OTHER = "bool", "param", ""


def _is_bool_literal(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value in ("True", "False")


def _makes_bool(value: cst.BaseExpression) -> bool:
    """A Python ``bool`` in Python, whatever its operands: a literal, ``not e``, ``bool(e)``."""
    if _is_bool_literal(value):
        return True
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Not:
        return True
    return (
        type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "bool" and len(value.args) == 1
    )


def _target_names(target: cst.BaseExpression, out: list[str]) -> None:
    kind = type(target)
    if kind is cst.Name:
        out.append(target.value)
    elif kind in (cst.Tuple, cst.List):
        for element in target.elements:
            _target_names(element.value, out)
    elif kind is cst.StarredElement:
        _target_names(target.value, out)


class _Bindings:
    """Per name of the function's own code: does every binding make a Python ``bool``?"""

    def __init__(self, fn: cst.FunctionDef):
        self.bool_only: dict[str, bool] = {}
        params = fn.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.bool_only[param.name.value] = False
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.bool_only[star.name.value] = False
        self.params = set(self.bool_only)
        self.rebound: set[str] = set()
        stack = list(children(fn.body))
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    self._bind(node.name.value, False)
                continue
            self._visit(node)
            stack.extend(children(node))

    def _bind(self, name: str, makes_bool: bool) -> None:
        if name in self.params:
            self.rebound.add(name)
        self.bool_only[name] = self.bool_only.get(name, True) and makes_bool

    def _visit(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                self._assign(target.target, node.value)
        elif kind is cst.AnnAssign and node.value is not None:
            self._assign(node.target, node.value)
        elif kind is cst.NamedExpr:
            self._assign(node.target, node.value)
        elif kind is cst.AugAssign:
            self._assign(node.target, None)
        elif kind is cst.For:
            self._assign(node.target, None)
        elif kind is cst.AsName:
            self._assign(node.name, None)
        elif kind in (cst.Global, cst.Nonlocal):
            for item in node.names:
                self._bind(item.name.value, False)
        elif kind in (cst.Import, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if type(bound) is cst.Name:
                    self._bind(bound.value, False)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if type(target) is cst.Name:
            self._bind(target.value, value is not None and _makes_bool(value))
            return
        names: list[str] = []
        _target_names(target, names)
        if (
            value is not None
            and type(target) in (cst.Tuple, cst.List)
            and type(value) in (cst.Tuple, cst.List)
            and len(target.elements) == len(value.elements)
            and not any(type(e) is cst.StarredElement for e in (*target.elements, *value.elements))
        ):
            for t, v in zip(target.elements, value.elements):
                self._assign(t.value, v.value)
            return
        for name in names:
            self._bind(name, False)

    def kind(self, node: cst.BaseExpression) -> str:
        """``bool``: a name bound only to Python bools; ``param``: a parameter never rebound;
        ``""``: anything else."""
        if type(node) is not cst.Name:
            return OTHER
        name = node.value
        if name in self.params:
            return PARAM if name not in self.rebound else OTHER
        return BOOL if self.bool_only.get(name, False) else OTHER


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node).strip()


def _string(text: str) -> cst.SimpleString:
    return cst.SimpleString(repr(text))


class IdentityTransformer(OwnCodeConverter):
    def __init__(self, ctx: Context, fn: cst.FunctionDef):
        super().__init__(ctx)
        self.fn = fn
        self._bindings: _Bindings | None = None

    @property
    def bindings(self) -> _Bindings:
        if self._bindings is None:  # found once, and only when a candidate is met
            self._bindings = _Bindings(self.fn)
        return self._bindings

    def user_text(self, text: str) -> str:
        """``text`` with the user's names back where they were hidden (transpiler/naming.py)."""
        if not self.ctx.hidden:
            return text
        return _PLACEHOLDER.sub(lambda m: self.ctx.hidden.get(m.group(0), m.group(0)), text)

    def leave_Comparison(self, original_node, updated_node):
        if len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        op = type(target.operator)
        if op is not cst.Is and op is not cst.IsNot:
            return updated_node
        left, right = updated_node.left, target.comparator
        if not _rewritten(left, right):
            return updated_node
        kinds = f"{self.bindings.kind(left)},{self.bindings.kind(right)}"
        call = runtime_call(
            "is_" if op is cst.Is else "is_not",
            left,
            right,
            _string(self.user_text(_code(original_node))),
            _string(kinds),
        )
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_UnaryOperation(self, original_node, updated_node):
        symbol = _UNARY.get(type(updated_node.operator))
        if symbol is None or self.bindings.kind(updated_node.expression) != BOOL:
            return updated_node
        call = runtime_call("bool_unary", _string(symbol), updated_node.expression)
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)


def _rewritten(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """``a is True``/``True is a`` (any ``a``), and ``a is b`` on two names other than ``None``
    (a traced value is never ``None``: ``x is None`` stays Python's)."""
    if _is_bool_literal(left) or _is_bool_literal(right):
        return True
    return type(left) is cst.Name and type(right) is cst.Name and left.value != "None" and right.value != "None"


def _target(node: cst.CSTNode) -> bool:
    kind = type(node)
    if kind is cst.Comparison:
        return (
            len(node.comparisons) == 1
            and type(node.comparisons[0].operator) in (cst.Is, cst.IsNot)
            and _rewritten(node.left, node.comparisons[0].comparator)
        )
    return kind is cst.UnaryOperation and type(node.operator) in _UNARY and type(node.expression) is cst.Name


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Is, cst.IsNot, cst.BitInvert, cst.Minus, cst.Plus)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return transform_above(node, IdentityTransformer(ctx, node), _target)
