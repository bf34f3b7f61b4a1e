"""Suite-wide check of DESIGN §6: no user-facing text names a variable laxify made up.

Every ``ConversionError`` built and every ``FallbackWarning`` issued while the whole suite
runs is recorded; at the end the run fails if any of them names a generated variable (the
runtime handle, a flag, a branch or loop function, the return slot, the factory).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from laxify.ir.errors import ConversionError, FallbackWarning

# Generated names (see laxify.ir.naming): `_lx.`/`_lx1.` calls, `_lx_sites`, flags, branch and
# loop functions, the return slot, cell parameters, temporaries and the factory.
MADE_UP = re.compile(r"\b_lx\d*(\.|_sites\b|_retval\b|_do_return\b|_factory\b|_cell_|_t\d+\b|"
                     r"_(break|continue|item|test|options|subject|arm|if|while|for|for_each)_)")

_SEEN: list[str] = []


def _record(text: str) -> None:
    if MADE_UP.search(text):
        _SEEN.append(text)


@pytest.fixture(autouse=True, scope="session")
def _record_user_facing_text():
    original_init = ConversionError.__init__
    original_warn = warnings.warn_explicit

    def init(self, message, location=None, fix=None):
        original_init(self, message, location, fix)
        _record(str(self))

    def warn_explicit(message, category, *args, **kwargs):
        if isinstance(category, type) and issubclass(category, FallbackWarning):
            _record(str(message))
        return original_warn(message, category, *args, **kwargs)

    ConversionError.__init__ = init
    warnings.warn_explicit = warn_explicit
    try:
        yield
    finally:
        ConversionError.__init__ = original_init
        warnings.warn_explicit = original_warn


def pytest_sessionfinish(session, exitstatus):
    if _SEEN:
        print(f"\n{len(_SEEN)} user-facing messages name a variable laxify made up; the first:\n{_SEEN[0]}")
        session.exitstatus = 1


# Tests that take seconds each, or start processes: `make test-fast` leaves them out (`-m "not
# slow"`). By folder or file, so that a new test there is slow without saying so, and the tests
# elsewhere that measured a second or more (tests/slow_tests.txt).
_SLOW_PARTS = frozenset({"fuzz", "realcode", "notebook", "hostile", "models", "hunt"})
_SLOW_FILES = frozenset({
    "test_samples.py", "test_docs.py", "test_packaging.py", "test_cli.py", "test_disk_cache.py", "test_coverage.py",
    "test_export.py", "test_many_devices.py", "test_gradients.py", "test_seen_text.py", "test_textbook_functions.py",
    "test_integer_functions.py",
})
_SLOW_TESTS = frozenset(
    line.strip() for line in (Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path
        if path.name in _SLOW_FILES or _SLOW_PARTS.intersection(path.parts[-3:-1]) or item.nodeid in _SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
