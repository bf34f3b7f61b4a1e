"""Command line: ``python -m laxify diff path/to/file.py::function`` with ``--html FILE``,
``--ir``, ``--explain`` or ``--graph [FILE]``, and ``--signature "f32[3], i32[]"`` to specialise."""

from __future__ import annotations

import argparse
import ast
import hashlib
import html
import importlib.util
import inspect
import os
import re
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
    except BrokenPipeError:  # `laxify diff ... | head`: the reader has gone, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except CliError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return USAGE_ERROR


def _parser() -> argparse.ArgumentParser:
    from laxify import __version__

    parser = argparse.ArgumentParser(prog="laxify", description="Inspect what laxify does to a function.")
    parser.add_argument("--version", action="version", version=f"laxify {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    diff = commands.add_parser(
        "diff",
        help="show the original source next to the converted source",
        description="Show the original source of a function next to the source laxify runs.",
    )
    diff.add_argument(
        "target", metavar="FILE.py::FUNCTION", help="a Python file and a function in it (Class.method for a method)"
    )
    output = diff.add_mutually_exclusive_group()
    output.add_argument("--html", metavar="FILE", type=Path, help="write a standalone side-by-side HTML page to FILE")
    output.add_argument("--ir", action="store_true", help="print the typed SSA IR instead of the diff")
    output.add_argument("--explain", action="store_true", help="print what laxify made of each construct, and why")
    output.add_argument(
        "--graph",
        metavar="FILE",
        nargs="?",
        const="-",
        help="the dataflow graph as Graphviz DOT on stdout, or written to FILE "
        "(.dot/.gv: DOT text; .svg: rendered, needs Graphviz's dot)",
    )
    diff.add_argument(
        "--signature",
        metavar="SPEC",
        help="specialise --ir, --explain and --graph to these arguments: array "
        'types like "f32[3], i32[]" (dtype[dims]) or Python literals for '
        'static arguments ("f32[2,3], 10")',
    )
    diff.set_defaults(run=_diff_command)
    return parser


def _diff_command(args: argparse.Namespace) -> int:
    import laxify

    if args.signature is not None and not (args.ir or args.explain or args.graph):
        raise CliError("--signature specialises --ir, --explain or --graph; add one of them")
    specs = parse_signature(args.signature) if args.signature is not None else None
    fn, owner = _load(args.target)
    if specs is not None and owner is not None:
        specs = _bind_receiver(owner, specs, args.target)
    static = laxify.to_static(fn)
    try:
        if args.ir:
            print(_specialised(static.ir, specs, args.target))
        elif args.explain:
            print(_specialised(static.explain, specs, args.target).text(color=use_color(sys.stdout)))
        elif args.graph is not None:
            _write_graph(_specialised(static.graph, specs, args.target), args.graph)
        elif args.html is not None:
            page = _html_page(args.target, static.diff()._repr_html_())
            _write(args.html, page)
            print(f"wrote {args.html}")
        else:
            print(static.diff().unified(color=use_color(sys.stdout)))
    except laxify.ConversionError as e:
        print(f"laxify: cannot convert {args.target}:\n{e}", file=sys.stderr)
        return 1
    return 0


def _bind_receiver(owner: tuple[type, str], specs: list, target: str) -> list:
    """A method's signature names the arguments after ``self``/``cls``: put the receiver first
    (an instance made with ``Class()``)."""
    cls, binding = owner
    if binding == "static":
        return specs
    if binding == "class":
        return [cls, *specs]
    try:
        instance = cls()
    except Exception as e:
        raise CliError(
            f"--signature on the method {target.rpartition('::')[2]} needs an instance, and "
            f"{cls.__name__}() failed ({type(e).__name__}: {e}); specialise a function "
            "that takes the object as an argument instead"
        ) from None
    return [instance, *specs]


def _specialised(method: Callable, specs: list | None, target: str) -> Any:
    if specs is None:
        return method()
    try:
        return method(*specs)
    except TypeError as e:
        raise CliError(f"the signature does not fit {target.rpartition('::')[2]}: {e}") from e


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror or e}") from e


def _write_graph(graph, target: str) -> None:
    from laxify.graph import GraphvizMissing

    if target == "-":
        print(graph, end="")
        return
    path = Path(target)
    if path.suffix.lower() == ".svg":
        try:
            text = graph.svg()
        except GraphvizMissing:
            raise CliError(
                "writing SVG needs Graphviz's `dot` program (install Graphviz), "
                f"or write DOT text: --graph {path.with_suffix('.dot')}"
            ) from None
        except RuntimeError as e:
            raise CliError(str(e)) from e
    elif path.suffix.lower() in (".dot", ".gv"):
        text = str(graph)
    else:
        raise CliError(f"--graph writes .dot, .gv or .svg files, not {path.name!r}")
    _write(path, text)
    print(f"wrote {path}")


_DTYPES = {
    "bool": "bool",
    "b1": "bool",
    "pred": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
}
_ARRAY = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*)\s*\[([^\]]*)\]\s*")


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets, parentheses and braces."""
    items, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def parse_signature(text: str) -> list:
    """``"f32[3], i32[], 10"`` -> ``[ShapeDtypeStruct((3,), float32), ShapeDtypeStruct((), int32), 10]``."""
    import jax
    import numpy as np

    items = _split_top_level(text)
    if items == [""]:
        return []
    specs = []
    for item in items:
        m = _ARRAY.fullmatch(item)
        if m is not None:
            name, dims = m.group(1).lower(), m.group(2).strip()
            dtype = _DTYPES.get(name, name)
            try:
                np_dtype = jax.numpy.dtype(dtype)
            except TypeError:
                raise CliError(
                    f"bad signature item {item!r}: unknown dtype {m.group(1)!r} "
                    "(use f32, i32, bool, bf16, ... or a NumPy dtype name)"
                ) from None
            try:
                shape = tuple(int(d) for d in dims.split(",")) if dims else ()
            except ValueError:
                raise CliError(f"bad signature item {item!r}: dimensions must be integers, as in f32[2,3]") from None
            if any(d < 0 for d in shape):
                raise CliError(f"bad signature item {item!r}: dimensions must not be negative")
            specs.append(jax.ShapeDtypeStruct(shape, np.dtype(np_dtype)))
            continue
        try:
            specs.append(ast.literal_eval(item))
        except (ValueError, SyntaxError):
            raise CliError(
                f"bad signature item {item!r}: expected an array type such as f32[3] or "
                "i32[], or a Python literal for a static argument"
            ) from None
    return specs


def use_color(stream) -> bool:
    """ANSI colour only on a terminal, and never when ``NO_COLOR`` is set to a non-empty value
    (https://no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return not os.environ.get("NO_COLOR") and isatty is not None and isatty()


def load_target(target: str) -> Callable:
    """The function named by ``path/to/file.py::name`` (``name`` may be dotted: ``Class.method``)."""
    return _load(target)[0]


def _load(target: str) -> tuple[Callable, Any]:
    """The function named by ``target``, and the object it was found on (a class for a method)."""
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
    owner: Any = None
    for depth, part in enumerate(parts):
        try:
            owner = obj
            obj = inspect.getattr_static(obj, part) if isinstance(obj, type) else getattr(obj, part)
        except AttributeError:
            where = path_text if depth == 0 else ".".join(parts[:depth])
            raise CliError(f"{where} has no attribute {part!r}") from None
    binding = "static" if isinstance(obj, staticmethod) else "class" if isinstance(obj, classmethod) else "self"
    fn = _unwrap(obj, name)
    return fn, (owner, binding) if isinstance(owner, type) else None


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
