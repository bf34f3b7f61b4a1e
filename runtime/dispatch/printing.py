"""``print``: staged into the program as an ordered ``jax.debug.callback`` that runs Python's
``print``, so that it prints each time the program runs, on the paths taken, in program order;
and ``format_``, the strings built from traced values for it (f-strings, ``str.format``)."""

from __future__ import annotations

import re
import sys

import jax

from laxify.runtime.dispatch.values import Tracer, any_traced

__all__ = [
    "Formatted",
    "Percent",
    "format_",
    "hold",
    "holding",
    "percent_",
    "print_",
    "release",
    "shows_tracer",
    "unhold",
]


class Formatted:
    """A ``str.format`` template and its values, some traced: formatted when printed (or when
    the exception whose message it is is made, with the values of the run)."""

    __slots__ = ("template", "args", "kwargs")

    def __init__(self, template: str, args: tuple, kwargs: dict):
        self.template, self.args, self.kwargs = template, args, kwargs

    def text(self) -> str:
        """The string, from the values it holds (concrete ones: a run's)."""
        return self.template.format(*self.args, **self.kwargs)

    def __str__(self) -> str:
        return self.text() if not any_traced((self.args, self.kwargs)) else repr(self)

    def __repr__(self) -> str:
        if not any_traced((self.args, self.kwargs)):
            return repr(self.text())  # (inside a container: the string it stands for)
        return f"<{self.template!r} formatted when printed>"


class Percent(Formatted):
    """``template % values`` (``args``: ``(values,)``), some of them traced."""

    __slots__ = ()

    def text(self) -> str:
        return self.template % self.args[0]


# What JAX's tracers print as (`JitTracer(int32[])`, `VmapTracer(...)`, `Traced<...>` in
# older versions): a string that holds it was formatted from a traced value while tracing.
_TRACER_TEXT = re.compile(r"\w*Tracer\(|Traced<")


def shows_tracer(value, depth: int = 0) -> bool:
    """Whether ``value`` (a message, an exception's arguments) holds a string formatted from a
    traced value while tracing, which shows JAX's text for the tracer instead of the value
    that eager Python would show."""
    if depth > 8:
        return False
    if isinstance(value, str):
        return _TRACER_TEXT.search(value) is not None
    if isinstance(value, Formatted):
        value = (value.template, value.args, value.kwargs)
    elif isinstance(value, BaseException):
        value = value.args
    if isinstance(value, (tuple, list)):
        return any(shows_tracer(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return any(shows_tracer(item, depth + 1) for item in value.values())
    return False


def format_(template: str, *args, **kwargs):
    """``template.format(*args, **kwargs)`` (what an f-string, ``str.format`` or ``"..." +
    str(x)`` computes) for Python values; for traced ones a :class:`Formatted`, which
    :func:`print_` formats with the values of each run."""
    if not any_traced((args, kwargs)):
        return template.format(*args, **kwargs)
    return Formatted(template, args, kwargs)


def percent_(template: str, values):
    """``template % values`` for Python values; for traced ones a :class:`Percent`."""
    if not any_traced(values):
        return template % values
    return Percent(template, (values,), {})


class holding:
    """``with holding() as held:`` around a run of a program whose result may be thrown away
    for an eager run of the same function (an int32 overflow of a Python int: see
    ``runtime/numbers.py``): its prints are kept, and printed by ``held.flush()`` only
    once the run's result stands, so that the eager run's prints are the only ones."""

    buffer: list | None = None

    def __enter__(self) -> "holding":
        self.outer, holding.buffer = holding.buffer, []
        self.kept = holding.buffer
        return self

    def __exit__(self, *exc):
        holding.buffer = self.outer
        return False

    def flush(self) -> None:
        release(self.kept)


def hold() -> tuple:
    """``holding`` for a hot path: the prints of what runs until :func:`unhold` are kept in the
    returned list (``(outer, kept)``; ``unhold(outer)`` ends it, :func:`release` prints them)."""
    outer = holding.buffer
    kept = holding.buffer = []
    return outer, kept


def unhold(outer) -> None:
    holding.buffer = outer


def release(kept: list) -> None:
    """Print the prints ``kept`` by a held run (see :class:`holding`; a hot path sets
    ``holding.buffer`` itself and gives its list here)."""
    for objects, sep, end, file, flush in kept:
        if holding.buffer is not None:  # inside another held run: kept for its result
            holding.buffer.append((objects, sep, end, file, flush))
        else:
            print(*objects, sep=sep, end=end, file=file, flush=flush)
    kept.clear()


def _check_text(name: str, value) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be None or a string, not {type(value).__name__}")


def print_(*args, sep: str | None = " ", end: str | None = "\n", file=None, flush: bool = False, unless_raised=False):
    """``print``: Python's ``print`` with Python's arguments, run by a ``jax.debug.callback``
    (ordered): each time the program runs, only on the path that reaches it, in program order
    with the other prints. Traced values reach the callback as concrete arrays; everything
    else stays in it as the Python object it is. Outside a traced program the callback runs
    at once, so the print happens where Python's would. ``unless_raised`` (written by laxify
    in a loop that calls a function that may raise): where it is true, that function raised
    before this print, which Python would not have reached; it does not print."""
    _check_text("sep", sep)
    _check_text("end", end)
    parts = [(type(a), a.template, a.args, a.kwargs) if isinstance(a, Formatted) else a for a in args]
    traced = [k for k, part in enumerate(parts) if any_traced(part)]
    trees = {k: jax.tree_util.tree_flatten(parts[k]) for k in traced}
    leaves = [leaf for leaves, _ in trees.values() for leaf in leaves if isinstance(leaf, Tracer)]
    # A traced value that is a Python number in eager code prints as one (`[2, 1]`, not
    # `[Array(2, dtype=int32), ...]`: runtime/numbers.py).
    from laxify.runtime.numbers import python_type  # (numbers imports the error channel, which imports this)

    kinds = [python_type(leaf) for leaf in leaves]
    if unless_raised is True:
        return
    gated = unless_raised is not False
    if gated:
        leaves.append(unless_raised)
    formatted = {k for k, a in enumerate(args) if isinstance(a, Formatted)}

    def emit(*values):
        if gated and values[-1]:
            return
        values = iter(
            [kind(v) if kind is not None else v for kind, v in zip(kinds, values)] + list(values[len(kinds) :])
        )
        objects = list(parts)
        for k, (flat, tree) in trees.items():
            flat = [next(values) if isinstance(leaf, Tracer) else leaf for leaf in flat]
            objects[k] = jax.tree_util.tree_unflatten(tree, flat)
        for k in formatted:
            kind, template, f_args, f_kwargs = objects[k]
            objects[k] = kind(template, f_args, f_kwargs).text()
        out = sys.stdout if file is None else file
        if holding.buffer is not None:
            holding.buffer.append((objects, sep, end, out, flush))
        else:
            print(*objects, sep=sep, end=end, file=out, flush=flush)

    jax.debug.callback(emit, *leaves, ordered=True)
