"""The ``match`` converter alone, golden tests: source before, source after (LibCST style)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from laxify.transpiler.converters import match_statements
from laxify.transpiler.converters.base import Context


def convert(before: str) -> tuple[str, Context]:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    ctx = Context({})
    fn = match_statements.transform(module.body[0], ctx)
    return module.with_changes(body=[fn]).code, ctx


def check(before: str, after: str) -> None:
    code, _ = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")


def test_literals_and_wildcard_become_if_elif_else():
    before = """
    def f(x, k):
        match k:
            case 0:
                y = x
            case 1:
                y = x + 1
            case _:
                y = -x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0:
            y = x
        elif _lx_subject_1 == 1:
            y = x + 1
        else:
            y = -x
        return y
    """
    check(before, after)


def test_no_irrefutable_case_leaves_no_else():
    before = """
    def f(x, k):
        y = x
        match k:
            case 1:
                y = x + 1
            case 2:
                y = x + 2
        return y
    """
    after = """
    def f(x, k):
        y = x
        _lx_subject_1 = k
        if _lx_subject_1 == 1:
            y = x + 1
        elif _lx_subject_1 == 2:
            y = x + 2
        return y
    """
    check(before, after)


def test_subject_is_evaluated_once_before_the_chain():
    before = """
    def f(x):
        match jnp.argmax(x) + 1:
            case 1:
                y = x
            case 2:
                y = -x
        return y
    """
    after = """
    def f(x):
        _lx_subject_1 = jnp.argmax(x) + 1
        if _lx_subject_1 == 1:
            y = x
        elif _lx_subject_1 == 2:
            y = -x
        return y
    """
    check(before, after)


def test_negative_numbers_strings_floats_and_value_patterns():
    before = """
    def f(k):
        match k:
            case -1:
                y = 1
            case "a":
                y = 2
            case 2.5:
                y = 3
            case Color.RED:
                y = 4
            case mod.Mode.MAX:
                y = 5
        return y
    """
    after = """
    def f(k):
        _lx_subject_1 = k
        if _lx_subject_1 == -1:
            y = 1
        elif _lx_subject_1 == "a":
            y = 2
        elif _lx_subject_1 == 2.5:
            y = 3
        elif _lx_subject_1 == Color.RED:
            y = 4
        elif _lx_subject_1 == mod.Mode.MAX:
            y = 5
        return y
    """
    check(before, after)


def test_singletons_compare_with_is():
    before = """
    def f(k):
        match k:
            case None:
                y = 0
            case True:
                y = 1
            case False:
                y = 2
        return y
    """
    after = """
    def f(k):
        _lx_subject_1 = k
        if _lx_subject_1 is None:
            y = 0
        elif _lx_subject_1 is True:
            y = 1
        elif _lx_subject_1 is False:
            y = 2
        return y
    """
    check(before, after)


def test_or_pattern_nests_or_calls_in_evaluation_order():
    before = """
    def f(k):
        match k:
            case 1 | 2 | None:
                y = 0
            case _:
                y = 1
        return y
    """
    after = """
    def f(k):
        _lx_subject_1 = k
        if _lx.or_(_lx_subject_1 == 1, lambda: _lx.or_(_lx_subject_1 == 2, lambda: _lx_subject_1 is None)):
            y = 0
        else:
            y = 1
        return y
    """
    check(before, after)


def test_or_pattern_with_wildcard_alternative_always_matches():
    before = """
    def f(k):
        match k:
            case 0:
                y = 0
            case 1 | _:
                y = 1
        return y
    """
    after = """
    def f(k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0:
            y = 0
        else:
            y = 1
        return y
    """
    check(before, after)


def test_guard_on_literal_uses_and():
    before = """
    def f(x, k):
        match k:
            case 1 | 2 if x > 0:
                y = x
            case _:
                y = -x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx.and_(_lx.or_(_lx_subject_1 == 1, lambda: _lx_subject_1 == 2), lambda: x > 0):
            y = x
        else:
            y = -x
        return y
    """
    check(before, after)


def test_guard_with_a_call_is_evaluated_lazily():
    before = """
    def f(x, k):
        match k:
            case 1 if jnp.sum(x) > 0:
                y = x
            case _:
                y = -x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx.and_(_lx_subject_1 == 1, lambda: jnp.sum(x) > 0, lazy=True):
            y = x
        else:
            y = -x
        return y
    """
    check(before, after)


def test_wildcard_with_guard_is_the_guard_alone():
    before = """
    def f(x, k):
        match k:
            case 0:
                y = x
            case _ if x > 0:
                y = x + 1
            case _:
                y = x - 1
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0:
            y = x
        elif x > 0:
            y = x + 1
        else:
            y = x - 1
        return y
    """
    check(before, after)


def test_capture_binds_the_subject_in_the_else_branch():
    before = """
    def f(x, k):
        match k:
            case 0:
                y = x
            case n:
                y = x * n
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0:
            y = x
        else:
            n = _lx_subject_1
            y = x * n
        return y
    """
    check(before, after)


def test_capture_with_guard_binds_before_the_guard():
    before = """
    def f(x, k):
        match k:
            case 0:
                y = x
            case n if n > 2:
                y = x * n
            case _:
                y = -x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0:
            y = x
        else:
            n = _lx_subject_1
            if n > 2:
                y = x * n
            else:
                y = -x
        return y
    """
    check(before, after)


def test_capture_with_guard_first_needs_no_if_around_the_binding():
    before = """
    def f(x, k):
        match k:
            case n if n > 2:
                y = x * n
            case _:
                y = x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        n = _lx_subject_1
        if n > 2:
            y = x * n
        else:
            y = x
        return y
    """
    check(before, after)


def test_only_an_irrefutable_case_becomes_straight_line_code():
    before = """
    def f(x, k):
        match k:
            # always
            case n:
                y = x * n
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        # always
        n = _lx_subject_1
        y = x * n
        return y
    """
    check(before, after)


def test_as_pattern_binds_in_the_body():
    before = """
    def f(x, k):
        match k:
            case (1 | 2) as m:
                y = x * m
            case _:
                y = x
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx.or_(_lx_subject_1 == 1, lambda: _lx_subject_1 == 2):
            m = _lx_subject_1
            y = x * m
        else:
            y = x
        return y
    """
    check(before, after)


def test_one_line_case_bodies():
    before = """
    def f(x, k):
        match k:
            case 0: y = x
            case n: y = x * n; z = 1
        return y
    """
    after = """
    def f(x, k):
        _lx_subject_1 = k
        if _lx_subject_1 == 0: y = x
        else: n = _lx_subject_1; y = x * n; z = 1
        return y
    """
    check(before, after)


def test_comments_are_kept():
    before = """
    def f(x, k):
        # pick the scale
        match k:  # k is 0 or 1
            # the usual case
            case 0:
                y = x  # identity
            # the other one
            case _:
                y = -x
        return y
    """
    after = """
    def f(x, k):
        # pick the scale
        _lx_subject_1 = k  # k is 0 or 1
        # the usual case
        if _lx_subject_1 == 0:
            y = x  # identity
        # the other one
        else:
            y = -x
        return y
    """
    check(before, after)


def test_nested_match_gets_its_own_subject():
    before = """
    def f(x, j, k):
        match j:
            case 0:
                match k:
                    case 0:
                        y = x
                    case _:
                        y = -x
            case _:
                y = 2 * x
        return y
    """
    after = """
    def f(x, j, k):
        _lx_subject_2 = j
        if _lx_subject_2 == 0:
            _lx_subject_1 = k
            if _lx_subject_1 == 0:
                y = x
            else:
                y = -x
        else:
            y = 2 * x
        return y
    """
    check(before, after)


def test_match_inside_a_loop():
    before = """
    def f(xs):
        s = 0.0
        for i in range(3):
            match i:
                case 0:
                    s = s + xs[i]
                case _:
                    s = s - xs[i]
        return s
    """
    after = """
    def f(xs):
        s = 0.0
        for i in range(3):
            _lx_subject_1 = i
            if _lx_subject_1 == 0:
                s = s + xs[i]
            else:
                s = s - xs[i]
        return s
    """
    check(before, after)


def test_nested_function_is_left_alone():
    before = """
    def f(x, k):
        def g(j):
            match j:
                case 0:
                    return 1
            return 2
        return g(k)
    """
    check(before, before)


@pytest.mark.parametrize("pattern, why", [
    ("(a, b)", "sequence patterns are not converted"),
    ("[1, *rest]", "sequence patterns are not converted"),
    ("{'a': v}", "mapping patterns are not converted"),
    ("Point(x=0)", "class patterns are not converted"),
    ("(1 as a) | (2 as a)", "an alternative of `|` binds a name"),
])
def test_other_patterns_match_as_python_and_the_bodies_follow(pattern, why):
    before = f"""
    def f(x, k):
        match k:
            case 0:
                y = x
            case {pattern}:
                y = -x
        return y
    """
    after = f"""
    def f(x, k):
        _lx_arm_2 = None
        match k:
            case 0:
                _lx_arm_2 = 0
            case {pattern}:
                _lx_arm_2 = 1
        if _lx_arm_2 == 0:
            y = x
        elif _lx_arm_2 == 1:
            y = -x
        return y
    """
    code, ctx = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    assert len(ctx.notes) == 1 and why in ctx.notes[0]


def test_a_last_catch_all_case_is_the_else_and_needs_no_unset_number():
    before = """
    def f(x, k):
        match k:
            case [a, b]:
                return a + b
            case _:
                x = x - 1
        return x
    """
    after = """
    def f(x, k):
        match k:
            case [a, b]:
                _lx_arm_2 = 0
            case _:
                _lx_arm_2 = 1
        if _lx_arm_2 == 0:
            return a + b
        else:
            x = x - 1
        return x
    """
    check(before, after)


def test_as_name_read_by_guard_stays_in_the_python_match():
    before = """
    def f(x, k):
        match k:
            case (1 | 2) as m if m > 1:
                y = x * m
        return y
    """
    after = """
    def f(x, k):
        _lx_arm_2 = None
        match k:
            case (1 | 2) as m if m > 1:
                _lx_arm_2 = 0
        if _lx_arm_2 == 0:
            y = x * m
        return y
    """
    code, ctx = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    assert "guard reads a name bound by an `as` pattern" in ctx.notes[0]


def test_walrus_in_guard_of_refutable_pattern_stays_in_the_python_match():
    before = """
    def f(x, k):
        match k:
            case 1 if (m := x + 1) > 0:
                y = m
        return y
    """
    after = """
    def f(x, k):
        _lx_arm_2 = None
        match k:
            case 1 if (m := x + 1) > 0:
                _lx_arm_2 = 0
        if _lx_arm_2 == 0:
            y = m
        return y
    """
    code, ctx = convert(before)
    assert code == textwrap.dedent(after).lstrip("\n")
    assert ctx.notes


def test_output_is_valid_python_that_behaves_like_the_match():
    before = """
    def f(k):
        match k:
            case 0 | 1:
                r = "small"
            case -1:
                r = "minus one"
            case None:
                r = "none"
            case n if n > 100:
                r = f"big {n}"
            case _:
                r = "other"
        return r
    """

    class Runtime:
        @staticmethod
        def or_(a, b):
            return a or b()

        @staticmethod
        def and_(a, b, lazy=False):
            return a and b()

    original: dict = {}
    exec(textwrap.dedent(before), original)
    converted: dict = {"_lx": Runtime}
    exec(convert(before)[0], converted)
    for k in (0, 1, -1, None, 101, 100, 7):
        assert converted["f"](k) == original["f"](k)
