"""``print(...)`` → ``_lx.print_(...)``: a ``jax.debug.callback`` that runs Python's ``print``
each time the program runs, in program order. An argument that formats values into a string
(an f-string, ``"...".format(...)``, ``"x=" + str(x)``, ``str(x)``/``repr(x)``) becomes
``_lx.printing.format_(template, *values)`` (``"..." % values``: ``_lx.printing.percent_``):
the string itself for Python values, the values formatted when printed for traced ones (a
traced value formatted while tracing would print the tracer)."""

from __future__ import annotations

import ast

import libcst as cst

from laxify.transpiler.analysis.features import PRINT_CALL
from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above

__all__ = ["formatting", "transform"]

_CODE = cst.Module([])


class _NotFormatting(Exception):
    """The expression is not one that formats values into a string."""


class _Template:
    """A ``str.format`` template with numbered fields, and the expressions of its values."""

    def __init__(self):
        self.text = ""
        self.values: list[cst.BaseExpression] = []

    def value(self, value: cst.BaseExpression) -> int:
        """The field number of one more value (numbered in evaluation order)."""
        self.values.append(value)
        return len(self.values) - 1


def _field(index: int, conversion: str | None = None, spec: str = "") -> str:
    return "{" + str(index) + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _literal(node: cst.BaseExpression) -> str:
    """A plain string literal (not bytes), as template text."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str):
            return _escape(value)
    if isinstance(node, cst.ConcatenatedString):
        return _literal(node.left) + _literal(node.right)
    raise _NotFormatting()


def _fstring_text(node: cst.FormattedString, raw: str) -> str:
    """The text of an f-string part as template text: escapes resolved, ``{{``/``}}`` kept,
    which is how ``str.format`` spells a brace too."""
    prefix = node.prefix.replace("f", "").replace("F", "")
    quote = node.quote
    return ast.literal_eval(prefix + quote + raw + quote)


def _fstring_parts(node: cst.FormattedString, parts, template: _Template) -> str:
    out = ""
    for part in parts:
        if isinstance(part, cst.FormattedStringText):
            out += _fstring_text(node, part.value)
            continue
        conversion = part.conversion
        if part.equal is not None:  # f"{x=}": the expression's text, then its repr
            out += _escape(
                _CODE.code_for_node(part.whitespace_before_expression)
                + _CODE.code_for_node(part.expression)
                + _CODE.code_for_node(part.whitespace_after_expression)
                + _CODE.code_for_node(part.equal)
            )
            if conversion is None and part.format_spec is None:
                conversion = "r"
        index = template.value(part.expression)  # evaluated before the fields of its spec
        spec = _fstring_parts(node, part.format_spec, template) if part.format_spec else ""
        out += _field(index, conversion, spec)
    return out


def _template_of(node: cst.BaseExpression, template: _Template) -> str:
    """The template text of a string-building expression, or :class:`_NotFormatting`."""
    if isinstance(node, cst.FormattedString):
        if "b" in node.prefix.lower():
            raise _NotFormatting()
        return _fstring_parts(node, node.parts, template)
    if isinstance(node, cst.ConcatenatedString):
        return _template_of(node.left, template) + _template_of(node.right, template)
    if isinstance(node, cst.SimpleString):
        return _literal(node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _template_of(node.left, template) + _template_of(node.right, template)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("str", "repr")
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return _field(template.value(node.args[0].value), "s" if node.func.value == "str" else "r")
    raise _NotFormatting()


def _string(text: str) -> cst.SimpleString:
    """A string literal of ``text``, in double quotes where that needs no escape."""
    code = repr(text)
    if code.startswith("'") and '"' not in text and "'" not in text:
        code = '"' + code[1:-1] + '"'
    return cst.SimpleString(code)


def _format_call(template: cst.BaseExpression, args) -> cst.Call:
    func = cst.Attribute(cst.Attribute(cst.Name("_lx"), cst.Name("printing")), cst.Name("format_"))
    return cst.Call(func, [cst.Arg(template), *args])


def _formatting(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` as a ``format_`` call when it formats values into a string (``percent_`` for
    ``"..." % values``); else ``node``."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        try:
            _literal(node.left)
        except _NotFormatting:
            return node
        func = cst.Attribute(cst.Attribute(cst.Name("_lx"), cst.Name("printing")), cst.Name("percent_"))
        template = node.left.with_changes(lpar=[], rpar=[])
        call = cst.Call(func, [cst.Arg(template), cst.Arg(node.right)])
        return call.with_changes(lpar=node.lpar, rpar=node.rpar)
    func = getattr(node, "func", None)
    if (
        isinstance(node, cst.Call)
        and isinstance(func, cst.Attribute)
        and func.attr.value == "format"
        and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        try:
            _literal(func.value)
        except _NotFormatting:
            return node
        args = [
            a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if k == len(node.args) - 1 else a
            for k, a in enumerate(node.args)
        ]
        # The receiver is already a `str.format` template.
        call = _format_call(func.value.with_changes(lpar=[], rpar=[]), args)
        return call.with_changes(lpar=node.lpar, rpar=node.rpar)
    template = _Template()
    try:
        text = _template_of(node, template)
    except (_NotFormatting, ValueError, SyntaxError):
        return node
    if not template.values:
        return node  # only literal text
    call = _format_call(_string(text), [cst.Arg(v) for v in template.values])
    return call.with_changes(lpar=node.lpar, rpar=node.rpar)


# An assert's message is formatted the same way (see assert_statements.py).
formatting = _formatting


def _print_call(node: cst.CSTNode) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "print"


class PrintTransformer(OwnCodeConverter):
    def leave_Call(self, original_node, updated_node):
        if not _print_call(updated_node):
            return updated_node
        args = [
            a if a.keyword is not None or a.star else a.with_changes(value=_formatting(a.value))
            for a in updated_node.args
        ]
        return updated_node.with_changes(func=cst.Attribute(cst.Name("_lx"), cst.Name("print_")), args=args)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (PRINT_CALL,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    # Only the nodes above the `print` calls are entered (libcst rebuilds every node it enters).
    return transform_above(node, PrintTransformer(ctx), _print_call)
