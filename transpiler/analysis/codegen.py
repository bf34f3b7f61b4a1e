"""The text of a libcst node, as ``Module.code_for_node`` writes it, for the nodes the
converters build most: names, attributes, calls, subscripts, operators, lambdas, simple
statements. libcst's code generation enters a context manager or two per node and costs more
than building the IR around it; a node that holds anything else (a compound statement, an
f-string, a dict, whitespace over lines, ...) is left to libcst whole."""

from __future__ import annotations

import libcst as cst

__all__ = ["code_for_node"]

_DEFAULT = cst.MaybeSentinel.DEFAULT


class _Unsupported(Exception):
    """The node holds a kind of node written here by libcst only."""


def code_for_node(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``."""
    out: list[str] = []
    try:
        _Writer(out, module.default_newline).node(node)
    except (_Unsupported, RecursionError):
        return module.code_for_node(node)
    return "".join(out)


# Operators written as one token between their whitespace.
_TOKENS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.BitOr: "|",
    cst.BitAnd: "&",
    cst.BitXor: "^",
    cst.LessThan: "<",
    cst.GreaterThan: ">",
    cst.Equal: "==",
    cst.LessThanEqual: "<=",
    cst.GreaterThanEqual: ">=",
    cst.In: "in",
    cst.Is: "is",
    cst.AddAssign: "+=",
    cst.SubtractAssign: "-=",
    cst.MultiplyAssign: "*=",
    cst.DivideAssign: "/=",
    cst.FloorDivideAssign: "//=",
    cst.ModuloAssign: "%=",
    cst.PowerAssign: "**=",
    cst.Dot: ".",
    cst.Comma: ",",
    cst.Colon: ":",
    cst.Semicolon: ";",
    cst.AssignEqual: "=",
}
# Unary operators: the token, then their whitespace.
_UNARY: dict[type, str] = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}
# Leaves written as their value, in their parentheses.
_VALUES = frozenset({cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString})


class _Writer:
    def __init__(self, out: list[str], newline: str):
        self.out = out
        self.add = out.append
        self.newline = newline

    def node(self, node) -> None:
        kind = type(node)
        if kind in _VALUES:
            if node.lpar:
                self.value(node)
            else:
                self.add(node.value)
            return
        write = _WRITERS.get(kind)
        if write is not None:
            write(self, node)
            return
        token = _TOKENS.get(kind)
        if token is not None:
            self.space(node.whitespace_before)
            self.add(token)
            self.space(node.whitespace_after)
            return
        token = _UNARY.get(kind)
        if token is not None:
            self.add(token)
            self.space(node.whitespace_after)
            return
        raise _Unsupported()

    def space(self, node) -> None:
        if type(node) is not cst.SimpleWhitespace:
            raise _Unsupported()  # whitespace over lines
        self.add(node.value)

    def open(self, node) -> None:
        for lpar in node.lpar:
            self.add("(")
            self.space(lpar.whitespace_after)

    def close(self, node) -> None:
        for rpar in node.rpar:
            self.space(rpar.whitespace_before)
            self.add(")")

    def comma(self, comma, default: bool, default_text: str = ", ") -> None:
        if comma is _DEFAULT:
            if default:
                self.add(default_text)
        else:
            self.node(comma)

    def semicolon(self, node, default: bool) -> None:
        if node.semicolon is _DEFAULT:
            if default:
                self.add("; ")
        else:
            self.node(node.semicolon)

    # -- expressions -------------------------------------------------------------------------

    def value(self, node) -> None:
        self.open(node)
        self.add(node.value)
        self.close(node)

    def attribute(self, node: cst.Attribute) -> None:
        self.open(node)
        self.node(node.value)
        self.node(node.dot)
        self.node(node.attr)
        self.close(node)

    def call(self, node: cst.Call) -> None:
        self.open(node)
        self.node(node.func)
        self.space(node.whitespace_after_func)
        self.add("(")
        self.space(node.whitespace_before_args)
        last = len(node.args) - 1
        for k, arg in enumerate(node.args):
            self.arg(arg, k != last)
        self.add(")")
        self.close(node)

    def arg(self, node: cst.Arg, default_comma: bool) -> None:
        self.add(node.star)
        self.space(node.whitespace_after_star)
        if node.keyword is not None:
            self.node(node.keyword)
        if node.equal is _DEFAULT:
            if node.keyword is not None:
                self.add(" = ")
        else:
            self.node(node.equal)
        self.node(node.value)
        self.comma(node.comma, default_comma)
        self.space(node.whitespace_after_arg)

    def binary(self, node: cst.BinaryOperation) -> None:
        self.open(node)
        self.node(node.left)
        self.node(node.operator)
        self.node(node.right)
        self.close(node)

    def unary(self, node: cst.UnaryOperation) -> None:
        self.open(node)
        self.node(node.operator)
        self.node(node.expression)
        self.close(node)

    def comparison(self, node: cst.Comparison) -> None:
        self.open(node)
        self.node(node.left)
        for target in node.comparisons:
            self.node(target.operator)
            self.node(target.comparator)
        self.close(node)

    def subscript(self, node: cst.Subscript) -> None:
        self.open(node)
        self.node(node.value)
        self.space(node.whitespace_after_value)
        self.add("[")
        self.space(node.lbracket.whitespace_after)
        last = len(node.slice) - 1
        for k, element in enumerate(node.slice):
            self.node(element.slice)
            self.comma(element.comma, k != last)
        self.space(node.rbracket.whitespace_before)
        self.add("]")
        self.close(node)

    def index(self, node: cst.Index) -> None:
        if node.star is not None:
            self.add(node.star)
        if node.whitespace_after_star is not None:
            self.space(node.whitespace_after_star)
        self.node(node.value)

    def slice(self, node: cst.Slice) -> None:
        if node.lower is not None:
            self.node(node.lower)
        self.node(node.first_colon)
        if node.upper is not None:
            self.node(node.upper)
        if node.second_colon is _DEFAULT:
            if node.step is not None:
                self.add(":")
        else:
            self.node(node.second_colon)
        if node.step is not None:
            self.node(node.step)

    def tuple(self, node: cst.Tuple) -> None:
        self.open(node)
        elements = node.elements
        if len(elements) == 1:
            self.element(elements[0], True, ",")
        else:
            last = len(elements) - 1
            for k, element in enumerate(elements):
                self.element(element, k != last, ", ")
        self.close(node)

    def list(self, node: cst.List) -> None:
        self.open(node)
        self.add("[")
        self.space(node.lbracket.whitespace_after)
        last = len(node.elements) - 1
        for k, element in enumerate(node.elements):
            self.element(element, k != last, ", ")
        self.space(node.rbracket.whitespace_before)
        self.add("]")
        self.close(node)

    def element(self, node, default_comma: bool, default_text: str) -> None:
        if type(node) is not cst.Element:
            raise _Unsupported()  # a starred element
        self.node(node.value)
        self.comma(node.comma, default_comma, default_text)

    def lambda_(self, node: cst.Lambda) -> None:
        self.open(node)
        self.add("lambda")
        params = node.params
        if node.whitespace_after_lambda is _DEFAULT:
            if (
                params.posonly_params
                or params.params
                or type(params.star_arg) is cst.Param
                or params.kwonly_params
                or params.star_kwarg is not None
            ):
                self.add(" ")
        else:
            self.space(node.whitespace_after_lambda)
        self.parameters(params)
        self.node(node.colon)
        self.node(node.body)
        self.close(node)

    def parameters(self, node: cst.Parameters) -> None:
        star_arg = node.star_arg
        if (
            node.posonly_params
            or node.posonly_ind is not _DEFAULT
            or not (star_arg is _DEFAULT or type(star_arg) is cst.Param)
        ):
            raise _Unsupported()  # `/`, a bare `*` written out
        kwonly, star_kwarg = node.kwonly_params, node.star_kwarg
        starred = bool(kwonly) if star_arg is _DEFAULT else True
        last = len(node.params) - 1
        more = starred or bool(kwonly) or star_kwarg is not None
        for k, param in enumerate(node.params):
            self.param(param, "", k < last or more)
        if star_arg is _DEFAULT:
            if starred:
                self.add("*, ")
        else:
            self.param(star_arg, "*", bool(kwonly) or star_kwarg is not None)
        last = len(kwonly) - 1
        for k, param in enumerate(kwonly):
            self.param(param, "", k < last or star_kwarg is not None)
        if star_kwarg is not None:
            self.param(star_kwarg, "**", False)

    def param(self, node: cst.Param, default_star: str, default_comma: bool) -> None:
        self.add(default_star if node.star is _DEFAULT else node.star)
        self.space(node.whitespace_after_star)
        self.node(node.name)
        if node.annotation is not None:
            self.annotation(node.annotation, ":")
        if node.equal is _DEFAULT:
            if node.default is not None:
                self.add(" = ")
        else:
            self.node(node.equal)
        if node.default is not None:
            self.node(node.default)
        self.comma(node.comma, default_comma)
        self.space(node.whitespace_after_param)

    def annotation(self, node: cst.Annotation, indicator: str) -> None:
        if node.whitespace_before_indicator is _DEFAULT:
            if indicator == "->":
                self.add(" ")
        else:
            self.space(node.whitespace_before_indicator)
        self.add(indicator)
        self.space(node.whitespace_after_indicator)
        self.node(node.annotation)

    # -- statements --------------------------------------------------------------------------

    def line(self, node: cst.SimpleStatementLine) -> None:
        for empty in node.leading_lines:  # (no indentation: a line alone has none)
            self.space(empty.whitespace)
            if empty.comment is not None:
                self.add(empty.comment.value)
            self.end_of_line(empty.newline)
        body = node.body
        if body:
            last = len(body) - 1
            for k, small in enumerate(body):
                write = _SMALL.get(type(small))
                if write is None:
                    raise _Unsupported()
                write(self, small)
                self.semicolon(small, k != last)
        else:
            self.add("pass")
        trailing = node.trailing_whitespace
        self.space(trailing.whitespace)
        if trailing.comment is not None:
            self.add(trailing.comment.value)
        self.end_of_line(trailing.newline)

    def end_of_line(self, node: cst.Newline) -> None:
        self.add(self.newline if node.value is None else node.value)

    def assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.node(target.target)
            self.space(target.whitespace_before_equal)
            self.add("=")
            self.space(target.whitespace_after_equal)
        self.node(node.value)

    def aug_assign(self, node: cst.AugAssign) -> None:
        self.node(node.target)
        self.node(node.operator)
        self.node(node.value)

    def expr(self, node: cst.Expr) -> None:
        self.node(node.value)

    def return_(self, node: cst.Return) -> None:
        self.add("return")
        if node.whitespace_after_return is _DEFAULT:
            if node.value is not None:
                self.add(" ")
        else:
            self.space(node.whitespace_after_return)
        if node.value is not None:
            self.node(node.value)

    def pass_(self, node: cst.Pass) -> None:
        self.add("pass")

    def small(self, node) -> None:
        """A small statement on its own (no semicolon unless it has one written)."""
        _SMALL[type(node)](self, node)
        self.semicolon(node, False)


# The small statements a statement line may hold here (each followed by its semicolon).
_SMALL = {
    cst.Assign: _Writer.assign,
    cst.AugAssign: _Writer.aug_assign,
    cst.Expr: _Writer.expr,
    cst.Return: _Writer.return_,
    cst.Pass: _Writer.pass_,
}

_WRITERS = {
    cst.Attribute: _Writer.attribute,
    cst.Call: _Writer.call,
    cst.BinaryOperation: _Writer.binary,
    cst.UnaryOperation: _Writer.unary,
    cst.Comparison: _Writer.comparison,
    cst.Subscript: _Writer.subscript,
    cst.Index: _Writer.index,
    cst.Slice: _Writer.slice,
    cst.Tuple: _Writer.tuple,
    cst.List: _Writer.list,
    cst.Lambda: _Writer.lambda_,
    cst.Parameters: _Writer.parameters,
    cst.SimpleStatementLine: _Writer.line,
    **{kind: _Writer.small for kind in _SMALL},
}
