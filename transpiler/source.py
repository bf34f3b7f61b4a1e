"""Find a function's source and where it is: files, notebook cells, ``exec`` code registered
in ``linecache``, methods, nested and decorated functions, lambdas."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass

import libcst as cst

from laxify.transpiler.analysis.walk import walk

from laxify.ir.errors import ConversionError, Location

__all__ = ["FunctionSource", "get_source"]


@dataclass
class FunctionSource:
    """The parsed source of one function and the mapping back to the user's file."""

    filename: str
    module: cst.Module          # the dedented source text, parsed
    node: cst.FunctionDef | cst.Lambda
    first_line: int             # file line of the module's first line
    indent: int                 # columns removed by dedenting
    lines: list[str]            # the file's lines (for error messages)
    text: str = ""              # the (dedented) text ``module`` was parsed from

    def location(self, file_line: int, col: int = 0) -> Location:
        """A :class:`Location` for a line (1-based) and column of the user's file."""
        text = self.lines[file_line - 1] if 0 < file_line <= len(self.lines) else ""
        return Location(self.filename, file_line, col, text.rstrip("\n"))


def _no_source(fn, why: str) -> ConversionError:
    name = getattr(fn, "__qualname__", repr(fn))
    return ConversionError(
        f"laxify cannot convert {name}: {why}.",
        None,
        "Define the function in a file, a notebook cell, or register exec'd source in "
        "linecache; or call it unconverted with laxify.do_not_convert.",
    )


def get_source(fn) -> FunctionSource:
    """Parse ``fn``'s source; raise :class:`ConversionError` when there is none."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise _no_source(fn, "it is not a Python function (no __code__)")
    filename = code.co_filename
    lines = linecache.getlines(filename, getattr(fn, "__globals__", {}))
    if not lines:
        raise _no_source(fn, f"no source text is available for {filename!r}")
    try:
        # From the code object: getsourcelines(fn) would follow __wrapped__ to another function.
        block, first_line = inspect.getsourcelines(code)
    except (OSError, TypeError) as e:
        raise _no_source(fn, f"its source could not be found ({e})") from None
    text = "".join(block)
    dedented = textwrap.dedent(text)
    indent = len(block[0]) - len(block[0].lstrip()) if dedented != text else 0
    if code.co_name == "<lambda>":
        return _lambda_source(fn, filename, block, first_line, lines)
    try:
        module = cst.parse_module(dedented)
    except cst.ParserSyntaxError as e:
        raise _no_source(fn, f"its source does not parse on its own ({e.message})") from None
    node = module.body[0] if module.body else None
    if not isinstance(node, cst.FunctionDef):
        raise _no_source(fn, "its source does not start with a def statement")
    if node.asynchronous is not None:
        raise ConversionError(
            f"laxify cannot convert {fn.__qualname__}: async functions are not supported.",
            Location(filename, first_line, indent, lines[first_line - 1].rstrip("\n")),
            "Convert a synchronous helper it calls instead.",
        )
    return FunctionSource(filename, module, node, first_line, indent, lines, dedented)


def _lambda_source(fn, filename, block, first_line, lines) -> FunctionSource:
    """A lambda: parse its line(s) and pick the lambda whose code starts at the right column.

    The lambda becomes ``def _lambda_(params): return body``, built from its own nodes."""
    raw = "".join(block)
    text = textwrap.dedent(raw)
    removed = len(raw) - len(raw.lstrip(" ")) - (len(text) - len(text.lstrip(" ")))
    # Each attempt with the columns it shifts the first line by (to compare with the file's).
    for attempt, shift in ((text, removed), (text.strip(), len(raw) - len(raw.lstrip())),
                           ("(" + text.strip() + ")", len(raw) - len(raw.lstrip()) - 1)):
        try:
            module = cst.parse_module(attempt)
            break
        except cst.ParserSyntaxError:
            continue
    else:
        raise _no_source(fn, "the line that defines the lambda does not parse on its own")
    lambdas = [n for n in walk(module) if isinstance(n, cst.Lambda)]
    want = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    matching = [n for n in lambdas if [p.name.value for p in n.params.params] == want] or lambdas
    if not matching:
        raise _no_source(fn, "no lambda was found on its line")
    chosen = matching[0]
    if len(matching) > 1:
        # Pick by column: the body's code starts where the lambda's first real instruction does.
        tree = ast.parse(attempt)
        nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)),
                       key=lambda n: (n.lineno, n.col_offset))
        cols = [p[2] for p in fn.__code__.co_positions()
                if p[0] is not None and p[2] is not None and p[3] is not None and p[3] > p[2]]
        col = min(cols, default=None)
        for k, node in enumerate(nodes):  # libcst's order is source order, as `nodes` is
            start = node.body.col_offset + (shift if node.body.lineno == 1 else 0)
            end = (node.body.end_col_offset or 0) + (shift if node.body.end_lineno == 1 else 0)
            if col is not None and start <= col < end:
                if lambdas[k] in matching:
                    chosen = lambdas[k]
                break
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(chosen.body)])])
    fndef = cst.FunctionDef(cst.Name("_lambda_"), chosen.params, body)
    module = cst.Module(body=[fndef])
    # Line 2 of the synthesized def (its return) stands for the lambda's first line.
    return FunctionSource(filename, module, fndef, first_line - 1, 0, lines, module.code)


