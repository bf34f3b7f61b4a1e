"""A function that calls itself at most once on every path (linear recursion) → a loop going
down the calls and a loop coming back up (``runtime/recursion.py``):

    def power(a, n):                     def power(a, n):
        if n == 0:                           rec = _lx.recursion(power, ..., (n,))
            return 1                         if rec is None:
        half = power(a, n // 2)                  <the body as written: the depth is static>
        if n % 2:                            level = 1; depth = 0
            return half * half * a           while _lx.recursion_within(rec, level):   # the calls
        return half * half                       if n == 0:
                                     →               value = 1; break
                                                 level = _lx.recursion_deeper(rec, level)
                                                 frames = _lx.recursion_push(rec, frames, depth, (n,))
                                                 depth = depth + 1; n = n // 2; continue
                                             while depth > 0:                           # the returns
                                                 depth = depth - 1
                                                 (n,) = _lx.recursion_frame(frames, depth)
                                                 half = value
                                                 if n % 2:
                                                     value = half * half * a; continue
                                                 value = half * half; continue
                                             return value

Each iteration of the first loop is one call: the call's arguments become the parameters, and
the values the rest of the caller reads after the call (its *frame*) are saved. A `return`
that calls nothing ends the descent with its value. Each iteration of the second loop finishes
one caller, innermost first: its frame is restored and the call's value is the value from
below. A call that is the whole value of a `return` (a tail call) saves nothing and has nothing
to finish. Both are ordinary loops for the converters after this one: on a traced depth they
are ``lax.while_loop``s (``lax.scan``s under ``loop_options(max_iters=N)``), and on a depth
known while tracing they run as Python. A recursion as deep as Python's limit raises Python's
``RecursionError``. Where no value the ``if`` tests read is traced, the body as written runs
(its calls unroll while tracing, one level per call, as before).

Only where that is Python's order of evaluation and Python's values: the function is a
module's function whose global name is itself, with plain parameters (no ``*args``, keyword-
only or ``**kwargs``); every call of itself passes each parameter once and stands as a
statement of its own (a `return`, an assignment or an expression) in ``if``s only (a `return`
of a conditional expression is read as an ``if`` with a `return` on each side), evaluated
in that statement before anything else it calls except what encloses it; what runs after a
call calls itself no more; the body holds no ``try``, ``with``, nested ``def``/``lambda``/
``class``, ``global``/``nonlocal``, ``del``, ``yield``, ``return`` inside a loop, nor a change of
an object in place (the frames are values, where Python's callers share their objects). The
values a caller reads after its call must have been assigned before it on every path.
"""

from __future__ import annotations

import libcst as cst

from laxify.ir.user_code import behind_laxify_wrappers
from laxify.transpiler.analysis.names import MUTATING_METHODS, block_access, expr_reads, stmt_access
from laxify.transpiler.analysis.walk import children, descendants, walk
from laxify.transpiler.converters.base import Context
from laxify.transpiler.converters.guards import as_indented, assign, rewrite_blocks, runtime_call

__all__ = ["transform"]

# Not anywhere in a function converted here (see the module's docstring).
_REFUSED = (
    cst.Try,
    cst.TryStar,
    cst.With,
    cst.FunctionDef,
    cst.ClassDef,
    cst.Lambda,
    cst.Global,
    cst.Nonlocal,
    cst.Del,
    cst.Yield,
    cst.Await,
    cst.Match,
)
_LOOPS = (cst.For, cst.While)
# Between a statement and its call of itself: parts evaluated only for some values.
_CONDITIONAL = (
    cst.IfExp,
    cst.BooleanOperation,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Lambda,
)
_SITE_KINDS = (cst.Return, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr)


class _Site:
    """One call of itself: the statement line that holds it, the blocks around it (outermost
    first, each a statement list and the index of the statement that leads to the call)."""

    def __init__(self, line: cst.SimpleStatementLine, call: cst.Call, path: list, args: list):
        self.line, self.small, self.call, self.path, self.args = line, line.body[0], call, path, args
        self.tail = type(self.small) is cst.Return and self.small.value is call
        self.number = 0
        self.saved: list[str] = []


def _params(fn: cst.FunctionDef) -> list[str] | None:
    p = fn.params
    if type(p.star_arg) is not cst.MaybeSentinel or p.kwonly_params or p.star_kwarg is not None:
        return None
    return [q.name.value for q in (*p.posonly_params, *p.params)]


def _is_itself(value, code) -> bool:
    """Whether ``value`` (the global of the function's name) is that function (or laxify's
    wrapper of it): its calls are calls of itself."""
    return getattr(behind_laxify_wrappers(value), "__code__", None) is code


def _arguments(call: cst.Call, params: list[str]) -> list | None:
    """The call's argument for each parameter, in order; ``None`` unless each is given once."""
    given: dict[str, cst.BaseExpression] = {}
    for k, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else (params[k] if k < len(params) else None)
        if key not in params or key in given:
            return None
        given[key] = arg.value
    if len(given) != len(params):
        return None
    return [given[name] for name in params]


class _Plan:
    def __init__(self, name: str, params: list[str]):
        self.name, self.params = name, params
        self.sites: list[_Site] = []
        self.by_small: dict[int, _Site] = {}
        self.invariant: set[str] = set()  # parameters every call passes on as they are
        self.tested: list[str] = []  # parameters the tests of its `if`s read


def _plan(fn: cst.FunctionDef, name: str) -> _Plan | None:
    params = _params(fn)
    if params is None or fn.asynchronous is not None:
        return None
    plan = _Plan(name, params)
    body = list(as_indented(fn.body).body)
    calls = []
    for node in descendants(fn.body):
        kind = type(node)
        if kind in _REFUSED:
            return None
        if kind is cst.Name and node.value == name:
            calls.append(node)
        elif kind in _LOOPS and any(type(n) is cst.Return for n in descendants(node)):
            return None  # (a `return` of a loop would leave the loop the conversion writes)
        elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in MUTATING_METHODS:
            return None  # (an object changed in place: the frames are values)
    if not calls:
        return None
    if not _find_sites(body, [], plan):
        return None
    found = {id(site.call.func) for site in plan.sites}
    if len(found) != len(calls) or any(id(n) not in found for n in calls):
        return None  # its name read otherwise than as the callee of a call found
    everything = block_access(body)
    if everything.mutates:
        return None
    local = set(params) | set(everything.binds)
    invariant = {
        p
        for k, p in enumerate(params)
        if p not in everything.binds and all(type(s.args[k]) is cst.Name and s.args[k].value == p for s in plan.sites)
    }
    plan.invariant = invariant
    plan.tested = _tested(fn, plan)
    if not plan.tested:
        return None
    number = 0
    for site in plan.sites:
        suffix = _suffix(site, cst.Name("_lx_from_below"))
        if any(type(n) is cst.Name and n.value == name for s in suffix for n in descendants(s)):
            return None  # another call after this one: not linear
        if site.tail:
            continue
        number += 1
        site.number = number
        bound = set(params)
        for block, index in site.path:
            bound = _definite(block[:index], bound)
        reads: dict[str, None] = {}
        _free(suffix, set(), reads)
        saved = [n for n in reads if n in local and n not in invariant]
        if any(n not in bound for n in saved):
            return None  # a value read after the call that may have none before it
        site.saved = saved
    return plan


def _tested(fn: cst.FunctionDef, plan: _Plan) -> list[str]:
    """The parameters whose values decide where the calls stop (read by the tests of the
    ``if``s that hold a ``return`` or a call of itself, through the names assigned from them):
    where none is traced, the depth is known while tracing."""
    names: set[str] = set()
    lines = []
    for node in descendants(fn.body):
        if type(node) is cst.If and any(type(n) is cst.Return or id(n) in plan.by_small for n in descendants(node)):
            names |= set(expr_reads(node.test))
        elif type(node) is cst.SimpleStatementLine:
            access = stmt_access(node)
            lines.append((set(access.binds), set(access.reads)))
    grown = True
    while grown:
        grown = False
        for binds, reads in lines:
            if binds & names and not reads <= names:
                names |= reads
                grown = True
    return [p for p in plan.params if p in names]


def _find_sites(block: list, path: list, plan: _Plan) -> bool:
    """Find the calls of itself in ``block``; ``False`` where one stands where it cannot be
    converted."""
    name = plan.name
    for index, stmt in enumerate(block):
        here = [*path, (block, index)]
        if type(stmt) is cst.If:
            if _calls(stmt.test, name):
                return False
            if not _find_sites(list(as_indented(stmt.body).body), here, plan):
                return False
            orelse = stmt.orelse
            if type(orelse) is cst.Else:
                if not _find_sites(list(as_indented(orelse.body).body), here, plan):
                    return False
            elif type(orelse) is cst.If and not _find_sites([orelse], here, plan):
                return False
            continue
        if type(stmt) is not cst.SimpleStatementLine:
            if _calls(stmt, name):
                return False  # in a loop, or the test of a loop
            continue
        found = [
            n for n in descendants(stmt) if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == name
        ]
        if not found:
            continue
        if len(found) > 1 or len(stmt.body) != 1 or type(stmt.body[0]) not in _SITE_KINDS:
            return False
        if any(type(n) is cst.NamedExpr for n in descendants(stmt)):
            return False  # (a name the walrus binds before the call: the loop down would skip it)
        call = found[0]
        args = _arguments(call, plan.params)
        if args is None or not _evaluated_first(stmt.body[0], call) or any(_calls(a, name) for a in args):
            return False
        site = _Site(stmt, call, here[:-1] + [(block, index)], args)
        plan.sites.append(site)
        plan.by_small[id(stmt.body[0])] = site
    return True


def _calls(node: cst.CSTNode, name: str) -> bool:
    return any(type(n) is cst.Name and n.value == name for n in descendants(node))


def _evaluated_first(small: cst.CSTNode, call: cst.Call) -> bool:
    """Whether ``call`` runs whenever ``small`` does, and before every other call of ``small``
    that Python runs before it (one written before it, left to right, other than the calls
    whose arguments hold it): the calls after it run after the calls below, as in Python."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [small]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
    above = set()
    node = call
    while id(node) in parents:
        node = parents[id(node)]
        if type(node) in _CONDITIONAL:
            return False
        above.add(id(node))
    for node in walk(small):  # (in the order of the source)
        if node is call:
            return True
        if type(node) is cst.Call and id(node) not in above:
            return False
    return True


def _replace_call(node: cst.CSTNode, call: cst.Call, by: cst.BaseExpression) -> cst.CSTNode:
    class Replace(cst.CSTTransformer):
        def on_leave(self, original, updated):
            return by if original is call else updated

    return node.visit(Replace())


def _suffix(site: _Site, value: cst.BaseExpression) -> list:
    """What runs after the call on its path: its statement with the call's value in its place,
    then the rest of each block around it, innermost first."""
    small = _replace_call(site.small, site.call, value)
    first = site.line.with_changes(body=[small])
    out = [first]
    for block, index in reversed(site.path):
        if _ends(out):
            break  # (what follows the block is another path's)
        out.extend(block[index + 1 :])
    return out


def _definite(stmts: list, bound: set) -> set:
    """``bound`` and the names ``stmts`` assign on every path through them."""
    bound = set(bound)
    for stmt in stmts:
        if type(stmt) is cst.SimpleStatementLine:
            bound |= set(stmt_access(stmt).binds)
        elif type(stmt) is cst.If:
            bound |= _branches_bind(stmt, bound) - bound
    return bound


def _branches_bind(stmt: cst.If, bound: set) -> set:
    body = _definite(list(as_indented(stmt.body).body), bound)
    orelse = stmt.orelse
    if type(orelse) is cst.Else:
        other = _definite(list(as_indented(orelse.body).body), bound)
    elif type(orelse) is cst.If:
        other = _branches_bind(orelse, bound)
    else:
        other = bound
    return body & other


def _free(stmts: list, bound: set, out: dict) -> set:
    """Add to ``out`` the names ``stmts`` may read before assigning them (``bound``: assigned
    already); the names assigned on every path after them."""
    bound = set(bound)
    for stmt in stmts:
        if type(stmt) is cst.If:
            node, arms = stmt, []
            while type(node) is cst.If:
                for n in stmt_access(cst.SimpleStatementLine([cst.Expr(node.test)])).reads:
                    if n not in bound:
                        out.setdefault(n)
                arms.append(_free(list(as_indented(node.body).body), bound, out))
                node = node.orelse
            if type(node) is cst.Else:
                arms.append(_free(list(as_indented(node.body).body), bound, out))
            else:
                arms.append(bound)
            bound = set.intersection(*arms)
            continue
        access = stmt_access(stmt)
        for n in access.reads:
            if n not in bound:
                out.setdefault(n)
        if type(stmt) is cst.SimpleStatementLine:
            bound |= set(access.binds)
    return bound


def _ends(block: list) -> bool:
    """Whether every path through ``block`` ends in a ``return`` or ``raise``."""
    if not block:
        return False
    last = block[-1]
    if type(last) is cst.SimpleStatementLine:
        return any(type(s) in (cst.Return, cst.Raise) for s in last.body)
    if type(last) is cst.If:
        return _if_ends(last)
    return False


def _if_ends(stmt: cst.If) -> bool:
    if not _ends(list(as_indented(stmt.body).body)):
        return False
    orelse = stmt.orelse
    if type(orelse) is cst.Else:
        return _ends(list(as_indented(orelse.body).body))
    return type(orelse) is cst.If and _if_ends(orelse)


class _Writer:
    """Writes the two loops of one function."""

    def __init__(self, plan: _Plan, ctx: Context, fn: cst.FunctionDef):
        self.plan, self.ctx, self.fn = plan, ctx, fn
        self.positions = ctx.positions
        self.rec = ctx.fresh("recursion")
        self.level = ctx.fresh("level")
        self.depth = ctx.fresh("depth")
        # The value of the call below, in a 1-tuple: a list the function returns (a matrix as
        # lists) is a value the loops carry, not a list they append to. Named as the return
        # converter's slot is, so that a message says "the return value".
        self.value = ctx.fresh("retval")
        self.frames = {site.number: ctx.fresh("frames") for site in plan.sites if site.saved}
        # (several calls that finish on the way up: which one each level made, and its name)
        self.several = sum(not site.tail for site in plan.sites) > 1
        self.sites, self.site = (ctx.fresh("sites"), ctx.fresh("site")) if self.several else ("", "")

    def at(self, new, old):
        if old in self.positions:
            self.positions.setdefault(new, self.positions[old])
        return new

    def clone(self, stmt):
        """A copy of ``stmt`` (a statement the descent holds too), with its positions: the
        converters after this one key what they know by node."""
        copy = stmt.deep_clone()
        positions = self.positions
        for old, new in zip([stmt, *descendants(stmt)], [copy, *descendants(copy)]):
            if old in positions:
                positions.setdefault(new, positions[old])
        return copy

    def _leave(self, jump: type, value: cst.BaseExpression, old) -> list:
        held = cst.Tuple([cst.Element(value)])
        return [self.at(assign(self.value, held), old), self.at(cst.SimpleStatementLine([jump()]), old)]

    def _from_below(self) -> cst.Subscript:
        return cst.Subscript(cst.Name(self.value), [cst.SubscriptElement(cst.Index(cst.Integer("0")))])

    # -- the calls going down ---------------------------------------------------------------

    def down(self, block: list) -> list:
        """The loop down: a `return` ends it with its value, a call of itself descends."""
        return self._walk(block, cst.Break, True)

    def _walk(self, block: list, jump: type, calls: bool) -> list:
        """``block`` with each `return` as the value set and ``jump``, and (``calls``) each
        statement of a call of itself as the step down (the rest of its block runs on the way up)."""
        walk = self.down if calls else self.up
        out = []
        for stmt in block:
            if type(stmt) is cst.SimpleStatementLine:
                site = self.plan.by_small.get(id(stmt.body[0])) if calls else None
                if site is not None:
                    out.extend(self._descend(site))
                    return out
                ret = next((s for s in stmt.body if type(s) is cst.Return), None)
                if ret is not None:
                    before = stmt.body[: stmt.body.index(ret)]
                    if before:
                        out.append(self.at(stmt.with_changes(body=before), stmt))
                    out.extend(self._leave(jump, ret.value or cst.Name("None"), stmt))
                    return out
                out.append(stmt)
            elif type(stmt) is cst.If and self._holds_jump(stmt):
                out.append(self.at(rewrite_blocks(stmt, walk, self.positions), stmt))
            else:
                out.append(stmt)
        return out

    def _holds_jump(self, stmt) -> bool:
        return any(type(n) is cst.Return or id(n) in self.plan.by_small for n in descendants(stmt))

    def _descend(self, site: _Site) -> list:
        plan, line = self.plan, site.line
        out = [assign(self.level, runtime_call("recursion_deeper", cst.Name(self.rec), cst.Name(self.level)))]
        if site.saved:
            saved = cst.Tuple([cst.Element(cst.Name(n)) for n in site.saved])
            frames = self.frames[site.number]
            out.append(
                assign(
                    frames,
                    runtime_call("recursion_push", cst.Name(self.rec), cst.Name(frames), cst.Name(self.depth), saved),
                )
            )
        if not site.tail:
            if self.several:
                out.append(
                    assign(
                        self.sites,
                        runtime_call(
                            "recursion_push",
                            cst.Name(self.rec),
                            cst.Name(self.sites),
                            cst.Name(self.depth),
                            cst.Integer(str(site.number)),
                        ),
                    )
                )
            out.append(assign(self.depth, cst.BinaryOperation(cst.Name(self.depth), cst.Add(), cst.Integer("1"))))
        moved = [(p, a) for p, a in zip(plan.params, site.args) if p not in plan.invariant]
        if moved:
            targets = cst.Tuple([cst.Element(cst.Name(p)) for p, _ in moved])
            values = cst.Tuple([cst.Element(a) for _, a in moved])
            out.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(targets)], values)]))
        out.append(cst.SimpleStatementLine([cst.Continue()]))
        return [self.at(s, line) for s in out]

    # -- the returns coming up --------------------------------------------------------------

    def up(self, block: list) -> list:
        """The loop up: a `return` finishes the call with its value."""
        return self._walk(block, cst.Continue, False)

    def _finish(self, site: _Site) -> list:
        restore = cst.Tuple([cst.Element(cst.Name(n)) for n in site.saved])
        out = []
        if site.saved:
            out.append(
                self.at(
                    cst.SimpleStatementLine(
                        [
                            cst.Assign(
                                [cst.AssignTarget(restore)],
                                runtime_call(
                                    "recursion_frame", cst.Name(self.frames[site.number]), cst.Name(self.depth)
                                ),
                            )
                        ]
                    ),
                    site.line,
                )
            )
        suffix = [self.clone(s) for s in _suffix(site, self._from_below())]
        self.at(suffix[0], site.line)
        if not _ends(suffix):
            suffix.append(cst.SimpleStatementLine([cst.Return()]))
        return out + self.up(suffix)

    # -- the function -----------------------------------------------------------------------

    def function(self) -> cst.FunctionDef:
        fn, plan = self.fn, self.plan
        body = list(as_indented(fn.body).body)
        first = next(s for s in plan.sites).line
        line = self.positions.get(first)
        call_line = line[0] if isinstance(line, tuple) else 0
        code = self.ctx.code
        tested = cst.Tuple([cst.Element(cst.Name(p)) for p in plan.tested])
        if not _ends(body):
            body = [*body, cst.SimpleStatementLine([cst.Return()])]
        unrolled = cst.If(
            cst.Comparison(cst.Name(self.rec), [cst.ComparisonTarget(cst.Is(), cst.Name("None"))]),
            cst.IndentedBlock([self.clone(s) for s in body]),
        )
        head = [
            assign(
                self.rec,
                runtime_call(
                    "recursion",
                    cst.Name(plan.name),
                    cst.SimpleString(repr(code.co_qualname)),
                    cst.Integer(str(code.co_firstlineno)),
                    cst.Integer(str(call_line)),
                    tested,
                ),
            ),
            unrolled,
            assign(self.level, cst.Integer("1")),
            assign(self.depth, cst.Integer("0")),
            assign(self.value, runtime_call("Fillable", cst.SimpleString("'return value'"))),
        ]
        for number, frames in self.frames.items():
            head.append(assign(frames, runtime_call("Fillable", cst.SimpleString("'saved values'"))))
        if self.several:
            head.append(assign(self.sites, runtime_call("Fillable", cst.SimpleString("'saved values'"))))
        within = runtime_call("recursion_within", cst.Name(self.rec), cst.Name(self.level))
        descent = cst.While(within, cst.IndentedBlock(self.down(body)))
        out = [*head, descent]
        finishing = [s for s in plan.sites if not s.tail]
        if finishing:
            step = [assign(self.depth, cst.BinaryOperation(cst.Name(self.depth), cst.Subtract(), cst.Integer("1")))]
            if self.several:
                chain = None
                for site in reversed(finishing):
                    test = cst.Comparison(
                        cst.Name(self.site),
                        [cst.ComparisonTarget(cst.Equal(), cst.Integer(str(site.number)))],
                    )
                    arm = cst.IndentedBlock(self._finish(site))
                    chain = cst.If(test, arm, orelse=chain)
                step.append(
                    assign(self.site, runtime_call("recursion_frame", cst.Name(self.sites), cst.Name(self.depth)))
                )
                step.append(chain)
            else:
                step.extend(self._finish(finishing[0]))
            test = cst.Comparison(cst.Name(self.depth), [cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0"))])
            out.append(cst.While(test, cst.IndentedBlock(step)))
        out.append(cst.SimpleStatementLine([cst.Return(self._from_below())]))
        for stmt in out:
            self.at(stmt, first)
        return fn.with_changes(body=cst.IndentedBlock(out))


# What the pipeline looks for before running this converter (see analysis/features.py).
TRIGGERS = (cst.Call,)


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    code, name = ctx.code, node.name.value
    if code is None:
        return node
    if name in code.co_freevars:
        # A nested function that calls itself through its closure: which function the cell
        # holds is known at run time only (`_lx.recursion` checks it at each call).
        if name in code.co_varnames or name in code.co_cellvars:
            return node
    else:
        if name not in code.co_names or name in ctx.local_names:
            return node
        found, value = ctx.global_value(name)
        if not found or not _is_itself(value, code):
            return node
    read = _returns_as_ifs(node, name, ctx)
    plan = _plan(read, name)
    if plan is None:
        return node
    return _Writer(plan, ctx, read).function()


def _returns_as_ifs(fn: cst.FunctionDef, name: str, ctx: Context) -> cst.FunctionDef:
    """``return a if c else f(...)`` (a call of itself on a side) → ``if c: return a`` /
    ``else: return f(...)``: the same evaluation, and a call the loops can take."""

    def split(ret: cst.Return, line) -> cst.If:
        test, body, orelse = ret.value.test, ret.value.body, ret.value.orelse

        def returning(value):
            if type(value) is cst.IfExp and _calls(value, name):
                return split(cst.Return(value), line)
            new = cst.SimpleStatementLine([cst.Return(value)])
            if line in ctx.positions:
                ctx.positions.setdefault(new, ctx.positions[line])
            return new

        other = returning(orelse)
        node = cst.If(
            test,
            cst.IndentedBlock([returning(body)]),
            orelse=other if type(other) is cst.If else cst.Else(cst.IndentedBlock([other])),
        )
        if line in ctx.positions:
            ctx.positions.setdefault(node, ctx.positions[line])
        return node

    def block(stmts: list) -> list:
        out = []
        for stmt in stmts:
            if (
                type(stmt) is cst.SimpleStatementLine
                and len(stmt.body) == 1
                and type(stmt.body[0]) is cst.Return
                and type(stmt.body[0].value) is cst.IfExp
                and _calls(stmt.body[0].value, name)
            ):
                out.append(split(stmt.body[0], stmt))
            elif type(stmt) is cst.If and _calls(stmt, name):
                out.append(rewrite_blocks(stmt, block, ctx.positions))
            else:
                out.append(stmt)
        return out

    body = list(as_indented(fn.body).body)
    new = block(body)
    if all(a is b for a, b in zip(new, body)):
        return fn
    return fn.with_changes(body=cst.IndentedBlock(new))
