"""Per-signature type inference for ``py`` ops: run their code abstractly with
``jax.eval_shape`` (no FLOPs), so that ``f.ir(*args)`` and ``f.explain(*args)`` show real
shapes and dtypes and know which conditions are traced."""

from __future__ import annotations

from typing import Callable

import jax
import numpy as np

from laxify.ir import PyOp
from laxify.ir.types import UNKNOWN, Array, PyTree, Static, Type, Unknown
from laxify.runtime.dispatch.values import Undefined

__all__ = ["make_evaluator"]


def _abstract(t: Type):
    if isinstance(t, Array) and t.shape is not None and t.dtype is not None:
        return jax.ShapeDtypeStruct(t.shape, np.dtype(t.dtype), weak_type=t.weak)
    if isinstance(t, Static) and t.has_value:
        return t.value
    raise LookupError("not concrete enough to evaluate")


def _typed(value) -> Type:
    if isinstance(value, Undefined):  # (no value yet: any use of it raises, `hasattr` too)
        return UNKNOWN
    if isinstance(value, jax.ShapeDtypeStruct) or hasattr(value, "shape") and hasattr(value, "dtype"):
        return Array(tuple(value.shape), str(value.dtype), bool(getattr(value, "weak_type", False)))
    if type(value) in (bool, int, float, complex, str) or value is None:
        return Static(value)
    if isinstance(value, (np.dtype, type)) or callable(value):
        return Static(pytype=type(value))
    if type(value) in (tuple, list):
        children = tuple(_typed(v) for v in value)
        if any(isinstance(c, Unknown) for c in children):
            return UNKNOWN
        return PyTree(type(value).__name__, tuple(range(len(value))), children)
    return UNKNOWN


def _merge(shapes, raw):
    """``raw`` with its arrays replaced by their shapes from ``jax.eval_shape``."""
    if isinstance(shapes, jax.ShapeDtypeStruct):
        return shapes
    if type(raw) in (tuple, list) and type(shapes) is type(raw) and len(shapes) == len(raw):
        return type(raw)(_merge(s, r) for s, r in zip(shapes, raw))
    return raw


def make_evaluator(globals_: dict) -> Callable[[PyOp, list[Type]], "list[Type] | None"]:
    """An evaluator for :class:`laxify.ir.passes.TypeInference` using ``globals_``."""

    from laxify.ir.naming import DEFAULT_PREFIX
    from laxify.runtime import dispatch

    # The code of laxify's own ops calls the runtime through its handle (``_lx.not_(...)``).
    globals_ = {**globals_, DEFAULT_PREFIX: dispatch} if DEFAULT_PREFIX not in globals_ else globals_

    def evaluate(op: PyOp, types: list[Type]):
        names = [v.hint for v in op.operands]
        try:
            values = [_abstract(t) for t in types]
        except LookupError:
            return None
        traced = [k for k, v in enumerate(values) if isinstance(v, jax.ShapeDtypeStruct)]
        if op.kind == "expr":
            body = f"    return ({op.code})"
        else:
            written = ", ".join(r.hint for r in op.results)
            body = "\n".join("    " + ln for ln in op.code.splitlines()) + f"\n    return ({written},)"
        source = f"def _lx_eval({', '.join(names)}):\n{body}\n"
        namespace: dict = {}
        try:
            exec(compile(source, "<laxify type evaluation>", "exec"), globals_, namespace)
            fn = namespace["_lx_eval"]

            raw: list = []

            def run(*arrays):
                full = list(values)
                for k, a in zip(traced, arrays):
                    full[k] = a
                raw.append(fn(*full))
                # Only arrays come back through eval_shape; Python values are kept as they are.
                return jax.tree_util.tree_map(lambda v: v if isinstance(v, jax.Array) else None, raw[0])

            out = _merge(jax.eval_shape(run, *[values[k] for k in traced]), raw[0]) if traced else fn(*values)
        except Exception:
            return None
        outs = [out] if op.kind == "expr" else list(out)
        return [_typed(v) for v in outs]

    return evaluate
