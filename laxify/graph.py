"""``f.graph()``: the IR's dataflow as a Graphviz picture.

Ops are nodes and values are edges (labelled with the user's name and, once specialised, the
type); the regions of ``cond``/``while``/``for``/``scan`` are nested clusters labelled with the
construct and the user's line. ``str()`` is DOT text; SVG needs Graphviz's ``dot`` program
(install Graphviz; it is never a hard dependency).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from laxify.ir import CondOp, ForRangeOp, Function, PyOp, ScanOp, TryOp, WhileOp, WithOp
from laxify.ir.core import Op, Region, Value
from laxify.ir.naming import DEFAULT_PREFIX, users_words
from laxify.ir.ops.terminators import YieldOp
from laxify.ir.types import Unknown

__all__ = ["Graph", "GraphvizMissing", "to_dot"]

MAX_LABEL = 48


class GraphvizMissing(RuntimeError):
    """Rendering needs the ``dot`` program of Graphviz, which is not on PATH."""


@dataclass
class Graph:
    """A function's dataflow graph: ``str()`` is DOT, :meth:`svg` renders it with Graphviz."""

    dot: str

    def __str__(self) -> str:
        return self.dot

    def __repr__(self) -> str:
        return self.dot

    def svg(self) -> str:
        """The picture as SVG text, rendered by Graphviz's ``dot`` program."""
        exe = shutil.which("dot")
        if exe is None:
            raise GraphvizMissing(
                "rendering the graph needs Graphviz's `dot` program, which is not on PATH: install "
                "Graphviz (apt install graphviz, brew install graphviz, conda install graphviz), "
                "or use str(graph) for the DOT text"
            )
        done = subprocess.run([exe, "-Tsvg"], input=self.dot, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"dot failed: {done.stderr.strip()}")
        return done.stdout

    def _repr_svg_(self) -> str | None:
        """SVG in notebooks when Graphviz is installed (None: the notebook shows the text)."""
        try:
            return self.svg()
        except (GraphvizMissing, RuntimeError, OSError, subprocess.SubprocessError):
            return None

    def save(self, path: str | Path) -> Path:
        """Write ``path``: DOT text for ``.dot``/``.gv``, a rendered picture for ``.svg``."""
        path = Path(path)
        path.write_text(self.svg() if path.suffix.lower() == ".svg" else self.dot, encoding="utf-8")
        return path


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Namer:
    """The user's words for laxify's generated names (labels never show ``_lx...``)."""

    def __init__(self, prefix: str):
        p = re.escape(prefix)
        self._rules = [
            (re.compile(rf"\b{p}_break_\d+\b"), "break?"),
            (re.compile(rf"\b{p}_continue_\d+\b"), "continue?"),
            (re.compile(rf"\b{p}_do_return\b"), "returned?"),
            (re.compile(rf"\b{p}_retval\b"), "return value"),
            (re.compile(rf"\b{p}_item_\d+\b"), "item"),
            (re.compile(rf"\b{p}_subject_\d+\b"), "subject"),
            (re.compile(rf"\b{p}_arm_\d+\b"), "case"),
            (re.compile(rf"\b{p}\.not_(?:raised)?\(([^()]*)\)"), r"not \1"),
            (re.compile(rf"\b{p}\."), ""),
            (re.compile(rf"\b{p}_[A-Za-z]+_?\d*\b"), "tmp"),
        ]

    def __call__(self, text: str) -> str:
        text = users_words(text)
        for pattern, words in self._rules:
            text = pattern.sub(words, text)
        return text


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


_CONSTRUCT = {WhileOp: "while", ForRangeOp: "for", ScanOp: "for", TryOp: "try", WithOp: "with"}


def _region_names(op: Op) -> list[str]:
    if isinstance(op, CondOp):
        m = op.num_tests
        if m:
            return [f"elif test {k + 1}" for k in range(m)] + ["if"] + [f"elif {k + 1}" for k in range(m)] + ["else"]
        if len(op.regions) == 2:
            return ["true", "false"]
        return [f"case {k}" for k in range(len(op.regions))]
    if isinstance(op, WhileOp):
        return ["condition", "body"]
    if isinstance(op, TryOp):
        return ["try", "handlers", "else", "finally"][: len(op.regions)] + [
            f"region {k}" for k in range(4, len(op.regions))
        ]
    return ["body"] + [f"region {k}" for k in range(1, len(op.regions))]


class _Dot:
    def __init__(self, fn: Function):
        self.name = _Namer(fn.attributes.get("prefix", DEFAULT_PREFIX))
        self.lines: list[str] = []
        self.source: dict[int, str] = {}  # id(value) -> node that produces it
        self.defining: dict[int, Op] = {}  # id(value) -> op that produces it
        self.edges: list[str] = []  # emitted last, at top level: an edge in a cluster pulls its nodes in
        self.prefix = fn.attributes.get("prefix", DEFAULT_PREFIX)
        self.count = 0
        self.fn = fn

    def node_id(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def value_label(self, v: Value) -> str:
        name = self.name(v.hint) if v.hint else f"t{v.version}"
        return name if isinstance(v.type, Unknown) else f"{name}: {v.type}"

    def edge(self, v: Value, target: str, pad: str, style: str = "") -> None:
        src = self.source.get(id(v))
        if src is None:
            return
        attrs = f"label={_quote(self.value_label(v))}" + (f", {style}" if style else "")
        self.edges.append(f"  {src} -> {target} [{attrs}];")

    def op_label(self, op: Op) -> str:
        line = f"  (line {op.span.line})" if op.span else ""
        if isinstance(op, PyOp):
            return _short(self.name(op.code)) + line
        if isinstance(op, CondOp) and op.num_tests:
            return f"cond ({op.num_tests + 2} arms)"
        return op.name if op.regions else op.name + line

    def region(self, region: Region, label: str, depth: int) -> tuple[list[str], list[str]]:
        """Emit ``region`` as a cluster; return its argument nodes and its yield nodes."""
        pad = "  " * depth
        self.lines.append(f"{pad}subgraph cluster_{self.node_id()} {{")
        self.lines.append(f"{pad}  label={_quote(label)}; style=dashed; color=gray50;")
        args = []
        for arg in region.args:
            nid = self.node_id()
            args.append(nid)
            self.source[id(arg)] = nid
            self.lines.append(
                f"{pad}  {nid} [label={_quote(self.value_label(arg))}, shape=ellipse, style=filled, fillcolor=gray95];"
            )
        yields = []
        for op in region.ops:
            nid = self.op(op, depth + 1)
            if isinstance(op, YieldOp):
                yields.append(nid)
        self.lines.append(f"{pad}}}")
        return args, yields

    def op(self, op: Op, depth: int) -> str:
        pad = "  " * depth
        nid = self.node_id()
        if not op.regions:
            shape = "box" if isinstance(op, PyOp) else "plaintext" if isinstance(op, YieldOp) else "octagon"
            self.lines.append(f"{pad}{nid} [label={_quote(self.op_label(op))}, shape={shape}];")
            for v in op.operands:
                self.edge(v, nid, pad)
            for r in op.results:
                self.source[id(r)] = nid
                self.defining[id(r)] = op
            return nid
        line = f" (line {op.span.line})" if op.span else ""
        construct = self.construct(op)
        self.lines.append(f"{pad}subgraph cluster_{self.node_id()} {{")
        self.lines.append(f"{pad}  label={_quote(f'{construct}{line}')}; style=rounded; color=steelblue;")
        self.lines.append(f"{pad}  {nid} [label={_quote(self.op_label(op))}, shape=doubleoctagon, color=steelblue];")
        for v in op.operands:
            self.edge(v, nid, pad + "  ")
        for region, label in zip(op.regions, _region_names(op)):
            args, yields = self.region(region, label, depth + 1)
            for arg in args:
                self.edges.append(f"  {nid} -> {arg} [style=dotted, arrowhead=none];")
            for y in yields:
                self.edges.append(f"  {y} -> {nid} [style=dotted, constraint=false];")
        self.lines.append(f"{pad}}}")
        for r in op.results:
            self.source[id(r)] = nid
            self.defining[id(r)] = op
        return nid

    def construct(self, op: Op) -> str:
        """How a region op's cluster is titled: the user's construct, or the guard laxify made."""
        if not isinstance(op, CondOp):
            return _CONSTRUCT.get(type(op), op.name)
        sel = self.defining.get(id(op.selector))
        if op.attributes.get("return_guard") or (
            isinstance(sel, PyOp)
            and sel.code.startswith((f"{self.prefix}.not_(", f"{self.prefix}.not_raised("))
            and not op.num_tests
        ):
            return f"guard: {self.name(sel.code)}" if isinstance(sel, PyOp) else "guard"
        return "if/elif" if op.num_tests else "if"

    def build(self) -> str:
        fn = self.fn
        title = f"{fn.name}, line {fn.span.line}" if fn.span else fn.name
        self.lines = [
            f"digraph {_quote(fn.name)} {{",
            f"  label={_quote(title)}; labelloc=t; fontname=Helvetica;",
            "  node [fontname=Helvetica, fontsize=10]; edge [fontname=Helvetica, fontsize=9];",
        ]
        for p in fn.params:
            nid = self.node_id()
            self.source[id(p)] = nid
            self.lines.append(
                f"  {nid} [label={_quote(self.value_label(p))}, shape=invhouse, style=filled, fillcolor=lightyellow];"
            )
        for op in fn.body.ops:
            self.op(op, 1)
        self.lines.extend(self.edges)
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


def to_dot(fn: Function) -> str:
    """The dataflow graph of ``fn`` as Graphviz DOT text."""
    return _Dot(fn).build()
