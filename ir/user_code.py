"""Which code is the user's, shared by the transpiler (which calls it routes through the runtime)
and the runtime (which callees it converts).

laxify converts the user's own functions. Code of jax, numpy, flax, equinox, optax, laxify
itself, the standard library and every other installed package is library code: it runs as
written. A file counts as installed when it lies under the interpreter's standard library or
``site-packages`` folders.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types

__all__ = ["is_library_file", "is_library_function", "is_library_module", "is_library_type", "LIBRARY_PACKAGES"]

# Packages that are library code wherever they are installed (an editable checkout included).
LIBRARY_PACKAGES = frozenset({"jax", "jaxlib", "numpy", "scipy", "laxify", "libcst", "flax", "optax",
                              "equinox", "chex", "ml_dtypes", "opt_einsum"})

_LIBRARY_ROOTS = tuple(sorted({
    os.path.normcase(os.path.realpath(p)) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
}))


def _library_package(module_name: str | None) -> bool:
    top = (module_name or "").partition(".")[0]
    return top in LIBRARY_PACKAGES or top in sys.stdlib_module_names


@functools.lru_cache(maxsize=1024)  # file names only: a bounded cache that holds no objects
def is_library_file(filename: str) -> bool:
    """Whether ``filename`` is the file of an installed package or of the standard library."""
    if filename.startswith("<frozen "):
        return True
    if filename.startswith("<"):  # exec'd code, notebook cells, the REPL: the user's
        return False
    return os.path.normcase(os.path.realpath(filename)).startswith(_LIBRARY_ROOTS)


def is_library_module(module: types.ModuleType) -> bool:
    """Whether ``module`` is library code: a module of a library package or of the standard
    library, a file under an installation folder, or a module built into the interpreter."""
    if _library_package(getattr(module, "__name__", None)):
        return True
    filename = getattr(module, "__file__", None)
    if isinstance(filename, str):
        return is_library_file(filename)
    paths = list(getattr(module, "__path__", None) or ())  # a namespace package
    if paths:
        return all(isinstance(p, str) and is_library_file(os.path.join(p, "")) for p in paths)
    # No file: a module built into the interpreter, or the user's own `__main__` (a notebook).
    return getattr(module, "__name__", None) in sys.builtin_module_names


def is_library_function(fn: types.FunctionType) -> bool:
    """Whether the Python function ``fn`` is library code (by its module, then by its file)."""
    if _library_package(getattr(fn, "__module__", None)):
        return True
    return is_library_file(fn.__code__.co_filename)


def is_library_type(cls: type) -> bool:
    """Whether the class ``cls`` is defined by library code (by its module)."""
    module_name = getattr(cls, "__module__", None)
    if _library_package(module_name):
        return True
    module = sys.modules.get(module_name or "")
    return module is not None and is_library_module(module)
