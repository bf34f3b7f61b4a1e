"""Makes ``harness`` (the differential helper of tests/e2e) importable from the composition tests."""

import sys
from pathlib import Path

_E2E = str(Path(__file__).resolve().parent.parent / "e2e")
if _E2E not in sys.path:
    sys.path.insert(0, _E2E)
