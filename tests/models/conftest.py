"""Makes ``model_tools`` (this folder's helpers) importable from the model tests."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
