"""The conversion pipeline: source → canonical tree (converters, in order) → IR.

The converter order is the one list below; each entry says why it stands where it does.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import libcst as cst

from laxify.ir import Function
from laxify.ir.mangling import private_owner, spellings
from laxify.ir.naming import DEFAULT_PREFIX, choose_prefix
from laxify.transpiler.analysis.features import IN_PLACE_CHANGE, SUBSCRIPT_UPDATE, features
from laxify.transpiler.analysis.in_place import arrays_changed_in_place
from laxify.transpiler.analysis.objects import private_objects
from laxify.transpiler.analysis.names import stmt_access
from laxify.transpiler.analysis.positions import statement_positions
from laxify.transpiler.analysis.walk import code_of, forget_preorder
from laxify.transpiler.converters import (
    array_updates,
    assert_statements,
    break_statements,
    builtin_calls,
    caught_raises,
    calls,
    recursion,
    conditional_expressions,
    divisions,
    identity_tests,
    continue_statements,
    int_arithmetic,
    iterables,
    list_appends,
    logical_expressions,
    loop_else,
    loop_options_blocks,
    match_statements,
    print_calls,
    raise_statements,
    raising_calls,
    reductions,
    return_statements,
    try_statements,
    walrus_conditions,
)
from laxify.transpiler.converters.base import Context
from laxify.transpiler.depth import allowing_depth
from laxify.transpiler.naming import hide_user_names, rename_generated
from laxify.transpiler.recent import Recent
from laxify.transpiler.source import FunctionSource, get_source
from laxify.transpiler.to_ir import Fallback, build_ir

__all__ = ["CONVERTERS", "Conversion", "convert_source", "canonicalize", "local_names"]

# Applied in this order. Each converter module has a ``transform(node, ctx)`` entry.
CONVERTERS: list = [
    # `with loop_options(...)` first: it unwraps a block that every later converter must see
    # as ordinary statements (a `with` statement is otherwise kept as Python).
    loop_options_blocks,
    # match first: it produces `if` chains (and `_lx.and_`/`_lx.or_` conditions), so it runs
    # before every converter that handles `if` or rewrites the statements inside cases.
    match_statements,
    # caught raises after match (a case's `raise` is an `if`'s by then) and before every
    # converter that handles `if` or a `raise`: it writes flags and `if`s of its own, and the
    # `raise`s a handler of their `try` catches are gone.
    caught_raises,
    # recursion after caught raises and match (their `if`s are what it looks through) and
    # before every converter that handles a loop, a jump or an `if`: it writes the function
    # as two `while` loops with `break`/`continue`, which those then convert.
    recursion,
    # array updates before every converter that moves statements (jumps guard them, loops and
    # branches wrap them): its aliasing check reads the user's statements in their order, and
    # the name it assigns (`x = _lx.setitem(x, ...)`) is then an ordinary carried value.
    array_updates,
    # walrus tests after match (a guard may bind a name) and before every converter that wraps
    # a test in a lambda or a branch function, where `:=` would bind a name of that function.
    walrus_conditions,
    # reductions before iterables and every converter of loops and jumps: the `for` loop it
    # writes for `sum(... for k in xs)` (with a `break` for `any`/`all`) is then the user's.
    reductions,
    # iterables before the jump converters: they may rewrite a `for`, and should see its
    # iterable already directed to the runtime (`_lx.enumerate_`/`_lx.zip_`/`_lx.reversed_`).
    iterables,
    # identity tests before and/or/not: which names hold only Python bools is read from the
    # user's assignments (`flag = not done`), before `not` becomes a runtime call.
    identity_tests,
    # and/or/not first: the jump converters below build conditions with `_lx.not_`/`_lx.and_`
    # around user tests, which must already be converted themselves.
    logical_expressions,
    conditional_expressions,
    # break before continue: both guard the rest of an iteration, and a `continue` flag is
    # reset per iteration inside the body that `break` may have wrapped.
    break_statements,
    continue_statements,
    # after break: a loop's `else` is either guarded by the break flag (done above) or simply
    # follows the loop.
    loop_else,
    # calls that may raise inside loops, after the jump converters (a `while` test they wrote
    # gets the flag too) and before the raise converter, which starts the function with it.
    raising_calls,
    # raise before return: a `raise` becomes a record of the error and a `return` (the function
    # does no more after it), which the return converter then turns into its flag.
    raise_statements,
    # return last: it guards what follows a `return`, including loops already rewritten above,
    # and stops loops that contain a `return`.
    return_statements,
    # try and with after return: the return converter writes the `finally` that returns, which
    # the `finally` written here must enclose; before calls, which route the user's calls in the
    # managers written here (and leave `_lx.unsuppressing(...)` alone).
    try_statements,
    # list appends are plain statements; they may stand anywhere the converters above moved
    # them, so they are rewritten last.
    list_appends,
    # asserts are plain statements too; before calls, which then route the user's calls in the
    # test and message (and leave the `_lx.assert_` written here alone).
    assert_statements,
    # print before calls: `print` is a builtin, which the calls converter leaves alone.
    print_calls,
    # int arithmetic in loop bodies after every converter that moves statements into a loop's
    # body or rewrites `x[i] += v` (array updates: not a name target), and before builtins and
    # calls, which leave the `_lx.python_op(...)` written here alone and route calls in its operands.
    int_arithmetic,
    # divisions after int arithmetic, which routes those of Python numbers itself (its
    # `_lx.python_op("/", ...)` rounds them alike), and before calls, which leave the
    # `_lx.divide(...)` written here alone and route the user's calls in its operands.
    divisions,
    # builtins with a rule for traced values (max, int, math.floor, ..., `in`): after and/or/not
    # and chained comparisons (a chain's `in` is `_lx.compare`'s), before calls, which leave the
    # `_lx.builtin(...)` written here alone and route the user's calls in its arguments.
    builtin_calls,
    # calls last: every call the converters above wrote is of the runtime (`_lx.*`) and
    # stays as it is; the user's own calls are routed through `_lx.call`.
    calls,
]


@dataclass
class Conversion:
    """Everything one conversion produced."""

    source: FunctionSource
    canonical: cst.FunctionDef
    ir: Function
    fallbacks: list[Fallback]
    pushes_loop_options: bool = False


def canonicalize(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    """Apply the converters in order, skipping those whose constructs the function lacks."""
    present = features(node)
    ctx.changes_objects = not present.isdisjoint((SUBSCRIPT_UPDATE, IN_PLACE_CHANGE))
    if ctx.changes_objects:
        ctx.private = private_objects(node)
    for converter in CONVERTERS:
        if present is None:  # the tree changed: found again when a converter asks
            present = features(node)
        if present.isdisjoint(converter.TRIGGERS):
            continue
        new = converter.transform(node, ctx)
        if new is not node:
            node, present = new, None
    return node


def local_names(code: types.CodeType) -> frozenset[str]:
    """Names ``code`` and the code nested in it bind (parameters, assigned, free variables),
    as the source may write them."""
    names = {*code.co_varnames, *code.co_cellvars, *code.co_freevars}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= local_names(const)
    return source_names(names, code)


def source_names(names, code: types.CodeType) -> frozenset[str]:
    """``names`` of ``code`` (mangled in a method: ``_Model__k``) as its source may write them."""
    owner = private_owner(code.co_qualname)
    return frozenset(spelling for name in names for spelling in spellings(name, owner))


def convert_source(fn) -> Conversion:
    """Parse ``fn``, run the converters, build its IR (not yet typed or folded)."""
    try:
        return allowing_depth(_convert_source, fn)
    finally:
        # The analyses memoise per tree node. Each conversion parses anew, so the entries of one
        # are of no use to the next, and would keep every converted function's tree alive.
        code_of.cache_clear()
        stmt_access.cache_clear()
        forget_preorder()


# (text, first line, indent) → (the tree, its positions, its verbatim lines), for a text seen
# again: its parse (``get_source``) is then the same tree, whose nodes key the positions.
_POSITIONS = Recent(128)


def _positions(src: FunctionSource, code):
    """``statement_positions`` of ``src`` (a copy: converters add positions to it)."""
    key = (src.text, src.first_line, src.indent)
    found = _POSITIONS.get(key, code)
    if found is None or found[0] is not src.node:
        found = (
            src.node,
            statement_positions(src.text, src.node, src.first_line, src.indent, src.verbatim),
            dict(src.verbatim),
        )
        _POSITIONS.put(key, found, code)
    else:
        src.verbatim.update(found[2])
    return dict(found[1])


def _convert_source(fn) -> Conversion:
    src = get_source(fn)
    positions = _positions(src, fn.__code__)
    ctx = Context(
        positions, namespace=getattr(fn, "__globals__", {}), local_names=local_names(fn.__code__), code=fn.__code__
    )
    # (on the user's own tree: its names and the nodes the positions know)
    changed_params = arrays_changed_in_place(src.node)
    prefix = choose_prefix(src.text)
    if prefix != DEFAULT_PREFIX:
        # The user's own names start like laxify's: laxify's move out of their way.
        src.node, hidden = hide_user_names(src.node, ctx)
        ctx.hidden = hidden
    src.node = canonicalize(src.node, ctx)
    if prefix != DEFAULT_PREFIX:
        src.node = rename_generated(src.node, hidden, prefix, ctx)
    freevars = source_names(fn.__code__.co_freevars, fn.__code__)
    # Names the function's own closures capture: generated branch and loop functions share
    # these variables with them (see the lowering of regions).
    cells = source_names(fn.__code__.co_cellvars, fn.__code__)
    ir_fn, fallbacks = build_ir(
        src,
        ctx.positions,
        freevars,
        cells,
        prefix,
        ctx.updates,
        ctx.plain,
        ctx.aliased_updates or ctx.changes_objects,
        ctx.private,
        {name: ctx.positions.get(stmt) for name, stmt in changed_params.items()},
    )
    return Conversion(src, src.node, ir_fn, fallbacks, ctx.pushes_loop_options)
