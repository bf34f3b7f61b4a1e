"""The operators of names that may hold Python numbers → ``_lx.python_op("*", a, b)``: the
same operation with Python's meaning where both operands are Python numbers in eager code and
one is traced in the program (``runtime/numbers.py``: Python's result type, ``ZeroDivisionError``
and the other errors Python raises, an int32 overflow or a value the program cannot hold
checked at run time); the operator itself otherwise. In a function that holds a loop, an
``if``, a conditional expression or ``int(...)``.

Which names may hold Python numbers is read from the function's own assignments: a ``range``
loop's target, an ``enumerate`` loop's index, names assigned ``int(x)``, and names assigned
number literals (``r = 1``, ``t = 0.0``, ``flag = False``, ``a, b = 0, 1``) or such operations
on them (``m = i // 2``), not parameters (which may be arrays); a parameter, or a local that
holds one's value (``x = x0``), counts beside one of those where the result goes to such a
name (a static ``k`` in ``r = r * k``, ``x`` in ``x_next = 2 * x - dt * x``); such a local
updated by operations of itself, parameters and literals (``x = r * x * (1 - x)``) may hold
one, and so may a parameter, or a local assigned an operation of parameters (``s = a + b``),
that a loop assigns so (``p = p * (1 + rate)``, ``v *= 0.999``). A global or closure name
that an operator reads (``RATE``, ``G * DT``) counts as a parameter. Routed:
``+ - * / // % ** << >> & | ^`` and their augmented forms, unary ``-``, ``abs``, a comparison
of such an int with a float literal, and ``acc[k] op= v`` of a list or dict of numbers. Left
as written: a counter's step (``i += 1``, ``i = i - 2``: a constant below 2**16), a step
standing alone (``table[i - 1]``), a float's ``+ - *`` (JAX's is Python's), a division by a
literal other than 0. An operation in the body of a ``try`` with handlers or of a ``with``
carries ``in_try=True`` (a handler may catch what it raises). The user's form of each routed
line is kept for the lowering (``Context.plain``), which emits it where the line reads only
static values.
"""

from __future__ import annotations

import libcst as cst

from laxify.ir.naming import is_runtime_name
from laxify.transpiler.analysis.features import BUILTIN_CALL, COMPUTED_INDEX
from laxify.transpiler.analysis.walk import below, caught_below, children, descendants
from laxify.transpiler.converters.base import Context, OwnCodeConverter, transform_above

__all__ = ["transform"]

_BINARY = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Power: "**",
    cst.FloorDivide: "//",
    cst.Divide: "/",
    cst.Modulo: "%",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
}
_AUGMENTED = {
    cst.AddAssign: "+=",
    cst.SubtractAssign: "-=",
    cst.MultiplyAssign: "*=",
    cst.FloorDivideAssign: "//=",
    cst.DivideAssign: "/=",
    cst.ModuloAssign: "%=",
    cst.PowerAssign: "**=",
    cst.LeftShiftAssign: "<<=",
    cst.RightShiftAssign: ">>=",
    cst.BitAndAssign: "&=",
    cst.BitOrAssign: "|=",
    cst.BitXorAssign: "^=",
}
_COMPARE = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_NOT_NUMBERS = frozenset({"None"})
_BOOLS = frozenset({"True", "False"})
# Operations of Python numbers that give Python numbers (for which names may hold them).
_INT_OPERATORS = tuple(_BINARY)
_SMALL = 2**16  # runtime/numbers.py's SMALL_CONSTANT
# Calls that give a Python int in eager code (runtime/builtin_rules.py marks their results).
_INT_CALLS = frozenset({"int", "floor", "ceil", "len"})


_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef})


def _own_scope(node: cst.CSTNode) -> bool:
    """Whether ``node`` starts code of its own names: a ``def``, a class, a lambda with
    parameters. A lambda without any (``_lx.or_(a, lambda: b)``'s, which converters write for
    a part Python computes only for some data) reads the function's own names: its code is the
    function's."""
    kind = type(node)
    return kind in _SCOPES or (kind is cst.Lambda and _has_params(node))


def _has_params(node: cst.Lambda) -> bool:
    p = node.params
    return (
        bool(p.params or p.posonly_params or p.kwonly_params)
        or isinstance(p.star_arg, cst.Param)
        or p.star_kwarg is not None
    )


def _own_nodes(node: cst.CSTNode):
    """The nodes of the function's own code (not of ``def``s, classes and lambdas with
    parameters in it)."""
    stack = list(children(node))
    while stack:
        current = stack.pop()
        yield current
        if not _own_scope(current):
            stack.extend(children(current))


def _int_expression(node, names: set, params: set, alone: bool = False) -> bool:
    """Whether ``node`` gives a Python int where ``names`` hold Python ints (and parameters
    may): an int literal, or those names, parameters and int literals under ``+ - * ** // %``
    with at least one of ``names`` among them (a parameter may be an array: ``x * 2`` is not;
    ``alone``: none needed, the operand of an augmented assignment to one of ``names``)."""
    if _number_literal(node) or (type(node) is cst.UnaryOperation and _number_literal(node.expression)):
        return True
    if _extreme_call(node):
        return all(_int_expression(a.value, names, params) for a in node.args if a.keyword is None and not a.star)
    if (
        _is_runtime_call(node, "ifexp")
        and len(node.args) == 3
        and all(type(a.value) is cst.Lambda for a in node.args[1:])
    ):
        # `50000 if x > 0 else r` (converters/conditional_expressions.py: `_lx.ifexp(test, lambda: 50000,
        # lambda: r)`): an int on both sides
        return all(_int_expression(a.value.body, names, params) for a in node.args[1:])
    found = []

    def ok(n) -> bool:
        kind = type(n)
        if _number_literal(n):
            return True
        if _int_call(n):  # `int(x)`, `math.floor(x)`: a Python int in eager code, of a traced `x` too
            found.append(n)
            return True
        if kind is cst.Name:
            if n.value in names:
                found.append(n)
                return True
            return n.value in params
        if kind is cst.UnaryOperation and type(n.operator) is cst.Minus:
            return ok(n.expression)
        if kind is cst.BinaryOperation and isinstance(n.operator, _INT_OPERATORS):
            return ok(n.left) and ok(n.right)
        if _abs_call(n) or _math_call(n) or _extreme_call(n):
            # `abs(x - 0.33)`, `math.sqrt(r)`, `max(m, x * 1.01 ** i)`: a Python number of them
            args = n.args[1:] if _is_runtime_call(n, "builtin") else n.args
            return bool(args) and all(a.keyword is None and not a.star and ok(a.value) for a in args)
        return False

    return ok(node) and (alone or bool(found))


def _carried_with_call(left, right, carried: set) -> bool:
    """``x op f(...)`` (or ``f(...) op x``) with ``x`` one of ``carried`` (a Python float a loop
    changes) and ``f`` a name (``growth(3.5)``), not an attribute (``jnp.exp(t)``, an array's)."""
    for side, other in ((left, right), (right, left)):
        if (
            type(side) is cst.Name
            and side.value in carried
            and type(other) is cst.Call
            and type(other.func) is cst.Name
            and not is_runtime_name(other.func.value)
        ):
            return True
    return False


def _extreme_call(node) -> bool:
    """``max(a, b, ...)``, ``min(a, b, ...)`` (two arguments or more)."""
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Name
        and node.func.value in ("max", "min")
        and len(node.args) >= 2
    )


def _number_literal(node) -> bool:
    """An int or float literal, ``True`` or ``False``, a constant of ``math`` (``math.pi``)."""
    kind = type(node)
    return (
        kind in (cst.Integer, cst.Float)
        or (kind is cst.Name and node.value in _BOOLS)
        or (
            kind is cst.Attribute
            and type(node.value) is cst.Name
            and node.value.value == "math"
            and node.attr.value in _MATH_CONSTANTS
        )
    )


_MATH_CONSTANTS = frozenset({"pi", "e", "tau", "inf", "nan"})


def _int_call(node) -> bool:
    """``int(x)``, ``math.floor(x)``, ``math.ceil(x)`` (one argument): a Python int in eager code."""
    if type(node) is not cst.Call or len(node.args) != 1:
        return False
    func = node.func
    called = (
        func.value
        if type(func) is cst.Name
        else (
            func.attr.value
            if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "math"
            else None
        )
    )
    return called in _INT_CALLS


def _math_call(node) -> bool:
    """``math.log(x)``, ``math.sqrt(x)``..., ``pow(a, b)``, ``float(x)``: a Python number in
    eager code where the arguments are, of a traced ``x`` too (runtime/builtin_rules.py marks
    the result)."""
    if type(node) is not cst.Call:
        return False
    func = node.func
    if _is_runtime_call(node, "builtin") and node.args:  # `_lx.builtin(math.log, x)` by now
        func = node.args[0].value
    if type(func) is cst.Name:
        return func.value in ("pow", "float")
    return type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "math"


def python_int_names(fn: cst.FunctionDef) -> tuple[set, set, list, set, set, set, set]:
    """The names of ``fn``'s own code that may hold Python ints (see the module's docstring),
    its parameters (and the global or closure names its operators read), the operations of
    its own code that may be routed (``+ - * ** //``, augmented assignments, unary ``-``,
    ``abs``), and its loop indices, found in one walk."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    names: set = set()
    pairs: list = []
    operations: list = []
    indices: set = set()  # loop indices (a range's, an enumerate's): bounded, never -2**31
    assigned: set[int] = set()  # values of assignments other than a counter's step
    updates: list = []  # `a[k] += v`
    subscripts: list = []  # `a[k]`
    self_updates: list = []  # `n *= 3`, `n = n * 3`
    arrays: set[str] = set()  # names used as arrays (an attribute, an item, a library call's argument)
    stores: set[int] = set()  # the subscripts assigned or deleted (a statement kept as Python)
    bound: set[str] = set()  # the names the function binds
    elements: list = []  # `for p in positions`: (p, positions)
    loops: list = []  # the `for` and `while` loops
    unpacked: list = []  # `x, v = state`: (x, state), (v, state)
    operands: set[str] = set()  # the names that are operands of operators
    used: set[str] = set()  # names used as no list or tuple is (`x.shape`, `-x`, `jnp.sum(x)`)
    scoped: set[int] = set()  # (a lambda with parameters and what is below it: not the function's code)
    for node in below(fn, fn.body, _SCOPES):
        kind = type(node)
        if scoped and id(node) in scoped:
            continue
        if kind is cst.Lambda and _has_params(node):
            scoped.update(id(n) for n in descendants(node))  # (pre-order: what follows is below it)
            continue
        if kind is cst.For or kind is cst.While:
            loops.append(node)
        if kind in _TARGETS:
            for target in _TARGETS[kind](node):
                _stored(target, stores, bound)
        if kind is cst.For and (index := _loop_index(node)) is not None:
            names.add(index)
            indices.add(index)
        elif kind is cst.For and type(node.target) is cst.Name and type(node.iter) is cst.Name:
            elements.append((node.target.value, node.iter.value))
        elif kind is cst.Assign:
            for target in node.targets:
                pairs.extend(_pairs(target.target, node.value))
                if type(target.target) in (cst.Tuple, cst.List) and type(node.value) is cst.Name:
                    unpacked.extend((n, node.value) for n in _target_names(target.target) if n is not None)
            value = node.value
            if type(value) in (cst.Tuple, cst.List):
                assigned.update(id(e.value) for e in value.elements)
            elif not (
                len(node.targets) == 1
                and type(node.targets[0].target) is cst.Name
                and type(value) is cst.BinaryOperation
                and type(value.left) is cst.Name
                and value.left.value == node.targets[0].target.value
            ):
                assigned.add(id(value))  # (not a counter's `i = i + 1`)
        elif kind is cst.AnnAssign and node.value is not None:
            pairs.extend(_pairs(node.target, node.value))
        if kind is cst.BinaryOperation:
            operands.update(side.value for side in (node.left, node.right) if type(side) is cst.Name)
        elif kind is cst.AugAssign and type(node.value) is cst.Name:
            operands.add(node.value.value)
        if kind in (cst.AugAssign, cst.Assign) and _self_update(node)[0] is not None:
            self_updates.append(node)
        elif kind is cst.Attribute or kind is cst.Subscript:
            if type(node.value) is cst.Name:
                arrays.add(node.value.value)  # `x.sum()`, `x[0]`: used as an array
                if kind is cst.Attribute:
                    used.add(node.value.value)
        elif kind is cst.UnaryOperation and type(node.expression) is cst.Name:
            used.add(node.expression.value)
        elif kind is cst.Comparison:
            sides = [node.left, *(c.comparator for c in node.comparisons)]
            used.update(side.value for side in sides if type(side) is cst.Name)
        elif (
            kind is cst.Call
            and type(node.func) is cst.Attribute
            and not (
                type(node.func.value) is cst.Name
                and (is_runtime_name(node.func.value.value) or node.func.value.value == "math")
            )
        ):
            arrays.update(a.value.value for a in node.args if type(a.value) is cst.Name)  # `jnp.sum(x)`
            used.update(a.value.value for a in node.args if type(a.value) is cst.Name)
        if kind is cst.AugAssign and type(node.target) is cst.Subscript and type(node.operator) in _AUGMENTED:
            updates.append(node)
        elif kind is cst.Subscript:
            subscripts.append(node)
        elif (
            (kind is cst.BinaryOperation and type(node.operator) in _BINARY)
            or (kind is cst.AugAssign and type(node.operator) in _AUGMENTED)
            or _negation(node)
            or _abs_call(node)
            or (
                kind is cst.Comparison and len(node.comparisons) == 1 and type(node.comparisons[0].operator) in _COMPARE
            )
        ):
            operations.append(node)
    # The items of a parameter the function only iterates over (`for p in positions`) may be
    # Python numbers (a list of them is traced item by item, as JAX does).
    items = {target for target, iterable in elements if iterable in params and not {target, iterable} & arrays}
    # A global or closure name that is an operand (`p * (1 + RATE)`, `G * DT`) may hold a Python
    # number as a parameter may.
    free = {
        n
        for n in operands - bound - params - arrays
        if n not in _BOOLS and n not in _NOT_NUMBERS and not is_runtime_name(n)
    }
    numeric = params | free
    names |= items
    # A local that holds a parameter's value (`x = x0`, not used as an array) may hold a Python
    # number as the parameter may: an operation of it with a name that may hold one (`2 * x -
    # dt * x` with `dt = 0.05`) may give one too.
    aliases = {
        name for name, value in pairs if type(value) is cst.Name and value.value in numeric and name not in arrays
    }
    # So does, where a loop assigns it, a parameter, or a local assigned a value computed from
    # parameters and literals only (`s = a + b`, `x = math.sqrt(a)`, `x = float(a)`, `x = a if
    # a > 0 else -a`, `x, v = state`): a Python float a traced loop changes is float64 in eager
    # code, and its loop runs as Python (runtime/dispatch/loops.py), which needs the operations
    # routed to tell.
    looped = _assigned_in_loops(loops) - arrays
    aliases |= {
        name
        for name, value in [*pairs, *unpacked]
        if name in looped and name not in params and _of_params(value, numeric - arrays)
    }
    # Its own updates by operations of it, of parameters and of literals (`x = r * x * (1 - x)`)
    # keep it one (an array's are the operator itself at run time); so do a parameter's own in
    # a loop (`p = p * (1 + rate)`, `v *= 0.999`, `t += 0.1`).
    # (Not by the items of a parameter it iterates over, `acc = acc + row`: an array's rows.)
    own = aliases | (params & looped)
    known = (names - items) | own
    names |= {name for name, value in pairs if name in own and _int_expression(value, known, numeric)}
    names |= {
        node.target.value
        for node in self_updates
        if type(node) is cst.AugAssign
        and node.target.value in own
        and _int_expression(node.value, known, numeric, alone=True)
    }
    given = numeric | aliases
    grown = True
    while grown:
        grown = False
        for name, value in pairs:
            if name not in names and name not in params and _int_expression(value, names, given):
                names.add(name)
                grown = True
        # A name (a parameter too) that the function updates by an int literal or a name that
        # may hold a Python int (`count *= 1000`, `x = (x * 48271) % m`, `budget <<= 1`) may
        # hold a Python int given by the caller (`count = start`): its operations are routed (an
        # array's are the operator itself at run time).
        for node in self_updates:
            name, other = _self_update(node)
            if (
                name is not None
                and name not in names
                and name not in arrays
                and _int_operand(other, names - items, numeric)
            ):
                names.add(name)
                grown = True
    # A counter's step (`i += 1`) and a step standing alone (`table[i - 1]`) are left as written
    # (see `_step`): no need to enter them.
    operations = [
        op
        for op in operations
        if not (
            (type(op) is cst.AugAssign and _small_step(_AUGMENTED[type(op.operator)], op.value))
            or (_step(op, names) and id(op) not in assigned)
        )
    ]
    # (names assigned a float literal; and the items of a parameter, which may be rows of an
    # array: their `+ - *` with a float is left as written, an array's)
    floats = {name for name, value in pairs if type(value) is cst.Float} | {f"item:{n}" for n in items}
    # Python floats a loop changes (a local assigned a float literal, a parameter or alias a loop
    # updates): their operations with a plain function's result (`x * growth(3.5)`) are routed.
    carried = ((floats & looped) & names) | own
    # Lists and dicts of number literals (`acc = [0, 0]`): an item's `acc[0] += v` is routed.
    containers = {name for name, value in pairs if _numbers_literal(value)}
    operations = [op for op in operations if type(op) is not cst.AugAssign or not _item_of(op.target, containers)]
    operations += [op for op in updates if _item_of(op.target, containers)]
    # `table[i]`: an item of what may be a Python list or tuple, at an index that reads a name
    # (it may be a traced int: a parameter, a loop's index, a value the program computes).
    # (Stores are `_lx.setitem(...)` calls by now: converters/array_updates.py.)
    # Only where what is indexed may be a Python list or tuple: a local bound only to displays
    # (`table = [1, 4, 9]`), a parameter used only as a sequence is (indexed, `len(dx)`, passed
    # on: `interp(x, dx, dy)`), a global or closure name, an attribute (`self.TORQUES`); a
    # parameter used as an array (`x.shape`, `x * 2`, `jnp.sum(x)`) or another local (an
    # array, most often) is indexed as written.
    displays = {n for n, v in pairs if type(v) in _DISPLAYS}
    sequences = displays - {n for n, v in pairs if type(v) not in _DISPLAYS} - (bound - {n for n, _ in pairs})
    sequences |= params - used - operands - bound
    operations += [
        s
        for s in subscripts
        if id(s) not in stores and _may_be_sequence(s.value, sequences, params, bound) and _index_reads(s)
    ]
    return names, numeric, operations, indices, floats, containers, carried


def _of_params(value, params: set) -> bool:
    """Whether ``value`` reads one of ``params`` and, besides them, only literals, operators,
    ``math.*`` and the builtins that give Python numbers of Python numbers (``float(a)``,
    ``abs(a)``, ``max(a, b)``), and conditional expressions of those (``_lx.ifexp``,
    ``_lx.builtin`` by now)."""
    found = False
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Attribute:  # `math.sqrt`, `math.pi`, `_lx.ifexp`: nothing below to read
            base = node.value.value if type(node.value) is cst.Name else None
            if base != "math" and (base, node.attr.value) not in _NUMBER_CALLS:
                return False
            continue
        if kind is cst.Name:
            if node.value in params:
                found = True
            elif node.value not in _NUMBER_BUILTINS and node.value not in _BOOLS:
                return False
        elif kind in (cst.Subscript, cst.Await, cst.Yield, cst.NamedExpr):
            return False
        stack.extend(children(node))
    return found


# Builtins that give a Python number of Python numbers, and the runtime's forms of calls.
_NUMBER_BUILTINS = frozenset({"float", "int", "abs", "max", "min", "round", "pow"})
_NUMBER_CALLS = frozenset({("_lx", "ifexp"), ("_lx", "builtin")})


def _assigned_in_loops(loops: list) -> set:
    """The names that the bodies of ``loops`` assign (``p = p * k``, ``v *= k``, ``a, b = b, a + b``)."""
    found: set = set()
    inner: set[int] = set()  # (a loop in another's body: walked with it)
    for loop in loops:
        if id(loop) in inner:
            continue
        for node in _own_nodes(loop.body):
            if type(node) is cst.For or type(node) is cst.While:
                inner.add(id(node))
            elif type(node) in (cst.AugAssign, cst.AnnAssign):
                found.update(_target_names(node.target))
            elif type(node) is cst.Assign:
                found.update(n for t in node.targets for n in _target_names(t.target))
    return found


# The targets of the statements that store or delete: their subscripts are not reads.
_TARGETS = {
    cst.Assign: lambda n: [t.target for t in n.targets],
    cst.AugAssign: lambda n: [n.target],
    cst.AnnAssign: lambda n: [n.target],
    cst.Del: lambda n: [n.target],
    cst.For: lambda n: [n.target],
    cst.WithItem: lambda n: [n.asname.name] if n.asname is not None else [],
    cst.CompFor: lambda n: [n.target],
}


def _stored(target, stores: set, bound: set) -> None:
    kind = type(target)
    if kind is cst.Subscript:
        stores.add(id(target))
    elif kind is cst.Name:
        bound.add(target.value)
    elif kind in (cst.Tuple, cst.List):
        for element in target.elements:
            _stored(element.value, stores, bound)
    elif kind is cst.StarredElement:
        _stored(target.value, stores, bound)


_DISPLAYS = (cst.List, cst.Tuple, cst.ListComp)


def _may_be_sequence(value, sequences: set, params: set, bound: set) -> bool:
    """Whether an indexed value may be a Python list or tuple (see ``python_int_names``)."""
    if type(value) is cst.Attribute:
        return True
    if type(value) is cst.Name:
        return value.value in sequences or (value.value not in params and value.value not in bound)
    return type(value) in _DISPLAYS


def _self_update(node) -> tuple:
    """``(name, other)`` of ``name op= other`` and ``name = name op other`` (or ``other op
    name``, the operation under ``(...) % m`` too) with an int operator; ``(None, None)``."""
    if type(node) is cst.AugAssign:
        if (
            type(node.target) is cst.Name
            and type(node.operator) in _AUGMENTED
            and type(node.operator) not in (cst.DivideAssign,)
        ):
            if not _small_step(_AUGMENTED[type(node.operator)], node.value):
                return node.target.value, node.value
        return None, None
    if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
        return None, None
    name, value = node.targets[0].target.value, node.value
    while (
        type(value) is cst.BinaryOperation
        and type(value.operator) in _BINARY
        and type(value.operator) is not cst.Divide
    ):
        for side, other in ((value.left, value.right), (value.right, value.left)):
            if type(side) is cst.Name and side.value == name:
                return (None, None) if _small_step(_BINARY[type(value.operator)], other) else (name, other)
        value = value.left  # `(x * 48271) % m`
    return None, None


def _int_operand(node, names: set, params: set) -> bool:
    """An int literal (not a float, not a bool), a name that may hold a Python int, or an
    operation on those (and parameters) that reads such a name (``i * base``)."""
    while type(node) is cst.UnaryOperation:
        node = node.expression
    if type(node) is cst.BinaryOperation:
        return _int_expression(node, names, params)
    return type(node) is cst.Integer or (type(node) is cst.Name and node.value in names)


def _index_reads(node: cst.Subscript) -> bool:
    """``a[k]`` (one index, no slice) with ``k`` reading a name."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return False
    index = node.slice[0].slice.value
    return type(index) is cst.Name or any(type(n) is cst.Name for n in descendants(index))


def _numbers_literal(value) -> bool:
    """A list, tuple or dict display of number literals (``[0, 0]``, ``{"a": 0}``)."""
    if type(value) in (cst.List, cst.Tuple):
        items = [e.value for e in value.elements if type(e) is cst.Element]
        return bool(items) and len(items) == len(value.elements) and all(_number_literal(v) for v in items)
    if type(value) is cst.Dict:
        items = [e.value for e in value.elements if type(e) is cst.DictElement]
        return bool(items) and len(items) == len(value.elements) and all(_number_literal(v) for v in items)
    return False


def _item_of(target, containers: set) -> bool:
    """``a[k]`` with ``a`` one of ``containers`` and ``k`` a name or a literal (read twice
    when the update is routed: nothing in it may change anything)."""
    if type(target) is not cst.Subscript or type(target.value) is not cst.Name or target.value.value not in containers:
        return False
    if len(target.slice) != 1 or type(target.slice[0].slice) is not cst.Index:
        return False
    return type(target.slice[0].slice.value) in (cst.Name, cst.Integer, cst.SimpleString)


def _negation(node) -> bool:
    """``-x`` of something other than a literal (its int32 wraps at -2**31 only)."""
    return type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and not _literal(node.expression)


def _abs_call(node) -> bool:
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Name
        and node.func.value == "abs"
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    )


def _loop_index(node: cst.For) -> str | None:
    """The name a ``for`` binds to a Python int at each step: ``i`` in ``for i in range(...)``
    and in ``for i, x in enumerate(...)``."""
    call = node.iter
    if type(call) is not cst.Call:
        return None
    func, target = call.func, node.target
    if type(func) is cst.Call and _is_runtime_call(func, "iterable") and func.args:
        func = func.args[0].value  # `_lx.iterable(enumerate)(...)` (converters/iterables.py)
    if type(func) is not cst.Name:
        return None
    if func.value == "range" and type(target) is cst.Name:
        return target.value
    if (
        func.value == "enumerate"
        and type(target) in (cst.Tuple, cst.List)
        and target.elements
        and type(target.elements[0].value) is cst.Name
    ):
        return target.elements[0].value.value
    return None


def _reads(node, names: set, containers: set = frozenset()) -> bool:
    """Whether an operation's operands name one of ``names`` or an item of one of
    ``containers`` (nested operations included)."""
    if type(node) is cst.UnaryOperation:
        sides = (node.expression,)
    elif type(node) is cst.Call:
        sides = (node.args[0].value,)
    elif type(node) is cst.BinaryOperation:
        sides = (node.left, node.right)
    elif type(node) is cst.Comparison:
        sides = (node.left, node.comparisons[0].comparator)
    elif type(node) is cst.Subscript:
        return True  # (chosen by `_index_reads`)
    else:
        sides = (node.target, node.value)
    for side in sides:
        while type(side) is cst.UnaryOperation:
            side = side.expression
        if (
            (type(side) is cst.Name and side.value in names)
            or _int_call(side)
            or _math_call(side)
            or _item_of(side, containers)
            or (type(side) is cst.BinaryOperation and _reads(side, names, containers))
        ):
            return True
    return False


def _pairs(target, value):
    if type(target) is cst.Name:
        return [(target.value, value)]
    if (
        type(target) in (cst.Tuple, cst.List)
        and type(value) in (cst.Tuple, cst.List)
        and len(target.elements) == len(value.elements)
    ):
        return [pair for t, v in zip(target.elements, value.elements) for pair in _pairs(t.value, v.value)]
    return []


def _calls(node: cst.CSTNode) -> bool:
    """Whether ``node`` holds a call other than of laxify's runtime (``_lx.not_(...)``)."""
    for n in _own_nodes(node):
        if type(n) is cst.Call:
            func = n.func
            if not (type(func) is cst.Attribute and type(func.value) is cst.Name and is_runtime_name(func.value.value)):
                return True
    return False


def _target_names(target) -> list:
    """The names an assignment target binds, or ``[None]`` for a target that is not only names."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    return [None]


def _small_step(op: str, value: cst.BaseExpression) -> bool:
    """``+ c``/``- c`` with a literal ``c`` below 2**16: a counter's step."""
    if op not in ("+", "-", "+=", "-=") or not _literal(value):
        return False
    node, sign = value, 1
    while type(node) is cst.UnaryOperation:
        node, sign = node.expression, -sign
    return abs(int(node.value, 0)) < _SMALL


def _is_runtime_call(node: cst.BaseExpression, attr: str) -> bool:
    """Whether ``node`` is a call ``_lx.<attr>(...)``."""
    func = getattr(node, "func", None)
    return (
        type(node) is cst.Call
        and type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and is_runtime_name(func.value.value)
        and func.attr.value == attr
    )


def _is_routed(node: cst.BaseExpression) -> bool:
    return _is_runtime_call(node, "python_op")


def _operand(node: cst.BaseExpression, names: set, params: set, containers: set = frozenset()) -> str | None:
    """What an operand is: ``"int"`` (a name that may hold a Python int, an operation this
    converter routed), ``"param"``, ``"literal"`` (an int literal), or ``None`` (anything else)."""
    kind = type(node)
    if kind is cst.Name:
        if node.value in _NOT_NUMBERS or is_runtime_name(node.value):
            return None
        return "int" if node.value in names else "param" if node.value in params else None
    if _number_literal(node):
        return "literal"
    if _int_call(node) or _math_call(node) or _item_of(node, containers):
        return "int"
    if kind is cst.UnaryOperation and type(node.operator) is cst.Minus:
        return _operand(node.expression, names, params)
    if _is_routed(node) or _step(node, names):
        return "int"
    if kind is cst.BinaryOperation and params and _plain_operands(node, params):
        return "param"  # `(1 + rate)` in `p * (1 + rate)`: parameters and literals, not routed
    return None


def _plain_operands(node: cst.BinaryOperation, params: set) -> bool:
    return type(node.operator) in _INT_OPERATORS and all(
        _operand(side, (), params) in ("param", "literal") for side in (node.left, node.right)
    )


def _step(node, names: set) -> bool:
    """``i + c``/``i - c``/``c + i`` with a literal ``c`` below 2**16 and ``i`` a name that may
    hold a Python int (or such a step itself): left as it is where it stands alone (an index
    ``table[i - 1]``, an argument), routed where its value goes on (see ``_unstepped``)."""
    if type(node) is not cst.BinaryOperation:
        return False
    op = _BINARY.get(type(node.operator))
    if op not in ("+", "-"):
        return False
    for value, step in ((node.left, node.right), (node.right, node.left)):
        if _small_step(op, step) and (
            (type(value) is cst.Name and value.value in names) or _is_routed(value) or _step(value, names)
        ):
            return True
    return False


def _unstepped(node, names: set):
    """``node`` with a step (see ``_step``) routed, as an operand of a routed operation."""
    if not _step(node, names):
        return node
    call = _call(
        _BINARY[type(node.operator)], _unstepped(_bare(node.left), names), _unstepped(_bare(node.right), names)
    )
    return call


def _bare(node):
    return node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node


def _literal_value(node: cst.BaseExpression) -> int:
    sign = 1
    while type(node) is cst.UnaryOperation:
        node, sign = node.expression, -sign
    return sign * int(node.value, 0)


def _literal(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer or (
        type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and _literal(node.expression)
    )


def _call(
    op: str, left: cst.BaseExpression, right: cst.BaseExpression, name: str | None = None, in_try: bool = False
) -> cst.Call:
    args = [cst.Arg(cst.SimpleString(repr(op))), cst.Arg(left), cst.Arg(right)]
    if name is not None:
        args.append(cst.Arg(cst.SimpleString(repr(name))))
    if in_try:
        args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("in_try"), equal=_EQUAL))
    return cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name("python_op")), args)


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _named(value: cst.BaseExpression, target: cst.BaseExpression) -> cst.BaseExpression:
    if type(target) is cst.Name and _is_routed(value) and len(value.args) == 3 and not is_runtime_name(target.value):
        return value.with_changes(args=[*value.args, cst.Arg(cst.SimpleString(repr(target.value)))])
    if (
        type(target) is cst.Name
        and _is_routed(value)
        and len(value.args) == 4
        and value.args[3].keyword is not None
        and not is_runtime_name(target.value)
    ):
        name = cst.Arg(cst.SimpleString(repr(target.value)))
        return value.with_changes(args=[*value.args[:3], name, value.args[3]])
    return value


class IntArithmeticTransformer(OwnCodeConverter):
    def __init__(
        self,
        ctx: Context,
        names: set,
        params: set,
        indices=frozenset(),
        guarded=frozenset(),
        floats=frozenset(),
        containers=frozenset(),
        carried=frozenset(),
        targets=frozenset(),
        picks=frozenset(),
    ):
        super().__init__(ctx)
        self.targets = targets  # ids of the operations routed (a node entered above one is not)
        self.picks = picks  # ids of the items used where they stand (see `_used_in_place`)
        self.carried = carried  # Python floats a loop changes (see `python_int_names`)
        self.guarded = guarded  # ids of operations in the body of a `try` with handlers or a `with`
        self.indices = indices
        self.classes = 0
        self.names, self.params = names, params
        self.floats = floats  # names assigned a float literal, and `item:<name>` (see `_routed`)
        self.containers = containers  # lists and dicts of number literals (see `_item_of`)
        self.steps: set[int] = set()  # `i = i + 1` values: a counter's step, left as it is
        self.assigned: set[int] = set()  # values of assignments (``visit_Assign``)
        # Whether the statement being visited assigns only names that may hold Python ints:
        # there a parameter may be one too (`r = r * k`); elsewhere it may be an array (`x + i`).
        self.into_int = False

    def _routed(self, op: str, left, right) -> bool:
        """Whether ``left <op> right`` goes through ``_lx.python_op``: both operands may be Python
        ints, one of them a name that may hold one (or a routed operation)."""
        params = self.params if self.into_int else ()
        kinds = (
            _operand(left, self.names, params, self.containers),
            _operand(right, self.names, params, self.containers),
        )
        if _int_literal_power(op, left, right):
            return True
        if None in kinds and _carried_with_call(left, right, self.carried):
            # `x * growth(3.5)`: a Python number where the function gives one (an array's
            # operation is the operator itself at run time)
            return True
        if None in kinds or "int" not in kinds:
            return False
        if (
            op.rstrip("=") in ("+", "-", "*")
            and any(type(side) is cst.Name and f"item:{side.value}" in self.floats for side in (left, right))
            and any(
                type(side) is cst.Float or (type(side) is cst.Name and side.value in self.floats)
                for side in (left, right)
            )
        ):
            return False  # `acc + row`: `row` may be an array's row (see `python_int_names`)
        if op in ("//", "//=", "%", "%=") and _literal(right):
            # (a literal divisor other than 0 raises nothing; only -2**31 // -1 passes int32; a
            # quotient `/` is routed whatever its divisor: a float's value Python computed,
            # `(lo + hi) / 2`, stays marked so for the loop's check)
            return _literal_value(right) in (0, -1) if op.startswith("//") else _literal_value(right) == 0
        return True

    def visit_ClassDef(self, node) -> bool:
        self.classes += 1
        return True

    def leave_ClassDef(self, original_node, updated_node):
        self.classes -= 1
        return updated_node

    def _active(self) -> bool:
        return self.def_depth == 1 and not self.classes

    def _targets_ints(self, targets) -> bool:
        names = [n for t in targets for n in _target_names(t)]
        return bool(names) and all(n in self.names for n in names)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if self._changed and self._changed[-1] and self._active() and not _calls(original_node):
            # (something in it was routed; a line with calls is left to the converters after
            # this one, which route them: its form before routing would skip them)
            pos = self.ctx.positions.get(original_node)
            if pos is not None:
                self.ctx.plain.setdefault(pos, []).append(original_node)
        return updated_node

    def visit_AugAssign(self, node) -> bool:
        self.into_int = self._targets_ints([node.target])
        return True

    def visit_Assign(self, node) -> bool:
        self.into_int = self._targets_ints([t.target for t in node.targets])
        value = node.value
        # Values assigned to names (`j = k + 1`, `a, b = b, a + 1`): a step there is routed.
        self.assigned.add(id(value))
        if type(value) in (cst.Tuple, cst.List):
            self.assigned.update(id(e.value) for e in value.elements)
        if (
            len(node.targets) == 1
            and type(node.targets[0].target) is cst.Name
            and type(value) is cst.BinaryOperation
            and type(value.left) is cst.Name
            and value.left.value == node.targets[0].target.value
            and _small_step(_BINARY.get(type(value.operator), ""), value.right)
        ):
            self.steps.add(id(value))
        return True

    def leave_BinaryOperation(self, original_node, updated_node):
        op = _BINARY.get(type(updated_node.operator))
        left, right = updated_node.left, updated_node.right
        if op is None or not self._active() or id(original_node) in self.steps or not self._routed(op, left, right):
            return updated_node
        if _step(updated_node, self.names) and id(original_node) not in self.assigned:
            return updated_node  # a step standing alone (`table[i - 1]`): see `_step`
        call = _call(
            op,
            _unstepped(_bare(left), self.names),
            _unstepped(_bare(right), self.names),
            in_try=id(original_node) in self.guarded,
        )
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Comparison(self, original_node, updated_node):
        """``i == 16777217.0``: an int compared with a float literal, exactly (as Python does)."""
        if not self._active() or len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        op = _COMPARE.get(type(target.operator))
        left, right = updated_node.left, target.comparator
        if op is None or not _int_float(left, right, self.names):
            return updated_node
        call = _call(op, _bare(left), _bare(right))
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Subscript(self, original_node, updated_node):
        """``table[i]`` → ``_lx.item(table, i)`` (``_lx.one_item`` where the item is not used in
        place: see ``_used_in_place``): a Python list or tuple indexed by a traced Python int is
        an array of its items indexed in the program (``runtime/numbers.py``); anything else is
        indexed as written."""
        if id(original_node) not in self.targets or not self._active():
            return updated_node  # (entered on the way to a target below: `T[k][i] = v` stores into `T[k]`)
        if len(updated_node.slice) != 1 or type(updated_node.slice[0].slice) is not cst.Index:
            return updated_node
        if id(original_node) in self.guarded:
            # (in the body of a `try` whose handler may catch its IndexError: the program cannot
            # choose the handler, the item is Python's, which needs a concrete index)
            return updated_node
        index = updated_node.slice[0].slice.value
        entry = "item" if id(original_node) in self.picks else "one_item"
        args = [cst.Arg(_bare(updated_node.value)), cst.Arg(index)]
        call = cst.Call(cst.Attribute(cst.Name("_lx"), cst.Name(entry)), args)
        return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_UnaryOperation(self, original_node, updated_node):
        """``-x`` of a Python int (not a loop index, which is bounded): ``_lx.python_op("neg", x, 0)``,
        checked at -2**31, the one int32 whose negation wraps."""
        if not (_negation(updated_node) and self._active()):
            return updated_node
        operand = updated_node.expression
        if _operand(operand, self.names, ()) != "int":
            return updated_node
        return _call("neg", _bare(operand), cst.Integer("0")).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar
        )

    def leave_Call(self, original_node, updated_node):
        """``abs(x)`` of a Python int: ``_lx.python_op("abs", x, 0)`` (see ``leave_UnaryOperation``)."""
        if not (_abs_call(updated_node) and self._active()):
            return updated_node
        operand = updated_node.args[0].value
        if _operand(operand, self.names, ()) != "int" or (type(operand) is cst.Name and operand.value in self.indices):
            return updated_node
        return _call("abs", operand, cst.Integer("0"))

    def leave_Assign(self, original_node, updated_node):
        self.into_int = False
        return self._with_names(updated_node)

    def _with_names(self, updated_node):
        """The name an operation's result is assigned to goes into the call (for its message):
        ``r = r * i``, and ``a, b = b, a + b`` item by item."""
        if not self._active() or len(updated_node.targets) != 1:
            return updated_node
        target, value = updated_node.targets[0].target, updated_node.value
        if type(target) is cst.Name:
            named = _named(value, target)
            return updated_node if named is value else updated_node.with_changes(value=named)
        if (
            type(target) in (cst.Tuple, cst.List)
            and type(value) in (cst.Tuple, cst.List)
            and len(target.elements) == len(value.elements)
        ):
            elements = [
                v.with_changes(value=_named(v.value, t.value))
                if type(v) is cst.Element and _named(v.value, t.value) is not v.value
                else v
                for t, v in zip(target.elements, value.elements)
            ]
            if all(e is v for e, v in zip(elements, value.elements)):
                return updated_node
            return updated_node.with_changes(value=value.with_changes(elements=elements))
        return updated_node

    def leave_AugAssign(self, original_node, updated_node):
        op = _AUGMENTED.get(type(updated_node.operator))
        target, value = updated_node.target, updated_node.value
        if op is not None and type(target) is cst.Subscript and self._active():
            # `acc[0] += v` of a list of numbers (see `_item_of`): the item is a Python number
            self.into_int = False
            if _operand(value, self.names, self.params) is None or _small_step(op, value):
                return updated_node
            call = _call(op, target, _unstepped(_bare(value), self.names), in_try=id(original_node) in self.guarded)
            return cst.Assign([cst.AssignTarget(target)], call)
        routed = op is not None and self._routed(op[:-1], updated_node.target, updated_node.value)
        self.into_int = False
        if op is None or not self._active() or type(target) is not cst.Name or _small_step(op, value):
            return updated_node
        if is_runtime_name(target.value) or not routed:
            return updated_node
        value = _unstepped(_bare(value), self.names)
        call = _call(op, cst.Name(target.value), value, target.value, in_try=id(original_node) in self.guarded)
        return cst.Assign([cst.AssignTarget(cst.Name(target.value))], call)


# What the pipeline looks for before running this converter (see analysis/features.py).
# The constructs that may make a Python int traced: loops, `if`s, conditional expressions (a
# `lambda` in `_lx.ifexp(...)` by now), `int(x)` (a builtin with a rule).
# And `2 ** k`: an int literal's power, whose exponent may be an int array (see `_int_literal_power`).
# And `table[i]`: an item of what may be a Python list or tuple at what may be a traced int.
TRIGGERS = (cst.For, cst.While, cst.If, cst.Lambda, BUILTIN_CALL, cst.Power, COMPUTED_INDEX)


def _int_literal_power(op: str, left, right) -> bool:
    """``2 ** k`` with ``k`` a name: a Python int's power whatever ``k`` is (Python's float for
    a negative Python int; for an int array, JAX's ``TypeError`` where it is negative, which
    ``jax.jit`` alone turns into 0)."""
    return (
        op in ("**", "**=")
        and type(left) is cst.Integer
        and type(right) is cst.Name
        and not is_runtime_name(right.value)
        and right.value not in _NOT_NUMBERS
    )


def transform(node: cst.FunctionDef, ctx: Context) -> cst.FunctionDef:
    names, params, operations, indices, floats, containers, carried = python_int_names(node)
    targets = {
        id(op)
        for op in operations
        if _reads(op, names, containers)
        or (type(op) is cst.BinaryOperation and _int_literal_power(_BINARY.get(type(op.operator)), op.left, op.right))
        or (type(op) is cst.BinaryOperation and _carried_with_call(op.left, op.right, carried))
    }
    if not targets:
        return node
    guarded = caught_below(node, targets)
    # Only the nodes above the operations are entered (libcst rebuilds every node it enters).
    # (Where an item is used is read only when an item is routed: one walk of the function.)
    items = any(type(op) is cst.Subscript and id(op) in targets for op in operations)
    picks = _used_in_place(node) if items else frozenset()
    converter = IntArithmeticTransformer(
        ctx, names, params, indices, guarded, floats, containers, carried, targets, picks
    )
    return transform_above(node, converter, lambda n: id(n) in targets)


def _used_in_place(fn: cst.FunctionDef) -> frozenset:
    """The ids of the items (``t[i]``) that are used where they stand: called (``t[i](x)``),
    given to a function called by name, a method or attribute of them taken (``t[i].sum()``),
    an operand of an operator or of a comparison other than ``is``, or indexed. There an item that one array
    cannot hold (a function, arrays of different shapes) may be each of them, in the branches
    of a switch (``runtime/numbers.py`` ``Picked``); elsewhere (bound to a name, returned,
    compared with ``is``) it is the one item Python picks, which only a concrete index gives."""
    found: set[int] = set()
    for node in descendants(fn):
        kind = type(node)
        if kind is cst.Call:
            found.add(id(node.func))
            if type(node.func) is cst.Name and not is_runtime_name(node.func.value):
                # (a function's call, which `_lx.call` makes with each item; a method such as
                # `out.append(t[i])`, or the runtime's `print`, would keep the pick itself)
                found.update(id(a.value) for a in node.args)
        elif kind is cst.Attribute or kind is cst.Subscript:
            found.add(id(node.value))
        elif kind is cst.BinaryOperation:
            found.update((id(node.left), id(node.right)))
        elif kind is cst.UnaryOperation:
            found.add(id(node.expression))
        elif kind is cst.Comparison and not any(
            type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons
        ):
            found.add(id(node.left))
            found.update(id(c.comparator) for c in node.comparisons)
    return frozenset(found)


def _int_float(left, right, names: set) -> bool:
    """Whether a comparison is of a name that may hold a Python int and a float literal."""
    for a, b in ((left, right), (right, left)):
        if type(a) is cst.Name and a.value in names and type(b) is cst.Float:
            return True
    return False
