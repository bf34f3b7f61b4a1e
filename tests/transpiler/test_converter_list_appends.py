"""The list-appends converter alone: golden tests (source before, source after), and the
functions it converts run eagerly and converted on inputs that take every path."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import libcst as cst
import pytest

import laxify
from golden import check, check_unchanged
from harness import assert_trees_close, check as check_equivalent
from laxify.transpiler.converters import list_appends
from laxify.transpiler.converters.base import Context


# -- golden: appends in loops -------------------------------------------------------------------

def test_an_append_anywhere_in_a_loop_body_becomes_a_carried_value():
    check(list_appends, """
    def f(x, n):
        outs = []
        while n > 0:
            if x.sum() > 0:
                outs.append(x)  # positive
            else:
                for k in range(n):
                    outs.append(-x * k)
            n = n - 1
        return outs
    """, """
    def f(x, n):
        outs = []
        while n > 0:
            if x.sum() > 0:
                outs = _lx.append(outs, x)  # positive
            else:
                for k in range(n):
                    outs = _lx.append(outs, -x * k)
            n = n - 1
        return outs
    """)


def test_an_append_outside_loops_stays_the_lists_own_after_the_list_is_made_a_list_again():
    # After an append loop the name may hold the stacked rows: `as_list` gives the list back.
    check(list_appends, """
    def f(xs):
        outs = []
        for row in xs:
            outs.append(row)
        outs.append(xs[0])
        return outs
    """, """
    def f(xs):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row)
        outs = _lx.as_list(outs)
        outs.append(xs[0])
        return outs
    """)


def test_appends_that_are_not_one_plain_argument_on_a_name_are_left_alone():
    check_unchanged(list_appends, """
    def f(xs, obj):
        outs = []
        for row in xs:
            obj.items.append(row)
            outs.append(row, 1)
            outs.append(*row)
            outs.append(item=row)
            y = outs.append(row)
            outs.insert(0, row)
        return outs
    """)


def test_appends_of_a_nested_def_are_left_to_its_own_conversion():
    check(list_appends, """
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
    """, """
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
    """)


def test_lists_another_name_or_the_caller_may_hold_keep_pythons_append():
    """A parameter (the caller holds it), both names of `b = a`, a name assigned an item or an
    attribute, a name put into a display, loop, `with` and `except` targets, a `global`, a
    comprehension's variable: a carried copy would leave the other holder behind."""
    check_unchanged(list_appends, """
    def f(xs, acc, grid, obj):
        a = []
        b = a
        row0 = grid[0]
        items = obj.items
        held = []
        box = {"k": held}
        pair = []
        rows = [pair, [1]]
        global log
        for r in xs:
            acc.append(r)
            a.append(r)
            b.append(r)
            row0.append(r)
            items.append(r)
            held.append(r)
            pair.append(r)
            log.append(r)
            r.append(1)
            with open(r) as fh:
                fh.append(r)
            try:
                pass
            except E as err:
                err.append(r)
            [c.append(r) for c in xs]
        return acc
    """)


# -- golden: which names are lists, and uses only a list has -----------------------------------

def test_len_of_a_list_name_becomes_the_runtimes_count():
    check(list_appends, """
    def f(xs):
        outs = []
        for row in xs:
            outs.append(row)
        return len(outs), len(xs), len(outs, 1), len(*outs), len(v=outs)
    """, """
    def f(xs):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row)
        return _lx.list_len(outs), len(xs), len(outs, 1), len(*outs), len(v=outs)
    """)


def test_len_is_left_alone_where_len_is_not_the_builtin():
    check_unchanged(list_appends, """
    def f(xs, len):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row)
        return len(outs)
    """)
    check_unchanged(list_appends, """
    def f(xs):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row)
        return len(outs)
    """, {"len": lambda v: 0})


def test_names_bound_only_to_lists_are_lists():
    """`[]`, a display, `list(...)`, a comprehension, item by item in a tuple assignment,
    `+=`/`*=`: the name is a list wherever it is used."""
    check(list_appends, """
    def f(xs):
        a, b = [], [xs[0]]
        c = list()
        d = [v for v in xs]
        for row in xs:
            a.append(row); b.append(row); c.append(row); d.append(row)
        a += [1]
        b *= 2
        return len(a), len(b), len(c), len(d)
    """, """
    def f(xs):
        a, b = [], [xs[0]]
        c = list()
        d = [v for v in xs]
        for row in xs:
            a = _lx.append(a, row); b = _lx.append(b, row); c = _lx.append(c, row); d = _lx.append(d, row)
        a = _lx.as_list(a)
        a += [1]
        b = _lx.as_list(b)
        b *= 2
        return _lx.list_len(a), _lx.list_len(b), _lx.list_len(c), _lx.list_len(d)
    """)


def test_names_also_bound_to_other_values_are_not_lists():
    """Another value, another augmented operator, an annotation, a walrus, an unpacked call:
    not known to be a list, so no `as_list` and no `list_len`."""
    check(list_appends, """
    def f(xs):
        a, b, c, d, g = [], [], [], [], []
        for row in xs:
            a.append(row); b.append(row); c.append(row); d.append(row); g.append(row)
        a = 5
        b -= 1
        c: list = []
        if (d := make()):
            pass
        g, h = make()
        return len(a), len(b), len(c), len(d), len(g), a + b
    """, """
    def f(xs):
        a, b, c, d, g = [], [], [], [], []
        for row in xs:
            a = _lx.append(a, row); b = _lx.append(b, row); c = _lx.append(c, row); d = _lx.append(d, row); g = _lx.append(g, row)
        a = 5
        b -= 1
        c: list = []
        if (d := make()):
            pass
        g, h = make()
        return len(a), len(b), len(c), len(d), len(g), a + b
    """)


def test_each_statement_that_uses_a_list_as_only_a_list_can_gets_the_list_first():
    """Operators, comparisons, list methods, slices, augmented assignment, a bare name's truth;
    in an `elif` test, a `while` test, a `for` iterable, a `with` item; names in sorted order,
    in the block where the use stands."""
    check(list_appends, """
    def f(xs):
        outs, more = [], []
        for row in xs:
            outs.append(row); more.append(row)
        both = more + outs
        if outs:
            n = outs.count(xs[0])
        if outs.index(xs[0]) > 0:
            n = 1
        elif outs == more:
            n = 2
        while more:
            more.pop()
        for r in outs[1:]:
            pass
        with ctx(outs * 2):
            pass
        outs += more
        return both
    """, """
    def f(xs):
        outs, more = [], []
        for row in xs:
            outs = _lx.append(outs, row); more = _lx.append(more, row)
        more = _lx.as_list(more); outs = _lx.as_list(outs)
        both = more + outs
        outs = _lx.as_list(outs)
        if outs:
            outs = _lx.as_list(outs)
            n = outs.count(xs[0])
        more = _lx.as_list(more); outs = _lx.as_list(outs)
        if outs.index(xs[0]) > 0:
            n = 1
        elif outs == more:
            n = 2
        more = _lx.as_list(more)
        while more:
            more = _lx.as_list(more)
            more.pop()
        outs = _lx.as_list(outs)
        for r in outs[1:]:
            pass
        outs = _lx.as_list(outs)
        with ctx(outs * 2):
            pass
        outs = _lx.as_list(outs)
        outs += more
        return both
    """)


def test_uses_an_array_has_too_are_left_alone():
    # Indexing, iterating, passing it on: the stacked rows answer as the list would.
    check(list_appends, """
    def f(xs):
        outs = []
        for row in xs:
            outs.append(row)
        for o in outs:
            pass
        return outs[0], outs[-1], jnp.stack(outs), [o * 2 for o in outs], lambda: outs
    """, """
    def f(xs):
        outs = []
        for row in xs:
            outs = _lx.append(outs, row)
        for o in outs:
            pass
        return outs[0], outs[-1], jnp.stack(outs), [o * 2 for o in outs], lambda: outs
    """)


def test_a_function_without_appends_in_loops_is_the_same_tree():
    fn = cst.parse_module("def f(x):\n    outs = []\n    outs.append(x)\n    return outs + outs\n").body[0]
    assert list_appends.transform(fn, Context({})) is fn


# -- equivalence ----------------------------------------------------------------------------------

def list_uses_after_an_append_loop(x):
    outs = []
    for i in range(4):
        x = jnp.tanh(x) + i
        outs.append(x.sum())
    both = outs + outs
    twice = outs * 2
    nonempty = outs != []
    rest = outs[1:]
    if outs:
        rest.append(x.sum())
    outs.extend([x.sum(), x.max()])
    outs += [x.min()]
    return jnp.stack(both), len(twice), nonempty, len(rest), len(outs), outs[-1], outs[0]


def appends_in_both_branches(xs):
    pos, neg = [], []
    for row in xs:
        if row.sum() > 0:
            pos.append(row)
        else:
            pos.append(-row)
        neg.append(-row)
    return jnp.stack(pos), jnp.stack(neg), len(pos)


def append_through_an_alias(x):
    a = []
    b = a
    for i in range(3):
        a.append(x * i)
    return len(b), b[-1]


X = jnp.array([0.5, -1.0, 2.0], jnp.float32)


def test_after_an_append_loop_the_name_is_pythons_list_and_the_loop_one_scan():
    check_equivalent(list_uses_after_an_append_loop, (X,), (-X,), expect_prims={"scan"})


def test_appends_under_a_traced_if_stack_per_iteration():
    rows = jnp.array([[1.0, -2.0], [-3.0, 1.0], [2.0, 2.0]], jnp.float32)
    check_equivalent(appends_in_both_branches, (rows,), (-rows,), expect_prims={"scan", "cond"})


def test_an_alias_of_the_list_sees_every_append():
    check_equivalent(append_through_an_alias, (X,), expect_prims=())


def append_to_the_callers_list(x, acc):
    for i in range(3):
        acc.append(x * i)
    return x.sum()


def test_the_callers_list_gets_the_appends():
    expected_acc, got_acc = [], []
    expected = append_to_the_callers_list(X, expected_acc)
    got = laxify.to_static(append_to_the_callers_list)(X, got_acc)
    assert_trees_close(expected, got, what="to_static")
    assert len(got_acc) == 3
    assert_trees_close(expected_acc, got_acc, what="the caller's list")


# -- bugs ---------------------------------------------------------------------------------------

def concatenated_on_a_one_line_block(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    if x.shape[0] > 1: both = outs + outs
    return len(both)


def concatenated_in_a_lambda(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    both = lambda: outs + outs  # noqa: E731
    return len(both())


def negated_truth(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    if not outs:
        return x
    return x + 1


def elif_after_a_bare_name_test(x, flag):
    outs = []
    for i in range(3):
        outs.append(x * i)
    if flag:
        n = 0
    elif len(outs + outs) > 4:
        n = 1
    else:
        n = 2
    return n


def truth_in_a_conditional_expression(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    return 1 if outs else 0


_NO_AS_LIST = ("list_appends puts `xs = _lx.as_list(xs)` only before the statements of an indented "
               "block (leave_IndentedBlock) and does not look into lambdas (_list_uses skips scopes): ")
_BARE_TRUTH = ("list_appends reads a list's truth only from an `if`/`while` test that is the bare name "
               "(_header_parts/_Truth): ")


@pytest.mark.parametrize("fn", [
    pytest.param(concatenated_on_a_one_line_block, marks=pytest.mark.xfail(strict=True, reason=(
        _NO_AS_LIST + "`if c: both = outs + outs` keeps the stacked array, so `+` adds it to itself "
        "elementwise (len 3) instead of concatenating the lists (len 6)"))),
    pytest.param(concatenated_in_a_lambda, marks=pytest.mark.xfail(strict=True, reason=(
        _NO_AS_LIST + "`lambda: outs + outs` adds the stacked array to itself (len 3) instead of "
        "concatenating the lists (len 6)"))),
    pytest.param(elif_after_a_bare_name_test, marks=pytest.mark.xfail(strict=True, reason=(
        "list_appends' _header_parts returns only the truth of an `if` whose test is a bare name, "
        "without its `elif` tests: after `if flag:`, `elif len(outs + outs) > 4:` gets no `as_list`, "
        "so the stacked array is added to itself (len 3) and the `else` runs where Python takes the "
        "`elif` (len 6)"))),
    pytest.param(negated_truth, marks=pytest.mark.xfail(strict=True, reason=(
        _BARE_TRUTH + "`if not outs:` gets no `as_list`, and `not` of the (3, 3) stacked array is a "
        "ConversionError ('no single truth value') where Python reads a non-empty list as true"))),
    pytest.param(truth_in_a_conditional_expression, marks=pytest.mark.xfail(strict=True, reason=(
        _BARE_TRUTH + "`1 if outs else 0` gets no `as_list`, and the stacked (3, 3) array as the "
        "condition is a ConversionError where Python reads a non-empty list as true"))),
], ids=lambda fn: fn.__name__)
def test_every_list_only_use_after_an_append_loop_sees_the_list(fn):
    args = (X, False) if fn is elif_after_a_bare_name_test else (X,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_equivalent(fn, args)
