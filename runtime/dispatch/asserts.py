"""``assert``: Python's assert on Python values; on a traced value a check in the run-time
report (by default, as Python checks asserts), or nothing with ``to_static(..., checks=False)``."""

from __future__ import annotations

import linecache
import string
import sys
import threading
import warnings

import jax
import jax.numpy as jnp

from laxify.ir.errors import ConversionError, UncheckedWarning
from laxify.runtime import checks, report
from laxify.runtime.dispatch.conditionals import _scalar_predicate
from laxify.runtime.dispatch.printing import Formatted, Percent, shows_tracer
from laxify.runtime.dispatch.values import any_traced, is_traced
from laxify.runtime.error_channel import formatted_too_early, message_needs_the_run
from laxify.runtime.lowering import Site
from laxify.runtime.messages import location

__all__ = ["assert_"]

_warned: set[tuple[str, int]] = set()
_lock = threading.Lock()


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
            if message is None:
                raise AssertionError()
            value = _evaluated(message)
            if any_traced(value.args if isinstance(value, Formatted) else value) or shows_tracer(value):
                # A message only the run can format: a check that fails on every run, where
                # something reports it; else a located error.
                site = _site(1)
                if not report.reported():
                    raise message_needs_the_run("assert", site.filename, site.line)
                _check(False, message, site)
                return
            raise AssertionError(value)
        return
    site = _site(1)
    pred = _scalar_predicate(test, site, "assert")
    mode = checks.current()
    if mode.checks:
        if report.reported():
            _check(pred, message, site)
        else:
            _warn_once(
                site,
                "This `assert` tests a traced value, and nothing reports a failed check under a plain "
                "`jax.jit(laxify.convert(f))`: it is not checked there. Call the function through "
                "laxify.to_static, or wrap the jitted function in laxify.checked(...) to raise its "
                "AssertionError after the call.",
            )
        return
    if mode.unchecked == "error":
        raise ConversionError(
            "This `assert` tests a traced value, which is only known when the program runs.",
            location(site),
            "Assert on a static value (a shape, a Python argument), or let the loop run as Python.",
        )


def _warn_once(site: Site, text: str) -> None:
    with _lock:
        if (site.filename, site.line) in _warned:
            return
        _warned.add((site.filename, site.line))
    warnings.warn_explicit(text, UncheckedWarning, site.filename, site.line)


def _check(pred, message, site: Site) -> None:
    """Record the assert in the run-time report: its ``AssertionError`` is Python's (the
    assert's message, formatted with the values of the run; none without one), raised at the
    assert's line. Checkify's text of it (where only checkify carries the check) also says
    where the assert stands."""
    where = _escape(f" (assert at {site.filename}:{site.line})")
    value = _evaluated(message)
    if shows_tracer(value):
        raise formatted_too_early("assert", site.filename, site.line)
    if isinstance(value, Percent):
        leaves, tree = jax.tree_util.tree_flatten(value.args)
        at = [k for k, leaf in enumerate(leaves) if is_traced(leaf)]
        text, traced = _escape(value.template) + where, [leaves[k] for k in at]

        def make(values):
            filled = list(leaves)
            for k, v in zip(at, values):
                filled[k] = v
            return AssertionError(Percent(value.template, jax.tree_util.tree_unflatten(tree, filled), {}).text())
    elif isinstance(value, Formatted):
        template, traced = _traced_fields(value)
        text = template + where

        def make(values):
            return AssertionError(template.format(*values))
    elif value is None:
        source = linecache.getline(site.filename, site.line).strip()
        text, traced = _escape(source if source.startswith("assert") else "assert") + where, []

        def make(values):
            return AssertionError()
    elif any_traced(value):
        text, traced = "{0}" + where, [value]

        def make(values):
            return AssertionError(values[0])
    else:
        text, traced = _escape(str(value)) + where, []

        def make(values):
            return AssertionError(value)

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
