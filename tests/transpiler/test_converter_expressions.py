"""The expression-level converters alone (and/or/not and chained comparisons, conditional
expressions, identity tests, strings formatted for `print`, list appends in loops, `with loop_options(...)`
blocks, `assert` statements), golden tests: source
before, source after (LibCST style). Each test applies one converter to one function."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.converters import (
    assert_statements, conditional_expressions, identity_tests, list_appends, logical_expressions,
    loop_options_blocks, print_calls,
)
from laxify.transpiler.converters.base import Context


def convert(converter, before: str) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    fn = converter.transform(module.body[0], Context({}))
    return module.with_changes(body=[fn]).code


def check(converter, before: str, after: str) -> None:
    assert convert(converter, before) == textwrap.dedent(after).lstrip("\n")


def check_unchanged(converter, before: str) -> None:
    assert convert(converter, before) == textwrap.dedent(before).lstrip("\n")


# -- and / or / not, chained comparisons -----------------------------------------------

def test_and_passes_the_right_side_as_a_lambda():
    before = """
    def f(x, y):
        return x > 0 and y > 0
    """
    after = """
    def f(x, y):
        return _lx.and_(x > 0, lambda: y > 0)
    """
    check(logical_expressions, before, after)


def test_or_passes_the_right_side_as_a_lambda():
    before = """
    def f(x, y):
        return x > 0 or y > 0
    """
    after = """
    def f(x, y):
        return _lx.or_(x > 0, lambda: y > 0)
    """
    check(logical_expressions, before, after)


def test_not_becomes_not_():
    before = """
    def f(x):
        return not x > 0
    """
    after = """
    def f(x):
        return _lx.not_(x > 0)
    """
    check(logical_expressions, before, after)


def test_and_or_nest_as_python_groups_them():
    """`and` binds tighter than `or`: the `and_` call is the left operand of `or_`."""
    before = """
    def f(x, y, z):
        return x > 0 and y > 0 or z > 0
    """
    after = """
    def f(x, y, z):
        return _lx.or_(_lx.and_(x > 0, lambda: y > 0), lambda: z > 0)
    """
    check(logical_expressions, before, after)


def test_nested_operators_on_the_right_stay_eager():
    """The runtime's own operator calls are not user calls: no `lazy=True`."""
    before = """
    def f(x, y, z):
        return x > 0 and (y > 0 or not z > 0)
    """
    after = """
    def f(x, y, z):
        return _lx.and_(x > 0, lambda: (_lx.or_(y > 0, lambda: _lx.not_(z > 0))))
    """
    check(logical_expressions, before, after)


def test_call_on_the_right_makes_and_lazy():
    before = """
    def f(x, y):
        return x > 0 and jnp.any(y > 0)
    """
    after = """
    def f(x, y):
        return _lx.and_(x > 0, lambda: jnp.any(y > 0), lazy=True)
    """
    check(logical_expressions, before, after)


def test_call_nested_in_the_right_side_makes_or_lazy():
    before = """
    def f(x, y):
        return x > 0 or (y + jnp.sum(x)) > 0
    """
    after = """
    def f(x, y):
        return _lx.or_(x > 0, lambda: (y + jnp.sum(x)) > 0, lazy=True)
    """
    check(logical_expressions, before, after)


def test_call_on_the_left_only_stays_eager():
    """The left side is always evaluated: only the right side decides laziness."""
    before = """
    def f(x, y):
        return jnp.all(x > 0) or y > 0
    """
    after = """
    def f(x, y):
        return _lx.or_(jnp.all(x > 0), lambda: y > 0)
    """
    check(logical_expressions, before, after)


def test_a_chain_of_one_operator_is_one_call():
    """`a or b or c` is one call with a lambda per later operand, so that a Python operand
    that decides the result stops the evaluation of the ones after it."""
    before = """
    def f(x, a):
        return x > 1 or a is None or a > 1
    """
    after = """
    def f(x, a):
        return _lx.or_(x > 1, lambda: a is None, lambda: a > 1)
    """
    check(logical_expressions, before, after)


def test_a_parenthesized_left_operand_keeps_its_own_call():
    before = """
    def f(x, y, z):
        return (x and y) and z
    """
    after = """
    def f(x, y, z):
        return _lx.and_((_lx.and_(x, lambda: y)), lambda: z)
    """
    check(logical_expressions, before, after)


def test_a_call_in_any_later_operand_of_a_chain_makes_it_lazy():
    before = """
    def f(x, y, z):
        return x > 0 and jnp.any(y) and z > 0
    """
    after = """
    def f(x, y, z):
        return _lx.and_(x > 0, lambda: jnp.any(y), lambda: z > 0, lazy=True)
    """
    check(logical_expressions, before, after)


def test_tests_of_statements_and_expressions_are_conditions():
    """Only the truth value of a test is used: `condition=True` on the whole test,
    `truth_only=True` on an `and`/`or` inside it (under `not`, or an operand of the other
    operator); a value (an assignment, a return, a branch of `a if c else b`) stays plain."""
    before = """
    def f(x, y, z):
        if x and y or z:
            pass
        while not (x or y) and z:
            pass
        assert x or y
        v = (x or y) if x and z else (y and z)
        return [w for w in z if w or x], x or y
    """
    after = """
    def f(x, y, z):
        if _lx.or_(_lx.and_(x, lambda: y, truth_only=True), lambda: z, condition=True):
            pass
        while _lx.and_(_lx.not_((_lx.or_(x, lambda: y, truth_only=True))), lambda: z, condition=True):
            pass
        assert _lx.or_(x, lambda: y, condition=True)
        v = (_lx.or_(x, lambda: y)) if _lx.and_(x, lambda: z, condition=True) else (_lx.and_(y, lambda: z))
        return [w for w in z if _lx.or_(w, lambda: x, condition=True)], _lx.or_(x, lambda: y)
    """
    check(logical_expressions, before, after)


def test_elif_test_is_a_condition():
    before = """
    def f(x, a):
        if x > 1:
            return x
        elif a is None or x < 0:
            return -x
        return x
    """
    after = """
    def f(x, a):
        if x > 1:
            return x
        elif _lx.or_(a is None, lambda: x < 0, condition=True):
            return -x
        return x
    """
    check(logical_expressions, before, after)


def test_chained_comparison_becomes_compare():
    """Each operand after the first is a lambda, so it is evaluated once and only if needed."""
    before = """
    def f(x, lo, hi):
        return lo < x <= hi
    """
    after = """
    def f(x, lo, hi):
        return _lx.compare(lo, ('<', lambda: x), ('<=', lambda: hi))
    """
    check(logical_expressions, before, after)


def test_chained_comparison_with_a_call_and_every_operator():
    before = """
    def f(x, a, b):
        return a < jnp.max(x) >= b != x == a in b not in x is a is not b
    """
    after = """
    def f(x, a, b):
        return _lx.compare(a, ('<', lambda: jnp.max(x)), ('>=', lambda: b), ('!=', lambda: x), ('==', lambda: a), ('in', lambda: b), ('not in', lambda: x), ('is', lambda: a), ('is not', lambda: b))
    """
    check(logical_expressions, before, after)


def test_chained_comparison_with_a_call_is_lazy():
    code = convert(logical_expressions, """
    def f(x, lo):
        return lo < x.sum() < jnp.max(x)
    """)
    assert "lazy=True" in code, code


def test_single_comparison_is_unchanged():
    before = """
    def f(x, y):
        return x < y
    """
    check_unchanged(logical_expressions, before)


def test_walrus_on_the_right_is_left_alone():
    """A lambda cannot bind the walrus target in the function's scope."""
    before = """
    def f(x, y):
        return x > 0 and (m := y.max()) > 0
    """
    check_unchanged(logical_expressions, before)


def test_walrus_on_the_left_is_converted():
    before = """
    def f(x, y):
        if (n := x.sum()) > 0 and y > 0:
            return n
        return y
    """
    after = """
    def f(x, y):
        if _lx.and_((n := x.sum()) > 0, lambda: y > 0, condition=True):
            return n
        return y
    """
    check(logical_expressions, before, after)


def test_operators_in_conditions_and_parentheses_are_kept():
    before = """
    def f(x, y):
        while not (x > 10 or y > 10):
            x = x + 1
        return (x > 0 and y > 0)
    """
    after = """
    def f(x, y):
        while _lx.not_((_lx.or_(x > 10, lambda: y > 10, truth_only=True))):
            x = x + 1
        return (_lx.and_(x > 0, lambda: y > 0))
    """
    check(logical_expressions, before, after)


def test_operators_of_a_nested_def_are_left_alone():
    before = """
    def f(x):
        def g(a, b):
            return a and not b
        return g(x, x) or x
    """
    after = """
    def f(x):
        def g(a, b):
            return a and not b
        return _lx.or_(g(x, x), lambda: x)
    """
    check(logical_expressions, before, after)


# -- strings formatted for print ---------------------------------------------------------

def test_fstring_in_print_becomes_a_template_and_its_values():
    """Conversions and format specs (nested fields too) are kept; values are numbered in the
    order Python evaluates them; literal braces stay escaped."""
    before = """
    def f(x, w):
        print(f"x = {x:.2f}", f'{x!r:>{w}} {{set}}', sep="|", end="!\\n")
    """
    after = """
    def f(x, w):
        _lx.print_(_lx.printing.format_("x = {0:.2f}", x), _lx.printing.format_("{0!r:>{1}} {{set}}", x, w), sep="|", end="!\\n")
    """
    check(print_calls, before, after)


def test_self_documenting_fstring_keeps_its_text_and_repr():
    before = """
    def f(x):
        print(f"{x=}, {x = :.1f}")
    """
    after = """
    def f(x):
        _lx.print_(_lx.printing.format_("x={0!r}, x = {1:.1f}", x, x))
    """
    check(print_calls, before, after)


def test_str_format_call_in_print_keeps_its_template():
    before = """
    def f(x):
        print("x is {} ({k})".format(x, k=2))
    """
    after = """
    def f(x):
        _lx.print_(_lx.printing.format_("x is {} ({k})", x, k=2))
    """
    check(print_calls, before, after)


def test_concatenation_with_str_and_repr_becomes_a_template():
    before = """
    def f(x):
        print("x=" + str(x) + " {raw} " + repr(x * 2), str(x))
    """
    after = """
    def f(x):
        _lx.print_(_lx.printing.format_("x={0!s} {{raw}} {1!r}", x, x * 2), _lx.printing.format_("{0!s}", x))
    """
    check(print_calls, before, after)


def test_strings_without_values_and_other_expressions_are_left_alone():
    before = """
    def f(x, s):
        print("plain", f"no fields", "a" "b", s + str(x), b"bytes", x, *s, sep=f"{s}")
    """
    after = """
    def f(x, s):
        _lx.print_("plain", f"no fields", "a" "b", s + str(x), b"bytes", x, *s, sep=f"{s}")
    """
    check(print_calls, before, after)


def test_fstring_outside_print_is_left_alone():
    before = """
    def f(x):
        s = f"x = {x}"
        print(s)
    """
    after = """
    def f(x):
        s = f"x = {x}"
        _lx.print_(s)
    """
    check(print_calls, before, after)


# -- conditional expressions -----------------------------------------------------------

def test_ifexp_with_pure_sides_is_eager():
    before = """
    def f(x):
        return x if x.sum() > 0 else -x
    """
    after = """
    def f(x):
        return _lx.ifexp(x.sum() > 0, lambda: x, lambda: -x)
    """
    check(conditional_expressions, before, after)


def test_ifexp_with_a_call_in_the_true_side_is_lazy():
    before = """
    def f(x):
        return jnp.sin(x) if x.sum() > 0 else x
    """
    after = """
    def f(x):
        return _lx.ifexp(x.sum() > 0, lambda: jnp.sin(x), lambda: x, lazy=True)
    """
    check(conditional_expressions, before, after)


def test_ifexp_with_a_call_in_the_false_side_is_lazy():
    before = """
    def f(x):
        return x if x.sum() > 0 else jnp.cos(x)
    """
    after = """
    def f(x):
        return _lx.ifexp(x.sum() > 0, lambda: x, lambda: jnp.cos(x), lazy=True)
    """
    check(conditional_expressions, before, after)


def test_call_in_the_test_only_stays_eager():
    before = """
    def f(x):
        return x if jnp.any(x > 0) else x * 2
    """
    after = """
    def f(x):
        return _lx.ifexp(jnp.any(x > 0), lambda: x, lambda: x * 2)
    """
    check(conditional_expressions, before, after)


def test_nested_ifexp_stays_eager():
    before = """
    def f(x, k):
        return x if k == 0 else (x * 2 if k == 1 else x * 3)
    """
    after = """
    def f(x, k):
        return _lx.ifexp(k == 0, lambda: x, lambda: (_lx.ifexp(k == 1, lambda: x * 2, lambda: x * 3)))
    """
    check(conditional_expressions, before, after)


def test_ifexp_keeps_parentheses_of_its_operands():
    before = """
    def f(x):
        y = (x + 1) if x.sum() > 0 else (x - 1)
        return y
    """
    after = """
    def f(x):
        y = _lx.ifexp(x.sum() > 0, lambda: (x + 1), lambda: (x - 1))
        return y
    """
    check(conditional_expressions, before, after)


def test_ifexp_with_walrus_is_left_alone():
    before = """
    def f(x):
        return (y := x * 2) if x.sum() > 0 else x
    """
    check_unchanged(conditional_expressions, before)


def test_ifexp_of_a_nested_def_is_left_alone():
    before = """
    def f(x):
        def g(v):
            return v if v > 0 else -v
        return g(x)
    """
    check_unchanged(conditional_expressions, before)


# -- list appends ----------------------------------------------------------------------

def test_append_in_for_becomes_a_carried_value():
    before = """
    def f(xs):
        outs = []
        for row in xs:
            outs.append(row * 2)
        return jnp.stack(outs)
    """
    after = """
    def f(xs):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row * 2)
        return jnp.stack(outs)
    """
    check(list_appends, before, after)


def test_append_outside_loops_stays_a_list_method_inside_while_is_rewritten():
    # Outside loops the append stays the list's own; the name may hold a stacked array after
    # the loop, so it is made a list again first (the same list when it is one).
    before = """
    def f(x, n):
        outs = []
        outs.append(x)
        i = 0
        while i < n:
            outs.append(x + i)
            i += 1
        outs.append(-x)
        return outs
    """
    after = """
    def f(x, n):
        outs = []
        outs = _lx.as_list(outs)
        outs.append(x)
        i = 0
        while i < n:
            outs = _lx.append(outs, x + i)
            i += 1
        outs = _lx.as_list(outs)
        outs.append(-x)
        return outs
    """
    check(list_appends, before, after)


def test_list_operators_after_an_append_loop_get_the_list():
    before = """
    def f(xs):
        outs = []
        for x in xs:
            outs.append(x)
        total = len(outs + outs) + len(outs * 2)
        if outs[1:] == outs:
            total += 1
        return total, outs[0], len(outs)
    """
    after = """
    def f(xs):
        outs = []
        for x in xs:
            outs = _lx.append(outs, x)
        outs = _lx.as_list(outs)
        total = len(outs + outs) + len(outs * 2)
        outs = _lx.as_list(outs)
        if outs[1:] == outs:
            total += 1
        return total, outs[0], _lx.list_len(outs)
    """
    check(list_appends, before, after)


def test_append_in_both_branches_inside_a_loop():
    before = """
    def f(xs):
        outs = []
        for row in xs:
            if row.sum() > 0:
                outs.append(row)
            else:
                outs.append(-row)
        return outs
    """
    after = """
    def f(xs):
        outs = []
        for row in xs:
            if row.sum() > 0:
                outs = _lx.append(outs, row)
            else:
                outs = _lx.append(outs, -row)
        return outs
    """
    check(list_appends, before, after)


def test_append_in_nested_loops_and_on_one_line():
    before = """
    def f(xs):
        outs = []
        for row in xs:
            for v in row:
                outs.append(v); outs.append(-v)
        return outs
    """
    after = """
    def f(xs):
        outs = []
        for row in xs:
            for v in row:
                outs = _lx.append(outs, v); outs = _lx.append(outs, -v)
        return outs
    """
    check(list_appends, before, after)


def test_only_plain_single_argument_appends_on_a_name_are_rewritten():
    """Attribute receivers, extra/starred/keyword arguments, other methods and appends used
    as values stay as written."""
    before = """
    def f(xs):
        outs = []
        for row in xs:
            self.items.append(row)
            outs.append(row, 1)
            outs.append(*row)
            outs.append(v=row)
            outs.extend(row)
            y = outs.append(row)
        return outs
    """
    check_unchanged(list_appends, before)


def test_append_in_a_nested_def_inside_a_loop_is_left_alone():
    before = """
    def f(xs):
        outs = []
        for row in xs:
            def g(v):
                acc = []
                for k in v:
                    acc.append(k)
                return acc
            outs.append(g(row))
        return outs
    """
    after = """
    def f(xs):
        outs = []
        for row in xs:
            def g(v):
                acc = []
                for k in v:
                    acc.append(k)
                return acc
            outs = _lx.append(outs, g(row))
        return outs
    """
    check(list_appends, before, after)


# -- with loop_options(...) ------------------------------------------------------------

def test_loop_options_block_is_unwrapped_to_push_and_pop():
    before = """
    def f(x):
        with laxify.loop_options(max_iters=5):
            while x.sum() < 10:
                x = x * 2
        return x
    """
    after = """
    def f(x):
        _lx_options_1 = _lx.push_options(laxify.loop_options(max_iters=5))
        while x.sum() < 10:
            x = x * 2
        _lx.pop_options(_lx_options_1)
        return x
    """
    check(loop_options_blocks, before, after)


def test_loop_options_block_keeps_leading_comments_and_blank_lines():
    before = """
    def f(x):
        y = x

        # bounded
        with loop_options(max_iters=5, unroll=2):
            while x.sum() < 10:
                x = x * 2
        return x + y
    """
    after = """
    def f(x):
        y = x

        # bounded
        _lx_options_1 = _lx.push_options(loop_options(max_iters=5, unroll=2))
        while x.sum() < 10:
            x = x * 2
        _lx.pop_options(_lx_options_1)
        return x + y
    """
    check(loop_options_blocks, before, after)


def test_nested_loop_options_blocks_pop_in_reverse_order():
    before = """
    def f(x):
        with laxify.loop_options(max_iters=5):
            with laxify.loop_options(unroll=2):
                while x.sum() < 10:
                    x = x * 2
        return x
    """
    after = """
    def f(x):
        _lx_options_2 = _lx.push_options(laxify.loop_options(max_iters=5))
        _lx_options_1 = _lx.push_options(laxify.loop_options(unroll=2))
        while x.sum() < 10:
            x = x * 2
        _lx.pop_options(_lx_options_1)
        _lx.pop_options(_lx_options_2)
        return x
    """
    check(loop_options_blocks, before, after)


def test_loop_options_block_inside_a_loop():
    before = """
    def f(x):
        while x.sum() < 100:
            with laxify.loop_options(max_iters=5):
                while x.sum() < 10:
                    x = x * 2
            x = x + 50
        return x
    """
    after = """
    def f(x):
        while x.sum() < 100:
            _lx_options_1 = _lx.push_options(laxify.loop_options(max_iters=5))
            while x.sum() < 10:
                x = x * 2
            _lx.pop_options(_lx_options_1)
            x = x + 50
        return x
    """
    check(loop_options_blocks, before, after)


def test_other_with_statements_are_unchanged():
    """`as`, several items, a one-line body and other context managers stay `with` statements."""
    before = """
    def f(x):
        with laxify.loop_options(max_iters=5) as o:
            x = x + 1
        with open("f") as fh, laxify.loop_options():
            x = x + 2
        with laxify.loop_options(max_iters=3): x = x + 3
        with jax.named_scope("a"):
            x = x + 4
        return x
    """
    check_unchanged(loop_options_blocks, before)


def test_loop_options_block_of_a_nested_def_is_left_alone():
    before = """
    def f(x):
        def g(v):
            with laxify.loop_options(max_iters=5):
                while v < 10:
                    v = v + 1
            return v
        return g(x)
    """
    check_unchanged(loop_options_blocks, before)


# -- assert ----------------------------------------------------------------------------------

def test_assert_becomes_a_runtime_call_with_a_lazy_message():
    before = """
    def f(x, n):
        assert x.sum() > 0
        assert n > 0, "n must be positive"
        assert x.ndim == 1, describe(x)
        assert x.max() < 9, f"max {x.max():.1f} too big"; y = x
        return y
    """
    after = """
    def f(x, n):
        _lx.assert_(x.sum() > 0)
        _lx.assert_(n > 0, "n must be positive")
        _lx.assert_(x.ndim == 1, lambda: describe(x))
        _lx.assert_(x.max() < 9, lambda: _lx.printing.format_("max {0:.1f} too big", x.max())); y = x
        return y
    """
    check(assert_statements, before, after)


def test_assert_whose_message_binds_a_name_is_left_as_written():
    check_unchanged(assert_statements, """
    def f(x):
        assert x.sum() > 0, (m := "bad")
        return x
    """)


# -- identity tests and operators on Python bools -------------------------------------------

def test_identity_with_bool_literals_and_names_goes_to_the_runtime():
    before = """
    def f(x, y):
        done = False
        ready = not done
        if x > 0:
            done = True
        z = y
        return done is False, True is not ready, z is y, ~done, -ready, x is None, -x, -1
    """
    after = """
    def f(x, y):
        done = False
        ready = not done
        if x > 0:
            done = True
        z = y
        return _lx.is_(done, False, 'done is False', 'bool,'), _lx.is_not(True, ready, 'True is not ready', ',bool'), _lx.is_(z, y, 'z is y', ',param'), _lx.bool_unary('~', done), _lx.bool_unary('-', ready), x is None, -x, -1
    """
    check(identity_tests, before, after)


def test_a_name_also_bound_to_an_array_is_not_a_python_bool():
    before = """
    def f(x):
        flag = False
        if x > 0:
            flag = x > 1
        return flag is True, ~flag
    """
    after = """
    def f(x):
        flag = False
        if x > 0:
            flag = x > 1
        return _lx.is_(flag, True, 'flag is True', ','), ~flag
    """
    check(identity_tests, before, after)
