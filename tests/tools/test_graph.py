"""f.graph(*args): Graphviz DOT of the IR's dataflow; SVG only where Graphviz is installed."""

from __future__ import annotations

import re
import shutil
import textwrap

import jax
import numpy as np
import pytest

from laxify.graph import Graph, GraphvizMissing

F0 = jax.ShapeDtypeStruct((), np.float32)
F3 = jax.ShapeDtypeStruct((3,), np.float32)


def test_dot_golden(static):
    assert str(static("tiny").graph(F0)) == textwrap.dedent("""\
        digraph "tiny" {
          label="tiny, line 56"; labelloc=t; fontname=Helvetica;
          node [fontname=Helvetica, fontsize=10]; edge [fontname=Helvetica, fontsize=9];
          n1 [label="x: float32[]", shape=invhouse, style=filled, fillcolor=lightyellow];
          n2 [label="x > 0  (line 57)", shape=box];
          subgraph cluster_n4 {
            label="if (line 57)"; style=rounded; color=steelblue;
            n3 [label="cond", shape=doubleoctagon, color=steelblue];
            subgraph cluster_n5 {
              label="true"; style=dashed; color=gray50;
              n6 [label="x: float32[]", shape=ellipse, style=filled, fillcolor=gray95];
              n7 [label="x = -x  (line 58)", shape=box];
              n8 [label="yield", shape=plaintext];
            }
            subgraph cluster_n9 {
              label="false"; style=dashed; color=gray50;
              n10 [label="x: float32[]", shape=ellipse, style=filled, fillcolor=gray95];
              n11 [label="yield", shape=plaintext];
            }
          }
          n12 [label="x  (line 59)", shape=box];
          n13 [label="return  (line 59)", shape=octagon];
          n1 -> n2 [label="x: float32[]"];
          n2 -> n3 [label="t0: bool[]"];
          n1 -> n3 [label="x: float32[]"];
          n6 -> n7 [label="x: float32[]"];
          n7 -> n8 [label="x: float32[]"];
          n3 -> n6 [style=dotted, arrowhead=none];
          n8 -> n3 [style=dotted, constraint=false];
          n10 -> n11 [label="x: float32[]"];
          n3 -> n10 [style=dotted, arrowhead=none];
          n11 -> n3 [style=dotted, constraint=false];
          n3 -> n12 [label="x: float32[]"];
          n12 -> n13 [label="t1: float32[]"];
        }
        """)


def test_regions_are_nested_clusters_with_the_users_lines(static):
    dot = str(static("search").graph(F3))
    labels = re.findall(r'label="([^"]*\(line \d+\))"; style=rounded', dot)
    assert labels == ["for (line 19)", "guard: not break? (line 19)", "if (line 20)",
                      "guard: not break? (line 20)"]
    assert "_lx" not in dot
    # Every edge joins nodes that exist.
    nodes = set(re.findall(r"^\s*(n\d+) \[", dot, re.M))
    for a, b in re.findall(r"^\s*(n\d+) -> (n\d+)", dot, re.M):
        assert a in nodes and b in nodes


def test_unspecialised_graph_and_balanced_braces(static, code):
    for name in ("counter", "search", "branches", "dispatch", "prefix_sums", "tiny"):
        dot = str(static(name).graph())
        assert dot.startswith(f'digraph "{name}" {{') and dot.count("{") == dot.count("}"), name
        assert "_lx" not in dot, name


def test_svg_without_graphviz_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    graph = Graph('digraph "g" { a -> b; }\n')
    with pytest.raises(GraphvizMissing, match="install Graphviz"):
        graph.svg()
    assert graph._repr_svg_() is None  # notebooks fall back to the text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_svg_renders_with_graphviz(static, tmp_path):
    graph = static("search").graph(F3)
    svg = graph._repr_svg_()
    assert svg is not None and "<svg" in svg and "for (line 19)" in svg
    assert graph.save(tmp_path / "g.svg").read_text().count("<svg") == 1
    assert graph.save(tmp_path / "g.dot").read_text() == str(graph)
