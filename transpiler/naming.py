"""Generated names moved out of the user's way. When the user's function has identifiers that
start with ``_lx``, they are first hidden behind placeholders (``__laxify_user_0``, ...), the
converters run, and then every name that starts with ``_lx`` is one the converters wrote: it
moves to the function's own prefix (see :mod:`laxify.ir.naming`) and the placeholders get the
user's names back."""

from __future__ import annotations

import libcst as cst

from laxify.ir.naming import DEFAULT_PREFIX
from laxify.transpiler.converters.base import Context, Converter

__all__ = ["hide_user_names", "rename_generated"]

_PLACEHOLDER = "__laxify_user_"


class _Renamer(Converter):
    def __init__(self, ctx: Context, rename):
        super().__init__(ctx)
        self.rename = rename

    def leave_Name(self, original_node, updated_node):
        new = self.rename(updated_node.value)
        return updated_node if new is None else updated_node.with_changes(value=new)


def hide_user_names(node: cst.FunctionDef, ctx: Context) -> tuple[cst.FunctionDef, dict[str, str]]:
    """``node`` with the user's names that start with ``_lx`` replaced by placeholders, and the
    map from placeholder back to name."""
    hidden: dict[str, str] = {}

    def rename(value: str) -> str | None:
        if not value.startswith(DEFAULT_PREFIX):
            return None
        placeholder = hidden.setdefault(value, f"{_PLACEHOLDER}{len(hidden)}")
        return placeholder

    node = node.visit(_Renamer(ctx, rename))
    return node, {v: k for k, v in hidden.items()}


def rename_generated(node: cst.FunctionDef, hidden: dict[str, str], prefix: str, ctx: Context) -> cst.FunctionDef:
    """``node`` with every generated name moved to ``prefix`` and the user's names back."""

    def rename(value: str) -> str | None:
        if value.startswith(DEFAULT_PREFIX):
            return prefix + value[len(DEFAULT_PREFIX) :]
        return hidden.get(value)

    return node.visit(_Renamer(ctx, rename))
