"""Every sample under samples/ runs to completion (they check themselves against eager Python)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "samples").glob("*.py"))


def test_samples_exist():
    assert "quickstart.py" in {p.name for p in SAMPLES}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_runs(sample: Path, tmp_path):
    result = subprocess.run([sys.executable, str(sample)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"
    assert "OK" in result.stdout
