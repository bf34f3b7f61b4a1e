"""coverage.py's branch measurement on converted code (``coverage run --branch``, in a subprocess).

A traced ``if`` or loop runs all its branches' code while tracing (``lax.cond`` traces both
branches), so the arcs of every traced branch count as covered; a Python ``if`` on a static
value counts the branch taken, as usual. The known limits are in docs/semantics.md ("Coverage").
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("coverage")

MODULE = '''\
import jax.numpy as jnp
import laxify


@laxify.to_static
def branches(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    while y.sum() > 1:
        y = y / 2
    return y


@laxify.to_static
def loops(x, n):
    total = jnp.zeros(())
    for i in range(n):
        if x[i] > 0:
            total = total + x[i]
    for v in x:
        total = total + v
    if n > 100:
        total = total * 0
    return total


@laxify.to_static
def chain(x):
    s = x.sum()
    if s > 10:
        y = x * 3
    elif s > 0:
        y = x * 2
    else:
        y = -x
    return y


def plain(x):
    if x > 0:
        return 1
    return 2


branches(jnp.ones(3))
loops(jnp.ones(4), 4)
chain(jnp.ones(3))
plain(1)
'''


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("coverage")
    (folder / "user_module.py").write_text(MODULE)
    run = [sys.executable, "-m", "coverage"]
    subprocess.run([*run, "run", "--branch", "--include=user_module.py", "user_module.py"],
                   cwd=folder, check=True, capture_output=True, timeout=300)
    subprocess.run([*run, "json", "-o", "report.json"], cwd=folder, check=True, capture_output=True, timeout=120)
    return json.loads((folder / "report.json").read_text())["files"]["user_module.py"]


def line_of(text: str, start: int = 0) -> int:
    return MODULE.splitlines().index(text, start) + 1


def test_both_branches_of_a_traced_if_are_covered(measured):
    if_line = line_of("    if x.sum() > 0:")
    assert [if_line, if_line + 1] in measured["executed_branches"]
    assert [if_line, if_line + 3] in measured["executed_branches"]


def test_a_traced_while_enters_its_body_and_exits(measured):
    while_line = line_of("    while y.sum() > 1:")
    assert [while_line, while_line + 1] in measured["executed_branches"]
    assert [while_line, while_line + 2] in measured["executed_branches"]


def test_loops_converted_to_scans_and_their_ifs_are_covered(measured):
    for_line = line_of("    for i in range(n):")
    each_line = line_of("    for v in x:")
    executed = measured["executed_branches"]
    assert [for_line, for_line + 1] in executed and [for_line, each_line] in executed
    assert [for_line + 1, for_line + 2] in executed and [for_line + 1, for_line] in executed
    assert [each_line, each_line + 1] in executed


def test_every_arm_of_a_traced_elif_chain_is_covered(measured):
    if_line, elif_line = line_of("    if s > 10:"), line_of("    elif s > 0:")
    executed = measured["executed_branches"]
    assert [if_line, if_line + 1] in executed and [if_line, elif_line] in executed
    assert [elif_line, elif_line + 1] in executed and [elif_line, elif_line + 3] in executed


def test_only_the_branches_not_run_are_missing(measured):
    static_if = line_of("    if n > 100:")
    plain_else = line_of("    return 2")
    assert measured["missing_branches"] == [[static_if, static_if + 1], [line_of("    if x > 0:"), plain_else]]
    assert measured["missing_lines"] == [static_if + 1, plain_else]
