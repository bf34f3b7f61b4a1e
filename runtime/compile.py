"""Turning lowered source into a function object that runs with the user's globals, closure
cells, defaults, file name and line numbers (so tracebacks point at the user's lines)."""

from __future__ import annotations

import ast
import functools
import re
import types
import weakref

from laxify.ir.mangling import mangle, private_owner
from laxify.runtime import dispatch
from laxify.runtime.calls import register_converted
from laxify.runtime.lowering import LoweredSource, SiteTable

__all__ = ["compile_lowered", "make_function"]

INDENT = "    "

FACTORY = "_lx_factory"


# Per AST class, the fields that may hold nodes with positions (an expression's context and
# an operator are position-free singletons; names and constants are not nodes), and whether
# its own nodes have positions.
_AST_SHAPES: dict[type, tuple[tuple[str, ...], bool]] = {}
_NO_POSITIONS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "arg",
        "attr",
        "name",
        "module",
        "level",
        "kind",
        "type_comment",
        "is_async",
        "conversion",
        "asname",
    }
)


def _ast_shape(kind: type) -> tuple[tuple[str, ...], bool]:
    fields = () if kind is ast.Constant else tuple(f for f in kind._fields if f not in _NO_POSITIONS)
    shape = _AST_SHAPES[kind] = (fields, "lineno" in kind._attributes)
    return shape


def _remap(tree: ast.AST, mapping: list[tuple[int, int]], wrapper_lines: int) -> None:
    """Give every node the user's line number (and column) instead of the generated one.
    (A walk of its own: ``ast.walk`` costs more than the compile that follows.)"""
    count = len(mapping)
    shapes = _AST_SHAPES
    node_class = ast.AST
    stack = [tree]
    push = stack.append
    while stack:
        node = stack.pop()
        shape = shapes.get(type(node))
        if shape is None:
            shape = _ast_shape(type(node))
        fields, positioned = shape
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_class):
                        push(item)
            elif isinstance(value, node_class):
                push(value)
        if not positioned:
            continue
        line = node.lineno
        k = line - 1 - wrapper_lines
        if 0 <= k < count:
            line, shift = mapping[k]
            node.lineno = line
            col = node.col_offset + shift
            node.col_offset = col if col > 0 else 0
        end = node.end_lineno
        if end is not None:
            k = end - 1 - wrapper_lines
            if 0 <= k < count:
                user_line, shift = mapping[k]
                node.end_lineno = end = user_line if user_line > line else line
                col = (node.end_col_offset or 0) + shift
                node.end_col_offset = col if col > 0 else 0
            if end == line and node.end_col_offset < node.col_offset:
                node.end_col_offset = node.col_offset


_PRIVATE = re.compile(r"(?<!\w)__\w+")


def _has_private_names(text: str) -> bool:
    """Whether ``text`` may hold a name that Python mangles in a class (``__k``, not ``__k__``)."""
    return any(not token.endswith("__") for token in _PRIVATE.findall(text))


def compile_lowered(
    lowered: LoweredSource,
    freevars: tuple[str, ...],
    filename: str,
    qualname: str = "",
    segments_at=None,
    sites: list | None = None,
) -> types.CodeType:
    """The code object of the converted function (shared by every closure of one ``def``).

    ``qualname``, the original function's (``code.co_qualname``), names the code objects and
    picks the class that mangles private names: the converted function is compiled in a
    factory (which binds its free variables), itself inside a class of that name when the
    function has private names to mangle. Inside the factory the function has a generated
    name, so that its own name still means what it means in the user's code (the global of a
    recursive function). ``segments_at``: lines of statements that need Python, around which
    the split run's variant groups the other statements into segments
    (``runtime/segments.py``), whose sites are appended to ``sites``."""
    qualname = qualname or lowered.name
    owner = private_owner(qualname)
    # A nested function of converted code may already close over the runtime's names.
    handles = (lowered.runtime, lowered.sites_name, lowered.boundary_name)
    params = ", ".join((*handles, *(v for v in freevars if v not in handles)))
    depth = 1
    head = f"def {FACTORY}({params}):\n"
    if owner is not None and _has_private_names(lowered.text()):
        depth = 2
        head = f"class {owner}:\n{INDENT}{head}"
    body, mapping = lowered.emitter.render(base_depth=depth)
    # The factory binds the names closures capture, so that a generated function's `nonlocal`
    # always finds them, even where the converted function itself no longer assigns one.
    cells = "".join(f"{INDENT * depth}{name} = None\n" for name in lowered.cells)
    text = f"{head}{cells}{body}{INDENT * depth}return {lowered.name}\n"
    tree = ast.parse(text, filename)
    _remap(tree, mapping, wrapper_lines=depth + len(lowered.cells))
    generated = f"{lowered.prefix}_function"
    _rename_function(tree, lowered.name, generated)
    entries = _arm_entries(tree, lowered.runtime) if f"{lowered.runtime}.elif_chain(" in body else {}
    _enter_at_construct(tree.body, lowered.prefix + "_", generated, None, entries)
    if segments_at:
        from laxify.runtime.segments import segment_function  # (a split run's variant only)

        target = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == generated)
        segment_function(target, segments_at, lowered.prefix, lowered.runtime, lowered.sites_name, sites, filename)
    _at_edge(tree, generated, lowered.boundary_name, lowered.prefix)
    code = compile(tree, filename, "exec", dont_inherit=True)
    factory = _nested(code, FACTORY)
    inner = _nested(factory, generated)
    compiled = _without_factory(inner, f"{factory.co_qualname}.<locals>.{generated}", qualname, lowered.prefix + "_")
    register_converted(compiled)
    return compiled


_SIMPLE = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Expr,
    ast.Pass,
    ast.Delete,
    ast.Global,
    ast.Nonlocal,
    ast.Import,
    ast.ImportFrom,
)


def _arm_entries(tree: ast.Module, runtime: str) -> dict[str, int]:
    """The line each arm of an ``elif`` chain is entered from, by its branch function's name:
    its condition's line (the ``else``: the last condition's). ``_lx.elif_chain`` gets one
    ``(condition, branch)`` pair per arm, each written at its arm's line."""
    entries: dict[str, int] = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "elif_chain"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == runtime
            and node.args
            and isinstance(node.args[0], ast.Tuple)
        ):
            continue
        previous = None
        for arm in node.args[0].elts:
            if isinstance(arm, ast.Tuple) and len(arm.elts) == 2 and isinstance(arm.elts[1], ast.Name):
                is_else = isinstance(arm.elts[0], ast.Constant) and arm.elts[0].value is None
                entries[arm.elts[1].id] = previous if is_else and previous is not None else arm.lineno
                previous = arm.lineno
    return entries


def _enter_at_construct(
    body: list[ast.stmt], made: str, function: str, before: int | None, entries: dict[str, int]
) -> None:
    """Let line tracers see each branch and loop body laxify made enter from its construct.

    coverage.py's branch measurement (like a debugger) follows line events frame by frame.
    A function laxify made for a branch of the ``if`` at line 7 starts with a ``pass`` at line
    7, so that a tracer sees line 7 then the branch's first line: the arc ``7 → branch`` of the
    user's source, and ``coverage run --branch`` counts an ``if`` whose two branches were traced
    as fully covered (docs/semantics.md, "Coverage"). CPython drops a no-op on the line where
    its function starts, so the ``def`` of the made function is put on the line the enclosing
    frame ran last (``before``): defining it adds no line event there either. Where that line
    is not known (after a statement kept as Python with a block), or is not above the
    construct (code a ``finally`` runs again), the ``def`` stays at its construct's line and
    no ``pass`` is added. ``entries``: the line an ``elif`` chain's arm is
    entered from, by function name (its ``def`` stands at the ``if`` line)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith(made) and stmt.name != function:
            construct = entries.get(stmt.name, stmt.lineno)
            if before is not None and before < construct and stmt.body:
                stmt.body.insert(
                    0,
                    ast.Pass(
                        lineno=construct,
                        col_offset=stmt.col_offset,
                        end_lineno=construct,
                        end_col_offset=stmt.col_offset + 4,
                    ),
                )
                stmt.lineno = before
                _enter_at_construct(stmt.body, made, function, construct, entries)
            else:  # the `def` runs at its own line, where the function starts too
                _enter_at_construct(stmt.body, made, function, stmt.lineno, entries)
                before = stmt.lineno
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # The user's function (``function``: the converted one, renamed), a function or
            # class nested in it: its body starts after its entry (its first line).
            _enter_at_construct(stmt.body, made, function, stmt.lineno, entries)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    _enter_at_construct(block, made, function, stmt.lineno if field == "body" else None, entries)
                elif isinstance(block, list):
                    for part in block:  # except handlers, match cases
                        if hasattr(part, "body"):
                            _enter_at_construct(part.body, made, function, None, entries)
        before = stmt.lineno if isinstance(stmt, (*_SIMPLE, ast.Return)) else None


def _edge_handler(body: list[ast.stmt], error: str, result: str, boundary: str, line: int, col: int) -> ast.Try:
    """``body`` in the handler at the function's edge (see :func:`_at_edge`), built as nodes
    (parsing a template costs more than the compile of a small function)::

        try:
            <body>
        except Exception as <error>:
            if <boundary> is None:
                raise
            <result> = <boundary>(<error>)
            if <result> is <error>:
                raise
            if <result> is None:
                return None
            raise <result> from <result>.__cause__

    Every node has no position (line -1) but the last ``raise``, at ``line`` and ``col``."""
    here = {"lineno": line, "col_offset": col, "end_lineno": line, "end_col_offset": col + 3}
    located = ast.Raise(
        exc=ast.Name(id=result, ctx=_LOAD, **here),
        cause=ast.Attribute(value=ast.Name(id=result, ctx=_LOAD, **here), attr="__cause__", ctx=_LOAD, **here),
        **here,
    )
    kind, checks = _edge_checks(error, result, boundary)
    handler = ast.ExceptHandler(type=kind, name=error, body=[*checks, located], **_NOWHERE)
    return ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[], **_NOWHERE)


_NOWHERE = {"lineno": -1, "col_offset": -1, "end_lineno": -1, "end_col_offset": -1}
_LOAD = ast.Load()


@functools.lru_cache(maxsize=8)
def _edge_checks(error: str, result: str, boundary: str) -> tuple[ast.Name, tuple[ast.stmt, ...]]:
    """The exception type and the statements of the edge handler before its last ``raise``,
    without positions: the same for every function of one prefix (``compile`` only reads the
    nodes it is given, so functions share them)."""

    def name(identifier: str, ctx: ast.expr_context = _LOAD) -> ast.Name:
        return ast.Name(id=identifier, ctx=ctx, **_NOWHERE)

    def none() -> ast.Constant:
        return ast.Constant(value=None, kind=None, **_NOWHERE)

    def when(left: str, right: ast.expr, then: ast.stmt) -> ast.If:
        test = ast.Compare(left=name(left), ops=[ast.Is()], comparators=[right], **_NOWHERE)
        return ast.If(test=test, body=[then], orelse=[], **_NOWHERE)

    return name("Exception"), (
        when(boundary, none(), ast.Raise(exc=None, cause=None, **_NOWHERE)),
        ast.Assign(
            targets=[name(result, ast.Store())],
            value=ast.Call(func=name(boundary), args=[name(error)], keywords=[], **_NOWHERE),
            type_comment=None,
            **_NOWHERE,
        ),
        when(result, name(error), ast.Raise(exc=None, cause=None, **_NOWHERE)),
        when(result, none(), ast.Return(value=none(), **_NOWHERE)),
    )


def _at_edge(tree: ast.Module, function: str, boundary: str, prefix: str) -> None:
    """Put the converted function's body in a ``try`` whose handler gives an error that leaves
    the function to ``boundary`` (a closure cell: ``None`` where ``to_static``, which handles
    errors itself, bound the function; see ``laxify.conversion``), which returns the error to
    raise instead (a located ``ConversionError`` for JAX's concrete-value errors under
    ``jax.jit(laxify.convert(f))``), the error itself (raised as it is), or ``None`` (the
    function returns ``None``). The handler is converted code: the located error's innermost
    frame is the user's function, at its ``def`` line, never a frame of laxify's. (Zero-cost
    ``try``: nothing runs on the way in.) The rest of the handler has no source position
    (line -1: CPython then records none, as for its own implicit instructions), so an error
    that goes on as it is keeps the line it was raised at: JAX's filtering of tracebacks
    rebuilds each entry from its frame's last instruction (``f_lasti``), which is then one of
    these, and ``traceback`` falls back to the entry's own line."""
    top = tree.body[0]
    factory = top.body[0] if isinstance(top, ast.ClassDef) else top
    fn = next(s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == function)
    fn.body = [_edge_handler(fn.body, f"{prefix}_error", f"{prefix}_raised", boundary, fn.lineno, fn.col_offset)]


def _rename_function(tree: ast.Module, name: str, new: str) -> None:
    """Rename the converted function inside the factory (its ``def`` and the ``return``)."""
    # The factory is the module's only statement, or the only one of the class around it.
    top = tree.body[0]
    factory = top.body[0] if isinstance(top, ast.ClassDef) else top
    for stmt in factory.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            stmt.name = new
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id == name:
            stmt.value.id = new


def _nested(code: types.CodeType, name: str) -> types.CodeType | None:
    """The first code object named ``name`` compiled inside ``code``, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found = const if const.co_name == name else _nested(const, name)
            if found is not None:
                return found
    return None


def _without_factory(code: types.CodeType, generated: str, qualname: str, made: str) -> types.CodeType:
    """``code`` and the code nested in it named as in the user's source: the factory (and
    the class around it) and the generated name are laxify's, so
    ``_lx_factory.<locals>._lx_function.<locals>.g`` becomes ``f.<locals>.g``."""

    def rename(text: str) -> str:
        return qualname + text[len(generated) :] if text.startswith(generated) else text

    consts = tuple(
        _without_factory(c, generated, qualname, made)
        if isinstance(c, types.CodeType)
        else rename(c)
        if isinstance(c, str) and c.startswith(generated)  # a class's __qualname__
        else c
        for c in code.co_consts
    )
    if code.co_qualname == generated:
        return code.replace(co_consts=consts, co_qualname=qualname, co_name=qualname.rpartition(".")[2])
    # A branch or loop body laxify made runs lines of the function it came from: tracebacks
    # (and JAX's messages) name that function, never the generated name.
    user_qualname = ".<locals>.".join(
        part for part in rename(code.co_qualname).split(".<locals>.") if not part.startswith(made)
    )
    name = user_qualname.rpartition(".")[2] if code.co_name.startswith(made) else code.co_name
    return code.replace(co_consts=consts, co_qualname=user_qualname, co_name=name)


def make_function(
    code: types.CodeType,
    lowered: LoweredSource,
    original: types.FunctionType,
    boundary=None,
    sites: SiteTable | None = None,
) -> types.FunctionType:
    """Bind ``code`` to ``original``'s globals, closure cells, defaults and metadata;
    ``boundary``: what the handler at the function's edge calls (see :func:`_at_edge`);
    ``sites``: the site table, where it is not ``lowered``'s (a split run's variant)."""
    cells = dict(zip(original.__code__.co_freevars, original.__closure__ or ()))
    cells[lowered.runtime] = types.CellType(dispatch)
    cells[lowered.sites_name] = types.CellType(lowered.sites if sites is None else sites)
    cells[lowered.boundary_name] = types.CellType(boundary)
    owner = private_owner(code.co_qualname)  # compiled inside that class: names mangled
    for name in lowered.cells:  # captured names the converted code no longer assigns itself
        cells.setdefault(mangle(name, owner), types.CellType())
    closure = tuple(cells[name] for name in code.co_freevars)
    fn = types.FunctionType(code, original.__globals__, original.__name__, original.__defaults__, closure)
    fn.__kwdefaults__ = original.__kwdefaults__
    fn.__annotations__ = dict(getattr(original, "__annotations__", {}))
    fn.__qualname__ = original.__qualname__
    fn.__module__ = original.__module__
    fn.__doc__ = original.__doc__
    fn.__dict__.update(original.__dict__)
    _ORIGINALS[fn] = weakref.ref(original)
    return fn


# A function laxify made → (a weak reference to) the user's function it was made from: converting
# it again converts that one (``converted_from``). Weak both ways, and by the function object
# itself: a wrapper that copies its `__dict__` (`functools.wraps`, `jax.vmap`) is not it, and
# nothing here keeps a conversion, the user's function or its code alive (a notebook's edits).
_ORIGINALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def converted_from(fn) -> types.FunctionType | None:
    """The user's function that laxify converted into ``fn``, or ``None`` where ``fn`` is no
    function laxify made (a wrapper of one included) or that function is gone."""
    try:
        ref = _ORIGINALS.get(fn)
    except TypeError:  # (not weakly referable: no function laxify made)
        return None
    return ref() if ref is not None else None
