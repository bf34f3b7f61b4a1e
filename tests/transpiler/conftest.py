"""Makes ``golden`` (this folder's golden-test helper) and ``harness`` (the differential
helper of tests/e2e) importable from the converter tests."""

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _folder in (_HERE, _HERE.parent / "e2e"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

# A failed golden comparison shows the two sources and their diff.
pytest.register_assert_rewrite("golden")
