"""Type inference: without a signature (what is certainly static) or per input signature.

Forward over the regions; control-flow merges use :func:`laxify.ir.types.join`; loops
iterate to a fixpoint over their carries (carry widening). Values carried out of a traced
``cond`` or loop become arrays: Python numbers there are converted by JAX.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from laxify.ir.core import Function, Op, Region
from laxify.ir.naming import is_return_value
from laxify.ir.ops import CondOp, ForRangeOp, PyOp, ScanOp, TryOp, UndefOp, WhileOp, WithOp
from laxify.ir.types import (
    UNDEFINED,
    UNKNOWN,
    Array,
    Static,
    Type,
    TypeJoinError,
    Undefined,
    Unknown,
    _as_array,
    is_static,
    join,
)

__all__ = ["TypeInference", "MergeTypeError", "predicate_type"]

Evaluator = Callable[[PyOp, list[Type]], "list[Type] | None"]

MAX_FIXPOINT_STEPS = 6


class MergeTypeError(TypeError):
    """Two paths give one name types that do not join (shape or structure change)."""

    def __init__(self, op: Op, name: str, sides: tuple[str, str], error: TypeJoinError):
        self.op, self.name, self.sides, self.error = op, name, sides, error
        where = f" at line {op.span}" if op.span else ""
        super().__init__(
            f"'{name}'{where}: {sides[0]} gives {error.left}, {sides[1]} gives {error.right} ({error.reason})"
        )


def predicate_type(op: CondOp | WhileOp) -> Type:
    """The type of the value that decides a cond or a while loop (for an ``elif`` chain: a
    traced condition's type if any is traced, else an unknown one's, else the selector's)."""
    if isinstance(op, CondOp):
        types = [c.type for c in op.conditions()]
        return next((t for t in types if isinstance(t, Array)), next((t for t in types if not is_static(t)), types[0]))
    return op.regions[0].terminator.operands[0].type


def reachable_arms(op: CondOp) -> tuple[list[int], bool]:
    """The branches of a predicate ``cond`` (two regions, or an ``elif`` chain) that may run,
    given what is known of its conditions, and whether every condition that decides among
    them is static. A condition known to be false skips its arm; one known to be true ends
    the chain there (the later conditions are never evaluated)."""
    arms: list[int] = []
    static = True
    for k, cond in enumerate(op.conditions()):
        t = cond.type
        if isinstance(t, Static) and t.has_value:
            if t.value:
                return arms + [k], static
            continue
        static = static and is_static(t)
        arms.append(k)
    return arms + [len(op.branches) - 1], static


def _arm_name(op: CondOp, k: int) -> str:
    """The user's words for arm ``k`` of an ``elif`` chain."""
    if k == 0:
        return "the `if` branch"
    if k == len(op.branches) - 1:
        return "the `else` branch"
    test = op.tests[k - 1]
    span = test.ops[0].span if test.ops and test.ops[0].span else None
    return f"the `elif` branch on line {span.line}" if span else f"`elif` branch {k}"


def _traced(t: Type) -> Type:
    """The type a value has once a traced cond or loop carries it."""
    if isinstance(t, Static):
        return _as_array(t) or UNKNOWN
    return t


MAX_UNROLLED_TYPING = 64  # iterations typed one by one in a Python `for` (specialised IR only)


def _no_return_yet(op: PyOp) -> bool:
    """The return converter's ``<retval> = <runtime>.UndefinedReturn()``: no value returned yet;
    or ``<retval> = <runtime>.raised()``, the value of a path that raised (never read)."""
    return (
        len(op.results) == 1
        and is_return_value(op.results[0].hint)
        and op.code.rstrip().endswith((".UndefinedReturn()", ".raised()"))
    )


def _traced_carry(t: Type, init: Type) -> Type:
    """A carry's type in a traced loop. A Python number updated by Python arithmetic (``k = 0``
    then ``k += 1``) starts as the array its initial value becomes; the next iteration widens it."""
    traced = _traced(t)
    if isinstance(traced, Unknown) and isinstance(t, Static) and isinstance(init, Static):
        return _as_array(init) or traced
    return traced


@dataclass
class TypeInference:
    """Sets ``Value.type`` everywhere. ``param_types`` gives the signature (None: no signature)."""

    param_types: list[Type] | None = None
    evaluate: Evaluator | None = None
    name = "infer-types"

    def apply(self, fn: Function) -> None:
        types = self.param_types or [UNKNOWN] * len(fn.params)
        for p, t in zip(fn.params, types):
            p.type = t
        self._region(fn.body)

    # -- regions and ops -------------------------------------------------------------
    def _region(self, region: Region) -> None:
        for op in region.ops:
            self._op(op)

    def _op(self, op: Op) -> None:
        if isinstance(op, PyOp):
            self._py(op)
        elif isinstance(op, UndefOp):
            op.results[0].type = UNDEFINED
        elif isinstance(op, CondOp):
            self._cond(op)
        elif isinstance(op, WithOp):
            self._with(op)
        elif isinstance(op, TryOp):
            self._try(op)
        elif isinstance(op, WhileOp):
            self._loop(op, lambda: [], lambda carries: self._while_static(op))
        elif isinstance(op, ForRangeOp):
            bounds = [v.type for v in op.operands[:3]]
            static_bounds = all(is_static(t) for t in bounds)
            # The index is a Python int only in a loop that surely runs as Python: static
            # bounds and either an index that must be static or carries that all are.
            python = static_bounds and (op.attributes.get("python_index") is not None or self._carries_stay_static(op))
            index = Static(pytype=int) if python else Array((), "int32")
            if python and self.evaluate is not None and self._unrolled(op, bounds):
                return
            self._loop(op, lambda: [index], lambda carries: python)
        elif isinstance(op, ScanOp):
            xs = op.operands[0].type
            if isinstance(xs, Array):
                elem: Type = Array(xs.shape[1:] if xs.shape else None, xs.dtype, xs.weak)
            elif isinstance(xs, Static):
                elem = Static()
            else:
                elem = UNKNOWN
            self._loop(op, lambda: [elem], lambda carries: isinstance(xs, Static))

    def _unrolled(self, op: ForRangeOp, bounds: list[Type]) -> bool:
        """Types a Python ``for`` over a short static range iteration by iteration, as it runs
        (only with an evaluator: the specialised IR that ``f.ir(*args)`` shows)."""
        if not all(isinstance(t, Static) and t.has_value and isinstance(t.value, int) for t in bounds):
            return False
        indices = range(*(t.value for t in bounds)) if bounds[2].value else range(0)
        if len(indices) > MAX_UNROLLED_TYPING:
            return False
        carries = [v.type for v in op.inits]
        consts = [v.type for v in op.consts]
        for i in indices:
            carries = self._run_loop_regions(op, [Static(i)], carries, consts)
        for res, t in zip(op.results, carries):
            res.type = t
        return True

    def _carries_stay_static(self, op: ForRangeOp) -> bool:
        """Whether every carry stays static when the index is a Python int (a trial run)."""
        try:
            carries = self._fixpoint(op, lambda: [Static(pytype=int)], lambda carries: True)
        except TypeJoinError:
            return False
        return carries is not None and all(is_static(t) for t in carries)

    def _py(self, op: PyOp) -> None:
        if self.evaluate is not None and _no_return_yet(op):
            op.results[0].type = UNDEFINED  # joins with what the `return`s store
            return
        tys = [v.type for v in op.operands]
        rule = op.attributes.get("static", "never")
        deps = op.attributes.get("deps")
        decisive = tys if deps is None else [v.type for v in op.operands if v.hint in deps]
        if rule == "always" or (rule == "operands" and all(is_static(t) for t in decisive)):
            if "value" in op.attributes and len(op.results) == 1:
                op.results[0].type = Static(op.attributes["value"])
            elif self._static_value(op, tys):
                pass
            else:
                for r in op.results:
                    r.type = Static()
            return
        found = None
        if self.evaluate is not None and not any(isinstance(t, (Unknown, Undefined)) for t in tys):
            found = self.evaluate(op, tys)
        for k, r in enumerate(op.results):
            r.type = found[k] if found else UNKNOWN

    def _static_value(self, op: PyOp, tys: list[Type]) -> bool:
        """Static code of known values gets its values (specialised IR only)."""
        if self.evaluate is None or not op.results:
            return False
        # Arrays are run abstractly (`len(a) + 1`, `n = a.shape[0]`); a statement only meets
        # immutable Python values, so that nothing the user holds can be changed.
        immutable = (int, float, bool, complex, str, type(None))
        if not all(
            isinstance(t, Array)
            or isinstance(t, Static)
            and t.has_value
            and (op.kind == "expr" or type(t.value) in immutable)
            for t in tys
        ):
            return False
        try:
            found = self.evaluate(op, tys)
        except Exception:  # static code whose value cannot be worked out stays "some static value"
            return False
        if not found or len(found) != len(op.results) or not all(isinstance(t, Static) for t in found):
            return False
        for r, t in zip(op.results, found):
            r.type = t
        return True

    def _join_yields(self, op: Op, regions: list[Region], side_names: list[str]) -> list[Type]:
        yields = [r.terminator.operands for r in regions]
        out = []
        for k, res in enumerate(op.results):
            acc = yields[0][k].type
            for j in range(1, len(regions)):
                try:
                    acc = join(acc, yields[j][k].type)
                except TypeJoinError as e:
                    raise MergeTypeError(op, res.hint, (side_names[0], side_names[j]), e) from None
            out.append(acc)
        return out

    def _cond(self, op: CondOp) -> None:
        for region in op.regions:
            for arg, v in zip(region.args, op.inputs):
                arg.type = v.type
            self._region(region)
        if op.num_tests or len(op.regions) == 2:
            self._predicate_cond(op)
            return
        sel = op.selector.type
        if isinstance(sel, Static) and sel.has_value:
            value = sel.value
            chosen = (0 if value else 1) if len(op.regions) == 2 else int(value)
            for res, y in zip(op.results, op.regions[chosen].terminator.operands):
                res.type = y.type
            return
        names = (
            ["the true branch", "the false branch"]
            if len(op.regions) == 2
            else [f"branch {k}" for k in range(len(op.regions))]
        )
        types = self._join_yields(op, op.regions, names)
        if not is_static(sel):
            types = [_traced(t) for t in types]
        for res, t in zip(op.results, types):
            res.type = t

    def _predicate_cond(self, op: CondOp) -> None:
        """``if``/``else`` and ``if``/``elif``/``else``: the results join what the branches
        that may run yield (traced when a traced condition decides among them)."""
        arms, static = reachable_arms(op)
        branches = op.branches
        if len(arms) == 1:
            for res, y in zip(op.results, branches[arms[0]].terminator.operands):
                res.type = y.type
            return
        if op.num_tests:
            names = [_arm_name(op, k) for k in arms]
        else:
            names = ["the true branch", "the false branch"]
        types = self._join_yields(op, [branches[k] for k in arms], names)
        if not static:
            types = [_traced(t) for t in types]
        for res, t in zip(op.results, types):
            res.type = t

    def _with(self, op: WithOp) -> None:
        """The region runs once, as Python; what the ``as`` targets bind is not known."""
        region = op.regions[0]
        for k, arg in enumerate(region.args):
            arg.type = op.operands[k].type if k < len(op.operands) else UNKNOWN
        self._region(region)
        for res, y in zip(op.results, region.terminator.operands):
            res.type = y.type

    def _try(self, op: TryOp) -> None:
        """The body starts from the inputs; a handler from wherever the body raised, and the
        ``else``/``finally`` after it: their arguments, and the results, have unknown types."""
        for k, region in enumerate(op.regions):
            for j, arg in enumerate(region.args):
                arg.type = op.operands[j].type if k == 0 and j < len(op.operands) else UNKNOWN
            self._region(region)
        for res in op.results:
            res.type = UNKNOWN

    def _while_static(self, op: WhileOp) -> bool:
        return is_static(predicate_type(op))

    def _loop(self, op, lead_types: Callable[[], list[Type]], is_python: Callable[[list[Type]], bool]) -> None:
        try:
            carries = self._fixpoint(op, lead_types, is_python)
        except TypeJoinError as e:
            raise MergeTypeError(op, e.name, ("before the loop", "after one iteration"), e) from None
        if carries is None:  # no fixpoint: give up on these carries
            carries = [UNKNOWN] * op.num_carries
            self._run_loop_regions(op, lead_types(), carries, [v.type for v in op.consts])
        for res, t in zip(op.results, carries):
            res.type = t

    def _fixpoint(self, op, lead_types, is_python) -> list[Type] | None:
        """Carry types stable under one more iteration (None if none within the step limit).
        A join that fails raises TypeJoinError with ``name`` set to the carry's name."""
        carries = [v.type for v in op.inits]
        consts = [v.type for v in op.consts]
        for _ in range(MAX_FIXPOINT_STEPS):
            body_yields = self._run_loop_regions(op, lead_types(), carries, consts)
            new = []
            for k, (before, after) in enumerate(zip(carries, body_yields)):
                try:
                    new.append(join(before, after))
                except TypeJoinError as e:
                    e.name = op.results[k].hint
                    raise
            if not is_python(new):
                new = [_traced_carry(t, init.type) for t, init in zip(new, op.inits)]
            if new == carries:
                return carries
            carries = new
        return None

    def _run_loop_regions(self, op, lead: list[Type], carries: list[Type], consts: list[Type]) -> list[Type]:
        body = op.regions[-1]
        if isinstance(op, WhileOp):
            before = op.regions[0]
            for arg, t in zip(before.args, carries + consts):
                arg.type = t
            self._region(before)
        for arg, t in zip(body.args, lead + carries + consts):
            arg.type = t
        self._region(body)
        return [v.type for v in body.terminator.operands]
