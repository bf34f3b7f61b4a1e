"""Straight-line segments of a split function (docs/semantics.md, "Split fallback").

A ``to_static`` function that falls back runs its converted code eagerly, each loop and each
taken branch of a traced ``if`` tried as a compiled program of its own (``runtime/split.py``).
The code *between* those constructs would run op by op. For the split run, the converted code
is compiled once more with each run of consecutive plain statements around the statement that
needs Python (the fallback's line) grouped into a function of its own:

    def _lx_seg_1(x, n):                 # the names it reads that are bound before it
        acc, i = x, 0
        ... (a loop's body function and its dispatcher call)
        return (acc,)                     # the names it assigns that are read elsewhere
    (acc,) = _lx.segment(_lx_seg_1, (x, n), _lx_sites[7])

which the split run compiles as one program (a construct of the plan, as a taken branch is;
``split.run_segment``), or runs as it is where its trace needs Python. The statement at the
fallback's line is never inside a segment; inside a loop body or branch function that holds
it, the same grouping applies to that function's statements. Outside a split run (and while
a construct is traced) ``_lx.segment`` is a call of the function.

A run of statements is grouped only where the names it hands on are plain to follow: the
statements are assignments, expressions and laxify's own function definitions (no
``return``, ``global``, ``del``, ``import``, ``yield``, block statement, ``super()`` or
``locals()``), every name it reads from before it was assigned by a statement of the same
block before it (so passing it cannot meet an unbound name that Python would not read), and
no function it defines is used after it or closes over a name assigned after it.
"""

from __future__ import annotations

import ast

from laxify.runtime.lowering import Site

__all__ = ["segment_function"]

_GROUPABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_FORBIDDEN_NAMES = frozenset({"super", "locals", "vars", "exec", "eval", "__class__"})
_MIN_STATEMENTS = 2  # a group of one statement (besides definitions) gains nothing
# The functions laxify makes for a loop's condition and body: not grouped inside. A loop that
# runs as Python decides each iteration in Python on the values its body computes, and a body
# compiled as one program computes them with XLA's float arithmetic, not eager's (on CPU,
# `a - q * r` is one fused multiply-add): `while r != 0` after `r = a - q * r` ran once eagerly
# and three times so (extended_gcd of the real-code corpus). The loops inside such a body are
# still compiled one by one, as before segments.
_LOOP_PARTS = ("while_body", "while_cond", "for_body", "for_each_body")


def _params(fn) -> set[str]:
    args = fn.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if args.vararg:
        names.add(args.vararg.arg)
    if args.kwarg:
        names.add(args.kwarg.arg)
    return names


def _children(node):
    """``node``'s child nodes in its own scope (a nested scope's body is not entered, only what
    the enclosing scope evaluates: defaults, decorators, a comprehension's first iterable)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*node.decorator_list, *node.args.defaults, *[d for d in node.args.kw_defaults if d]]
    if isinstance(node, ast.Lambda):
        return [*node.args.defaults, *[d for d in node.args.kw_defaults if d]]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return [node.generators[0].iter]
    return list(ast.iter_child_nodes(node))


def _stores(nodes) -> set[str]:
    """Names the statements ``nodes`` bind in their own scope."""
    found: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        stack.extend(_children(node))
    return found


def _loads(nodes) -> set[str]:
    """Names the statements ``nodes`` read, in their own scope or as free names of the scopes
    nested in them (a function defined there reads them when it runs)."""
    found: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        if isinstance(node, _SCOPES):
            found |= _free(node)
        stack.extend(_children(node))
    return found


def _free(scope) -> set[str]:
    """The names a nested scope reads that it does not bind itself."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        own = _params(scope) | _stores(body)
        return _loads(body) - own
    if isinstance(scope, ast.ClassDef):
        return _loads(scope.body)
    # a comprehension: its generators' targets are its own
    own = _stores([g.target for g in scope.generators])
    inner = [*(g.iter for g in scope.generators[1:]), *(c for g in scope.generators for c in g.ifs)]
    inner += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    return _loads(inner) - own


def _unsafe(stmt) -> bool:
    """Whether moving ``stmt`` into a function of its own could change what it means: a
    ``return``/``yield``/``await``/walrus of its own scope, a ``global``/``nonlocal`` anywhere
    (a nested function's would then name the segment's locals), ``super()``, ``locals()``."""
    stack = [(stmt, True)]
    while stack:
        node, own = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        if own and isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Return, ast.NamedExpr)):
            return True
        if isinstance(node, ast.Name) and node.id in _FORBIDDEN_NAMES:
            return True
        inner = own and not isinstance(node, _SCOPES)  # (a nested scope's own statements are not)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return False


def _tests_identity(fn, runtime: str) -> bool:
    """Whether ``fn`` tests the identity of values other than ``None``/``True``/``False``
    (``y is x``, ``id(y)``): a segment's program gives new arrays where Python may keep the
    very object on some path (``y = x`` in a branch), so its statements are not grouped."""

    def literal(node) -> bool:
        return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))

    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            if not any(literal(v) for v in (node.left, *node.comparators)):
                return True
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "id":
                return True
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id == runtime
                and f.attr in ("is_", "is_not")
                and not any(literal(a) for a in node.args[:2])
            ):
                return True
    return False


class _Segmenter:
    def __init__(self, lines: frozenset[int], prefix: str, runtime: str, sites_name: str, sites: list, filename: str):
        self.lines, self.prefix, self.runtime, self.sites_name = lines, prefix, runtime, sites_name
        self.sites, self.filename = sites, filename
        self.locals: set[str] = set()
        self.count = 0

    def _spans(self, stmt) -> bool:
        end = getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno
        return any(stmt.lineno <= line <= end for line in self.lines)

    def _groupable(self, stmt) -> bool:
        if isinstance(stmt, ast.FunctionDef):
            return stmt.name.startswith(self.prefix + "_") and not self._spans(stmt) and not _unsafe(stmt)
        return isinstance(stmt, _GROUPABLE) and not self._spans(stmt) and not _unsafe(stmt)

    def function(self, fn) -> None:
        """Group the statements of ``fn`` (and of laxify's functions defined in it)."""
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in fn.body) or _tests_identity(fn, self.runtime):
            return
        for stmt in fn.body:
            if (
                isinstance(stmt, ast.FunctionDef)
                and stmt.name.startswith(self.prefix + "_")
                and not any(stmt.name.startswith(f"{self.prefix}_{stem}") for stem in _LOOP_PARTS)
            ):
                self.function(stmt)
        if not any(self._spans(s) for s in fn.body):
            return  # no statement here needs Python: the whole function is a construct's body
        fn.body = self.block(fn, fn.body)

    def block(self, fn, body: list) -> list:
        self.locals = _params(fn) | _stores(fn.body)  # (the names of ``fn``'s own scope)
        out: list = []
        definite = set(_params(fn))  # names surely bound before the statement being looked at
        k = 0
        while k < len(body):
            if not self._groupable(body[k]):
                out.append(body[k])
                definite |= self._definite(body[k])
                k += 1
                continue
            j = k
            while j < len(body) and self._groupable(body[j]):
                j += 1
            group = body[k:j]
            made = self._segment(fn, body, k, j, definite)
            out.extend(made if made is not None else group)
            for stmt in group:
                definite |= self._definite(stmt)
            k = j
        return out

    @staticmethod
    def _definite(stmt) -> set[str]:
        if isinstance(
            stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        ):
            return _stores([stmt])
        return set()

    def _segment(self, fn, body: list, k: int, j: int, definite: set[str]):
        group = body[k:j]
        if sum(not isinstance(s, ast.FunctionDef) for s in group) < _MIN_STATEMENTS:
            return None
        local = self.locals
        reads = _loads(group) & local
        stores = _stores(group) & local
        if not reads <= definite | stores:
            return None  # a name that may be unbound where the group starts
        inputs = sorted(reads & definite)
        elsewhere = _loads(body[:k] + body[j:])
        outputs = sorted(stores & elsewhere)
        later = _stores(body[j:])
        for stmt in group:
            if isinstance(stmt, ast.FunctionDef) and (stmt.name in elsewhere or _free(stmt) & later):
                return None  # a function used after the group, or reading names set after it
        self.count += 1
        name = f"{self.prefix}_seg_{self.count}"
        first = group[0]
        site = Site(
            "segment",
            self.filename,
            first.lineno,
            first.col_offset,
            tuple(outputs),
            end_line=max(getattr(s, "end_lineno", None) or s.lineno for s in group),
        )
        self.sites.append(site)
        index = len(self.sites) - 1

        def tup(names, ctx):
            return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())

        returned = ast.Return(tup(outputs, ast.Load))
        ast.copy_location(returned, group[-1])
        definition = ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[], args=[ast.arg(n) for n in inputs], kwonlyargs=[], kw_defaults=[], defaults=[]
            ),
            body=[*group, returned],
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
        if "type_params" in ast.FunctionDef._fields:  # (Python 3.12+)
            definition.type_params = []
        call = ast.Call(
            ast.Attribute(ast.Name(self.runtime, ast.Load()), "segment", ast.Load()),
            [
                ast.Name(name, ast.Load()),
                tup(inputs, ast.Load),
                ast.Subscript(ast.Name(self.sites_name, ast.Load()), ast.Constant(index), ast.Load()),
            ],
            [],
        )
        statement = ast.Assign([tup(outputs, ast.Store)], call) if outputs else ast.Expr(call)
        for node in (definition, statement):
            ast.copy_location(node, first)
            ast.fix_missing_locations(node)
        for node in ast.walk(statement):
            node.lineno, node.end_lineno = first.lineno, first.lineno
        return [definition, statement]


def segment_function(
    fn: ast.FunctionDef, lines, prefix: str, runtime: str, sites_name: str, sites: list, filename: str
) -> int:
    """Group the statements of the converted function ``fn`` (its AST, changed in place) around
    the statements that span ``lines`` into segments (see the module's docstring); their sites
    are appended to ``sites``. Returns how many segments were made."""
    segmenter = _Segmenter(frozenset(lines), prefix, runtime, sites_name, sites, filename)
    segmenter.function(fn)
    return segmenter.count
