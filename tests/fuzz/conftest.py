"""Makes this folder's modules (``generator``, ``oracle``, ``campaign``) importable from the
fuzz tests, as tests/e2e/conftest.py does for its harness."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
