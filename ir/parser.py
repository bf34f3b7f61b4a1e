"""Reads the text form written by ``printer.py`` back into a :class:`Function`.

Values are resolved by their printed name over the whole function: every mention of
``%x.1`` is the same :class:`Value`. Scoping (defined once, before use) is left to the
verifier, so text that breaks it still parses and can be checked.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
import types as pytypes
import warnings
from typing import Any, Callable, TypeVar

import laxify.ir.ops  # noqa: F401  (registers the op classes)
from laxify.ir.core import OP_CLASSES, Function, Op, Region, Span, Value
from laxify.ir.types import UNDEFINED, UNKNOWN, Array, PyTree, Static, Type

__all__ = ["ParseError", "parse_function"]

_VALUE = re.compile(r"%[^\s,():{}\[\]=]+")
_FUNC_NAME = re.compile(r"@([^\s(]+)")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_ATTR_START = re.compile(r"\{\s*\w+\s*=(?!=)")
_REGION_START = re.compile(r"\{\s*\^")
_KEY = re.compile(r"\w+")
_LOC = re.compile(r"loc\((\d+):(\d+)\)")
_INT = re.compile(r"\d+")

_OPEN, _CLOSE = "([{", ")]}"
T = TypeVar("T")

# Names a ``static(<type>)`` may print: the builtin types plus the ones without a builtin name.
_PYTYPES: dict[str, type] = {name: t for name, t in vars(builtins).items() if isinstance(t, type)} | {
    "NoneType": pytypes.NoneType,
    "ellipsis": pytypes.EllipsisType,
    "NotImplementedType": pytypes.NotImplementedType,
}

# Float values whose repr is a name rather than a literal.
_FLOAT_NAMES = {"inf": math.inf, "nan": math.nan}


class ParseError(ValueError):
    """The text is not valid IR; ``line`` is 1-based and ``col`` 0-based, as in :class:`Span`."""

    def __init__(self, message: str, text: str, pos: int):
        self.line = text.count("\n", 0, pos) + 1
        start = text.rfind("\n", 0, pos) + 1
        self.col = pos - start
        end = text.find("\n", pos)
        source = text[start : end if end != -1 else len(text)]
        super().__init__(f"{self.line}:{self.col}: {message}\n  {source}\n  {' ' * self.col}^")


class _FloatNames(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(_FLOAT_NAMES[node.id]) if node.id in _FLOAT_NAMES else node


def _literal(text: str) -> Any:
    """``ast.literal_eval`` that also accepts the float names ``inf`` and ``nan``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "invalid escape sequence" in hand-written text
        tree = ast.parse(text.strip(), mode="eval")
    return ast.literal_eval(_FloatNames().visit(tree))


class _Parser:
    """Recursive descent over the raw text, skipping whitespace between tokens."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.values: dict[str, Value] = {}

    # -- low-level scanning ---------------------------------------------------------
    def error(self, message: str, pos: int | None = None) -> ParseError:
        return ParseError(message, self.text, self.pos if pos is None else pos)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def at(self, token: str) -> bool:
        self.skip_ws()
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.at(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            found = self.text[self.pos : self.pos + 10].split("\n")[0] or "end of text"
            raise self.error(f"expected '{token}', found '{found}'")

    def match(self, pattern: re.Pattern[str], what: str) -> re.Match[str]:
        self.skip_ws()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return m

    def looking_at(self, pattern: re.Pattern[str]) -> bool:
        self.skip_ws()
        return pattern.match(self.text, self.pos) is not None

    def literal_text(self, stops: str) -> tuple[str, int]:
        """The text of one Python literal, up to a ``stops`` character outside brackets."""
        self.skip_ws()
        start = self.pos
        depth = 0
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in "'\"":
                self.skip_string(c)
                continue
            if depth == 0 and c in stops:
                break
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                depth -= 1
            self.pos += 1
        if self.pos == start or self.pos >= len(text):
            raise self.error("expected a Python literal", start)
        return text[start : self.pos], start

    def skip_string(self, quote: str) -> None:
        start = self.pos
        self.pos += 1
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if c == quote:
                return
        raise self.error("unterminated string", start)

    def literal(self, stops: str, what: str) -> Any:
        text, start = self.literal_text(stops)
        try:
            return _literal(text)
        except (ValueError, SyntaxError, TypeError):
            raise self.error(f"{what} is not a Python literal: {text.strip()}", start) from None

    # -- values ---------------------------------------------------------------------
    def value(self) -> Value:
        start = self.pos
        name = self.match(_VALUE, "a value such as '%x.0'").group()
        hint, _, version = name[1:].rpartition(".")
        if not version.isdigit():
            raise self.error(f"value '{name}' must end with a version number", start)
        v = self.values.get(name)
        if v is None:
            v = self.values[name] = Value(hint, int(version))
        return v

    def typed_value(self) -> Value:
        v = self.value()
        if self.accept(":"):
            v.type = self.type()
        return v

    def sequence(self, close: str, item: Callable[[], T]) -> list[T]:
        """Comma-separated items up to ``close`` (the opening bracket is already read)."""
        out: list[T] = []
        if self.accept(close):
            return out
        while True:
            out.append(item())
            if self.accept(close):
                return out
            if not self.accept(","):
                raise self.error(f"expected ',' or '{close}'")

    # -- types ----------------------------------------------------------------------
    def type(self) -> Type:
        if self.accept("("):
            return self.tree("tuple", ")")
        if self.accept("["):
            return self.tree("list", "]")
        if self.accept("{"):
            return self.dict_tree()
        if self.accept("?"):
            return self.array(None) if self.at("~") or self.at("[") else UNKNOWN
        start = self.pos
        name = self.match(_IDENT, "a type").group()
        if name == "undef":
            return UNDEFINED
        if name == "static":
            return self.static() if self.accept("(") else Static()
        if not (self.at("~") or self.at("[")):
            raise self.error(f"unknown type '{name}'", start)
        return self.array(name)

    def static(self) -> Static:
        text, start = self.literal_text(")")
        self.expect(")")
        name = text.strip()
        if name in _PYTYPES:
            return Static(pytype=_PYTYPES[name])
        try:
            return Static(_literal(name))
        except (ValueError, SyntaxError, TypeError):
            raise self.error(f"'{name}' is neither a Python type name nor a literal", start) from None

    def array(self, dtype: str | None) -> Array:
        weak = self.accept("~")
        self.expect("[")
        if self.accept("?"):
            self.expect("]")
            return Array(None, dtype, weak)
        dims = self.sequence("]", lambda: int(self.match(_INT, "a dimension").group()))
        return Array(tuple(dims), dtype, weak)

    def tree(self, kind: str, close: str) -> PyTree:
        children = self.sequence(close, self.type)
        return PyTree(kind, tuple(range(len(children))), tuple(children))

    def dict_tree(self) -> PyTree:
        items = self.sequence("}", self.dict_item)
        return PyTree("dict", tuple(k for k, _ in items), tuple(t for _, t in items))

    def dict_item(self) -> tuple[Any, Type]:
        key = self.literal(":", "a dict key")
        self.expect(":")
        return key, self.type()

    # -- ops, regions, functions ----------------------------------------------------
    def attributes(self) -> dict[str, Any]:
        """``{k = v, ...}`` when present (a ``{`` that opens a region or a body is left alone)."""
        if not self.looking_at(_ATTR_START):
            return {}
        self.expect("{")
        return dict(self.sequence("}", self.attribute))

    def attribute(self) -> tuple[str, Any]:
        key = self.match(_KEY, "an attribute name").group()
        self.expect("=")
        return key, self.literal(",}", f"attribute '{key}'")

    def region(self) -> Region:
        self.expect("^")
        self.expect("(")
        args = self.sequence(")", self.typed_value)
        self.expect(":")
        return Region(args, self.ops())

    def ops(self) -> list[Op]:
        out: list[Op] = []
        while not self.at("}"):
            if self.pos >= len(self.text):
                raise self.error("expected '}' before the end of the text")
            out.append(self.op())
        return out

    def op(self) -> Op:
        results: list[Value] = []
        if self.at("%"):
            results = self.sequence("=", self.typed_value)
        self.skip_ws()
        start = self.pos
        name = self.match(_IDENT, "an op name").group()
        cls = OP_CLASSES.get(name)
        if cls is None:
            raise self.error(f"unknown op '{name}'", start)
        self.expect("(")
        operands = self.sequence(")", self.value)
        attributes = self.attributes()
        regions: list[Region] = []
        while self.looking_at(_REGION_START):
            self.expect("{")
            regions.append(self.region())
            self.expect("}")
        span = None
        if self.looking_at(_LOC):
            m = self.match(_LOC, "a location")
            span = Span(int(m.group(1)), int(m.group(2)))
        return cls(operands, results, regions, attributes, span)

    def function(self) -> Function:
        self.expect("func")
        name = self.match(_FUNC_NAME, "a function name such as '@f'").group(1)
        self.expect("(")
        params = self.sequence(")", self.typed_value)
        attributes = self.attributes()
        self.expect("{")
        body = Region(ops=self.ops())
        self.expect("}")
        self.skip_ws()
        if self.pos != len(self.text):
            raise self.error("unexpected text after the function")
        return Function(name, params, body, attributes)


def parse_function(text: str) -> Function:
    """Parse the text form of one function (what :func:`print_function` writes)."""
    return _Parser(text).function()
