"""Which code is the user's, shared by the transpiler (which calls it routes through the runtime)
and the runtime (which callees it converts).

Library code is code of the standard library or of an installed package (a file under the
interpreter's standard library or ``site-packages`` folders, or a package of
``LIBRARY_PACKAGES``). Which functions a converted function's calls convert
(:func:`converts_calls_of`):

- the user's own functions: converted;
- libraries written for arrays and tracers (``ARRAY_PACKAGES``: jax, numpy, scipy, flax,
  equinox, optax, laxify itself, ...) and functions without Python source (C): called as they
  are;
- other installed pure-Python packages (an algorithm collection, a helper library):
  converted like user code, so that a traced ``if`` in a helper works as in the caller;
- the standard library: its pure-Python numeric modules (``STDLIB_CONVERTED``: ``colorsys``,
  ``statistics``, ``bisect``, ``heapq``, ``fractions``) are converted; the rest (``logging``,
  ``functools``, ``copy``, ``dataclasses``, ...) is infrastructure that runs as written.

``laxify.keep_packages(...)`` and ``laxify.convert_packages(...)`` move a package (by its
top-level name) to either side.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types

__all__ = [
    "ARRAY_PACKAGES",
    "STDLIB_CONVERTED",
    "converts_calls_of",
    "behind_laxify_wrappers",
    "convert_packages",
    "keep_packages",
    "keeps_module",
    "names_a_traced_value",
    "raised_by_array_library",
    "is_library_file",
    "is_library_function",
    "is_library_module",
    "is_library_type",
    "LIBRARY_PACKAGES",
]

# Packages that are library code wherever they are installed (an editable checkout included).
LIBRARY_PACKAGES = frozenset(
    {
        "jax",
        "jaxlib",
        "numpy",
        "scipy",
        "laxify",
        "libcst",
        "flax",
        "optax",
        "equinox",
        "chex",
        "ml_dtypes",
        "opt_einsum",
    }
)

# Libraries that handle tracers themselves (or tooling that never computes on arrays): a call of
# one of their functions runs as written.
ARRAY_PACKAGES = LIBRARY_PACKAGES | frozenset(
    {
        "haiku",
        "diffrax",
        "lineax",
        "optimistix",
        "jaxtyping",
        "orbax",
        "distrax",
        "numpyro",
        "blackjax",
        "jraph",
        "tensorflow",
        "tensorflow_probability",
        "torch",
        "pandas",
        "typing_extensions",
        "pytest",
        "_pytest",
        "pluggy",
        "hypothesis",
        "IPython",
        "ipykernel",
        "tqdm",
        "absl",
    }
)

# The standard library's pure-Python numeric modules, converted when converted code calls them.
STDLIB_CONVERTED = frozenset({"colorsys", "statistics", "bisect", "heapq", "fractions"})

# The user's choices (laxify.keep_packages / laxify.convert_packages), by top-level name.
_kept: set[str] = set()
_converted: set[str] = set()


def keep_packages(*names: str) -> None:
    """Calls of functions of these packages (top-level names) run as written from now on:
    they handle traced values themselves. Functions converted before keep their decision."""
    _check_names(names)
    _kept.update(names)
    _converted.difference_update(names)
    _decide.cache_clear()


def convert_packages(*names: str) -> None:
    """Functions of these packages (top-level names: a standard-library module such as
    ``"textwrap"``, an installed package) are converted when converted code calls them."""
    _check_names(names)
    _converted.update(names)
    _kept.difference_update(names)
    _decide.cache_clear()


def _check_names(names) -> None:
    for name in names:
        if not isinstance(name, str) or not name or "." in name:
            raise TypeError(f"expected top-level package names such as 'mypackage', got {name!r}")


def _top(module_name: str | None) -> str:
    return (module_name or "").partition(".")[0]


@functools.lru_cache(maxsize=4096)  # names only: a bounded cache that holds no objects
def _decide(module_name: str, filename: str) -> bool:
    """Whether a Python function of ``module_name`` defined in ``filename`` is converted."""
    top = _top(module_name)
    if top in _converted:
        return True
    if top in _kept or top in ARRAY_PACKAGES:
        return False
    if top in sys.stdlib_module_names:
        return top in STDLIB_CONVERTED
    if filename.startswith("<frozen "):
        return False
    return True  # the user's code, or an installed pure-Python package


def behind_laxify_wrappers(value):
    """``value`` with laxify's own wrappers taken off (a ``to_static`` function, a
    ``loop_options`` copy: their ``__wrapped__``); another library's wrapper (a cache,
    ``jax.jit``) is ``value`` itself, which calls what it calls."""
    for _ in range(4):
        if type(value) is types.FunctionType or not type(value).__module__.startswith("laxify."):
            return value
        value = getattr(value, "__wrapped__", None)
    return value


def converts_calls_of(fn: types.FunctionType) -> bool:
    """Whether converted code converts the Python function ``fn`` when it calls it."""
    return _decide(getattr(fn, "__module__", None) or "", fn.__code__.co_filename)


def keeps_module(module: types.ModuleType) -> bool:
    """Whether calls of ``module``'s attributes (``jnp.sum(x)``, ``math.floor(x)``) certainly
    run as written: a module of a package kept as written, a module without Python source
    (built in, an extension), or a standard-library module that is not converted."""
    name = getattr(module, "__name__", None) or ""
    filename = getattr(module, "__file__", None)
    if not isinstance(filename, str):
        paths = list(getattr(module, "__path__", None) or ())
        if not paths:  # built into the interpreter, or the user's `__main__` (a notebook)
            return name in sys.builtin_module_names
        filename = os.path.join(str(paths[0]), "")
    if not filename.endswith((".py", os.sep)):
        return True  # an extension module: C functions
    return not _decide(name, filename)


_LIBRARY_ROOTS = tuple(
    sorted(
        {
            os.path.normcase(os.path.realpath(p)) + os.sep
            for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        }
    )
)


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


# Words of JAX's errors about a traced value given where only a concrete one works (a traced
# slice bound: "Slice entries must be static integers", ...), as opposed to its errors about
# shapes or indices that Python's eager run would raise too.
_TRACER_WORDS = ("tracer", "static", "concrete", "abstract")


def names_a_traced_value(error: BaseException) -> bool:
    """Whether ``error``'s text says that a traced value was given where a concrete one is needed."""
    text = str(error).lower()
    return any(word in text for word in _TRACER_WORDS)


def raised_by_array_library(error: BaseException) -> bool:
    """Whether ``error`` is JAX's refusal of a traced value: raised inside jax (the innermost
    frame of its traceback; a builtin ``IndexError`` or ``TypeError`` there, never Python's own
    error on the user's line), with a text about a traced value."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_globals.get("__name__") or ""
    return name.partition(".")[0] in ("jax", "jaxlib") and names_a_traced_value(error)
