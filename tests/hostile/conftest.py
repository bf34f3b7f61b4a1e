"""Makes ``hostile_sources`` (this folder) and ``harness`` (tests/e2e) importable from the
hostile-input tests."""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE), str(_HERE.parent / "e2e")):
    if _path not in sys.path:
        sys.path.insert(0, _path)
