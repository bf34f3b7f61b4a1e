"""``assert``: Python's assert on Python values; on a traced value a check in the run-time
report when checks are on (``to_static(checks=True)``), otherwise not checked, said once at
its line."""

from __future__ import annotations

import linecache
import string
import sys
import threading
import warnings

import jax.numpy as jnp

from laxify.ir.errors import ConversionError, FallbackWarning
from laxify.runtime import checks, report
from laxify.runtime.dispatch.conditionals import _scalar_predicate
from laxify.runtime.dispatch.printing import Formatted
from laxify.runtime.dispatch.values import any_traced, is_traced
from laxify.runtime.lowering import Site
from laxify.runtime.messages import location

__all__ = ["assert_"]

_warned: set[tuple[str, int]] = set()
_lock = threading.Lock()

_FIX = (
    "Pass checks=True to laxify.to_static to check it at run time (a failed assert then "
    "raises AssertionError after the call), or assert on a static value (a shape, a Python "
    "argument)."
)


def _site(depth: int) -> Site:
    frame = sys._getframe(depth + 1)
    filename, line = frame.f_code.co_filename, frame.f_lineno
    text = linecache.getline(filename, line)
    return Site("assert", filename, line, len(text) - len(text.lstrip()))


def assert_(test, message=None) -> None:
    """``assert test, message``. ``message`` is a string literal or a thunk (Python evaluates
    the message only when the assert fails)."""
    if not is_traced(test):
        if not test:
            raise AssertionError() if message is None else AssertionError(_evaluated(message))
        return
    site = _site(1)
    pred = _scalar_predicate(test, site, "assert")
    mode = checks.current()
    if mode.checks:
        _check(pred, message, site)
        return
    if mode.unchecked == "silent":
        return
    text = (
        "This `assert` tests a traced value, which is only known when the program runs; "
        "laxify does not check it at run time (one XLA program cannot raise an exception)."
    )
    if mode.unchecked == "error":
        raise ConversionError(text, location(site), _FIX)
    with _lock:
        if (site.filename, site.line) in _warned:
            return
        _warned.add((site.filename, site.line))
    warnings.warn_explicit(f"{text} {_FIX}", FallbackWarning, site.filename, site.line)


def _check(pred, message, site: Site) -> None:
    """Record the assert in the run-time report: its ``AssertionError`` says the assert's
    message (formatted with the values of the run) or, without one, the assert's source text;
    then where it stands."""
    where = f" (assert at {site.filename}:{site.line})"
    value = _evaluated(message)
    if isinstance(value, Formatted):
        template, traced = _traced_fields(value)
        text = template + _escape(where)

        def make(values):
            return AssertionError(template.format(*values) + where)
    elif value is None:
        source = linecache.getline(site.filename, site.line).strip()
        source = source if source.startswith("assert") else "assert"
        text, traced = _escape(source + where), []

        def make(values):
            return AssertionError(source + where)
    elif any_traced(value):
        text, traced = "{0}" + _escape(where), [value]

        def make(values):
            return AssertionError(f"{values[0]}{where}")
    else:
        text, traced = _escape(str(value) + where), []

        def make(values):
            return AssertionError(f"{value}{where}")

    function = _user_function(site.filename)
    report.record(jnp.logical_not(pred), report.Rule(make, site.filename, site.line, function, text), traced)


def _user_function(filename: str) -> str:
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    return frame.f_code.co_name if frame is not None else "<module>"


def _traced_fields(message: Formatted) -> tuple[str, list]:
    """The template with the Python values formatted in (checkify formats only arrays), and
    the traced values its fields still take, renumbered in order."""
    formatter = string.Formatter()
    parts, traced, auto = [], [], 0
    for literal, field, spec, conversion in formatter.parse(message.template):
        parts.append(_escape(literal))
        if field is None:
            continue
        if field == "":
            field, auto = str(auto), auto + 1
        value, _ = formatter.get_field(field, message.args, message.kwargs)
        if spec and "{" in spec:
            spec = formatter.vformat(spec, message.args, message.kwargs)
        if any_traced(value):
            parts.append(
                "{" + str(len(traced)) + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            )
            traced.append(value)
        else:
            parts.append(_escape(formatter.format_field(formatter.convert_field(value, conversion), spec or "")))
    return "".join(parts), traced


def _evaluated(message):
    return message() if callable(message) else message


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
