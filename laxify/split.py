"""The split fallback of a ``to_static`` function (see ``runtime/split.py`` for the mechanism,
docs/semantics.md "Split fallback" for the rules): what runs for an input signature whose
trace met value-dependent Python, and the warning that says where it was split and what it
costs."""

from __future__ import annotations

import jax

from laxify.ir.errors import ConversionError, FallbackWarning, warn_at
from laxify.runtime.split import Plan, splitting

__all__ = ["SplitRunner"]


class SplitRunner:
    """The converted function run eagerly with its loops compiled where they can be (one
    :class:`Plan` per input signature). The first run issues the ``FallbackWarning`` (when
    ``warn``), once the plan says what runs compiled and what runs as Python."""

    # Variants of the code: the first, at the fallback's line, and those made for further
    # statements that need Python (a segment whose trace met one); after this many, the
    # segments that need Python stay Python.
    MAX_VARIANTS = 5

    def __init__(self, fn, located: ConversionError, inner, warn: bool, kept: bool = False, variant=None):
        # kept: a construct laxify keeps as Python met a traced value (its message says why
        # the function is not one program); else value-dependent Python on the user's line.
        # variant(lines): the converted code with segments around the statements at those
        # lines (runtime/segments.py), or None; the first is made here, at ``located``'s line.
        self.fn, self.located, self.inner, self.kept = fn, located, inner, kept
        self.plan = Plan()
        self._warn = warn
        self._variant = variant
        self._lines: set[int] = set()
        self._variants = 0
        where = located.location
        if where is not None and where.filename == inner.__code__.co_filename:
            self._split_at({where.line})

    def __call__(self, *args, **kwargs):
        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs))):
            raise self.transformed_error() from None
        return self.concrete(*args, **kwargs)

    def concrete(self, *args, **kwargs):
        """The run, for arguments known to hold no tracer (``to_static``'s hot path: concrete
        arrays and Python scalars)."""
        try:
            with splitting(self.plan):
                return self.fn(*args, **kwargs)
        finally:
            if self.plan.failed_segments:
                self._split_again()
            if self._warn:
                self._warn = False
                self.warn()

    def _split_again(self) -> None:
        """A segment needed Python: split the code at the statement of the user's that its
        trace stopped in too, for the next calls (the segment ran as Python in this one)."""
        failed, self.plan.failed_segments = self.plan.failed_segments, []
        filename = self.inner.__code__.co_filename
        lines = set(self._lines)
        for site, places in failed:
            inside = [line for file, line in places if file == filename and site.line <= line <= site.end_line]
            if inside:
                lines.add(inside[-1])
        self._split_at(lines)

    def _split_at(self, lines: set[int]) -> None:
        """Run the variant of the code with segments around the statements at ``lines`` from
        now on (where it can be made, and at most ``MAX_VARIANTS`` times)."""
        if self._variant is None or lines == self._lines or self._variants >= self.MAX_VARIANTS:
            return
        made = self._variant(lines)
        if made is not None:
            self._lines, self.fn = lines, made
            self._variants += 1

    def message(self) -> str:
        located, fn = self.located, self.inner
        if self.kept:
            return f"{located.message} {self.plan.summary()} {located.fix}"
        return f"{located.message} So {fn.__qualname__} cannot be one XLA program. {self.plan.summary()} {located.fix}"

    def warn(self) -> None:
        where = self.located.location
        code = self.inner.__code__
        filename, line = (where.filename, where.line) if where else (code.co_filename, code.co_firstlineno)
        warn_at(self.message(), FallbackWarning, filename, line)

    def transformed_error(self) -> ConversionError:
        """Called inside an outer transformation (``jax.grad``, ``jax.jit``, ``vmap``): the
        compiled parts are joined by Python values, through which nothing can be traced."""
        located = self.located
        return ConversionError(
            f"{located.message} So {self.inner.__qualname__} runs split into compiled parts joined by "
            f"Python values there, and an outer jax transformation (jax.grad, jax.jit, jax.vmap) "
            f"cannot go through Python values: it is not possible through the Python segments.",
            located.location,
            located.fix,
        )
