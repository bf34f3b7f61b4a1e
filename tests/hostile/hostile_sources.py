"""Helpers for the hostile-input tests: functions defined from generated source text."""

from __future__ import annotations

import itertools
import linecache
import textwrap

__all__ = ["define", "register"]

_names = itertools.count()


def register(src: str, tag: str = "hostile") -> str:
    """Put ``src`` into linecache under a fresh file name (as notebooks do); return the name."""
    filename = f"<laxify-{tag}-{next(_names)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    return filename


def define(src: str, name: str, namespace: dict | None = None, *, registered: bool = True):
    """Define ``name`` by exec'ing ``src`` (dedented) under a file name registered in linecache
    (``registered=False``: exec'd with no source anywhere)."""
    src = textwrap.dedent(src).lstrip("\n")
    filename = register(src) if registered else "<string>"
    scope = {} if namespace is None else namespace
    exec(compile(src, filename, "exec"), scope)
    return scope[name]


# -- generated functions of a chosen size --------------------------------------------------

def long_function(lines: int, name: str = "long_fn") -> str:
    """``def name(x):`` of about ``lines`` lines: blocks of plain statements, a traced ``if``,
    a static ``for`` and a traced ``while``, repeated."""
    out = [f"def {name}(x):", "    y = x * 1.0"]
    k = 0
    while len(out) < lines - 1:
        out += [
            f"    y = y + {k} * 0.001",
            f"    z = y * 0.5 - {k}",
            f"    if y[0] > {k}:",
            "        y = y * 0.5",
            "    else:",
            "        y = y + z * 0.01",
            "    for i in range(2):",
            "        y = y + x[i] * 0.1",
            f"    while y[1] > {k} + 100:",
            "        y = y - 1",
        ]
        k += 1
    out.append("    return y")
    return "\n".join(out) + "\n"


def straight_function(lines: int, name: str = "straight_fn") -> str:
    """``def name(x):`` of ``lines`` lines of arithmetic with one traced ``if`` every 100 lines."""
    out = [f"def {name}(x):", "    y = x * 1.0"]
    k = 0
    while len(out) < lines - 1:
        if k % 100 == 99:
            out += [f"    if y[0] > {k}:", "        y = y * 0.5"]
        else:
            out.append(f"    y = y + {k % 7} * 0.001")
        k += 1
    out.append("    return y")
    return "\n".join(out) + "\n"


def nested_ifs(depth: int, name: str = "nested_fn") -> str:
    """``if`` statements nested ``depth`` deep on traced conditions, a static ``for`` every
    tenth level (CPython allows 20 nested loops)."""
    out = [f"def {name}(x):"]
    for d in range(depth):
        pad = "    " * (d + 1)
        if d % 10 == 9:
            out += [f"{pad}for i{d} in range(2):", f"{pad}    x = x + i{d}"]
        else:
            out += [f"{pad}if x[{d % 3}] > {d - 40}:", f"{pad}    x = x + {d}"]
    out.append("    return x")
    return "\n".join(out) + "\n"


def elif_chain(branches: int, name: str = "elif_fn") -> str:
    """``if n == 0: ... elif n == 1: ...`` with ``branches`` arms and an ``else``."""
    out = [f"def {name}(x, n):", "    if n == 0:", "        y = x * 0"]
    for k in range(1, branches):
        out += [f"    elif n == {k}:", f"        y = x * {k} + {k % 5}"]
    out += ["    else:", "        y = -x", "    return y"]
    return "\n".join(out) + "\n"
