"""The builtin-calls converter alone: golden tests (source before, source after), and the
functions it converts run eagerly and converted on inputs that take every path."""

from __future__ import annotations

import builtins
import math
from math import floor as round_down

import jax.numpy as jnp
import libcst as cst
import numpy as np

from golden import check, check_unchanged
from harness import check as check_equivalent, control_flow_prims, jaxpr_of
from laxify.transpiler.analysis.features import RULED_BUILTINS, RULED_MATH
from laxify.transpiler.converters import builtin_calls
from laxify.transpiler.converters.base import Context

# The module globals the golden functions see: `math` and aliases of it, a math function
# imported under another name, NumPy, and globals that shadow builtins.
NAMESPACE = {"math": math, "m": math, "root": math.sqrt, "np": np, "np_floor": np.floor,
             "max": builtins.max, "min": lambda *values: values[0]}


# -- golden: builtins --------------------------------------------------------------------------

def test_every_ruled_builtin_goes_through_the_runtime_with_its_arguments():
    check(builtin_calls, """
    def f(x, xs):
        a = max(x, 1) + min(x, 2, key=abs)
        b = any(xs), all(xs), bool(x), int(x), float(x)
        c = sorted(xs, reverse=True), str(x), repr(x), format(x, ".2f"), pow(x, 2)
        d = isinstance(x, int), type(x)
        return a, b, c, d
    """, """
    def f(x, xs):
        a = _lx.builtin(max, x, 1) + _lx.builtin(min, x, 2, key=abs)
        b = _lx.builtin(any, xs), _lx.builtin(all, xs), _lx.builtin(bool, x), _lx.builtin(int, x), _lx.builtin(float, x)
        c = _lx.builtin(sorted, xs, reverse=True), _lx.builtin(str, x), _lx.builtin(repr, x), _lx.builtin(format, x, ".2f"), _lx.builtin(pow, x, 2)
        d = _lx.builtin(isinstance, x, int), _lx.builtin(type, x)
        return a, b, c, d
    """)


def test_the_golden_test_above_names_every_ruled_builtin():
    # A builtin added to the table gets a golden line above.
    assert RULED_BUILTINS == {"max", "min", "any", "all", "bool", "int", "float", "sorted", "str", "repr",
                              "format", "pow", "isinstance", "type"}


def test_builtins_without_a_rule_are_left_as_written():
    # Arrays implement these themselves (`__abs__`, `__round__`, `__len__`, iteration).
    check_unchanged(builtin_calls, """
    def f(x, xs):
        return abs(x), round(x), len(xs), sum(xs), divmod(x, 2), list(xs), print(x)
    """)


def test_nested_calls_are_each_routed_and_a_lone_generator_gets_its_parentheses():
    """`any(v > 0 for v in xs)`: the generator was the call's only argument; as the second it
    needs parentheses of its own."""
    check(builtin_calls, """
    def f(x, xs):
        return max(int(x), min(x, 3)), any(v > 0 for v in xs), all((v for v in xs))
    """, """
    def f(x, xs):
        return _lx.builtin(max, _lx.builtin(int, x), _lx.builtin(min, x, 3)), _lx.builtin(any, (v > 0 for v in xs)), _lx.builtin(all, (v for v in xs))
    """)


def test_a_builtin_name_the_function_binds_itself_is_left_to_the_calls_converter():
    """A parameter, an assignment or a nested def of that name: the user's own function."""
    check_unchanged(builtin_calls, """
    def f(x, max):
        int = lambda v: v
        def sorted(v):
            return v
        return max(x), int(x), sorted(x)
    """)


def test_a_global_decides_by_its_value():
    """A module global `max` that is the builtin is ruled; a global `min` that is the user's
    own function is not."""
    check(builtin_calls, """
    def f(x, y):
        return max(x, y), min(x, y)
    """, """
    def f(x, y):
        return _lx.builtin(max, x, y), min(x, y)
    """, NAMESPACE)


def test_builtins_in_a_lambda_are_routed_but_a_nested_def_is_left_alone():
    check(builtin_calls, """
    def f(x):
        def g(v):
            return max(v, 0)
        h = lambda v: max(v, 0)
        return g(x), h(x), max(x, 0)
    """, """
    def f(x):
        def g(v):
            return max(v, 0)
        h = lambda v: _lx.builtin(max, v, 0)
        return g(x), h(x), _lx.builtin(max, x, 0)
    """)


# -- golden: math ------------------------------------------------------------------------------

def test_ruled_math_functions_through_the_module_or_an_alias_of_it():
    check(builtin_calls, """
    def f(x, y):
        return math.floor(x), math.sqrt(x), math.atan2(x, y), m.ceil(x), root(x)
    """, """
    def f(x, y):
        return _lx.builtin(math.floor, x), _lx.builtin(math.sqrt, x), _lx.builtin(math.atan2, x, y), _lx.builtin(m.ceil, x), _lx.builtin(root, x)
    """, NAMESPACE)


def test_math_calls_that_are_not_rules_or_not_the_math_module_are_left_alone():
    """`math.gamma` has no rule; `np.floor`/`np_floor` are NumPy's; `math` bound by the function
    is not the module; without the module among the globals nothing is known."""
    check_unchanged(builtin_calls, """
    def f(x):
        return math.gamma(x), np.floor(x), np_floor(x), math.pi
    """, NAMESPACE)
    check_unchanged(builtin_calls, """
    def f(x, math):
        return math.floor(x)
    """, NAMESPACE)
    check_unchanged(builtin_calls, """
    def f(x):
        return math.floor(x)
    """)


def test_every_ruled_math_function_is_routed():
    names = sorted(RULED_MATH)
    call = ", ".join(f"math.{name}(x)" for name in names)
    routed = ", ".join(f"_lx.builtin(math.{name}, x)" for name in names)
    check(builtin_calls, f"""
    def f(x):
        return {call}
    """, f"""
    def f(x):
        return {routed}
    """, NAMESPACE)


# -- golden: `in` / `not in` --------------------------------------------------------------------

def test_in_and_not_in_take_the_container_first():
    check(builtin_calls, """
    def f(x, seen):
        a = x in seen
        b = x + 1 not in [x, 2]
        if (x in seen) or x == 0:
            a = not a
        return a, b
    """, """
    def f(x, seen):
        a = _lx.contains(seen, x)
        b = _lx.not_contains([x, 2], x + 1)
        if (_lx.contains(seen, x)) or x == 0:
            a = not a
        return a, b
    """)


def test_chained_and_other_comparisons_are_left_alone():
    # A chain's `in` is `_lx.compare`'s (the and/or/not converter).
    check_unchanged(builtin_calls, """
    def f(x, seen):
        return 0 < x in seen, x in seen not in [seen], x is seen, x == 1, x < 2
    """)


def test_a_range_whose_uses_need_no_item_goes_through_the_runtime_with_len_and_sum():
    # Given to len/sum/max/..., searched with `in`, indexed: the runtime answers from the bounds.
    check(builtin_calls, """
    def f(n, k):
        a = sum(range(n)) + len(range(1, n, 2)) + max(range(n), default=0)
        b = k in range(n), range(n)[k], any(range(n))
        r = range(n)
        return a, b, len(r) + r[-1] + sum(r, 1), k not in r
    """, """
    def f(n, k):
        a = _lx.builtin(sum, _lx.builtin(range, n)) + _lx.builtin(len, _lx.builtin(range, 1, n, 2)) + _lx.builtin(max, _lx.builtin(range, n), default=0)
        b = _lx.contains(_lx.builtin(range, n), k), _lx.builtin(range, n)[k], _lx.builtin(any, _lx.builtin(range, n))
        r = _lx.builtin(range, n)
        return a, b, _lx.builtin(len, r) + r[-1] + _lx.builtin(sum, r, 1), _lx.not_contains(r, k)
    """)


def test_a_range_iterated_or_kept_is_pythons_own():
    # A `for`, `list(...)`, a method, a name used so or bound otherwise, an index a handler may
    # catch, a `range` that is not the builtin: Python's range (its items need concrete bounds).
    check_unchanged(builtin_calls, """
    def f(n, k, xs):
        for i in range(n):
            pass
        a = list(range(n)), range(n).index(k), [i for i in range(n)]
        r = range(n)
        s = range(n)
        s = xs
        t = range(n)
        try:
            b = range(n)[k]
        except IndexError:
            b = 0
        return a, len(r), list(r), sum(s), t, b
    """)
    check(builtin_calls, """
    def f(n, k, range):
        return sum(range(n)) + (k in range(n))
    """, """
    def f(n, k, range):
        return sum(range(n)) + (_lx.contains(range(n), k))
    """)


def test_a_function_with_nothing_to_route_is_the_same_tree():
    fn = cst.parse_module("def f(x):\n    return abs(x) + len(x)\n").body[0]
    assert builtin_calls.transform(fn, Context({})) is fn


# -- equivalence -----------------------------------------------------------------------------

def pow(base, exponent):  # noqa: A001 - a module's own `pow`, which shadows the builtin
    return base * 10 + exponent


def builtins_on_traced_scalars(x, y):
    hi = max(x, y)
    lo = min(x, y, key=abs)
    t = int(x) + math.floor(y) + round_down(x)  # int truncates toward zero, floor rounds down
    r = math.sqrt(abs(x))
    if max(x, y) > 1:
        r = r + bool(x)
    return hi, lo, t, r, float(y), pow(x, 2)


F = jnp.float32


def test_builtins_on_traced_values_compute_what_python_computes():
    """Negative halves (truncation against flooring), equal values (which one `max` keeps),
    both sides of the traced `if`; the module's own `pow` is called, not the builtin's rule."""
    check_equivalent(builtins_on_traced_scalars,
                     (F(-2.5), F(2.5)), (F(3.5), F(-1.5)), (F(2.0), F(2.0)), (F(0.5), F(-0.5)),
                     expect_prims={"cond"})


def membership(x, seen):
    return x in seen, x not in seen, x + 1 in seen


def test_in_a_list_of_traced_values_is_pythons_membership():
    seen = [jnp.int32(1), jnp.int32(2)]
    check_equivalent(membership, (jnp.int32(1), seen), (jnp.int32(2), seen), (jnp.int32(7), seen),
                     static_argnums=(), expect_prims=())


def reductions_over_an_array(xs):
    return max(xs), min(xs), any(v > 2 for v in xs), all(v > -1 for v in xs)


def test_max_and_any_over_an_array_are_one_scan_not_an_unrolled_loop():
    check_equivalent(reductions_over_an_array, (jnp.array([1.0, 3.0, 2.0]),),
                     (jnp.array([0.0, 1.0, -2.0]),), expect_prims={"scan"})
    assert control_flow_prims(jaxpr_of(reductions_over_an_array, jnp.zeros(64))) == {"scan"}


def test_a_call_a_handler_may_catch_goes_through_builtin_in_try():
    # In the body of a `try` with handlers or of a `with`: the runtime makes the statement run as
    # Python where the rule would raise Python's error for some data. Not in the handler itself.
    check(builtin_calls, """
    def f(x):
        try:
            y = math.sqrt(x)
        except ValueError:
            y = math.fabs(x)
        with suppress(OverflowError):
            y = math.exp(y)
        return math.log(y)
    """, """
    def f(x):
        try:
            y = _lx.builtin_in_try(math.sqrt, x)
        except ValueError:
            y = _lx.builtin(math.fabs, x)
        with suppress(OverflowError):
            y = _lx.builtin_in_try(math.exp, y)
        return _lx.builtin(math.log, y)
    """, NAMESPACE)
