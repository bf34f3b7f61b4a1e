"""Find a function's source and where it is: files, notebook cells, ``exec`` code registered
in ``linecache``, methods, nested and decorated functions, lambdas.

The text found must still be the source of the code that runs (a file edited after import
must not run its new text): it is compiled in the function's context and compared with the
function's code object. Callables that are not Python functions, generator and coroutine
functions, and stale text are each a :class:`ConversionError` saying why."""

from __future__ import annotations

import __future__
import ast
import difflib
import dis
import functools
import inspect
import linecache
import operator
import re
import textwrap
import tokenize
import types
from dataclasses import dataclass, field

import libcst as cst

from laxify.transpiler.analysis.walk import walk
from laxify.transpiler.recent import Recent

from laxify.ir.errors import ConversionError, Location

__all__ = ["FunctionSource", "function_code", "get_source", "python_only_error"]


@dataclass
class FunctionSource:
    """The parsed source of one function and the mapping back to the user's file."""

    filename: str
    module: cst.Module  # the dedented source text, parsed
    node: cst.FunctionDef | cst.Lambda
    first_line: int  # file line of the module's first line
    indent: int  # columns removed by dedenting
    lines: list[str]  # the file's lines (for error messages)
    text: str = ""  # the (dedented) text ``module`` was parsed from
    # The text of the original statement lines that are one physical line (see
    # ``analysis.positions.statement_positions``), by node.
    verbatim: dict = field(default_factory=dict)

    def location(self, file_line: int, col: int = 0) -> Location:
        """A :class:`Location` for a line (1-based) and column of the user's file."""
        text = self.lines[file_line - 1] if 0 < file_line <= len(self.lines) else ""
        return Location(self.filename, file_line, col, text.rstrip("\n"))


_NO_SOURCE_FIX = (
    "Define the function in a file, a notebook cell, or register exec'd source in "
    "linecache; or call it unconverted with laxify.do_not_convert."
)
_NOT_A_FUNCTION_FIX = (
    "Call it unconverted (built-in and library functions need no conversion, as "
    "laxify.do_not_convert functions), or convert a Python function that calls it."
)
_STALE_FIX = (
    "Re-import the module (importlib.reload) or re-run the cell, so that the function and its source file agree again."
)


def _type_name(value) -> str:
    """``functools.partial``, ``int``: the type's name as a user writes it."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _no_source(fn, why: str, fix: str = _NO_SOURCE_FIX) -> ConversionError:
    name = getattr(fn, "__qualname__", None) or _type_name(fn)
    return ConversionError(f"laxify cannot convert {name}: {why}.", None, fix)


def _not_a_function(fn) -> str:
    """Why ``fn`` (a callable without ``__code__``) has no Python source."""
    if isinstance(
        fn,
        (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodWrapperType, types.MethodDescriptorType),
    ):
        return "it is not a Python function (no __code__): it is a built-in function, written in C"
    name = _type_name(fn)
    return f"it is not a Python function (no __code__): it is a{'n' * (name[0] in 'aeiou')} {name} object"


def function_code(fn) -> types.CodeType:
    """``fn.__code__``; a :class:`ConversionError` saying why when ``fn`` has none."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise _no_source(fn, _not_a_function(fn), _NOT_A_FUNCTION_FIX)
    return code


# -- generators and coroutines: a call returns an iterator or an awaitable, never arrays ----

# (code flag, what the function is, the construct that makes it so, what a call returns)
_LAZY_KINDS = (
    (
        inspect.CO_ASYNC_GENERATOR,
        "an async generator function (`async def` with `yield`)",
        "async def",
        "an async iterator",
    ),
    (
        inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE,
        "a coroutine function (`async def`)",
        "async def",
        "an awaitable",
    ),
    (inspect.CO_GENERATOR, "a generator function (it contains `yield`)", "yield", "a generator"),
)


def _first_yield_line(code: types.CodeType) -> int:
    """The file line of the first ``yield`` of a generator (its ``def`` line if none is found)."""
    for ins in dis.get_instructions(code):
        if ins.opname == "YIELD_VALUE" and ins.positions is not None and ins.positions.lineno:
            return ins.positions.lineno
    return code.co_firstlineno


def python_only_error(fn) -> ConversionError | None:
    """A located error for a generator or coroutine function (a call returns a generator or
    an awaitable, not arrays, so it cannot be one XLA program); ``None`` for other functions."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    kind = next((k for k in _LAZY_KINDS if code.co_flags & k[0]), None)
    if kind is None:
        return None
    _, what, construct, returns = kind
    line = _first_yield_line(code) if construct == "yield" else code.co_firstlineno
    text = linecache.getline(code.co_filename, line).rstrip("\n")
    col = text.find(construct) if construct in text else len(text) - len(text.lstrip())
    return ConversionError(
        f"laxify cannot convert {code.co_qualname}: it is {what}, and calling it returns {returns}, "
        f"not arrays, so it cannot be one XLA program.",
        Location(code.co_filename, line, col, text),
        "Return the values instead (collect them in a list and return jnp.stack(values)), or "
        "convert the function that computes each value; laxify.to_static runs this one as plain Python.",
    )


# -- the source found must still be the source of the code that runs ----------------------

_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names), 0
)

# Instructions that the compiler picks by context the text alone does not show (a method call
# on a module-level import compiles to an attribute load), and jumps (their offsets, and the
# EXTENDED_ARG prefixes of long ones, follow).
_SAME_OP = {"LOAD_METHOD": "LOAD_ATTR"}
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _all_names(code: types.CodeType) -> set[str]:
    """Global, attribute and free names read by ``code`` and the code nested in it."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def _enclosing(fn, code: types.CodeType, text: str, imports: bool) -> tuple[str, list[str]]:
    """``text`` inside the context it was compiled in, so that it compiles as it did: the
    innermost ``class`` around it (name mangling, ``super()``), a ``def`` binding its free
    variables and, with ``imports``, an import of each module it reads from its globals (some
    compilers, CPython 3.13 among them, compile calls on names imported in the same text
    differently). Also returns the qualified-name path of the function in the result."""
    parts = code.co_qualname.split(".")
    classes = [p for p, after in zip(parts, parts[1:]) if p != "<locals>" and after != "<locals>"]
    owner = classes[-1] if classes else None
    free = [v for v in code.co_freevars if v != "__class__" or owner is None]
    scope = getattr(fn, "__globals__", {})
    modules = sorted(n for n in _all_names(code) if isinstance(scope.get(n), types.ModuleType)) if imports else []
    head = [f"import _lx_module as {', _lx_module as '.join(modules)}"] if modules else []
    path: list[str] = []
    depth = 0
    if owner is not None:
        head.append(f"class {owner}:")
        path.append(owner)
        depth = 1
    if free:
        head += ["    " * depth + "def _lx_enclosing():", "    " * (depth + 1) + f"{' = '.join(free)} = None"]
        path += ["_lx_enclosing", "<locals>"]
        depth += 1
    body = textwrap.indent(text, "    " * depth) if depth else text
    return "\n".join(head + [body]), path + [code.co_name]


# The text of a function seen again is compiled and parsed once (see ``transpiler.recent``).
_COMPILED = Recent(128)  # (wrapped text, file, flags) → (module code, error)
_PARSED = Recent(128)  # dedented text → libcst module


def _compile(
    fn, code: types.CodeType, text: str, imports: bool = True
) -> tuple[types.CodeType | None, list[str], str | None]:
    """The module compiled from ``text`` in ``code``'s context, the path of the function in
    it, and why it did not compile (``None`` when it did)."""
    wrapped, path = _enclosing(fn, code, text, imports)
    flags = code.co_flags & _FUTURE_FLAGS
    key = (wrapped, code.co_filename, flags)
    found = _COMPILED.get(key, code)
    if found is None:
        try:
            found = (compile(wrapped, code.co_filename, "exec", flags=flags, dont_inherit=True), None)
        except (SyntaxError, ValueError) as e:
            found = (None, e.msg if isinstance(e, SyntaxError) else str(e))
        _COMPILED.put(key, found, code)
    return found[0], path, found[1]


def _nested_codes(module: types.CodeType):
    """Every code object compiled inside ``module``, depth first."""
    for const in module.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_codes(const)


def _line_offsets(code: types.CodeType) -> frozenset[int]:
    """The lines of ``code``'s instructions, counted from its first line."""
    return frozenset(line - code.co_firstlineno for _, _, line in code.co_lines() if line is not None)


def _argument(ins: dis.Instruction) -> object:
    """An instruction's argument, comparable across compiles: jump offsets and nested code
    objects (compared on their own, their line numbers shifted by the wrapper) left out."""
    if ins.opcode in _JUMPS or isinstance(ins.argval, types.CodeType):
        return None
    if isinstance(ins.argval, (float, complex, tuple)):
        return repr(ins.argval)  # NaN equals itself here
    return ins.argval


def _instructions(code: types.CodeType, ignored: frozenset[str] = frozenset()) -> list[tuple[str, object]]:
    """``code``'s operations and arguments, as far as they follow from the text alone, less the
    operations named in ``ignored``."""
    return [
        (_SAME_OP.get(ins.opname, ins.opname), _argument(ins))
        for ins in dis.get_instructions(code)
        if ins.opname != "EXTENDED_ARG"  # present or not with the jump distances
        and ins.opname not in ignored
    ]


def _context_operations(a: list[types.CodeType], b: list[types.CodeType]) -> frozenset[str]:
    """The operations in which two compiles of one text in two contexts differ (pairs of code
    objects of ``a`` and ``b``): what the compiler chose from its knowledge of the context,
    not what the text says."""
    ops: set[str] = set()
    for x, y in zip(a, b):
        left, right = _instructions(x), _instructions(y)
        matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                ops.update(op for op, _ in left[i1:i2] + right[j1:j2])
    return frozenset(ops)


def _difference(
    code: types.CodeType, found: types.CodeType, lines: bool, ignored: frozenset[str] = frozenset()
) -> str | None:
    """What differs between the code that runs and the compile of the source found (``None``
    when nothing does), nested functions included; operations named in ``ignored`` are not
    compared."""
    checks = (
        (
            "parameters",
            code.co_varnames[: code.co_argcount + code.co_kwonlyargcount],
            found.co_varnames[: found.co_argcount + found.co_kwonlyargcount],
        ),
        (
            "kinds of parameters",
            (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount),
            (found.co_argcount, found.co_posonlyargcount, found.co_kwonlyargcount),
        ),
        ("local names", code.co_varnames, found.co_varnames),
        ("global and attribute names", code.co_names, found.co_names),
        ("line numbers", _line_offsets(code) if lines else None, _line_offsets(found) if lines else None),
        ("constants", len(code.co_consts), len(found.co_consts)),
    )
    for what, want, got in checks:
        if want != got:
            return what
    for a, b in zip(code.co_consts, found.co_consts):
        if isinstance(a, types.CodeType) and isinstance(b, types.CodeType):
            inner = _difference(a, b, lines, ignored)
            if inner:
                return f"{inner} (in {a.co_name})"
        elif type(a) is int and type(b) is int and (a, b) == (code.co_firstlineno, found.co_firstlineno):
            continue  # a line number the compiler keeps as a constant (a class body's first line)
        elif type(a) is not type(b) or (a != b and a == a):  # `a == a`: NaN equals itself here
            return "constants"
    if code.co_code != found.co_code and _instructions(code, ignored) != _instructions(found, ignored):
        return "operations"
    return None


def _context_dependent(fn, code: types.CodeType, text: str, module: types.CodeType) -> frozenset[str] | None:
    """The operations whose choice the modules ``code`` reads make context-dependent: those in
    which the functions of ``text`` compiled with those modules imported (``module``) and
    without them differ. ``None`` when the two compiles of the functions do not differ."""
    bare, _, _ = _compile(fn, code, text, imports=False)
    if bare is None:
        return None
    ops = _context_operations(list(_nested_codes(module)), list(_nested_codes(bare)))
    return ops or None


def _stale(fn, code: types.CodeType, text: str) -> str | None:
    """Why ``text`` (found in linecache) is not the source of ``code`` any more, or ``None``.

    Where the operations differ, the difference counts only if the compiler's knowledge of
    the context cannot explain it: whether a module the function reads was imported in the
    text that defined it (another notebook cell, ``exec``'d code, a module global assigned a
    module) changes how some compilers emit calls on it. The text is compiled again without
    those imports, and the operations the two compiles differ in are left out."""
    module, path, error = _compile(fn, code, text)
    if module is None:
        return f"it does not compile any more ({error})"
    wanted = ".".join(path)
    found = next((c for c in _nested_codes(module) if c.co_qualname == wanted), None)
    if found is None:
        return f"it does not define {code.co_name} any more"
    what = _difference(code, found, lines=True)
    if what == "operations" or (what or "").startswith("operations "):
        ignored = _context_dependent(fn, code, text, module)
        if ignored is not None:
            what = _difference(code, found, lines=True, ignored=ignored)
    return None if what is None else f"it differs from the code that runs in its {what}"


def _stale_lambda(fn, code: types.CodeType, text: str) -> str | None:
    """Like :func:`_stale` for a lambda: some lambda of its line(s) must compile to its code.
    A line that does not compile on its own (``return lambda: ...``) is not checked."""
    module, _, error = _compile(fn, code, text)
    if module is None:
        return None
    lambdas = [c for c in _nested_codes(module) if c.co_name == "<lambda>"]
    if any(_difference(code, found, lines=False) is None for found in lambdas):
        return None
    ignored = _context_dependent(fn, code, text, module)
    if ignored is not None and any(_difference(code, found, lines=False, ignored=ignored) is None for found in lambdas):
        return None
    return "no lambda on its line compiles to the code that runs"


def _check_current(fn, code: types.CodeType, text: str, first_line: int) -> None:
    """Raise when the source found at ``first_line`` no longer matches ``code`` (the file was
    edited after the function was defined): converting that text would run the new code."""
    why = _stale_lambda(fn, code, text) if code.co_name == "<lambda>" else _stale(fn, code, text)
    if why is not None:
        raise _no_source(
            fn,
            f"the source text at {code.co_filename}:{first_line} is not the source of the "
            f"function that runs: {why}; the file was probably edited after the function was "
            f"defined",
            _STALE_FIX,
        )


_DEF_START = re.compile(r"\s*(@|def\s|async\s+def\s)|.*(?<!\w)lambda[:\s]")


def _indented_block(lines: list[str], k: int) -> list[str] | None:
    """``inspect.getblock(lines[k:])`` for a ``def`` found from indentation alone (tokenizing
    costs more than parsing): the lines up to the last one indented more than the ``def``
    before the first code line that is not. ``None`` where that may differ: tabs, or comment
    lines indented more than the ``def`` after its last code line (``getblock`` keeps those
    indented as deep as the body). A line of a string or bracket that the scan takes for the
    end leaves text that does not compile, which ``_check_current`` finds (the caller then
    asks ``getblock``)."""
    first = lines[k]
    base = len(first) - len(first.lstrip())
    if "\t" in first[:base]:
        return None
    d = k  # the `def` line, after the decorators
    while lines[d].lstrip().startswith("@") or len(lines[d]) - len(lines[d].lstrip()) > base:
        d += 1
        if d == len(lines):
            return None
    if not lines[d].lstrip().startswith(("def ", "def\t", "async ")):
        return None
    last, pending_comment = d, False
    for j in range(d + 1, len(lines)):
        line = lines[j]
        stripped = line.lstrip()
        if not stripped:
            continue
        deeper = len(line) - len(stripped) > base
        if stripped[0] == "#":
            pending_comment = pending_comment or deeper
            continue
        if not deeper:
            break
        last, pending_comment = j, False
    return None if pending_comment else lines[k : last + 1]


def _def_start(fn, code: types.CodeType, lines: list[str]) -> int:
    """The index of the first line of the ``def`` (its decorators) or lambda of ``code``."""
    k = code.co_firstlineno - 1
    if not 0 <= k < len(lines):
        raise _no_source(fn, f"its line {code.co_firstlineno} is past the end of {code.co_filename!r}", _STALE_FIX)
    while k > 0 and not _DEF_START.match(lines[k]):
        k -= 1
    return k


def _def_block(fn, code: types.CodeType, lines: list[str]) -> tuple[list[str], int]:
    """The lines of the ``def`` (or lambda) that starts at or above ``code.co_firstlineno``,
    and its first line. From the code object, not the function: ``inspect.getsourcelines(fn)``
    would follow ``__wrapped__`` to another function (and searches every module first)."""
    k = _def_start(fn, code, lines)
    return _tokenized_block(fn, lines, k), k + 1


def _tokenized_block(fn, lines: list[str], k: int) -> list[str]:
    """``inspect.getblock`` of the lines from ``k`` on (the tokenizer decides where it ends)."""
    try:
        return inspect.getblock(lines[k:])
    except (SyntaxError, tokenize.TokenError) as e:  # an edited file that no longer tokenizes
        raise _no_source(fn, f"its source could not be read ({e})", _STALE_FIX) from None


def _dedented(block: list[str]) -> tuple[str, int]:
    """The block's text dedented, and the columns removed."""
    text = "".join(block)
    dedented = textwrap.dedent(text)
    return dedented, len(block[0]) - len(block[0].lstrip()) if dedented != text else 0


def get_source(fn) -> FunctionSource:
    """Parse ``fn``'s source; raise :class:`ConversionError` when there is none, when it is no
    longer the source of ``fn``'s code, or when ``fn`` is a generator or coroutine function."""
    code = function_code(fn)
    lazy = python_only_error(fn)
    if lazy is not None:
        raise lazy
    filename = code.co_filename
    lines = linecache.getlines(filename, getattr(fn, "__globals__", {}))
    if not lines:
        raise _no_source(fn, f"no source text is available for {filename!r}")
    if code.co_name == "<lambda>":
        block, first_line = _def_block(fn, code, lines)
        return _lambda_source(fn, filename, block, first_line, lines)
    k = _def_start(fn, code, lines)
    first_line = k + 1
    block = _indented_block(lines, k)
    if block is not None:
        dedented, indent = _dedented(block)
        try:
            _check_current(fn, code, dedented, first_line)
        except ConversionError:
            block = None  # the scan may have ended inside a string or brackets: ask the tokenizer
    if block is None:
        block = _tokenized_block(fn, lines, k)
        dedented, indent = _dedented(block)
        _check_current(fn, code, dedented, first_line)
    module = _PARSED.get(dedented, code)
    if module is None:
        try:
            module = cst.parse_module(dedented)
        except cst.ParserSyntaxError as e:
            raise _no_source(fn, f"its source does not parse on its own ({e.message})") from None
        _PARSED.put(dedented, module, code)
    node = module.body[0] if module.body else None
    if not isinstance(node, cst.FunctionDef):
        raise _no_source(fn, "its source does not start with a def statement")
    return FunctionSource(filename, module, node, first_line, indent, lines, dedented)


def _lambda_source(fn, filename, block, first_line, lines) -> FunctionSource:
    """A lambda: parse its line(s) and pick the lambda whose code starts at the right column.

    The lambda becomes ``def _lambda_(params): return body``, built from its own nodes."""
    raw = "".join(block)
    text = textwrap.dedent(raw)
    removed = len(raw) - len(raw.lstrip(" ")) - (len(text) - len(text.lstrip(" ")))
    # Each attempt with the columns it shifts the first line by (to compare with the file's).
    for attempt, shift in (
        (text, removed),
        (text.strip(), len(raw) - len(raw.lstrip())),
        ("(" + text.strip() + ")", len(raw) - len(raw.lstrip()) - 1),
    ):
        try:
            module = cst.parse_module(attempt)
            break
        except cst.ParserSyntaxError:
            continue
    else:
        raise _no_source(fn, "the line that defines the lambda does not parse on its own")
    _check_current(fn, fn.__code__, attempt, first_line)
    lambdas = [n for n in walk(module) if isinstance(n, cst.Lambda)]
    want = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    matching = [n for n in lambdas if [p.name.value for p in n.params.params] == want] or lambdas
    if not matching:
        raise _no_source(fn, "no lambda was found on its line")
    chosen = matching[0]
    if len(matching) > 1:
        # Pick by column: the body's code starts where the lambda's first real instruction does.
        tree = ast.parse(attempt)
        nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)), key=lambda n: (n.lineno, n.col_offset))
        cols = [
            p[2]
            for p in fn.__code__.co_positions()
            if p[0] is not None and p[2] is not None and p[3] is not None and p[3] > p[2]
        ]
        col = min(cols, default=None)
        if col is None:
            # No column for any instruction (CPython 3.12 gives none to a lambda that returns a
            # constant): the lambda whose own compile is the code that runs, in source order.
            compiled, _, _ = _compile(fn, fn.__code__, attempt)
            codes = [c for c in _nested_codes(compiled) if c.co_name == "<lambda>"] if compiled else []
            same = [k for k, c in enumerate(codes) if _difference(fn.__code__, c, lines=False) is None]
            if same and len(codes) == len(lambdas) and lambdas[same[0]] in matching:
                chosen = lambdas[same[0]]
        for k, node in enumerate(nodes):  # libcst's order is source order, as `nodes` is
            start = node.body.col_offset + (shift if node.body.lineno == 1 else 0)
            end = (node.body.end_col_offset or 0) + (shift if node.body.end_lineno == 1 else 0)
            if col is not None and start <= col < end:
                if lambdas[k] in matching:
                    chosen = lambdas[k]
                break
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(chosen.body)])])
    fndef = cst.FunctionDef(cst.Name("_lambda_"), chosen.params, body)
    module = cst.Module(body=[fndef])
    # Line 2 of the synthesized def (its return) stands for the lambda's first line.
    return FunctionSource(filename, module, fndef, first_line - 1, 0, lines, module.code)
