"""``a is b`` / ``a is not b`` and ``~``/``-``/``+`` on Python bools, when a traced construct may
have turned a Python value into a traced one.

Python: ``flag is False`` is true exactly when ``flag`` holds the Python ``False``. A name that
holds only Python bools in Python (every assignment a ``True``/``False`` literal, ``not ...``
or ``bool(...)``) is a traced boolean after a traced ``if`` or loop assigns it: identity with a
bool literal is then equality of values, and ``~flag`` is ``-int(flag) - 1`` as for Python's
``bool``. Where the Python identity cannot be known while tracing (two traced values that are
different objects now but may be one object in Python, a traced boolean that may have been a
Python bool) the answer is a located error, never a silent ``False``.
"""

from __future__ import annotations

import jax.numpy as jnp

from laxify.ir.errors import NeedsPython
from laxify.runtime.dispatch.logic import _user_location
from laxify.runtime.dispatch.values import is_traced

__all__ = ["bool_unary", "is_", "is_not"]

_BOOL, _PARAM = "bool", "param"


def is_(a, b, text: str, kinds: str):
    """``a is b``, as Python's identity would be on the path the program takes."""
    if not (is_traced(a) or is_traced(b)):
        flag = _concrete_flag(a, b, kinds)
        return a is b if flag is None else flag
    return _identity(a, b, text, kinds)


def is_not(a, b, text: str, kinds: str):
    """``a is not b``, as Python's identity would be on the path the program takes."""
    if not (is_traced(a) or is_traced(b)):
        flag = _concrete_flag(a, b, kinds)
        return a is not b if flag is None else not flag
    same = _identity(a, b, text, kinds)
    return (not same) if isinstance(same, bool) else jnp.logical_not(same)


def _concrete_flag(a, b, kinds: str):
    """``flag is True``/``False`` where the name holds Python bools in Python but a concrete
    boolean array here (left by a loop that the split fallback compiled): the Python bool
    it stands for compared with the literal; ``None`` for every other case."""
    if not (isinstance(a, bool) or isinstance(b, bool)):
        return None
    left, right = kinds.split(",")
    literal, value, kind = (b, a, left) if isinstance(b, bool) else (a, b, right)
    if (
        kind != _BOOL
        or isinstance(value, bool)
        or getattr(value, "dtype", None) != jnp.bool_
        or getattr(value, "shape", None) != ()
    ):
        return None
    return bool(value) is literal


def _identity(a, b, text: str, kinds: str):
    if a is b:
        return True
    left, right = kinds.split(",")
    if isinstance(b, bool) or isinstance(a, bool):
        literal, value, kind = (b, a, left) if isinstance(b, bool) else (a, b, right)
        if not is_traced(value):
            return value is literal
        is_bool_scalar = value.dtype == jnp.bool_ and value.shape == ()
        if kind == _BOOL:
            if not is_bool_scalar:
                raise _undecided(
                    text, "its operand holds Python bools in Python but a traced array that is not one boolean here"
                )
            return value if literal else jnp.logical_not(value)
        if is_bool_scalar and kind != _PARAM:
            raise _undecided(
                text,
                "its operand is a traced boolean here, which may have been a "
                "Python bool in Python (assigned on some paths only, or returned "
                "by a call)",
            )
        return False  # an array (or a number) is never the Python True/False
    if a is None or b is None or not (is_traced(a) and is_traced(b)):
        return False  # a traced value is never None, nor a Python object
    raise _undecided(
        text,
        "compares two traced values, which are different objects while laxify "
        "traces but may be the same object in Python on some paths",
    )


def _undecided(text: str, why: str) -> NeedsPython:
    return NeedsPython(
        f"`{text}` tests identity and {why}, so only Python can tell what `is` gives",
        _user_location(),
        "Compare values instead (`flag == False`, `not flag`, or `jnp.array_equal(a, b)`), or keep "
        "a separate Python flag that says which path was taken.",
    )


def bool_unary(op: str, value):
    """``~flag``, ``-flag``, ``+flag`` on a name that holds Python bools: Python's ``int``
    results (``~True == -2``), also when the flag became a boolean array (traced, or concrete
    after a loop compiled by the split fallback)."""
    if getattr(value, "dtype", None) != jnp.bool_:
        return {"~": lambda v: ~v, "-": lambda v: -v, "+": lambda v: +v}[op](value)
    as_int = value.astype(jnp.int32)
    return {"~": lambda v: -v - 1, "-": lambda v: -v, "+": lambda v: v}[op](as_int)
