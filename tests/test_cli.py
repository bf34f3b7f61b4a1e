"""`python -m laxify diff FILE.py::FUNCTION`: the diff, --ir, --html, --explain, --graph,
--signature and the usage errors."""

from __future__ import annotations

import os
import subprocess
import sys
import shutil
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from laxify.cli import main

SOURCE = textwrap.dedent(
    """
    import jax.numpy as jnp
    import laxify


    def halve(x):
        while x.sum() > 1.0:
            x = x / 2
        return x


    class Model:
        def step(self, x):
            if x.sum() > 0:
                x = x - 1
            return x


    @laxify.to_static
    def decorated(x):
        if x > 0:
            x = -x
        return x


    not_a_function = 3
    """
)


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    path = tmp_path / "user_code.py"
    path.write_text(SOURCE)
    return path


def test_diff_prints_unified_diff(module_file, capsys):
    assert main(["diff", f"{module_file}::halve"]) == 0
    out = capsys.readouterr().out
    assert "(original)" in out and "(laxify)" in out
    assert "-    while x.sum() > 1.0:" in out
    assert "_lx.while_loop" in out
    assert "\033[" not in out  # captured stdout is not a terminal: no colour


def test_diff_of_method_and_of_decorated_function(module_file, capsys):
    assert main(["diff", f"{module_file}::Model.step"]) == 0
    assert "-    if x.sum() > 0:" in capsys.readouterr().out  # methods are shown dedented
    assert main(["diff", f"{module_file}::decorated"]) == 0
    out = capsys.readouterr().out
    assert "-    if x > 0:" in out and "_lx.cond" in out


def test_ir_prints_the_ir(module_file, capsys):
    assert main(["diff", f"{module_file}::halve", "--ir"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("func @halve(")
    assert "while(" in out


def test_html_writes_side_by_side_page(module_file, tmp_path, capsys):
    page = tmp_path / "out" / "diff.html"
    page.parent.mkdir()
    assert main(["diff", f"{module_file}::halve", "--html", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "<table" in text and "</table>" in text
    assert "original" in text and "laxify" in text
    assert "x.sum() &gt; <span class='lx-n'>1.0</span>:" in text  # escaped and coloured source
    assert "<span class='lx-k'>while</span>" in text
    assert str(page) in capsys.readouterr().out
    parser = _LinkFinder()
    parser.feed(text)
    assert parser.urls == [] and "http" not in text and "<script" not in text


class _LinkFinder(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]


@pytest.mark.parametrize(
    "target, message",
    [
        ("{dir}/missing.py::halve", "no such file: {dir}/missing.py"),
        ("{file}::nope", "has no attribute 'nope'"),
        ("{file}::Model.nope", "Model has no attribute 'nope'"),
        ("{file}", "expected FILE.py::FUNCTION"),
        ("{file}::", "expected FILE.py::FUNCTION"),
        ("::halve", "expected FILE.py::FUNCTION"),
        ("{file}::not-a-name", "not a function name"),
        ("{file}::not_a_function", "not_a_function is not a Python function"),
    ],
)
def test_usage_errors_exit_2_with_message(module_file, capsys, target, message):
    fill = {"file": module_file, "dir": module_file.parent}
    assert main(["diff", target.format(**fill)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("laxify: error: ")
    assert message.format(**fill) in err


def test_import_error_in_the_file_is_reported(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("import not_a_module_laxify_test\n\ndef f(x):\n    return x\n")
    assert main(["diff", f"{path}::f"]) == 2
    err = capsys.readouterr().err
    assert f"importing {path} failed" in err and "not_a_module_laxify_test" in err


def test_sibling_imports_resolve_and_sys_path_is_restored(tmp_path, capsys):
    (tmp_path / "helper_for_cli_test.py").write_text("SCALE = 2\n")
    path = tmp_path / "uses_helper.py"
    path.write_text("from helper_for_cli_test import SCALE\n\ndef f(x):\n    if x > 0:\n        x = x * SCALE\n    return x\n")
    before = list(sys.path)
    assert main(["diff", f"{path}::f"]) == 0
    assert sys.path == before
    assert "_lx.cond" in capsys.readouterr().out


def test_missing_command_is_an_argparse_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "usage: laxify" in capsys.readouterr().err


def test_python_dash_m_laxify(module_file):
    ok = subprocess.run([sys.executable, "-m", "laxify", "diff", f"{module_file}::halve"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "_lx.while_loop" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "laxify", "diff", f"{module_file}::nope"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "has no attribute 'nope'" in bad.stderr


def test_diff_is_coloured_on_a_terminal_unless_no_color(module_file, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["diff", f"{module_file}::halve"]) == 0
    assert "\033[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org: any non-empty value
    assert main(["diff", f"{module_file}::halve"]) == 0
    out = capsys.readouterr().out
    assert "\033[" not in out and "-    while x.sum() > 1.0:" in out
    monkeypatch.setenv("NO_COLOR", "")  # empty: as if unset
    assert main(["diff", f"{module_file}::halve"]) == 0
    assert "\033[" in capsys.readouterr().out


def test_version(capsys):
    import importlib.metadata

    import laxify

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"laxify {laxify.__version__}\n"
    assert laxify.__version__ == importlib.metadata.version("laxify")


def test_explain_and_signature(module_file, capsys):
    assert main(["diff", f"{module_file}::halve", "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("halve (not specialised")
    assert "line 7 " in out and "while" in out and "lax.while_loop" in out
    assert main(["diff", f"{module_file}::halve", "--explain", "--signature", "f32[3]"]) == 0
    assert "condition depends on x (traced)" in capsys.readouterr().out


def test_ir_with_signature_is_typed(module_file, capsys):
    assert main(["diff", f"{module_file}::Model.step", "--ir", "--signature", "f32[2, 3]"]) == 0
    out = capsys.readouterr().out
    assert "%x.0: float32[2,3]" in out and "bool[]" in out


def test_graph_to_stdout_and_files(module_file, tmp_path, capsys):
    assert main(["diff", f"{module_file}::halve", "--graph", "--signature", "f32[3]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "halve" {') and 'label="while (line 7)"' in out
    dot_file = tmp_path / "g.dot"
    assert main(["diff", f"{module_file}::halve", "--graph", str(dot_file)]) == 0
    assert dot_file.read_text().startswith("digraph")
    svg = tmp_path / "g.svg"
    code = main(["diff", f"{module_file}::halve", "--graph", str(svg)])
    if shutil.which("dot"):
        assert code == 0 and "<svg" in svg.read_text()
    else:
        assert code == 2 and "install Graphviz" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--explain", "--signature", "f32[3"], "bad signature item 'f32[3'"),
        (["--explain", "--signature", "q7[3]"], "unknown dtype 'q7'"),
        (["--explain", "--signature", "f32[a]"], "dimensions must be integers"),
        (["--explain", "--signature", "f32[3], f32[3]"], "the signature does not fit halve"),
        (["--signature", "f32[3]"], "--signature specialises --ir, --explain or --graph"),
        (["--graph", "g.png"], "--graph writes .dot, .gv or .svg files"),
    ],
)
def test_bad_options_are_one_line_errors(module_file, capsys, extra, message):
    assert main(["diff", f"{module_file}::halve", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("laxify: error: ") and message in err
    assert err.count("\n") == 1


def test_console_script_and_errors_through_a_subprocess(module_file, tmp_path):
    script = Path(sys.executable).with_name("laxify")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "laxify"]
    ok = subprocess.run([*command, "diff", f"{module_file}::Model.step", "--explain", "--signature", "f32[3]"],
                        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert ok.returncode == 0, ok.stderr
    assert "if" in ok.stdout and "lax.cond" in ok.stdout and "\033[" not in ok.stdout
    for args, message in [
        ([f"{tmp_path}/missing.py::f"], "no such file"),
        ([f"{module_file}::nope"], "has no attribute 'nope'"),
        ([f"{module_file}::halve", "--ir", "--signature", "x[1]"], "unknown dtype 'x'"),
    ]:
        bad = subprocess.run([*command, "diff", *args], capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2, bad
        assert bad.stderr.startswith("laxify: error: ") and message in bad.stderr
        assert bad.stderr.count("\n") == 1 and bad.stdout == ""


def test_explain_is_coloured_on_a_terminal_unless_no_color(module_file, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["diff", f"{module_file}::halve", "--explain"]) == 0
    assert "\033[32mlax.while_loop" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["diff", f"{module_file}::halve", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "\033[" not in out and "lax.while_loop" in out
