"""``sum``/``any``/``all`` of a generator expression over ``range(...)`` → a ``for`` loop before the
statement, which the loop converters then make one loop of the program (a traced ``range(n)``'s
too; over static bounds a loop whose body reads no traced value runs as Python, as before):

    total = sum(x[k] * k for k in range(n) if k % 2)
        →   _lx_sum_1 = 0
            for _lx_each_k_2 in range(n):
                if _lx_each_k_2 % 2:
                    _lx_sum_1 = _lx.summed(_lx_sum_1, x[_lx_each_k_2] * _lx_each_k_2)
            total = _lx.sum_result(_lx_sum_1)

    found = any(x[k] > 0 for k in range(n))
        →   _lx_any_1 = False
            for _lx_each_k_2 in range(n):
                if x[_lx_each_k_2] > 0:
                    _lx_any_1 = True
                    break
            found = _lx_any_1

``any`` and ``all`` stop where Python's stop (the ``break``): a later item is never computed.
The generator's variable gets a name of its own (it is the generator's, not the function's).
``_lx.summed`` adds as Python's ``sum`` adds (``runtime/iterables.py``).

The loop runs before the rest of the statement, where Python runs it in its place. So only a
statement in which that cannot be seen is rewritten: the reduction is computed whenever the
statement runs (not in a branch of ``a if c else b``, after ``and``/``or``, in a lambda or a
comprehension, or in a ``while`` test, which runs again), and every call in the statement is
of a function without effects (``abs``, ``len``, ``math``, ``jnp``, ``np``, ``lax``, an
array's ``sum``/``max``/...). The generator has one ``for``, over names and a ``range``, and no walrus, lambda
or comprehension of its own.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import libcst as cst
import numpy as np
from jax import lax

from laxify.transpiler.analysis.features import is_range_call
from laxify.transpiler.analysis.walk import descendants, walk
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply, holds_builtin
from laxify.transpiler.converters.guards import assign, runtime_call

__all__ = ["transform"]

_REDUCTIONS = frozenset({"sum", "any", "all"})
_RANGE = frozenset({"range"})
# Builtins without effects on their arguments (and no user code of their own to call but
# the arguments' dunders).
_PURE_BUILTINS = frozenset(
    {"abs", "min", "max", "len", "int", "float", "bool", "round", "sum", "any", "all", "range", "pow", "divmod"}
    | {"complex", "isinstance", "enumerate", "zip", "reversed", "sorted", "tuple", "list", "str", "repr", "hash"}
)
_PURE_MODULES = (math, np, jnp, lax)
# Methods of arrays that change nothing (a user object's method of that name is taken for one).
_PURE_METHODS = frozenset(
    {"sum", "mean", "max", "min", "prod", "astype", "reshape", "dot", "any", "all", "item", "conj", "transpose"}
    | {"ravel", "flatten", "squeeze", "std", "var", "argmax", "argmin", "cumsum", "clip", "round"}
)
_OWN_SCOPES = (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)
# Where a part of an expression runs whenever the expression does.
_ALWAYS_RUN = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Call,
    cst.Arg,
    cst.Tuple,
    cst.List,
    cst.Element,
    cst.Subscript,
    cst.SubscriptElement,
    cst.Index,
    cst.Attribute,
    cst.ComparisonTarget,
)


class ReductionsTransformer(OwnCodeConverter):
    def visit_ClassDef(self, node) -> bool:
        return False

    # -- what may be rewritten ------------------------------------------------------------------

    def builtin(self, func, names: frozenset) -> bool:
        return holds_builtin(self.ctx, func, names)

    def pure_call(self, call: cst.Call) -> bool:
        func = call.func
        if any(a.keyword is not None and a.keyword.value == "out" for a in call.args):
            return False
        if type(func) is cst.Name:
            return self.builtin(func, _PURE_BUILTINS)
        if type(func) is not cst.Attribute:
            return False
        if type(func.value) is cst.Name:
            is_global, value = self.ctx.global_value(func.value.value)
            if is_global and any(value is module for module in _PURE_MODULES):
                return True
        return func.attr.value in _PURE_METHODS

    def reduction(self, node) -> tuple[str, cst.GeneratorExp] | None:
        """``(name, generator)`` where ``node`` is ``sum``/``any``/``all`` of a generator
        expression this converter can write as a loop."""
        if type(node) is not cst.Call or not self.builtin(node.func, _REDUCTIONS) or not node.args:
            return None
        name, first = node.func.value, node.args[0]
        gen = first.value
        if type(gen) is not cst.GeneratorExp or first.keyword is not None or first.star:
            return None
        rest = node.args[1:]
        if name != "sum" and rest:
            return None
        if rest and (
            len(rest) > 1 or rest[0].star or (rest[0].keyword is not None and rest[0].keyword.value != "start")
        ):
            return None
        clause = gen.for_in
        if clause.inner_for_in is not None or clause.asynchronous is not None or _names(clause.target) is None:
            return None
        if not (is_range_call(clause.iter) and self.builtin(clause.iter.func, _RANGE)):
            # (over an array the loop would be the program's even where its items are Python's
            # values, which Python computes exactly while tracing: the generator stays)
            return None
        inside = [gen.elt, *(c.test for c in clause.ifs)]
        for part in inside:
            for n in descendants(part):
                if isinstance(n, (*_OWN_SCOPES, cst.NamedExpr, cst.Yield, cst.Await)):
                    return None
        return name, gen

    def rewritable(self, value: cst.BaseExpression) -> list[cst.Call]:
        """The reductions in ``value`` (the expression a statement evaluates once), in the order
        Python computes them, where the whole statement allows it; else []."""
        found: list[cst.Call] = []
        for node in walk(value):  # (pre-order: the order Python computes the calls in)
            if type(node) is cst.Call:
                if self.reduction(node) is not None:
                    found.append(node)
                elif not self.pure_call(node):
                    return []
            elif isinstance(node, (cst.NamedExpr, cst.Yield, cst.Await)):
                return []
        if not found:
            return []
        ids = {id(c) for c in found}
        if not _always_run(value, ids):
            return []
        inner = {id(n) for c in found for n in descendants(c.args[0].value)}
        return [c for c in found if id(c) not in inner]  # (one inside another's generator: its item)

    # -- the loop ------------------------------------------------------------------------------

    def loop_of(self, call: cst.Call) -> tuple[list[cst.BaseStatement], cst.BaseExpression]:
        name, gen = self.reduction(call)
        clause = gen.for_in
        renamed = {n: self.ctx.fresh(f"each_{n}") for n in _names(clause.target)}
        target = _renamed(clause.target, renamed)
        elt = _renamed(gen.elt, renamed)
        tests = [_renamed(c.test, renamed) for c in clause.ifs]
        result = self.ctx.fresh(name)
        if name == "sum":
            start = call.args[1].value if len(call.args) > 1 else cst.Integer("0")
            first = assign(result, start)
            step = [assign(result, runtime_call("summed", cst.Name(result), elt))]
            value: cst.BaseExpression = runtime_call("sum_result", cst.Name(result))
        else:
            decides = name == "any"  # any() ends at a true item, all() at a false one
            first = assign(result, cst.Name(str(not decides)))
            test = elt if decides else cst.UnaryOperation(cst.Not(), elt)
            body = [assign(result, cst.Name(str(decides))), cst.SimpleStatementLine([cst.Break()])]
            step = [cst.If(test=test, body=cst.IndentedBlock(body))]
            value = cst.Name(result)
        for test in reversed(tests):
            step = [cst.If(test=test, body=cst.IndentedBlock(step))]
        loop = cst.For(target=target, iter=clause.iter, body=cst.IndentedBlock(step))
        return [first, loop], value

    def rewrite(self, original, updated, value_field: str):
        value = getattr(updated, value_field)
        calls = self.rewritable(value) if value is not None else []
        if not calls:
            return updated
        before: list[cst.BaseStatement] = []
        replaced: dict = {}
        for call in calls:
            statements, result = self.loop_of(call)
            before += statements
            replaced[id(call)] = result
        line = updated.with_changes(**{value_field: _replace(value, replaced)})
        return before, line

    def _placed(self, original, statements: list, line) -> list:
        """``statements`` then ``line``, at the position of the user's statement ``original``."""
        pos = self.ctx.positions.get(original)
        if pos is not None:
            for s in statements:
                for n in descendants(s):
                    if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                        self.ctx.positions.setdefault(n, pos)
            self.ctx.positions.setdefault(line, pos)
        return [*statements, line]

    def _small(self, original, small) -> list | None:
        """The statements for the small statement ``small`` (``original``: the user's, which
        holds its position), or None where it stays as it is."""
        kind = type(small)
        if kind not in (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr):
            return None
        done = self.rewrite(small, small, "value")
        if done is small:
            return None
        before, new_small = done
        line = cst.SimpleStatementLine([new_small])
        return self._placed(original, before, line)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) != 1:
            return updated_node
        found = self._small(original_node, updated_node.body[0])
        if found is None:
            return updated_node
        found[-1] = updated_node.with_changes(body=found[-1].body)
        self.ctx.positions.setdefault(found[-1], self.ctx.positions.get(original_node))
        return cst.FlattenSentinel(found)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        # `if c: return sum(...)`: its statements as lines of a block, where one is rewritten
        lines, changed = [], False
        for original, small in zip(original_node.body, updated_node.body):
            found = self._small(original, small)
            if found is None:
                line = cst.SimpleStatementLine([small])
                pos = self.ctx.positions.get(original)
                if pos is not None:
                    self.ctx.positions.setdefault(line, pos)
                found = [line]
            else:
                changed = True
            lines += found
        return cst.IndentedBlock(lines) if changed else updated_node

    def leave_If(self, original_node, updated_node):
        if self.in_elif(original_node):
            return updated_node  # (an `elif` test runs only where the tests above fail)
        done = self.rewrite(original_node, updated_node, "test")
        if done is updated_node:
            return updated_node
        before, new_if = done
        return cst.FlattenSentinel(self._placed(original_node, before, new_if))

    elifs: frozenset = frozenset()

    def in_elif(self, node) -> bool:
        return id(node) in self.elifs


def _names(target) -> list[str] | None:
    """The names a ``for`` target binds, where it is a name or a tuple of names."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List) and all(
        type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements
    ):
        names = [e.value.value for e in target.elements]
        return names if len(set(names)) == len(names) else None
    return None


class _Renamer(cst.CSTTransformer):
    def __init__(self, renamed: dict):
        self.renamed = renamed

    def leave_Attribute(self, original_node, updated_node):
        return updated_node.with_changes(attr=original_node.attr)  # (no variable)

    def leave_Arg(self, original_node, updated_node):
        return updated_node.with_changes(keyword=original_node.keyword)  # (no variable)

    def leave_Name(self, original_node, updated_node):
        new = self.renamed.get(updated_node.value)
        return updated_node.with_changes(value=new) if new is not None else updated_node


def _renamed(node, renamed: dict):
    return node.visit(_Renamer(renamed))


class _Replacer(cst.CSTTransformer):
    def __init__(self, replaced: dict):
        self.replaced = replaced

    def leave_Call(self, original_node, updated_node):
        return self.replaced.get(id(original_node), updated_node)


def _replace(value, replaced: dict):
    return value.visit(_Replacer(replaced))


def _always_run(value: cst.BaseExpression, ids: set) -> bool:
    """Whether each node of ``ids`` in ``value`` is computed whenever ``value`` is: every node
    on its way down is one whose parts all run (not ``a if c else b``, ``and``/``or``, a chained
    comparison, a lambda or comprehension)."""

    def down(node) -> bool:
        if id(node) in ids:
            return True
        kind = type(node)
        if kind is cst.Comparison and len(node.comparisons) == 1:
            return all(down(c) for c in (node.left, node.comparisons[0]))
        if kind not in _ALWAYS_RUN:
            return not any(id(n) in ids for n in descendants(node))
        return all(down(c) for c in node.children if isinstance(c, cst.CSTNode))

    return down(value)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    transformer = ReductionsTransformer(ctx)
    transformer.elifs = frozenset(
        id(n.orelse) for n in descendants(node) if type(n) is cst.If and type(n.orelse) is cst.If
    )
    return apply(node, transformer)


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.GeneratorExp,)
