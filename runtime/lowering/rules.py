"""One lowering rule per op (see ``laxify.runtime.lowering.lowers``)."""

from __future__ import annotations

import re

from laxify.ir import CondOp, ForRangeOp, PyOp, Region, ReturnOp, ScanOp, TryOp, UndefOp, WhileOp, WithOp, YieldOp
from laxify.ir.dataflow import leading_args, loop_trace_deps, region_args
from laxify.ir.types import is_static
from laxify.runtime.lowering import Lowerer, lowers

CELL_PARAM = "_cell_"  # after the prefix: the parameter that carries a captured name into a generated function


def _leading_comment_lines(code: str) -> int:
    count = 0
    for text in code.split("\n"):
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            break
        count += 1
    return count


_CALLEE = re.compile(r"[A-Za-z_][\w.]*\(")


def _wrapped_whole(code: str) -> bool:
    """Whether ``code`` is one call or one parenthesised group from start to end."""
    m = _CALLEE.match(code)
    start = m.end() - 1 if m else (0 if code.startswith("(") else -1)
    if start < 0 or not code.endswith(")"):
        return False
    depth = 0
    for k, ch in enumerate(code[start:], start):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return k == len(code) - 1
    return False


def _needs_parens(code: str) -> bool:
    if "\n" in code or any(q in code for q in ("'", '"')):
        return True  # strings may hide parentheses: keep the safe form
    if _wrapped_whole(code):
        return False
    return any(tok in code for tok in (",", ":=", "lambda", "yield", " if "))


@lowers(PyOp)
def lower_py(low: Lowerer, op: PyOp) -> None:
    line, col = low.at(op)
    code = op.code
    if op.kind == "expr":
        result = op.results[0]
        if "\n" not in code and low.uses[id(result)] <= 1:
            low.inline[id(result)] = f"({code})" if _needs_parens(code) else code
            low.inline_bare[id(result)] = code
            return
        low.emitter.verbatim(f"{low.name(result)} = ({code})", line, col)
        return
    effects = op.attributes.get("effects")
    if effects is not None:
        # A `for` kept for its effect on an object from outside: the function runs as Python
        # where it runs over a traced value (runtime/effects.py ``kept_effects``).
        touched, iterated, fix = effects
        reads = [low.name(v) for v in op.operands if v.hint in iterated and id(v) not in low.inline]
        if reads:
            site = low.site(op, "for", (touched,), kept=(op.attributes["fallback"], fix))
            low.line(f"{low.runtime}.kept_effects({site}, {', '.join(reads)})", op)
    plain = op.attributes.get("plain")
    if plain is not None and all(is_static(v.type) for v in op.operands):
        code = plain  # Python ints only: no int32 to overflow (see runtime/numbers.py)
    low.emitter.verbatim(code, line - _leading_comment_lines(code), col)


@lowers(UndefOp)
def lower_undef(low: Lowerer, op: UndefOp) -> None:
    name = op.results[0].hint
    low.line(f"{name} = {low.runtime}.Undefined({name!r}, {low.site(op, 'undefined', (name,))})", op)


@lowers(ReturnOp)
def lower_return(low: Lowerer, op: ReturnOp) -> None:
    if not op.operands:
        low.line("return", op)
    elif low.may_be_undefined:
        low.line(f"return {low.runtime}.check_defined({low.ref(op.operands[0])})", op)
    else:
        # `return a, b` needs no parentheses around its tuple.
        value = op.operands[0]
        low.line(f"return {low.inline_bare.get(id(value), low.ref(value))}", op)


@lowers(YieldOp)
def lower_yield(low: Lowerer, op: YieldOp) -> None:
    raise AssertionError("'yield' is lowered by the op that owns its region")


def _body(low: Lowerer, region: Region, op, returns: str | None) -> None:
    """Emit a region's ops (not its yield) one level deeper, then return what it yields:
    ``returns`` is 'tuple' (every yielded value), 'single' (the one yielded value) or None."""
    low.emitter.depth += 1
    start = len(low.emitter.lines)
    low.region(Region(region.args, region.ops[:-1]))
    yields = region.terminator.operands
    if returns == "tuple":
        low.line(f"return {low.tuple_of(yields)}", op)
    elif returns == "single":
        low.line(f"return {low.ref(yields[0])}", op)
    elif len(low.emitter.lines) == start:
        low.line("pass", op)
    low.emitter.depth -= 1


def _written(region: Region) -> set[str]:
    return {r.hint for inner in region.ops for o in inner.walk() for r in o.results if r.hint}


def _function(low: Lowerer, name: str, params, region: Region, op, returns: str = "tuple") -> None:
    """A branch or loop function. The user's names that closures capture stay the user's
    variables inside it (``nonlocal``), so that a closure called in a branch or an iteration
    sees the value of that branch or iteration, as in Python."""
    shared = sorted(low.cells & (set(params) | _written(region)))
    if not shared:
        low.line(f"def {name}({', '.join(params)}):", op)
        _body(low, region, op, returns)
        return
    cell = low.prefix + CELL_PARAM
    params = [f"{cell}{p}" if p in low.cells else p for p in params]
    low.line(f"def {name}({', '.join(params)}):", op)
    low.emitter.depth += 1
    low.line(f"nonlocal {', '.join(shared)}", op)
    for p in params:
        if p.startswith(cell):
            low.line(f"{p[len(cell) :]} = {p}", op)
    low.emitter.depth -= 1
    _body(low, region, op, returns)


def _assign(low: Lowerer, op, call: str) -> None:
    if op.results:
        low.line(f"{low.targets(op.results)} = {call}", op)
    else:
        low.line(call, op)


@lowers(CondOp)
def lower_cond(low: Lowerer, op: CondOp) -> None:
    pred = low.ref(op.selector)
    if op.attributes.get("static"):
        if op.num_tests:
            _static_chain(low, op)
        else:
            _static_cond(low, op, pred)
        return
    written = set().union(*(_written(r) for r in op.branches))
    # A name a branch assigns is local to the branch function: pass its value in, unless no
    # branch reads it before assigning it (then the value may not even exist where the `if`
    # stands, for example a name the enclosing loop body assigns only after the `if`).
    # A cond that changes objects in place (`in_place`) is given every name its branches read:
    # one of them may refer to an object changed there (`e = ident(d)`), and each branch
    # receives its copies sharing as the names do (runtime/effects.py), so that `e` sees the
    # change to `d` (a closure would read the object the branch does not change).
    in_place = op.attributes.get("in_place", ())
    keep = [
        k
        for k, v in enumerate(op.inputs)
        if ((v.hint in written or in_place) and any(low.uses[id(r.args[k])] for r in op.branches)) or v.hint in in_place
    ]
    if op.num_tests:
        stems = ["if", *(["elif"] * op.num_tests), "else"]
    elif len(op.regions) == 2:
        stems = ["if_true", "if_false"]
    else:
        stems = [f"if_case{k}" for k in range(len(op.regions))]
    comments = op.attributes.get("arm_comments", ())
    names = []
    for k, (stem, region) in enumerate(zip(stems, op.branches)):
        for comment in comments[k] if k < len(comments) else ():
            low.line(comment, op)
        fn_name = low.fresh(stem)
        names.append(fn_name)
        params = [low.name(region.args[k]) for k in keep]
        _function(low, fn_name, params, region, op)
    operands = low.tuple_of([op.inputs[k] for k in keep])
    if op.num_tests:
        _chain_call(low, op, pred, names, operands)
        return
    guard = op.attributes.get("return_guard")
    after_raise = op.attributes.get("after_raise", False)
    if guard is not None:
        # `if not <returned>:` around the code after a statement that may return: its true
        # branch is that code, its false branch a `return` in the statement.
        jump = "branch where a `raise` ran" if after_raise else "branch where a `return` ran"
        site = low.site(
            op,
            guard,
            [r.hint for r in op.results],
            ("code after it", jump),
            after_raise=after_raise,
            return_guard=True,
        )
    else:
        site = low.site(op, "if", [r.hint for r in op.results], after_raise=after_raise)
    branches = "(" + ", ".join(names) + ")"
    _assign(low, op, f"{low.runtime}.cond({pred}, {branches}, {operands}, {site})")


def _arm_lines(low: Lowerer, op: CondOp) -> list[tuple[int, int]]:
    """The user's line and column of each condition of an ``elif`` chain."""
    out = [low.at(op)]
    for test in op.tests:
        out.append(low.at(test.ops[0]) if test.ops and test.ops[0].span else low.at(op))
    return out


def _test_thunk(low: Lowerer, op: CondOp, k: int) -> str:
    """Python text that evaluates the condition of ``elif`` arm ``k`` when called: a lambda of
    the condition's expression, or a function for a condition that needs statements."""
    test = op.tests[k - 1]
    value = test.terminator.operands[0]
    if all(_inlinable(low, o) for o in test.ops[:-1]):
        low.region(Region(test.args, test.ops[:-1]))  # no lines: each op becomes inline text
        return f"lambda: {low.ref(value)}"
    name = low.fresh("elif_test")
    _function(low, name, [], test, op, "single")
    return name


def _chain_call(low: Lowerer, op: CondOp, pred: str, names: list[str], operands: str) -> None:
    """``_lx.elif_chain`` with one line per arm, each at its user's line: the condition (the
    first one's value, a thunk for each later one, None for the ``else``) and its branch."""
    lines = _arm_lines(low, op)
    thunks = [pred] + [_test_thunk(low, op, k) for k in range(1, op.num_tests + 1)] + ["None"]
    labels = ["`if` branch"] + [f"`elif` branch on line {line}" for line, _ in lines[1:]] + ["`else` branch"]
    arm_lines = [line for line, _ in lines] + [lines[0][0]]  # the `else`: the `if` line
    site = low.site(op, "if", [r.hint for r in op.results], labels, arm_lines)
    head = f"{low.targets(op.results)} = " if op.results else ""
    low.line(f"{head}{low.runtime}.elif_chain((", op)
    low.emitter.depth += 1
    for k, (thunk, name) in enumerate(zip(thunks, names)):
        line, col = lines[min(k, len(lines) - 1)]
        end = f"), {operands}, {site})" if k == len(names) - 1 else ","
        low.emitter.line(f"({thunk}, {name}){end}", line, col)
    low.emitter.depth -= 1


def _static_chain(low: Lowerer, op: CondOp) -> None:
    """An ``elif`` chain whose conditions are all known while tracing: Python's own chain.
    A condition that needs statements of its own nests the rest of the chain under ``else:``."""
    comments = op.attributes.get("arm_comments", ())
    branches = op.branches
    nested = 0
    low.line(f"if {low.ref(op.selector)}:", op)
    _static_region(low, branches[0], op)
    for k in range(1, len(branches)):
        for comment in comments[k] if k < len(comments) else ():
            low.line(comment, op)
        if k == len(branches) - 1:
            if len(branches[k].ops) > 1 or any(
                low.ref(y) != low.name(r) for r, y in zip(op.results, branches[k].terminator.operands)
            ):
                low.line("else:", op)
                _static_region(low, branches[k], op)
            break
        test = op.tests[k - 1]
        at = test.ops[0] if test.ops and test.ops[0].span else op
        if all(_inlinable(low, o) for o in test.ops[:-1]):
            low.region(Region(test.args, test.ops[:-1]))
            low.line(f"elif {low.ref(test.terminator.operands[0])}:", at)
        else:
            low.line("else:", at)
            low.emitter.depth += 1
            nested += 1
            low.region(Region(test.args, test.ops[:-1]))
            low.line(f"if {low.ref(test.terminator.operands[0])}:", at)
        _static_region(low, branches[k], op)
    low.emitter.depth -= nested


def _static_cond(low: Lowerer, op: CondOp, pred: str) -> None:
    if len(op.regions) == 2:
        low.line(f"if {pred}:", op)
        _static_region(low, op.regions[0], op)
        other = op.regions[1]
        if len(other.ops) > 1 or any(low.ref(y) != low.name(r) for r, y in zip(op.results, other.terminator.operands)):
            low.line("else:", op)
            _static_region(low, other, op)
        return
    for k, region in enumerate(op.regions):
        low.line(f"{'if' if k == 0 else 'elif'} {pred} == {k}:", op)
        _static_region(low, region, op)


def _static_region(low: Lowerer, region: Region, op, unbind: bool = False) -> None:
    """A region inlined into Python control flow: its values already have their names.
    ``unbind``: the body of a ``for`` loop, whose carries without a value are deleted first."""
    low.emitter.depth += 1
    start = len(low.emitter.lines)
    if unbind:
        _unbind_unset(low, op, (region,))
    low.region(Region(region.args, region.ops[:-1]))
    for res, y in zip(op.results, region.terminator.operands):
        if low.ref(y) != low.name(res):
            low.line(f"{low.name(res)} = {low.ref(y)}", op)
    if len(low.emitter.lines) == start:
        low.line("pass", op)
    low.emitter.depth -= 1


def _unbind_unset(low: Lowerer, op, regions) -> None:
    """At the top of a loop kept as Python: a carry that has no value yet (its init is an
    ``Undefined`` stand-in) and that the loop reads before assigning it is deleted, so that
    every read of it raises UnboundLocalError as in Python (also ``acc is None``, which the
    stand-in cannot refuse)."""
    for k in _unset_reads(low, op, regions):
        name = low.name(regions[0].args[leading_args(op) + k])
        low.line(f"if isinstance({name}, {low.runtime}.Undefined):", op)
        low.emitter.depth += 1
        low.line(f"del {name}", op)
        low.emitter.depth -= 1


def _needs_unbind(low: Lowerer, op, regions) -> bool:
    return bool(_unset_reads(low, op, regions))


def _unset_reads(low: Lowerer, op, regions) -> list[int]:
    """The carries of a loop kept as Python that have no value yet and that its regions read."""
    lead = leading_args(op)
    return [
        k
        for k, init in enumerate(op.inits)
        if id(init) in low.undefined and any(_read(low, r.args[lead + k]) for r in regions)
    ]


def _read(low: Lowerer, value) -> bool:
    """Whether the user's code reads ``value``: a use that only hands it on (a loop body's or
    branch's yield, the initial carry of a nested loop or the input of a nested construct
    whose regions do not read it) is no read. A carry deleted for being unset is still
    named where it is handed on (``(a, i) = _lx.for_range(..., (a, i), ...)``), so deleting
    it for such a use would make the handing-on raise where Python does not."""
    for user, k in low.users.get(id(value), ()):
        if isinstance(user, YieldOp):
            if id(user) in low.tests:
                return True
            continue
        inner = region_args(user, k)
        if inner is None or any(_read(low, arg) for arg in inner):
            return True
    return False


def _inlinable(low: Lowerer, op) -> bool:
    return isinstance(op, PyOp) and op.kind == "expr" and "\n" not in op.code and low.uses[id(op.results[0])] <= 1


def _deps(low: Lowerer, op) -> str:
    """The carries and consts whose being traced makes the loop traced."""
    return low.tuple_of([op.operands[k] for k in loop_trace_deps(op)])


@lowers(WhileOp)
def lower_while(low: Lowerer, op: WhileOp) -> None:
    before, body = op.regions
    n = op.num_carries
    if op.attributes.get("static"):
        unbind = _needs_unbind(low, op, (before, body))
        if not unbind and all(_inlinable(low, o) for o in before.ops[:-1]):
            low.region(Region(before.args, before.ops[:-1]))
            low.line(f"while {low.ref(before.terminator.operands[0])}:", op)
            _static_region(low, body, op)
            return
        # The condition needs statements of its own: evaluate them at the top of each iteration.
        low.line("while True:", op)
        low.emitter.depth += 1
        if unbind:
            _unbind_unset(low, op, (before, body))
        low.region(Region(before.args, before.ops[:-1]))
        low.line(f"if not {low.ref(before.terminator.operands[0])}:", op)
        low.emitter.depth += 1
        low.line("break", op)
        low.emitter.depth -= 2
        _static_region(low, body, op)
        return
    cond_name, body_name = low.fresh("while_cond"), low.fresh("while_body")
    params = [low.name(a) for a in before.args[:n]]
    _function(low, cond_name, params, before, op, "single")
    _function(low, body_name, [low.name(a) for a in body.args[:n]], body, op)
    unread = [r.hint for r in op.results if not low.uses[id(r)]]
    site = low.site(op, "while", [r.hint for r in op.results], unread=unread)
    call = f"{low.runtime}.while_loop({cond_name}, {body_name}, {low.tuple_of(op.inits)}, {_deps(low, op)}, {site})"
    _assign(low, op, call)


@lowers(ForRangeOp)
def lower_for_range(low: Lowerer, op: ForRangeOp) -> None:
    body = op.regions[0]
    start, stop, step = (low.ref(v) for v in op.operands[:3])
    written = op.attributes.get("range_args", 3)
    if op.attributes.get("static"):
        args = stop if written == 1 else ", ".join((start, stop, step)[:written])
        low.line(f"for {low.name(body.args[0])} in range({args}):", op)
        _static_region(low, body, op, unbind=True)
        return
    # `range` as the user's code finds it: the runtime checks that it is still the builtin
    # (a global or closure variable may shadow it) and otherwise calls it as written.
    shadow = ", range_fn=range" + (f", range_args={written}" if written != 3 else "")
    # The carries that hold the index at the end of each iteration (the loop variable, read
    # after the loop): with static bounds its last value is the range's last item, a Python int.
    index = tuple(k for k, y in enumerate(body.terminator.operands) if y is body.args[0])
    if index:
        shadow += f", index_carries={index!r}"
    _loop_function(low, op, "for_range", f"{start}, {stop}, {step}", shadow)


@lowers(ScanOp)
def lower_scan(low: Lowerer, op: ScanOp) -> None:
    body = op.regions[0]
    xs = low.ref(op.operands[0])
    if op.attributes.get("static"):
        low.line(f"for {low.name(body.args[0])} in {xs}:", op)
        _static_region(low, body, op, unbind=True)
        return
    _loop_function(low, op, "for_each", xs)


def _loop_function(low: Lowerer, op, kind: str, lead: str, extra: str = "") -> None:
    body = op.regions[0]
    n = op.num_carries
    body_name = low.fresh(f"{'for' if kind == 'for_range' else 'for_each'}_body")
    params = [low.name(a) for a in body.args[: 1 + n]]
    _function(low, body_name, params, body, op)
    site = low.site(op, "for", [r.hint for r in op.results])
    if op.attributes.get("python_index"):
        extra = f", python_index={op.attributes['python_index']!r}" + extra
    call = f"{low.runtime}.{kind}({lead}, {body_name}, {low.tuple_of(op.inits)}, {_deps(low, op)}, {site}{extra})"
    _assign(low, op, call)


@lowers(TryOp)
def lower_try(low: Lowerer, op: TryOp) -> None:
    """The ``try`` statement as written, each block inlined under its header: it runs while
    tracing, around whatever its blocks became."""
    for header, (line, col), region in zip(op.attributes["headers"], op.attributes["places"], op.regions):
        low.emitter.verbatim(header, line, col)
        _static_region(low, region, op)


@lowers(WithOp)
def lower_with(low: Lowerer, op: WithOp) -> None:
    """The ``with`` statement as written, its region inlined: the managers enter and exit
    while tracing, around whatever the body became."""
    line, col = low.at(op)
    low.emitter.verbatim(op.attributes["code"], line, col)
    _static_region(low, op.regions[0], op)
