"""Static folding: control flow decided while tracing becomes plain Python.

A ``cond`` whose selector has a known value is replaced by the region it takes. A ``cond``
or loop whose predicate, bounds or sequence are static (but not known) is marked
``static=True`` so that lowering emits a Python ``if``/``while``/``for``.
"""

from __future__ import annotations

from dataclasses import dataclass

from laxify.ir.core import Function, Op, Region, Value
from laxify.ir.ops import CondOp, ForRangeOp, ScanOp, WhileOp
from laxify.ir.passes.infer_types import predicate_type
from laxify.ir.types import Static, is_static

__all__ = ["StaticFolding", "replace_uses"]


def replace_uses(region: Region, mapping: dict[int, Value]) -> None:
    """Rewrite every operand found in ``mapping`` (keyed by ``id`` of the old value)."""
    for op in region.walk():
        op.operands = [mapping.get(id(v), v) for v in op.operands]


@dataclass(frozen=True)
class StaticFolding:
    name = "fold-static"

    def apply(self, fn: Function) -> None:
        mapping: dict[int, Value] = {}
        self._region(fn.body, mapping)
        if mapping:
            # Chains (a folded cond yielding a value of another folded cond) resolve here.
            for key, v in list(mapping.items()):
                while id(v) in mapping:
                    v = mapping[id(v)]
                mapping[key] = v
            replace_uses(fn.body, mapping)

    def _region(self, region: Region, mapping: dict[int, Value]) -> None:
        new_ops: list[Op] = []
        for op in region.ops:
            for inner in op.regions:
                self._region(inner, mapping)
            if isinstance(op, CondOp) and op.num_tests:
                self._fold_chain(op, mapping, new_ops)
                if op.num_tests:
                    new_ops.append(op)
                    continue
            if isinstance(op, CondOp):
                sel = op.selector.type
                if isinstance(sel, Static) and sel.has_value:
                    new_ops.extend(self._inline(op, mapping))
                    continue
                op.attributes["static"] = is_static(sel)
            elif isinstance(op, WhileOp):
                op.attributes["static"] = is_static(predicate_type(op))
            elif isinstance(op, ForRangeOp):
                op.attributes["static"] = all(is_static(v.type) for v in op.operands[:3]) and all(
                    is_static(v.type) for v in op.results
                )
            elif isinstance(op, ScanOp):
                op.attributes["static"] = is_static(op.operands[0].type)
            new_ops.append(op)
        region.ops = new_ops

    def _fold_chain(self, op: CondOp, mapping: dict[int, Value], out: list[Op]) -> None:
        """An ``elif`` chain whose conditions are partly known: a known-false leading
        condition hands the selection to the next one (whose test then runs before the
        chain), a known-false later one drops its arm, a known-true later one ends the chain
        (its arm becomes the ``else``). What is left may be a plain two-way ``cond``."""
        while op.num_tests:
            sel = op.selector.type
            if not (isinstance(sel, Static) and sel.has_value) or sel.value:
                break
            test = op.tests[0]
            for arg, v in zip(test.args, op.inputs):
                mapping[id(arg)] = mapping.get(id(v), v)
            out.extend(test.ops[:-1])
            op.operands[0] = test.terminator.operands[0]
            del op.regions[op.num_tests]  # the skipped arm's branch
            del op.regions[0]
            op.attributes["num_tests"] -= 1
        conds, tests, branches = op.conditions(), op.tests, op.branches
        if op.num_tests and isinstance(op.selector.type, Static) and op.selector.type.has_value:
            op.regions = [branches[0], branches[-1]]  # the `if` arm is taken: a plain cond folds it
            op.attributes.pop("num_tests")
            return
        kept_tests, kept_branches = [], [branches[0]]
        for c in range(1, len(conds)):
            t = conds[c].type
            if isinstance(t, Static) and t.has_value:
                if t.value:
                    kept_branches.append(branches[c])
                    break
                continue
            kept_tests.append(tests[c - 1])
            kept_branches.append(branches[c])
        else:
            kept_branches.append(branches[-1])
        op.regions = kept_tests + kept_branches
        if kept_tests:
            op.attributes["num_tests"] = len(kept_tests)
            op.attributes["static"] = all(is_static(c.type) for c in op.conditions())
        else:
            op.attributes.pop("num_tests", None)

    def _inline(self, op: CondOp, mapping: dict[int, Value]) -> list[Op]:
        value = op.selector.type.value
        chosen = op.regions[(0 if value else 1) if len(op.regions) == 2 else int(value)]
        for arg, v in zip(chosen.args, op.inputs):
            mapping[id(arg)] = mapping.get(id(v), v)
        for res, y in zip(op.results, chosen.terminator.operands):
            mapping[id(res)] = mapping.get(id(y), y)
        return chosen.ops[:-1]
