"""laxify's warnings are issued for code of every kind on every supported Python: module
globals without a loader (a notebook cell, ``exec``'d text, ``python -c``) made
``warnings.warn_explicit`` raise (ImportError on 3.11, ValueError on 3.13)."""

from __future__ import annotations

import importlib.machinery
import linecache
import types
import warnings

import pytest

from laxify.ir.errors import FallbackWarning, warn_at

CELL = "<laxify-warn-at-cell>"
linecache.cache[CELL] = (12, None, ["x = 1\n", "y = x + 1\n"], CELL)


@pytest.mark.parametrize("module_globals", [
    {"__name__": "__main__"},                                   # exec'd text, a notebook cell
    {"__name__": "__main__", "__spec__": None, "__loader__": None},
    {"__name__": "__main__", "__loader__": importlib.machinery.BuiltinImporter},  # python -c on 3.11
    {"__name__": "cell", "__spec__": types.SimpleNamespace(loader=None)},
    None,
], ids=["bare", "none", "builtin-importer", "spec-without-loader", "no-globals"])
def test_warning_is_issued_at_the_line_whatever_the_globals(module_globals):
    registry: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_at("kept as Python", FallbackWarning, CELL, 2, "__main__", registry, module_globals)
    assert [(w.category, w.filename, w.lineno, str(w.message)) for w in caught] == [
        (FallbackWarning, CELL, 2, "kept as Python")]


def test_warning_as_error_still_raises_the_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with pytest.raises(FallbackWarning, match="kept as Python"):
            warn_at("kept as Python", FallbackWarning, CELL, 2, "__main__", {}, {"__name__": "__main__"})


def test_globals_of_a_module_with_a_loader_give_its_line():
    # A real module: its globals are handed on, and the line shown is the module's.
    import json.decoder as module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_at("here", FallbackWarning, module.__file__, 1, module.__name__, {}, vars(module))
    assert [(w.filename, w.lineno) for w in caught] == [(module.__file__, 1)]


def test_module_and_registry_may_be_left_out():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_at("kept as Python", FallbackWarning, CELL, 1)
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [(CELL, 1, "kept as Python")]
