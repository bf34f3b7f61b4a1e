"""What laxify knows while one program is traced (or converted code runs eagerly): one
:class:`TraceState`, made where the run starts and dropped where it ends.

Every construct of converted code reads and changes the state of the run it belongs to: the
run-time report it builds (``runtime/report.py``), the traced regions it is in, the objects
it watches for effects, the values that stand for Python ints, the loop options and assert
mode in force, the split plan of an eager run. :func:`current` gives the state of the run
under way in this thread; :func:`running` starts one. A converted function called where no
run is under way (``jax.jit(laxify.convert(f))``, an eager call) starts its own, which
lasts while it runs.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["TraceState", "current", "running"]


class TraceState:
    """The state of one run of converted code (see the module's docstring).

    - ``frames``: the report frames, innermost last (``runtime/report.py``);
    - ``depth``: how many traced regions (branches, loop bodies) hold the code being traced;
    - ``slots``, ``calls``: the statements collecting the ``raised`` flags of the functions
      they call, and the calls of converted functions under way (``runtime/error_channel.py``);
    - ``python_values``: traced values that stand for Python numbers, with the Python type
      each stands for (``runtime/numbers.py``); ``tables``: those that a scanned range's index
      makes, with their value at each iteration;
    - ``watches``: the objects watched for effects while a traced function runs
      (``runtime/effects.py``);
    - ``marked``: arrays a ``for`` statement runs over that its body updates (``runtime/updates.py``);
    - ``numpy``: the traced values that stand for NumPy array arguments, by id (held), which the
      function may not change in place (``runtime/writeback.py``);
    - ``options``: the loop options in force (``runtime/options.py``); ``exporting``: the run
      traces a program for ``export`` (no host callbacks);
    - ``asserts``: the assert modes in force (``runtime/checks.py``);
    - ``where``: the user's file and line of the builtin call being traced, and whether a handler
      may catch what it raises (``runtime/builtin_rules.py``);
    - ``recursion``, ``deepest``: calls under way per code object (``runtime/calls.py``);
    - ``plan``, ``split_tracing``: the split plan of an eager run (``runtime/split.py``).
    """

    __slots__ = (
        "frames",
        "depth",
        "slots",
        "calls",
        "python_values",
        "tables",
        "watches",
        "marked",
        "numpy",
        "options",
        "exporting",
        "asserts",
        "where",
        "recursion",
        "deepest",
        "plan",
        "split_tracing",
        "checkify",
        "reporting",
        "recorded",
        "__weakref__",
    )

    def __init__(self):
        self.frames: list = []
        self.depth = 0
        self.slots: list = []
        self.calls: list = []
        self.python_values: dict = {}
        self.tables: dict = {}
        self.watches: list = []
        self.marked: dict = {}
        self.numpy: dict = {}
        self.options: list = []
        self.exporting = False
        self.asserts: list = []
        self.where: tuple[str, int, bool] | None = None
        self.recursion: dict[int, int] = {}
        self.deepest: dict[int, int] = {}
        self.plan: Any = None
        self.split_tracing = 0
        self.checkify = False  # a check went to checkify (a transformation between it and its frame)
        self.reporting = False  # the checks recorded are reported (a program's, laxify.checked)
        self.recorded = 0  # how many checks were recorded


class _Current(threading.local):
    state: TraceState | None = None


_current = _Current()


def current() -> TraceState:
    """The state of the run under way in this thread (one is started for code that runs
    outside every run: see :func:`running`)."""
    state = _current.state
    if state is None:
        state = _current.state = TraceState()
    return state


class running:
    """``with running() as state:`` around a run of converted code: a new :class:`TraceState`
    while it lasts (the one before comes back after). ``inherit``: the loop options, assert
    modes and export flag of the run around it carry over (a program traced for a call made
    while another is traced, as ``jax.jit`` traces a nested jit)."""

    __slots__ = ("state", "saved", "inherit")

    def __init__(self, inherit: bool = True):
        self.state = TraceState()
        self.inherit = inherit

    def __enter__(self) -> TraceState:
        self.saved = outer = _current.state
        if self.inherit and outer is not None:
            self.state.options = list(outer.options)
            self.state.asserts = list(outer.asserts)
            self.state.exporting = outer.exporting
            self.state.plan = outer.plan
        _current.state = self.state
        return self.state

    def __exit__(self, *exc):
        _current.state = self.saved
        if self.state.checkify and self.saved is not None:
            self.saved.checkify = True  # (a program traced inside this one holds a checkify check)
        return False
