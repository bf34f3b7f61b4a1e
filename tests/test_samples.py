"""Every sample under samples/ runs to completion at its small size (they check themselves
against eager Python and print `OK`); helpers named `_*.py` are not samples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = sorted(p for p in (Path(__file__).resolve().parent.parent / "samples").glob("*.py")
                 if not p.name.startswith("_"))


def test_samples_exist():
    assert "quickstart.py" in {p.name for p in SAMPLES}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_runs(sample: Path, tmp_path):
    result = subprocess.run([sys.executable, str(sample)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"{sample.name} failed:\n{result.stdout}\n{result.stderr}"
    assert "OK" in result.stdout
    assert "FallbackWarning" not in result.stderr, f"{sample.name} fell back to Python:\n{result.stderr}"
