"""What a converted ``try`` or ``with`` must not let the user's code handle.

A ``try`` or ``with`` statement runs while tracing: its ``except`` clauses, its ``finally``
and its context managers' ``__exit__`` see the exceptions raised while tracing. Those of them
that an eager run would not raise (JAX's refusal of a traced value where Python needs a
concrete one, laxify's located errors and its internal signals between one construct and the
one around it) must reach laxify, so that the statement or the function falls back (or the
construct is refused with a located error): no handler such as ``except Exception:``, no
``return`` in a ``finally`` and no manager that suppresses (``contextlib.suppress``) may turn
them into a wrong value. The try-statements converter writes the code that calls these.
"""

from __future__ import annotations

import sys

import jax

from laxify.ir.errors import ConversionError
from laxify.runtime.lists import NeedsRows

__all__ = ["internal_errors", "finally_block", "unsuppressing"]

internal_errors = (ConversionError, jax.errors.JAXTypeError, NeedsRows)
"""What the converted ``try`` re-raises before its first ``except`` clause."""


def _propagating(frame) -> BaseException | None:
    """The internal error going up through ``frame`` now (``frame`` runs a ``finally``), if any.
    ``sys.exc_info()`` also names an exception that a handler of laxify's is handling around a
    new trace of the user's code: only one whose traceback passes through ``frame`` is this
    statement's."""
    error = sys.exc_info()[1]
    if not isinstance(error, internal_errors):
        return None
    entry = error.__traceback__
    while entry is not None:
        if entry.tb_frame is frame:
            return error
        entry = entry.tb_next
    return None


class finally_block:
    """``with _lx.finally_block():`` around the user's ``finally`` block: it runs, and where an
    internal error is going up through the ``try``, that error goes on however the block ends
    (a ``return``, ``break`` or ``continue`` there, or an exception of its own, would replace
    it)."""

    __slots__ = ("error",)

    def __enter__(self) -> None:
        self.error = _propagating(sys._getframe(1))

    def __exit__(self, kind, error, traceback) -> bool:
        if self.error is not None:
            raise self.error
        return False


class _Unsuppressing:
    """A context manager as ``with`` uses it, except that its ``__exit__`` cannot stop an
    internal error (it still sees it, to release what it holds)."""

    __slots__ = ("manager",)

    def __init__(self, manager):
        self.manager = manager

    def __enter__(self):
        return type(self.manager).__enter__(self.manager)

    def __exit__(self, kind, error, traceback) -> bool:
        if not isinstance(error, internal_errors):
            return type(self.manager).__exit__(self.manager, kind, error, traceback)
        try:
            type(self.manager).__exit__(self.manager, kind, error, traceback)
        except Exception:  # noqa: BLE001 - the internal error goes on instead (see below)
            pass
        return False  # the internal error goes on, whatever the manager said


def unsuppressing(manager):
    """``with _lx.unsuppressing(manager):`` for ``with manager:``. A value that is no context
    manager is given back as it is, for the ``with`` statement's own ``TypeError``."""
    kind = type(manager)
    if not (hasattr(kind, "__enter__") and hasattr(kind, "__exit__")):
        return manager
    return _Unsuppressing(manager)
