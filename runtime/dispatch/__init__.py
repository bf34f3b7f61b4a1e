"""The runtime dispatcher called by converted code (as ``_lx``).

Each entry decides while tracing: a traced predicate, bound or sequence goes to ``jax.lax``
(``cond``/``switch``, ``while_loop``, ``scan``); a Python value runs plain Python, with
Python's exact semantics. One module per construct: ``conditionals`` (``if``), ``loops``
(``while``/``for``), ``logic`` (``and``/``or``/``not``, comparisons, ``a if c else b``),
``returns``, ``printing``, ``asserts``; ``values`` holds what they share.
"""

from __future__ import annotations

from laxify.runtime.builtin_rules import builtin, builtin_in_try, contains, not_contains
from laxify.runtime.calls import call
from laxify.runtime.dispatch.asserts import assert_
from laxify.runtime.dispatch.conditionals import cond, elif_chain
from laxify.runtime.dispatch.identity import bool_unary, is_, is_not
from laxify.runtime.dispatch.logic import and_, compare, ifexp, not_, not_raised, or_
from laxify.runtime.dispatch.loops import CarryChange, for_each, for_range, while_loop
from laxify.runtime.split import splittable
from laxify.runtime.dispatch.printing import print_
from laxify.runtime.dispatch.returns import check_defined, final_return, returned
from laxify.runtime.dispatch.values import Fillable, Undefined, UndefinedReturn, is_traced
from laxify.runtime.iterables import enumerate_, iterable, reversed_, reversed_range, sum_result, summed, zip_
from laxify.runtime.lists import append, as_list, list_len
from laxify.runtime.options import pop as pop_options
from laxify.runtime.options import push_options
from laxify.runtime.dispatch.trying import finally_block, internal_errors, unsuppressing
from laxify.runtime.updates import at, live_rows, setitem, setitem_op, shared_change
from laxify.runtime.numbers import divide, item, one_item, python_op
from laxify.runtime.recursion import deeper as recursion_deeper
from laxify.runtime.recursion import frame as recursion_frame
from laxify.runtime.recursion import push as recursion_push
from laxify.runtime.recursion import recursion
from laxify.runtime.recursion import within as recursion_within
from laxify.runtime.effects import kept_effects
from laxify.runtime.writeback import numpy_in_place
from laxify.runtime.error_channel import (
    always_raised,
    call_raised,
    exception_,
    expect_raise,
    leaving,
    raise_,
    raise_where,
    raised,
    raised_or,
)

# Split fallback (runtime/split.py): in the eager run of a function that fell back, each loop is
# tried as a compiled program of its own; elsewhere these are the loops' dispatchers unchanged.
while_loop, for_range, for_each = splittable(while_loop), splittable(for_range), splittable(for_each)
# A run of plain statements that the split run's variant of the code grouped (runtime/segments.py).
from laxify.runtime.split import run_segment as segment  # noqa: E402

__all__ = [
    "CarryChange",
    "Fillable",
    "Undefined",
    "UndefinedReturn",
    "and_",
    "always_raised",
    "append",
    "as_list",
    "list_len",
    "assert_",
    "at",
    "bool_unary",
    "builtin",
    "builtin_in_try",
    "call",
    "call_raised",
    "raised_or",
    "raise_where",
    "check_defined",
    "compare",
    "contains",
    "cond",
    "divide",
    "elif_chain",
    "enumerate_",
    "exception_",
    "expect_raise",
    "final_return",
    "for_each",
    "for_range",
    "ifexp",
    "python_op",
    "item",
    "one_item",
    "internal_errors",
    "finally_block",
    "unsuppressing",
    "is_",
    "is_not",
    "is_traced",
    "kept_effects",
    "numpy_in_place",
    "iterable",
    "leaving",
    "live_rows",
    "not_",
    "not_contains",
    "not_raised",
    "or_",
    "pop_options",
    "print_",
    "push_options",
    "raise_",
    "raised",
    "recursion",
    "recursion_deeper",
    "recursion_frame",
    "recursion_push",
    "recursion_within",
    "returned",
    "reversed_",
    "reversed_range",
    "sum_result",
    "summed",
    "segment",
    "setitem",
    "setitem_op",
    "shared_change",
    "while_loop",
    "zip_",
]
