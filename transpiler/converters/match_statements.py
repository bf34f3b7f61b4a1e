"""``match`` → an ``if``/``elif`` chain on the subject, evaluated once (``cond`` where traced).

Converted patterns: literals and values (``case 1:``, ``case -1:``, ``case "a":``,
``case Color.RED:``: ``==``), ``None``/``True``/``False`` (``is``), ``|`` alternatives,
``_``, captures (``case n:`` binds the subject), ``as`` names at the top of a case, and
guards. Or-patterns and guards combine with ``_lx.or_``/``_lx.and_``, which keep Python's
short-circuit on Python values and use ``jnp.logical_*`` on traced ones. A ``match`` with any
other pattern (sequence, mapping, class, star) matches as Python: the ``match`` statement is
kept with each case's body replaced by the number of that case, and the bodies follow as an
``if`` chain on that number, converted like any other block (a ``return`` or ``break`` in
them, a traced loop):

    match p:                          _lx_arm_1 = None
        case [a, b]:                  match p:
            return a + b                  case [a, b]:
        case _:               →                _lx_arm_1 = 0
            x = x - 1                     case _:
                                               _lx_arm_1 = 1
                                      if _lx_arm_1 == 0:
                                          return a + b
                                      elif _lx_arm_1 == 1:
                                          x = x - 1

    match f(x):                       _lx_subject_1 = f(x)
        case 1 | 2:                   if _lx.or_(_lx_subject_1 == 1, lambda: _lx_subject_1 == 2):
            a()                           a()
        case n if n > 0:      →       else:
            b(n)                          n = _lx_subject_1
        case _:                           if n > 0:
            c()                               b(n)
                                          else:
                                              c()
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from laxify.transpiler.analysis.walk import walk

from laxify.transpiler.analysis.names import expr_reads
from laxify.transpiler.converters.base import Context, OwnCodeConverter, apply

__all__ = ["transform"]


class _Unsupported(Exception):
    """A pattern this converter does not lower; the whole ``match`` stays Python."""


def _runtime(name: str, *args: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name(name)), [cst.Arg(a) for a in args])


def _lazy_flag() -> cst.Arg:
    return cst.Arg(
        cst.Name("True"),
        keyword=cst.Name("lazy"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def _has(node: cst.CSTNode, kinds: tuple) -> bool:
    return any(isinstance(n, kinds) for n in walk(node))


def _combine(op: str, conds: list[cst.BaseExpression], lazy: bool = False) -> cst.BaseExpression:
    """``c1 op c2 op ...`` as right-nested ``_lx.<op>(c1, lambda: ...)`` calls, in Python's
    evaluation order; ``lazy``: the right sides may have effects (run them in a ``cond``)."""
    result = conds[-1]
    for cond in reversed(conds[:-1]):
        call = _runtime(op, cond, cst.Lambda(cst.Parameters(), result))
        result = call.with_changes(args=[*call.args, _lazy_flag()]) if lazy else call
    return result


def _compare(subject: str, op: cst.BaseCompOp, value: cst.BaseExpression) -> cst.Comparison:
    return cst.Comparison(cst.Name(subject), [cst.ComparisonTarget(op, value)])


_PATTERN_KINDS = {
    cst.MatchSequence: "sequence",
    cst.MatchList: "sequence",
    cst.MatchTuple: "sequence",
    cst.MatchMapping: "mapping",
    cst.MatchClass: "class",
    cst.MatchStar: "star",
}


def _pattern(pattern: cst.MatchPattern, subject: str) -> tuple[cst.BaseExpression | None, list[str]]:
    """The condition under which ``pattern`` matches (None: always) and the names it binds
    (each to the subject itself)."""
    if isinstance(pattern, cst.MatchValue):
        return _compare(subject, cst.Equal(), pattern.value), []
    if isinstance(pattern, cst.MatchSingleton):
        return _compare(subject, cst.Is(), pattern.value), []
    if isinstance(pattern, cst.MatchAs):
        names = [] if pattern.name is None else [pattern.name.value]
        if pattern.pattern is None:
            return None, names
        cond, inner = _pattern(pattern.pattern, subject)
        return cond, inner + names
    if isinstance(pattern, cst.MatchOr):
        conds = []
        for element in pattern.patterns:
            cond, names = _pattern(element.pattern, subject)
            if names:
                raise _Unsupported("an alternative of `|` binds a name")
            if cond is None:
                return None, []  # an irrefutable alternative matches everything
            conds.append(cond)
        return _combine("or_", conds), []
    kind = _PATTERN_KINDS.get(type(pattern), type(pattern).__name__)
    raise _Unsupported(f"{kind} patterns are not converted")


def _bind(names: list[str], subject: str) -> list[cst.SimpleStatementLine]:
    return [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))], cst.Name(subject))]) for n in names]


def _prepend(suite: cst.BaseSuite, stmts: list[cst.SimpleStatementLine]) -> cst.BaseSuite:
    if not stmts:
        return suite
    if isinstance(suite, cst.SimpleStatementSuite):
        return suite.with_changes(body=[s.body[0] for s in stmts] + list(suite.body))
    return suite.with_changes(body=[*stmts, *suite.body])


def _statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine([small]) for small in suite.body]
    return list(suite.body)


@dataclass
class _Arm:
    """One case: run ``pre``, then ``body`` if ``test`` holds (``test`` None: always)."""

    test: cst.BaseExpression | None
    body: cst.BaseSuite
    leading_lines: tuple = ()
    pre: list = field(default_factory=list)


def _arm(case: cst.MatchCase, subject: str) -> _Arm:
    cond, names = _pattern(case.pattern, subject)
    guard = case.guard
    lines = tuple(case.leading_lines)
    if guard is None:
        return _Arm(cond, _prepend(case.body, _bind(names, subject)), lines)
    if cond is None:
        # `case n if g:` binds n before the guard is evaluated, whether or not it holds.
        return _Arm(guard, case.body, lines, _bind(names, subject))
    if set(names) & set(expr_reads(guard)):
        raise _Unsupported("a guard reads a name bound by an `as` pattern")
    if _has(guard, (cst.NamedExpr,)):
        raise _Unsupported("a guard of a refutable pattern contains `:=`")
    test = _combine("and_", [cond, guard], lazy=_has(guard, (cst.Call,)))  # a call may have effects
    return _Arm(test, _prepend(case.body, _bind(names, subject)), lines)


class MatchTransformer(OwnCodeConverter):
    def leave_Match(self, original_node: cst.Match, updated_node: cst.Match):
        subject = self.ctx.fresh("subject")
        try:
            arms = [_arm(case, subject) for case in updated_node.cases]
        except _Unsupported as why:
            self.ctx.notes.append(f"`match` patterns matched as Python: {why}")
            return self.matched_as_python(updated_node)
        if updated_node.footer:
            last = arms[-1]
            if isinstance(last.body, cst.IndentedBlock):
                last.body = last.body.with_changes(footer=[*last.body.footer, *updated_node.footer])
        assign = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(subject))], updated_node.subject)],
            leading_lines=updated_node.leading_lines,
            trailing_whitespace=updated_node.whitespace_after_colon,
        )
        rest: cst.If | cst.Else | None = None
        for arm in reversed(arms):
            if arm.test is None:
                rest = cst.Else(arm.body, leading_lines=arm.leading_lines)
                continue
            node = cst.If(arm.test, arm.body, orelse=rest, leading_lines=arm.leading_lines)
            if arm.pre:
                rest = cst.Else(
                    cst.IndentedBlock([*arm.pre, node.with_changes(leading_lines=())]), leading_lines=arm.leading_lines
                )
            else:
                rest = node
        if isinstance(rest, cst.Else):
            stmts = _statements(rest.body)
            stmts[0] = stmts[0].with_changes(leading_lines=[*rest.leading_lines, *stmts[0].leading_lines])
            return cst.FlattenSentinel([assign, *stmts])
        return cst.FlattenSentinel([assign, rest])

    def matched_as_python(self, node: cst.Match) -> cst.FlattenSentinel:
        """The ``match`` kept to match and bind as Python, setting the number of the case that
        matched; the cases' bodies after it as an ``if`` chain on that number."""
        arm = self.ctx.fresh("arm")

        def number(k: int) -> cst.IndentedBlock:
            return cst.IndentedBlock(
                [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(arm))], cst.Integer(str(k)))])]
            )

        cases = [case.with_changes(body=number(k)) for k, case in enumerate(node.cases)]
        kept = node.with_changes(cases=cases, leading_lines=(), footer=())
        last = node.cases[-1]
        irrefutable = last.guard is None and isinstance(last.pattern, cst.MatchAs) and last.pattern.pattern is None
        rest: cst.If | cst.Else | None = None
        for k in reversed(range(len(node.cases))):
            case = node.cases[k]
            body = case.body
            if k == len(node.cases) - 1 and node.footer and isinstance(body, cst.IndentedBlock):
                body = body.with_changes(footer=[*body.footer, *node.footer])
            if irrefutable and k == len(node.cases) - 1 and k > 0:
                rest = cst.Else(body, leading_lines=case.leading_lines)
                continue
            test = _compare(arm, cst.Equal(), cst.Integer(str(k)))
            rest = cst.If(test, body, orelse=rest, leading_lines=case.leading_lines)
        unset = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(arm))], cst.Name("None"))],
            leading_lines=node.leading_lines,
        )
        if irrefutable:
            return cst.FlattenSentinel([kept.with_changes(leading_lines=node.leading_lines), rest])
        return cst.FlattenSentinel([unset, kept, rest])


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Match,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    return apply(node, MatchTransformer(ctx))
