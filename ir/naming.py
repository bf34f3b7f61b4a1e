"""The names laxify writes into generated code, kept apart from the user's.

Generated names start with a prefix: ``_lx`` unless the user's own function uses identifiers
that start with it (``_lx``, ``_lx_sites``, ...), then ``_lx1``, ``_lx2``, ... the first that
no identifier of the function starts with. The runtime handle is the prefix itself, the site
table ``<prefix>_sites``, every other generated name ``<prefix>_<stem>...``.
"""

from __future__ import annotations

import re

__all__ = [
    "DEFAULT_PREFIX",
    "choose_prefix",
    "is_break_flag",
    "is_raise_flag",
    "is_return_flag",
    "is_runtime_name",
    "is_return_value",
    "is_stop_flag",
    "users_words",
]

DEFAULT_PREFIX = "_lx"
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_RUNTIME = re.compile(r"_lx\d*")
_RETURN_VALUE = re.compile(r"_lx\d*_retval")
_RETURN_FLAG = re.compile(r"_lx\d*_do_return")
_BREAK_FLAG = re.compile(r"_lx\d*_break_\d+")  # transpiler/converters/break_statements.py
_RAISE_FLAG = re.compile(r"_lx\d*_raised")  # transpiler/converters/raise_statements.py
# transpiler/converters/reductions.py: a generator's variable, and the reduction's result
_GENERATOR_VARIABLE = re.compile(r"\b_lx\d*_each_(\w+?)_\d+\b")
_REDUCTION = re.compile(r"\b_lx\d*_(sum|any|all)_\d+\b")


def choose_prefix(text: str) -> str:
    """The prefix for generated names in a function whose source is ``text``."""
    if DEFAULT_PREFIX not in text:
        return DEFAULT_PREFIX
    used = {name for name in _IDENTIFIER.findall(text) if name.startswith(DEFAULT_PREFIX)}
    prefix, k = DEFAULT_PREFIX, 0
    while any(name.startswith(prefix) for name in used):
        k += 1
        prefix = f"{DEFAULT_PREFIX}{k}"
    return prefix


def is_runtime_name(name: str) -> bool:
    """Whether ``name`` is the runtime handle of some prefix (``_lx``, ``_lx1``, ...)."""
    return _RUNTIME.fullmatch(name) is not None


def is_return_value(name: str) -> bool:
    """Whether ``name`` is the return-value slot the return converter made."""
    return _RETURN_VALUE.match(name) is not None


def is_return_flag(name: str) -> bool:
    """Whether ``name`` is the flag the return converter sets when a ``return`` has run."""
    return _RETURN_FLAG.fullmatch(name) is not None


def is_break_flag(name: str) -> bool:
    """Whether ``name`` is a flag the break converter sets when a ``break`` has run."""
    return _BREAK_FLAG.fullmatch(name) is not None


def is_raise_flag(name: str) -> bool:
    """Whether ``name`` is the flag the raise converter sets where the function raised."""
    return _RAISE_FLAG.fullmatch(name) is not None


def is_stop_flag(name: str) -> bool:
    """Whether ``name`` is set where the function stops: its return flag or its raised flag."""
    return is_return_flag(name) or is_raise_flag(name)


def users_words(text: str) -> str:
    """``text`` (a message) with the names laxify wrote for the user's own constructs in the
    user's words: a generator's variable by its name, a reduction as ``sum(...)``."""
    if "_lx" not in text:
        return text
    return _REDUCTION.sub(r"\1(...)", _GENERATOR_VARIABLE.sub(r"\1", text))
