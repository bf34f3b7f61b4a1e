"""`python -m laxify diff FILE.py::FUNCTION`: the diff, --ir, --html and the usage errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
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
    assert "while x.sum() &gt; 1.0:" in text  # escaped source
    assert str(page) in capsys.readouterr().out


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
