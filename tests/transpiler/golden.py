"""Golden tests of one converter alone (LibCST style): source before, source after.

``check(converter, before, after)`` parses ``before`` (dedented), applies the one converter to
its function and compares the source it produces with ``after``; the result must also be valid
Python. ``namespace`` is the module globals the function sees (builtins and raising callees
are told apart by them); the names the function binds itself are read from its compiled code,
as the pipeline does.
"""

from __future__ import annotations

import textwrap
import types
from typing import Mapping

import libcst as cst

from laxify.transpiler.converters.base import Context
from laxify.transpiler.pipeline import local_names

__all__ = ["check", "check_unchanged", "convert"]


def _function_code(text: str, name: str) -> types.CodeType:
    module = compile(text, "<golden>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def convert(converter, before: str, namespace: Mapping[str, object] | None = None) -> tuple[str, Context]:
    """The source ``converter`` makes of the function in ``before``, and the context it ran with."""
    text = textwrap.dedent(before).lstrip("\n")
    module = cst.parse_module(text)
    fn = module.body[0]
    ctx = Context({}, namespace={} if namespace is None else namespace,
                  local_names=local_names(_function_code(text, fn.name.value)))
    new = converter.transform(fn, ctx)
    return module.with_changes(body=[new]).code, ctx


def check(converter, before: str, after: str, namespace: Mapping[str, object] | None = None) -> Context:
    code, ctx = convert(converter, before, namespace)
    assert code == textwrap.dedent(after).lstrip("\n")
    compile(code, "<converted>", "exec")
    return ctx


def check_unchanged(converter, before: str, namespace: Mapping[str, object] | None = None) -> Context:
    """The converter leaves the function exactly as written."""
    return check(converter, before, before, namespace)
