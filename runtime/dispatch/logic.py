"""``and``/``or``/``not``, chained comparisons and conditional expressions: Python's
short-circuit on Python values; on traced ones the operand Python would give (``jnp.where``,
``lax.cond`` for operands with effects, ``logical_*`` for booleans), and Python's truth value
where only that is used (a size-1 array is one truth value)."""

from __future__ import annotations

import math
import operator
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

from laxify.ir.errors import ConversionError, Location, NeedsPython
from laxify.ir.user_code import raised_by_array_library
from laxify.runtime import effects, split, error_channel, report
from laxify.runtime.builtin_rules import contains, not_contains
from laxify.runtime.messages import users_line
from laxify.runtime.dispatch.values import is_array, is_traced

__all__ = ["and_", "compare", "ifexp", "not_", "not_raised", "or_", "truth"]


def truth(x, construct: str):
    """Python's truth value of ``x``: a Python ``bool`` for a Python value, a boolean scalar for
    a traced one. A size-1 array is one truth value (as in NumPy and JAX); a larger one is a
    located error, as ``bool()`` of it is in Python."""
    if not is_traced(x):
        return bool(x)
    x = _one_value(x, construct)
    return x if x.dtype == jnp.bool_ else x != 0


def _one_value(x, construct: str):
    """``x`` as a scalar when it holds one value; a located error when it holds more."""
    shape = tuple(jnp.shape(x))
    if shape == ():
        return x
    if math.prod(shape) != 1:
        raise ConversionError(
            f"{_OPERAND_OF[construct]} is an array of shape {shape}, not a scalar: it has no single truth value.",
            _user_location(),
            _FIX_OF[construct],
        )
    return jnp.reshape(x, ())


_OPERAND_OF = {
    "and": "An operand of this `and`",
    "or": "An operand of this `or`",
    "not": "The operand of this `not`",
    "ifexp": "The condition of this conditional expression (`a if c else b`)",
    "compare": "A part of this chained comparison",
}
_ELEMENTWISE = {
    "and": "jnp.logical_and(a, b)",
    "or": "jnp.logical_or(a, b)",
    "not": "jnp.logical_not(a)",
    "ifexp": "jnp.where(c, a, b)",
    "compare": "jnp.logical_and(a < b, b < c)",
}
_FIX_OF = {
    k: f"Use `{v}` for an elementwise result, or reduce the array to one value with `.any()` or `.all()`."
    for k, v in _ELEMENTWISE.items()
}


def not_(x):
    """``not x``: Python's ``not`` on a Python value; on a traced one, ``logical_not`` of its
    truth value (a boolean scalar)."""
    if not is_traced(x):
        return not x
    return jnp.logical_not(truth(x, "not"))


def not_raised(flag):
    """The test of a guard around the code after a ``raise`` (a flag only a failed check sets):
    ``not flag``. Its ``if`` (``cond``) knows by its site that where the test is false, nothing
    observes what the guarded code computes."""
    return not_(flag)


def and_(a, *rest, lazy: bool = False, truth_only: bool = False, condition: bool = False):
    """``a and b and ...`` (Python: each ``x and y`` is ``y if x else x``), the later operands
    given as thunks.

    Python values short-circuit as in Python. A traced operand gives the operand Python would
    give, chosen with ``jnp.where`` (``lax.cond`` when ``lazy``: a later operand may have
    effects, and then runs only on the path that reaches it), or ``logical_and`` when both are
    booleans. ``truth_only``/``condition``: only the truth value of the result is used (an
    ``if``/``while`` test, an operand of ``not``), so Python operands such as ``None`` decide by
    their Python truth value and the result is a boolean; with ``condition`` (the whole test)
    it stays traced when a traced operand was read, with ``truth_only`` it is a Python bool
    where a Python operand decided it, so that an enclosing ``and``/``or`` short-circuits."""
    if truth_only or condition:
        return _truth_chain("and", a, rest, lazy, condition)
    for b_fn in rest:
        a = _and_or(a, b_fn, lazy, "and")
    return a


def or_(a, *rest, lazy: bool = False, truth_only: bool = False, condition: bool = False):
    """``a or b or ...`` (Python: each ``x or y`` is ``x if x else y``): like :func:`and_`."""
    if truth_only or condition:
        return _truth_chain("or", a, rest, lazy, condition)
    for b_fn in rest:
        a = _and_or(a, b_fn, lazy, "or")
    return a


def _and_or(a, b_fn, lazy: bool, op: str):
    """The value of ``a and b`` / ``a or b``."""
    if not is_traced(a):
        decided = not a if op == "and" else bool(a)
        return a if decided else b_fn()
    pred = truth(a, op)
    if lazy:
        return _lazy_operand(a, pred, _guarded(b_fn, f"this `{op}` on a traced value"), op)
    with error_channel.on_path(lambda: pred if op == "and" else jnp.logical_not(pred)):  # where Python reads b
        b = b_fn()
    _check_operand(a, b, op)
    if _is_bool(a) and _is_bool(b):
        # Comparisons: `b if a else a` is `logical_and` (and `a if a else b` is `logical_or`).
        return jnp.logical_and(a, b) if op == "and" else jnp.logical_or(a, b)
    return jnp.where(pred, b, a) if op == "and" else jnp.where(pred, a, b)


def _truth_chain(op: str, a, thunks, lazy: bool, keep_traced: bool):
    """The truth value of ``a op b op ...``: Python's short-circuit on Python truth values;
    ``logical_and``/``logical_or`` of traced ones (later operands in a ``lax.cond`` branch when
    ``lazy``). A Python operand equal to ``op``'s deciding value (``False`` for ``and``,
    ``True`` for ``or``) stops the evaluation."""
    decides = op == "or"
    combine = jnp.logical_or if decides else jnp.logical_and
    acc = truth(a, op)
    for k, thunk in enumerate(thunks):
        if not is_traced(acc):
            if acc == decides:
                return acc
            acc = truth(thunk(), op)
            continue
        if lazy:
            later = thunks[k + 1 :]

            def rest(thunk=thunk, later=later):
                return jnp.asarray(_truth_chain(op, thunk(), later, lazy, False), jnp.bool_)

            rest = _caught(_guarded(rest, f"this `{op}` on a traced value"))
            slot = error_channel.statement_slot()

            with error_channel.traced_region():  # the later operands run only for some data
                if decides:
                    return error_channel.lazy_cond(acc, (lambda: jnp.asarray(True), rest), slot)
                return error_channel.lazy_cond(acc, (rest, lambda: jnp.asarray(False)), slot)
        with error_channel.on_path(lambda acc=acc: jnp.logical_not(acc) if decides else acc):  # where Python reads it
            value = truth(thunk(), op)
        if is_traced(value):
            acc = combine(acc, value)
        elif value == decides:  # a Python operand decides: the later ones are not evaluated
            return combine(acc, value) if keep_traced else value
    return acc


def _lazy_operand(a, pred, b_fn, op: str):
    """The operand of a traced ``and``/``or`` whose right side runs in a ``lax.cond`` branch."""
    slot = error_channel.statement_slot()  # (a call there that raised stops the caller)
    with error_channel.traced_region():  # the right side runs only for some data
        return _lazy_cond(a, pred, b_fn, op, slot)


def _lazy_cond(a, pred, b_fn, op: str, slot):
    take_b = _caught(b_fn)

    def take_a():
        return a

    branches = (take_b, take_a) if op == "and" else (take_a, take_b)
    try:
        return error_channel.lazy_cond(pred, branches, slot)
    except TypeError:
        # The operands' kinds or shapes differ: the located error that says which.
        _check_operand(a, jax.eval_shape(_probe(b_fn)), op)
        raise


def _probe(fn):
    """``fn`` for an abstract probe of its result: the flags of the calls it makes are its own
    (thrown away with the probe's trace)."""
    collecting = report.discarded(error_channel.collect_flag(fn))
    return lambda: collecting()[0]


def _is_bool(v) -> bool:
    return isinstance(v, bool) or (is_array(v) and v.dtype == jnp.bool_)


def _python_value(v) -> str:
    if v is None or isinstance(v, (str, bytes)):
        return f"the Python value `{v!r}`"[:80]
    return f"a Python {type(v).__name__}"


def _check_operand(a, b, op: str) -> None:
    """``b`` can be selected against the traced array ``a``: an array or a number of a shape
    that agrees with it."""
    if isinstance(b, (bool, int, float, complex)):
        return
    if not isinstance(b, (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic)):
        raise ConversionError(
            f"The value of this `{op}` is the traced array on its left on some runs and "
            f"{_python_value(b)} (its right operand) on others; one program cannot return both.",
            _user_location(),
            f"Use the `{op}` only as a condition (in an `if`, a `while` or under `not`), or give "
            f"it two array operands.",
        )
    a_shape, b_shape = tuple(jnp.shape(a)), tuple(b.shape)
    if a_shape != b_shape and not (math.prod(a_shape) == 1 and math.prod(b_shape) == 1):
        raise ConversionError(
            f"The operands of this `{op}` have different shapes, {a_shape} on the left and "
            f"{b_shape} on the right: its value would have one shape or the other depending on "
            f"a traced value.",
            _user_location(),
            f"Give both operands of the `{op}` the same shape, or use `jnp.where` for an elementwise choice.",
        )


_COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "in": lambda a, b: contains(b, a),
    "not in": lambda a, b: not_contains(b, a),
    "is": operator.is_,
    "is not": operator.is_not,
}


def compare(first, *pairs, lazy: bool = False):
    """A chained comparison ``a < b < c``: each operand evaluated once, Python's short-circuit
    on Python values, ``logical_and`` of the parts on traced ones (with ``lazy``, the parts
    after a traced one run in a ``lax.cond`` branch, as they contain calls)."""
    left, result = first, None
    for k, (op, thunk) in enumerate(pairs):
        if lazy and result is not None and is_traced(result):
            rest = pairs[k:]
            later = _caught(
                _guarded(lambda: jnp.asarray(compare(left, *rest), bool), "this chained comparison on a traced value")
            )
            return error_channel.lazy_cond(
                truth(result, "compare"), (later, lambda: jnp.asarray(False)), error_channel.statement_slot()
            )
        right = thunk()
        part = _COMPARE[op](left, right)
        if result is None:
            result = part
        elif is_traced(result) or is_traced(part):
            result = jnp.logical_and(result, part)
        else:
            result = result and part
        if not is_traced(result) and not result:
            return result
        left = right
    return result


_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_JAX_DIR = os.path.dirname(os.path.abspath(jax.__file__))


def _user_location() -> Location:
    """The user's line that called into the runtime: the innermost frame outside laxify's
    runtime and jax."""
    here = users_line(sys._getframe(1), lambda f: f.f_code.co_filename.startswith((_RUNTIME_DIR, _JAX_DIR)))
    return here if here is not None else Location("<unknown>", 0, 0)


def _guarded(fn, construct: str):
    """``fn``, a lazy operand traced whatever the condition, with its effects on Python
    objects watched (``runtime/effects.py``), reported at the user's line that runs it."""
    where = _user_location()
    return effects.guarded(fn, construct, lambda: where)


def ifexp(pred, true_fn, false_fn, lazy: bool = False):
    """``a if pred else b``: Python for a Python ``pred``; ``select_n`` (``jnp.where``) for cheap
    pure operands, ``lax.cond`` when evaluating an operand may have effects (``lazy``)."""
    if not is_traced(pred):
        return true_fn() if pred else false_fn()
    pred = truth(pred, "ifexp")
    if lazy:
        what = "this conditional expression (`a if c else b`) on a traced value"
        slot = error_channel.statement_slot()  # (a call in a side that raised stops the caller)
        with error_channel.traced_region():  # each side runs only for some data
            return _lazy_ifexp(pred, _guarded(true_fn, what), _guarded(false_fn, what), slot)
    # Both sides run; each is Python's value only where the condition picks it (a check in
    # one, such as a list index past its count, fails only there).
    with error_channel.on_path(lambda: pred):
        a = true_fn()
    with error_channel.on_path(lambda: jnp.logical_not(pred)):
        b = false_fn()
    _check_sides(a, b)
    out = jax.tree_util.tree_map(lambda a, b: a if _same_text(a, b) else jnp.where(pred, a, b), a, b)
    split.joined_python_floats((a, b), (out, out))
    return out


def _selectable(v) -> bool:
    return isinstance(v, (bool, int, float, complex, jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic))


def _same_text(a, b) -> bool:
    """Both sides give the same string: the value whichever side runs."""
    return type(a) is type(b) and isinstance(a, (str, bytes)) and a == b


def _check_sides(a, b) -> None:
    """The two sides of a conditional expression on a traced condition can be one array of the
    program: numbers or arrays of one structure. A Python value that differs between the sides
    (a string, ``None`` against a number) exists only in Python, which picks one side with the
    condition's concrete value: eager Python runs the line (``NeedsPython``)."""
    sides = [v for v in (a, b) if v is not error_channel.NOT_RETURNED]  # (a side that raised)
    flat = [jax.tree_util.tree_flatten(v) for v in sides]
    if all(tree == flat[0][1] for _, tree in flat) and all(
        all(map(_selectable, pair)) or _same_text(*pair) for pair in zip(*(leaves for leaves, _ in flat))
    ):
        return
    shown = [_side(a), _side(b)]
    raise NeedsPython(
        f"the sides of this conditional expression (`a if c else b`) are {shown[0]} and {shown[1]}, which "
        f"a compiled program cannot hold as one array",
        _user_location(),
        "Choose between numbers or arrays of one shape (`jnp.where(c, a, b)`), or make the Python value "
        "where the function is called, from its result.",
    )


def _side(v) -> str:
    if v is error_channel.NOT_RETURNED:
        return "an exception"
    if v is None or isinstance(v, (str, bytes, bool, int, float)):
        return f"`{v!r}`"[:40]
    if _selectable(v):
        return "a number" if isinstance(v, (int, float, complex)) else "an array"
    return f"a {type(v).__name__}"


def _caught(fn):
    """``fn``, where Python raises while it is traced (see ``error_channel.is_users_error``):
    that error recorded for the runs that take this side, which gives ``NOT_RETURNED`` (never
    observed: zeros of the other side's type)."""

    def run():
        try:
            return fn()
        except Exception as e:
            if not error_channel.is_users_error(e) or raised_by_array_library(e):  # JAX's: a fallback
                raise
            if isinstance(e, error_channel.PathRaised):
                # A helper that raises whenever it is called: its check is recorded; the
                # expression has no `raised` flag to set, but the side's flag is.
                error_channel.raised_here()
            else:
                error_channel.record_exception(e)
            return error_channel.NOT_RETURNED

    return run


def _lazy_ifexp(pred, true_fn, false_fn, slot=None):
    return error_channel.lazy_cond(pred, (_caught(true_fn), _caught(false_fn)), slot, cast_all=True, check=_check_sides)
