"""An optional on-disk cache of conversions, shared by processes (opt-in: ``LAXIFY_CACHE_DIR``
or :func:`set_cache_dir`).

One file per conversion, named by a SHA-256 key of everything the conversion depends on:

- laxify's version and a fingerprint of its own source files (their paths, sizes and
  modification times: a changed laxify never reads an older laxify's output);
- the Python implementation and bytecode version (``sys.implementation.cache_tag`` and
  ``importlib.util.MAGIC_NUMBER``: the code is stored as ``marshal`` data);
- the text of the file the function is in (as ``linecache`` holds it) and its file name;
- the function's code object: its operations, names, constants, line table, first line and
  qualified name, nested code included (so that text edited after import, which the
  conversion refuses, is never paired with code it did not come from);
- for each global name the function reads, what the conversion decides from its value
  (whether a call of it runs library code, whether it is a module or class of a library).

A file holds one line of JSON (the lowered source's lines, its runtime sites, the names
closures capture, whether constructs stay Python) and then the compiled code object as
``marshal`` data, the format of CPython's own ``.pyc`` files. Like a ``.pyc`` file, it is
trusted: loading it runs code, so the directory must be writable only by its user (as
``__pycache__`` is). Nothing is pickled. Reading or writing errors are ignored (the
function is converted as if there were no cache); files are written atomically.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import os
import sys
import tempfile
import types
from pathlib import Path

from laxify.runtime.calls import register_converted
from laxify.runtime.lowering import LoweredSource, Site
from laxify.runtime.lowering.emitter import Emitter, Line

__all__ = ["set_cache_dir", "cache_dir", "key", "load", "store"]

ENV = "LAXIFY_CACHE_DIR"
_FORMAT = 4  # 2: a site's end_line, changes_in_place and private names; 3: its kept reason and fix; 4: its unread names
_UNSET = object()
_directory: object = _UNSET  # set_cache_dir's choice; _UNSET: read the environment


def set_cache_dir(path: str | os.PathLike | None) -> None:
    """Keep conversions in ``path`` (created when needed) and reuse them in later processes;
    ``None`` turns the on-disk cache off. Without a call, ``LAXIFY_CACHE_DIR`` decides."""
    global _directory
    _directory = None if path is None else Path(path)


def cache_dir() -> Path | None:
    """The directory of the on-disk cache, or ``None`` when it is off."""
    if _directory is not _UNSET:
        return _directory  # type: ignore[return-value]
    found = os.environ.get(ENV)
    return Path(found) if found else None


_LAXIFY_PRINT: str | None = None


def _laxify_fingerprint() -> str:
    """laxify's version and its source files' paths, sizes and modification times."""
    global _LAXIFY_PRINT
    if _LAXIFY_PRINT is None:
        import laxify

        digest = hashlib.sha256(getattr(laxify, "__version__", "?").encode())
        roots = {
            Path(m.__file__).resolve().parent
            for m in list(sys.modules.values())
            if getattr(m, "__name__", "").startswith("laxify.") and getattr(m, "__file__", None)
        }
        roots.add(Path(laxify.__file__).resolve().parent)
        for root in sorted(roots):
            for path in sorted(root.rglob("*.py")):
                stat = path.stat()
                digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        _LAXIFY_PRINT = digest.hexdigest()
    return _LAXIFY_PRINT


def _code_print(code: types.CodeType, out: list) -> None:
    out.append(
        (
            code.co_qualname,
            code.co_firstlineno,
            code.co_code,
            code.co_linetable,
            code.co_names,
            code.co_varnames,
            code.co_freevars,
            code.co_cellvars,
            code.co_flags,
            code.co_argcount,
            code.co_posonlyargcount,
            code.co_kwonlyargcount,
        )
    )
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_print(const, out)
        else:
            out.append(repr(const))


def _global_decisions(fn, code: types.CodeType) -> list:
    """What the conversion reads from the values of the globals ``code`` names."""
    from laxify.transpiler.converters.calls import _library_root, _runs_as_written
    from laxify.transpiler.converters.raise_statements import _may_raise

    names: set[str] = set()

    def collect(c: types.CodeType) -> None:
        names.update(c.co_names)
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                collect(const)

    collect(code)
    scope = getattr(fn, "__globals__", {})
    out = []
    for name in sorted(names):
        if name not in scope:
            out.append((name,))
            continue
        value = scope[name]
        rooted = isinstance(value, (type, types.ModuleType))
        out.append((name, _runs_as_written(value), rooted, rooted and _library_root(value), _may_raise(value)))
    return out


def key(fn, code: types.CodeType) -> str | None:
    """The cache key of ``fn``'s conversion, or ``None`` when it has none (no source text)."""
    import linecache

    try:
        lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", {}))
        if not lines:
            return None
        printed: list = []
        _code_print(code, printed)
        digest = hashlib.sha256()
        for part in (
            _FORMAT,
            _laxify_fingerprint(),
            sys.implementation.cache_tag,
            importlib.util.MAGIC_NUMBER.hex(),
            code.co_filename,
            "".join(lines),
            printed,
            _global_decisions(fn, code),
        ):
            digest.update(repr(part).encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()
    except Exception:  # noqa: BLE001 - a global whose inspection fails: no caching
        return None


def _path(directory: Path, key: str) -> Path:
    return directory / key[:2] / f"{key}.lxc"


def load(directory: Path, key: str, fn, code: types.CodeType, make):
    """The stored conversion for ``key`` (``make(fn, code, lowered, meta)``), or ``None``."""
    try:
        data = _path(directory, key).read_bytes()
    except OSError:
        return None
    try:
        head, _, body = data.partition(b"\n")
        meta = json.loads(head)
        if meta.get("format") != _FORMAT:
            return None
        compiled = marshal.loads(body)
        if not isinstance(compiled, types.CodeType):
            return None
        lowered = LoweredSource(
            meta["name"],
            Emitter([Line(*line) for line in meta["lines"]]),
            [
                Site(
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    tuple(s[4]),
                    tuple(s[5]),
                    tuple(s[6]),
                    bool(s[7]),
                    s[8],
                    bool(s[9]),
                    tuple(s[10]),
                    tuple(s[11]),
                    tuple(s[12]),
                )
                for s in meta["sites"]
            ],
            tuple(meta["cells"]),
            meta["prefix"],
        )
    except Exception:  # noqa: BLE001 - a damaged file: convert again (and overwrite it)
        return None
    register_converted(compiled)
    return make(fn, compiled, lowered, meta)


def store(directory: Path, key: str, converted) -> None:
    """Write ``converted`` under ``key`` (atomically; errors ignored)."""
    lowered = converted.lowered
    meta = {
        "format": _FORMAT,
        "name": lowered.name,
        "prefix": lowered.prefix,
        "cells": list(lowered.cells),
        "lines": [[ln.depth, ln.text, ln.user_line, ln.user_col, ln.raw] for ln in lowered.emitter.lines],
        "sites": [
            [
                s.construct,
                s.filename,
                s.line,
                s.col,
                list(s.names),
                list(s.branches),
                list(s.branch_lines),
                s.int_checks,
                s.end_line,
                s.changes_in_place,
                list(s.private),
                list(s.kept),
                list(s.unread),
            ]
            for s in lowered.sites
        ],
        "filename": converted.filename,
        "fallbacks": bool(converted.has_fallbacks),
        "pushes_loop_options": bool(converted.pushes_loop_options),
    }
    try:
        data = json.dumps(meta, separators=(",", ":")).encode() + b"\n" + marshal.dumps(converted.code)
        path = _path(directory, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except Exception:  # noqa: BLE001 - a read-only or full disk: no caching
        return
