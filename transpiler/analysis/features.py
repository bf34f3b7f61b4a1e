"""Which constructs a function uses, found in one walk, so that the pipeline runs only the
converters that have something to convert."""

from __future__ import annotations

import math

import builtins

import libcst as cst

from laxify.transpiler.analysis.names import MUTATING_METHODS, VALUE_METHODS
from laxify.transpiler.analysis.walk import preorder

__all__ = [
    "features",
    "user_callee",
    "attribute_root",
    "is_indexed_update",
    "APPEND_CALL",
    "BUILTIN_CALL",
    "CONTAINS",
    "DISPLAYS",
    "IN_PLACE_CHANGE",
    "OF_RANGE",
    "RANGE_BUILTINS",
    "RANGE_VALUE",
    "RULED_BUILTINS",
    "is_range_call",
    "RULED_MATH",
    "CHAINED_COMPARISON",
    "ITERABLE_CALL",
    "LIBRARY_METHODS",
    "LOOP_ELSE",
    "PRINT_CALL",
    "SHARED_OBJECT",
    "SUBSCRIPT_UPDATE",
    "COMPUTED_INDEX",
    "USER_CALL",
]

CHAINED_COMPARISON = "chained comparison"
LOOP_ELSE = "loop else"
APPEND_CALL = "append call"
USER_CALL = "user call"
PRINT_CALL = "print call"
SUBSCRIPT_UPDATE = "subscript update"  # `x[i] = v`, `x[i] += v`, `a, x[i] = ...`
ITERABLE_CALL = "for over enumerate/zip/reversed"
SHARED_OBJECT = "a name given another's object"  # `b = a`, `holder = [a]`, `d = {"h": a}`
# `table[i]`, `self.T[k + 1]`: one item at an index that reads a name (it may be a traced int,
# and what is indexed a Python list or tuple: converters/int_arithmetic.py)
COMPUTED_INDEX = "an item at a computed index"
BUILTIN_CALL = "builtin or math call with a rule"  # `max(a, b)`, `math.floor(x)`, `floor(x)`
CONTAINS = "in / not in"
# `range(...)` as a value, not a loop's iterable: `sum(range(n))`, `range(n)[k]`, `r = range(n)`
# (converters/builtin_calls.py routes those whose uses need no item one by one).
RANGE_VALUE = "a range as a value"
# A list, dict or set that may be changed in place: `a.append(v)` (a mutating method called as a
# statement), `a.pop()` (one that returns a value, anywhere), `del a[k]`, `a += [v]`. With
# SUBSCRIPT_UPDATE, whether the function changes objects in place (pipeline.canonicalize): then
# which names share one object matters (Site.changes_in_place, to_ir `_changed_objects`).
IN_PLACE_CHANGE = "a change in place"

# The builtins and math functions that have a rule for traced values (runtime/builtin_rules.py's
# RULES; tests/e2e/test_builtins.py keeps the two in step).
RULED_BUILTINS = frozenset(
    {"max", "min", "any", "all", "bool", "int", "float", "sorted", "str", "repr", "format", "pow", "isinstance", "type"}
)
RULED_MATH = frozenset(
    {
        "pow",
        "floor",
        "ceil",
        "fabs",
        "isnan",
        "isinf",
        "isfinite",
        "atan",
        "tanh",
        "atan2",
        "copysign",
        "sqrt",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "exp",
        "expm1",
        "sinh",
        "cosh",
        "log1p",
        "asin",
        "acos",
        "atanh",
        "acosh",
        "asinh",
        "degrees",
        "radians",
        "erf",
        "erfc",
        "fmod",
        "hypot",
        "gcd",
        "factorial",
        "isclose",
        "fsum",
        "comb",
        "perm",
    }
    | {name for name in ("exp2", "cbrt") if hasattr(math, name)}  # (Python 3.11 on)
)
_RULED_NAMES = RULED_BUILTINS | RULED_MATH
# What converters/builtin_calls.py writes `_lx.builtin(f, ...)` for only where a range is used
# as a value: `range` itself, and `len`/`sum` of one (known while tracing when its bounds are).
RANGE_BUILTINS = frozenset({"range", "len", "sum"})
# The builtins that answer from a range's bounds, given one (the first argument).
OF_RANGE = frozenset({"len", "sum", "max", "min", "any", "all"})
_ITERABLE_BUILTINS = frozenset({"enumerate", "zip", "reversed"})

_BUILTINS = frozenset(dir(builtins))


# Methods taken for those of arrays and Python containers (`x.sum()`, `x.reshape(...)`,
# `d.items()`): routing them through the runtime would only make the transformed source harder
# to read. A user's method of the same name is converted only when called on `self`/`cls`.
LIBRARY_METHODS = frozenset(
    {
        "all",
        "any",
        "argmax",
        "argmin",
        "argsort",
        "astype",
        "block_until_ready",
        "clip",
        "conj",
        "conjugate",
        "cumprod",
        "cumsum",
        "diagonal",
        "dot",
        "flatten",
        "item",
        "max",
        "mean",
        "min",
        "nonzero",
        "prod",
        "ravel",
        "reshape",
        "round",
        "squeeze",
        "std",
        "sum",
        "swapaxes",
        "tolist",
        "transpose",
        "var",
        "append",
        "extend",
        "format",
        "items",
        "join",
        "keys",
        "values",
    }
)
# `x.at[i].set(v)` and its siblings: JAX's indexed updates.
_AT_METHODS = frozenset(
    {"set", "add", "subtract", "multiply", "mul", "divide", "div", "power", "min", "max", "get", "apply"}
)


def is_indexed_update(func: cst.Attribute) -> bool:
    """``<array>.at[...].set`` (or ``.add``, ``.get``, ...)."""
    value = func.value
    return (
        func.attr.value in _AT_METHODS
        and isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "at"
    )


def attribute_root(func: cst.Attribute) -> cst.BaseExpression:
    """The start of a dotted chain: ``jax`` for ``jax.nn.relu``, the call for ``f(x).g``."""
    root = func.value
    while isinstance(root, cst.Attribute):
        root = root.value
    return root


def user_callee(func: cst.BaseExpression) -> bool:
    """A call that may reach user code, as far as the syntax alone tells (the calls converter
    also looks at the module's globals): anything but a builtin, laxify's own runtime, an
    array or container method, and a JAX indexed update."""
    if isinstance(func, cst.Name):
        return func.value not in _BUILTINS and not func.value.startswith("_lx")
    if isinstance(func, cst.Attribute):
        root = attribute_root(func)
        if isinstance(root, cst.Name) and root.value.startswith("_lx"):
            return False
        if isinstance(root, cst.Name) and root.value in ("self", "cls"):
            return True
        return func.attr.value not in LIBRARY_METHODS and not is_indexed_update(func)
    return True


def is_range_call(node: cst.CSTNode) -> bool:
    """``range(a[, b[, c]])`` as written: one to three positional arguments."""
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Name
        and node.func.value == "range"
        and 1 <= len(node.args) <= 3
        and all(a.keyword is None and not a.star for a in node.args)
    )


def _holds_subscript(target: cst.BaseExpression) -> bool:
    kind = type(target)
    if kind is cst.Subscript:
        return True
    if kind is cst.Tuple or kind is cst.List:
        return any(_holds_subscript(e.value) for e in target.elements)
    return kind is cst.StarredElement and _holds_subscript(target.value)


# A new list, dict or set: `a += [v]` changes `a` in place (transpiler/analysis/objects.py, to_ir).
DISPLAYS = (cst.List, cst.ListComp, cst.Dict, cst.DictComp, cst.Set, cst.SetComp)


# Indexes that are constants (`x[0]`, `d["k"]`).
_LITERALS = (cst.Integer, cst.SimpleString, cst.Float)

# The node types that may mean a marker.
_MARKED = frozenset(
    {cst.While, cst.For, cst.AugAssign, cst.Del, cst.Expr, cst.Assign, cst.Comparison, cst.Call, cst.Subscript}
)


def features(node: cst.CSTNode) -> set:
    """Node types present in ``node`` plus markers for the finer cases converters need."""
    nodes = preorder(node)[0]
    found: set = set(map(type, nodes))
    for n in nodes:
        kind = type(n)
        if kind not in _MARKED:
            continue
        if kind in (cst.While, cst.For):
            if n.orelse is not None:
                found.add(LOOP_ELSE)
            it = getattr(n, "iter", None)
            if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value in _ITERABLE_BUILTINS:
                found.add(ITERABLE_CALL)
        elif kind is cst.AugAssign:
            if type(n.target) is cst.Subscript:
                found.add(SUBSCRIPT_UPDATE)
            elif type(n.value) in DISPLAYS:
                found.add(IN_PLACE_CHANGE)
        elif kind is cst.Del:
            found.add(IN_PLACE_CHANGE)
        elif kind is cst.Expr:
            call = n.value
            if type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value in MUTATING_METHODS:
                found.add(IN_PLACE_CHANGE)
        elif kind is cst.Assign:
            if any(_holds_subscript(t.target) for t in n.targets):
                found.add(SUBSCRIPT_UPDATE)
            value = n.value
            if is_range_call(value):
                found.add(RANGE_VALUE)
            if (
                type(value) is cst.Name
                or (type(value) in (cst.List, cst.Tuple) and any(type(e.value) is cst.Name for e in value.elements))
                or (
                    type(value) is cst.Dict and any(type(getattr(e, "value", None)) is cst.Name for e in value.elements)
                )
            ):
                found.add(SHARED_OBJECT)
        elif kind is cst.Subscript:
            if is_range_call(n.value):
                found.add(RANGE_VALUE)
            if len(n.slice) == 1 and type(n.slice[0].slice) is cst.Index:
                index = n.slice[0].slice.value
                if type(index) is cst.UnaryOperation:
                    index = index.expression
                if type(index) not in _LITERALS:
                    found.add(COMPUTED_INDEX)
        elif kind is cst.Comparison:
            if len(n.comparisons) > 1:
                found.add(CHAINED_COMPARISON)
            elif isinstance(n.comparisons[0].operator, (cst.In, cst.NotIn)):
                found.add(CONTAINS)
        elif kind is cst.Call:
            func = n.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "append":
                    found.add(APPEND_CALL)
                elif func.attr.value in VALUE_METHODS:
                    found.add(IN_PLACE_CHANGE)
            if (isinstance(func, cst.Name) and func.value in _RULED_NAMES) or (
                isinstance(func, cst.Attribute) and func.attr.value in RULED_MATH
            ):
                found.add(BUILTIN_CALL)
            if isinstance(func, cst.Name) and func.value in OF_RANGE and n.args and is_range_call(n.args[0].value):
                found.add(RANGE_VALUE)
            if isinstance(func, cst.Name) and func.value == "print":
                found.add(PRINT_CALL)
            elif user_callee(func) or (isinstance(func, cst.Name) and func.value == "super"):
                found.add(USER_CALL)  # (the calls converter also makes `super()` explicit)
    return found
