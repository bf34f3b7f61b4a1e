"""Command line: ``python -m laxify diff path/to/file.py::function [--html FILE | --ir]``."""

from __future__ import annotations

import argparse
import hashlib
import html
import importlib.util
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["main"]

USAGE_ERROR = 2


class CliError(Exception):
    """A user error: printed as ``laxify: error: <message>``, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m laxify`` and of the ``laxify`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except CliError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return USAGE_ERROR


def _parser() -> argparse.ArgumentParser:
    from laxify import __version__

    parser = argparse.ArgumentParser(
        prog="laxify", description="Inspect what laxify does to a function.")
    parser.add_argument("--version", action="version", version=f"laxify {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    diff = commands.add_parser(
        "diff", help="show the original source next to the converted source",
        description="Show the original source of a function next to the source laxify runs.")
    diff.add_argument("target", metavar="FILE.py::FUNCTION",
                      help="a Python file and a function in it (Class.method for a method)")
    output = diff.add_mutually_exclusive_group()
    output.add_argument("--html", metavar="FILE", type=Path,
                        help="write a standalone side-by-side HTML page to FILE")
    output.add_argument("--ir", action="store_true", help="print the typed SSA IR instead of the diff")
    diff.set_defaults(run=_diff_command)
    return parser


def _diff_command(args: argparse.Namespace) -> int:
    import laxify

    fn = load_target(args.target)
    static = laxify.to_static(fn)
    try:
        if args.ir:
            print(static.ir())
        elif args.html is not None:
            page = _html_page(args.target, static.diff()._repr_html_())
            try:
                args.html.write_text(page, encoding="utf-8")
            except OSError as e:
                raise CliError(f"cannot write {args.html}: {e.strerror or e}") from e
            print(f"wrote {args.html}")
        else:
            print(static.diff().unified(color=use_color(sys.stdout)))
    except laxify.ConversionError as e:
        print(f"laxify: cannot convert {args.target}:\n{e}", file=sys.stderr)
        return 1
    return 0


def use_color(stream) -> bool:
    """ANSI colour only on a terminal, and never when ``NO_COLOR`` is set to a non-empty value
    (https://no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return not os.environ.get("NO_COLOR") and isatty is not None and isatty()


def load_target(target: str) -> Callable:
    """The function named by ``path/to/file.py::name`` (``name`` may be dotted: ``Class.method``)."""
    path_text, sep, name = target.rpartition("::")
    if not sep or not path_text or not name:
        raise CliError(f"expected FILE.py::FUNCTION, got {target!r}")
    path = Path(path_text)
    if not path.is_file():
        raise CliError(f"no such file: {path_text}")
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise CliError(f"not a function name: {name!r} (expected FUNCTION or Class.method)")

    module = _import_file(path)
    obj: Any = module
    for depth, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            owner = path_text if depth == 0 else ".".join(parts[:depth])
            raise CliError(f"{owner} has no attribute {part!r}") from None
    return _unwrap(obj, name)


def _import_file(path: Path) -> types.ModuleType:
    """Import ``path`` as a fresh module with a unique name, its folder first on ``sys.path``."""
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    module_name = f"_laxify_cli_{resolved.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(resolved.parent))  # so that the file's sibling imports resolve
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(module_name, None)
        detail = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        raise CliError(f"importing {path} failed:\n{detail.rstrip()}") from e
    finally:
        sys.path.remove(str(resolved.parent))
    return module


def _unwrap(obj: Any, name: str) -> Callable:
    from laxify.api import StaticFunction

    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, StaticFunction):
        obj = obj.python_function
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
        if isinstance(obj, StaticFunction):
            obj = obj.python_function
    if not isinstance(obj, types.FunctionType):
        raise CliError(f"{name} is not a Python function (it is {type(obj).__name__})")
    return obj


def _html_page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>laxify diff: {html.escape(title)}</title></head>\n"
        f"<body><h3>laxify diff: <code>{html.escape(title)}</code></h3>\n{body}\n</body></html>\n"
    )
