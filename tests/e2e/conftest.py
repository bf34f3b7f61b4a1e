"""Makes ``harness`` (this folder's differential test helper) importable from the e2e tests."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
