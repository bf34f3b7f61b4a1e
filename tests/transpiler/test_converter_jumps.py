"""The jump converters alone (break, continue, return, loop else), golden tests: source before,
source after (LibCST style). Each test applies one converter to one function."""

from __future__ import annotations

import textwrap

import libcst as cst

from laxify.transpiler.converters import break_statements, continue_statements, loop_else, return_statements
from laxify.transpiler.converters.base import Context


def convert(converter, before: str, positions: dict | None = None) -> str:
    module = cst.parse_module(textwrap.dedent(before).lstrip("\n"))
    ctx = Context({} if positions is None else positions(module.body[0]))
    fn = converter.transform(module.body[0], ctx)
    return module.with_changes(body=[fn]).code


def check(converter, before: str, after: str) -> None:
    assert convert(converter, before) == textwrap.dedent(after).lstrip("\n")


def check_unchanged(converter, before: str) -> None:
    assert convert(converter, before) == textwrap.dedent(before).lstrip("\n")


def assert_compiles_without(code: str, keyword: str) -> None:
    """The converted function is valid Python and the jump is gone."""
    compile(code, "<converted>", "exec")
    assert keyword not in code.split(), code


# -- break -----------------------------------------------------------------------------

def test_break_in_while_stops_its_condition_and_guards_the_rest():
    """The flag joins the `while` test (lazily) and guards what follows the jump."""
    before = """
    def f(x):
        while x.sum() < 10:
            x = x + 1
            if x.max() > 5:
                break
            x = x * 2
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x.sum() < 10, condition=True):
            x = x + 1
            if x.max() > 5:
                _lx_break_1 = True
            if _lx.not_(_lx_break_1):
                x = x * 2
        return x
    """
    check(break_statements, before, after)


def test_break_in_for_renames_the_target_and_rebinds_it_under_the_guard():
    """A scan cannot stop: the whole body, target binding included, runs under the flag."""
    before = """
    def f(xs, y):
        for row in xs:
            if row.sum() > 0:
                break
            y = y + row
        return y, row
    """
    after = """
    def f(xs, y):
        _lx_break_1 = False
        for _lx_item_2 in xs:
            if _lx.not_(_lx_break_1):
                row = _lx_item_2
                if row.sum() > 0:
                    _lx_break_1 = True
                if _lx.not_(_lx_break_1):
                    y = y + row
        return y, row
    """
    check(break_statements, before, after)


def test_break_in_for_with_tuple_target():
    before = """
    def f(xs, y):
        for i, row in enumerate(xs):
            if row.sum() > i:
                break
            y = y + row
        return y
    """
    after = """
    def f(xs, y):
        _lx_break_1 = False
        for _lx_item_2 in enumerate(xs):
            if _lx.not_(_lx_break_1):
                i, row = _lx_item_2
                if row.sum() > i:
                    _lx_break_1 = True
                if _lx.not_(_lx_break_1):
                    y = y + row
        return y
    """
    check(break_statements, before, after)


def test_break_in_inner_loop_only_flags_the_inner_loop():
    before = """
    def f(x, n):
        for i in range(n):
            for j in range(n):
                if j > i:
                    break
                x = x + j
            x = x * 2
        return x
    """
    after = """
    def f(x, n):
        for i in range(n):
            _lx_break_1 = False
            for _lx_item_2 in range(n):
                if _lx.not_(_lx_break_1):
                    j = _lx_item_2
                    if j > i:
                        _lx_break_1 = True
                    if _lx.not_(_lx_break_1):
                        x = x + j
            x = x * 2
        return x
    """
    check(break_statements, before, after)


def test_break_in_both_loops_gets_one_flag_per_loop():
    """Inner loops are left first, so the inner flag has the smaller number."""
    before = """
    def f(xs, y):
        for row in xs:
            j = 0
            while j < 3:
                if row[j] > 0:
                    break
                j += 1
            if j == 0:
                break
            y = y + row
        return y
    """
    after = """
    def f(xs, y):
        _lx_break_2 = False
        for _lx_item_3 in xs:
            if _lx.not_(_lx_break_2):
                row = _lx_item_3
                j = 0
                _lx_break_1 = False
                while _lx.and_(_lx.not_(_lx_break_1), lambda: j < 3, condition=True):
                    if row[j] > 0:
                        _lx_break_1 = True
                    if _lx.not_(_lx_break_1):
                        j += 1
                if j == 0:
                    _lx_break_2 = True
                if _lx.not_(_lx_break_2):
                    y = y + row
        return y
    """
    check(break_statements, before, after)


def test_break_inside_nested_if_guards_each_enclosing_block():
    before = """
    def f(x):
        while x < 100:
            if x > 0:
                if x % 7 == 0:
                    break
                x = x + 3
            x = x + 1
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 100, condition=True):
            if x > 0:
                if x % 7 == 0:
                    _lx_break_1 = True
                if _lx.not_(_lx_break_1):
                    x = x + 3
            if _lx.not_(_lx_break_1):
                x = x + 1
        return x
    """
    check(break_statements, before, after)


def test_several_breaks_share_one_flag():
    before = """
    def f(x):
        while x < 100:
            if x % 7 == 0:
                break
            x = x + 1
            if x % 5 == 0:
                break
            x = x * 2
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 100, condition=True):
            if x % 7 == 0:
                _lx_break_1 = True
            if _lx.not_(_lx_break_1):
                x = x + 1
                if x % 5 == 0:
                    _lx_break_1 = True
                if _lx.not_(_lx_break_1):
                    x = x * 2
        return x
    """
    check(break_statements, before, after)


def test_break_in_one_line_if_becomes_an_indented_block():
    before = """
    def f(x):
        while x < 10:
            if x == 5: break
            x = x + 1
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 10, condition=True):
            if x == 5:
                _lx_break_1 = True
            if _lx.not_(_lx_break_1):
                x = x + 1
        return x
    """
    check(break_statements, before, after)


def test_while_else_with_break_runs_else_unless_the_flag_is_set():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
            if x == 5:
                break
        else:
            x = -x
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 10, condition=True):
            x = x + 1
            if x == 5:
                _lx_break_1 = True
        if _lx.not_(_lx_break_1):
            x = -x
        return x
    """
    check(break_statements, before, after)


def test_for_else_with_break_runs_else_unless_the_flag_is_set():
    before = """
    def f(xs, y):
        for row in xs:
            if row.sum() > 0:
                y = row
                break
        else:
            y = y - 1
        return y
    """
    after = """
    def f(xs, y):
        _lx_break_1 = False
        for _lx_item_2 in xs:
            if _lx.not_(_lx_break_1):
                row = _lx_item_2
                if row.sum() > 0:
                    y = row
                    _lx_break_1 = True
        if _lx.not_(_lx_break_1):
            y = y - 1
        return y
    """
    check(break_statements, before, after)


def test_break_as_last_statement_needs_no_guard():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
            break
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 10, condition=True):
            x = x + 1
            _lx_break_1 = True
        return x
    """
    check(break_statements, before, after)


def test_loop_without_break_is_unchanged():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
        for i in range(3):
            x = x - i
        return x
    """
    check_unchanged(break_statements, before)


def test_break_of_a_nested_def_is_left_alone():
    before = """
    def f(xs):
        for row in xs:
            def g(y):
                while True:
                    break
                return y
            xs = g(row)
        return xs
    """
    check_unchanged(break_statements, before)


def test_break_in_one_line_while_body():
    code = convert(break_statements, """
    def f(x):
        while x < 10: x = x + 1; break
        return x
    """)
    assert_compiles_without(code, "break")


def test_break_in_one_line_for_body():
    code = convert(break_statements, """
    def f(xs, y):
        for row in xs: y = y + row; break
        return y
    """)
    assert_compiles_without(code, "break")


def test_statements_before_a_break_on_one_line_lose_the_semicolon():
    before = """
    def f(x):
        while x < 10:
            if x == 5:
                x = x * 2; break
            x = x + 1
        return x
    """
    after = """
    def f(x):
        _lx_break_1 = False
        while _lx.and_(_lx.not_(_lx_break_1), lambda: x < 10, condition=True):
            if x == 5:
                x = x * 2
                _lx_break_1 = True
            if _lx.not_(_lx_break_1):
                x = x + 1
        return x
    """
    check(break_statements, before, after)


# -- continue --------------------------------------------------------------------------

def test_continue_in_while_guards_the_rest_of_the_iteration():
    """The flag is reset at the top of every iteration; the `while` test is untouched."""
    before = """
    def f(x, n):
        i = 0
        while i < n:
            i += 1
            if i % 2 == 0:
                continue
            x = x + i
        return x
    """
    after = """
    def f(x, n):
        i = 0
        while i < n:
            _lx_continue_1 = False
            i += 1
            if i % 2 == 0:
                _lx_continue_1 = True
            if _lx.not_(_lx_continue_1):
                x = x + i
        return x
    """
    check(continue_statements, before, after)


def test_continue_in_for_keeps_the_target():
    before = """
    def f(xs, y):
        for row in xs:
            if row.sum() < 0:
                continue
            y = y + row
        return y
    """
    after = """
    def f(xs, y):
        for row in xs:
            _lx_continue_1 = False
            if row.sum() < 0:
                _lx_continue_1 = True
            if _lx.not_(_lx_continue_1):
                y = y + row
        return y
    """
    check(continue_statements, before, after)


def test_continue_in_inner_loop_only():
    before = """
    def f(x, n):
        for i in range(n):
            for j in range(n):
                if j == i:
                    continue
                x = x + j
            x = x * 2
        return x
    """
    after = """
    def f(x, n):
        for i in range(n):
            for j in range(n):
                _lx_continue_1 = False
                if j == i:
                    _lx_continue_1 = True
                if _lx.not_(_lx_continue_1):
                    x = x + j
            x = x * 2
        return x
    """
    check(continue_statements, before, after)


def test_continue_in_nested_if_and_in_else():
    before = """
    def f(xs, y):
        for row in xs:
            if row.sum() < 0:
                if row.max() < -5:
                    continue
                y = y - 1
            else:
                continue
            y = y + row
        return y
    """
    after = """
    def f(xs, y):
        for row in xs:
            _lx_continue_1 = False
            if row.sum() < 0:
                if row.max() < -5:
                    _lx_continue_1 = True
                if _lx.not_(_lx_continue_1):
                    y = y - 1
            else:
                _lx_continue_1 = True
            if _lx.not_(_lx_continue_1):
                y = y + row
        return y
    """
    check(continue_statements, before, after)


def test_continue_in_one_line_if():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
            if x == 5: continue
            x = x * 2
        return x
    """
    after = """
    def f(x):
        while x < 10:
            _lx_continue_1 = False
            x = x + 1
            if x == 5:
                _lx_continue_1 = True
            if _lx.not_(_lx_continue_1):
                x = x * 2
        return x
    """
    check(continue_statements, before, after)


def test_continue_converter_leaves_break_to_its_own_converter():
    before = """
    def f(xs, y):
        for row in xs:
            if row.sum() < 0:
                continue
            y = y + row
            if y.sum() > 10:
                break
            y = y * 2
        return y
    """
    after = """
    def f(xs, y):
        for row in xs:
            _lx_continue_1 = False
            if row.sum() < 0:
                _lx_continue_1 = True
            if _lx.not_(_lx_continue_1):
                y = y + row
                if y.sum() > 10:
                    break
                y = y * 2
        return y
    """
    check(continue_statements, before, after)


def test_loop_without_continue_is_unchanged():
    before = """
    def f(x):
        while x < 10:
            if x == 5:
                break
            x = x + 1
        return x
    """
    check_unchanged(continue_statements, before)


def test_continue_of_a_nested_def_is_left_alone():
    before = """
    def f(xs):
        def g(y):
            for v in y:
                if v > 0:
                    continue
                y = y + v
            return y
        return g(xs)
    """
    check_unchanged(continue_statements, before)


def test_continue_in_one_line_while_body():
    code = convert(continue_statements, """
    def f(x, n):
        i = 0
        while i < n: i = i + 1; continue
        return i
    """)
    assert_compiles_without(code, "continue")


# -- return ----------------------------------------------------------------------------

def test_return_in_one_branch_guards_the_code_after_it():
    """Every path ends in a return, so the function returns the value directly."""
    before = """
    def f(x):
        if x.sum() > 0:
            return x * 2
        x = x + 1
        return x - 1
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            _lx_retval = x * 2
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            x = x + 1
            _lx_retval = x - 1
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_the_docstring_stays_the_first_statement():
    before = """
    def f(x):
        \"\"\"Doubles positive inputs.\"\"\"
        if x.sum() > 0:
            return x * 2
        return x
    """
    after = """
    def f(x):
        \"\"\"Doubles positive inputs.\"\"\"
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            _lx_retval = x * 2
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            _lx_retval = x
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_return_in_both_branches():
    before = """
    def f(x):
        if x.sum() > 0:
            return x * 2
        else:
            return x - 1
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            _lx_retval = x * 2
            _lx_do_return = True
        else:
            _lx_retval = x - 1
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_return_inside_while_stops_the_loop():
    before = """
    def f(x, n):
        i = 0
        while i < n:
            if x[i] > 0:
                return x[i]
            i += 1
        return -1.0
    """
    after = """
    def f(x, n):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        i = 0
        while _lx.and_(_lx.not_(_lx_do_return), lambda: i < n, condition=True):
            if x[i] > 0:
                _lx_retval = x[i]
                _lx_do_return = True
            if _lx.not_(_lx_do_return):
                i += 1
        if _lx.not_(_lx_do_return):
            _lx_retval = -1.0
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_return_inside_for_guards_the_whole_body():
    before = """
    def f(xs):
        for row in xs:
            if row.sum() > 0:
                return row
        return xs[0]
    """
    after = """
    def f(xs):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        for row in xs:
            if _lx.not_(_lx_do_return):
                if row.sum() > 0:
                    _lx_retval = row
                    _lx_do_return = True
        if _lx.not_(_lx_do_return):
            _lx_retval = xs[0]
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_nested_returns_in_if_and_elif():
    before = """
    def f(x):
        if x.sum() > 0:
            if x.max() > 5:
                return x
            x = x * 2
        elif x.sum() < -5:
            return -x
        x = x + 1
        return x
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            if x.max() > 5:
                _lx_retval = x
                _lx_do_return = True
            if _lx.not_(_lx_do_return):
                x = x * 2
        elif x.sum() < -5:
            _lx_retval = -x
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            x = x + 1
            _lx_retval = x
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_return_in_a_loop_inside_a_loop():
    before = """
    def f(x):
        for i in range(3):
            j = 0
            while j < 5:
                if x[i] * j > 6:
                    return x[i] + j
                j += 1
        return x[0]
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        for i in range(3):
            if _lx.not_(_lx_do_return):
                j = 0
                while _lx.and_(_lx.not_(_lx_do_return), lambda: j < 5, condition=True):
                    if x[i] * j > 6:
                        _lx_retval = x[i] + j
                        _lx_do_return = True
                    if _lx.not_(_lx_do_return):
                        j += 1
        if _lx.not_(_lx_do_return):
            _lx_retval = x[0]
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_return_of_a_tuple():
    before = """
    def f(x):
        if x.sum() > 0:
            x = x + 1
            return x, x * 2
        return x, x
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            x = x + 1
            _lx_retval = x, x * 2
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            _lx_retval = x, x
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_falling_off_the_end_is_decided_by_final_return():
    """Some path may end without a return: `_lx.final_return` gets the flag (and the def line)."""
    before = """
    def f(x):
        if x.sum() > 0:
            return x
        x = x + 1
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            _lx_retval = x
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            x = x + 1
        return _lx.final_return(_lx_do_return, _lx_retval, 0)
    """
    check(return_statements, before, after)


def test_bare_return_sets_none():
    before = """
    def f(x):
        if x.sum() > 0:
            return
        x = x + 1
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        if x.sum() > 0:
            _lx_retval = None
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            x = x + 1
        return _lx.final_return(_lx_do_return, _lx_retval, 0)
    """
    check(return_statements, before, after)


def test_function_without_nested_return_is_unchanged():
    before = """
    def f(x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y
    """
    check_unchanged(return_statements, before)


def test_only_a_nested_def_returns_early_unchanged():
    """The nested function's own returns are not the outer function's."""
    before = """
    def f(x):
        def g(y):
            if y > 0:
                return y
            return -y
        return g(x)
    """
    check_unchanged(return_statements, before)


def test_nested_def_returns_untouched_when_the_outer_function_is_rewritten():
    before = """
    def f(x):
        def g(y):
            if y > 0:
                return y
            return -y
        if x.sum() > 0:
            return g(x)
        return x
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        def g(y):
            if y > 0:
                return y
            return -y
        if x.sum() > 0:
            _lx_retval = g(x)
            _lx_do_return = True
        if _lx.not_(_lx_do_return):
            _lx_retval = x
            _lx_do_return = True
        return _lx_retval
    """
    check(return_statements, before, after)


def test_lambda_is_not_a_return():
    before = """
    def f(x):
        g = lambda y: y + 1
        if x.sum() > 0:
            x = g(x)
        return x
    """
    check_unchanged(return_statements, before)


def test_final_return_gets_the_line_of_the_def():
    """The line comes from the positions the pipeline collected (used in the error message)."""
    before = """
    def f(x):
        while x.sum() < 10:
            if x.max() > 3:
                return x
            x = x + 1
    """
    after = """
    def f(x):
        _lx_do_return = False
        _lx_retval = _lx.UndefinedReturn()
        while _lx.and_(_lx.not_(_lx_do_return), lambda: x.sum() < 10, condition=True):
            if x.max() > 3:
                _lx_retval = x
                _lx_do_return = True
            if _lx.not_(_lx_do_return):
                x = x + 1
        return _lx.final_return(_lx_do_return, _lx_retval, 12)
    """
    code = convert(return_statements, before, positions=lambda fn: {fn: (12, 4)})
    assert code == textwrap.dedent(after).lstrip("\n")


def test_return_in_one_line_for_body():
    code = convert(return_statements, """
    def f(xs):
        for row in xs: return row
        return xs
    """)
    compile(code, "<converted>", "exec")


# -- loop else -------------------------------------------------------------------------

def test_while_else_without_break_follows_the_loop():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
        else:
            x = -x
        return x
    """
    after = """
    def f(x):
        while x < 10:
            x = x + 1
        x = -x
        return x
    """
    check(loop_else, before, after)


def test_for_else_without_break_follows_the_loop():
    before = """
    def f(xs, y):
        for row in xs:
            y = y + row
        else:
            y = y * 2
            z = y
        return z
    """
    after = """
    def f(xs, y):
        for row in xs:
            y = y + row
        y = y * 2
        z = y
        return z
    """
    check(loop_else, before, after)


def test_nested_loop_elses_each_follow_their_loop():
    before = """
    def f(x, n):
        for i in range(n):
            while x < i:
                x = x + 1
            else:
                x = x - 1
        else:
            x = x * 3
        return x
    """
    after = """
    def f(x, n):
        for i in range(n):
            while x < i:
                x = x + 1
            x = x - 1
        x = x * 3
        return x
    """
    check(loop_else, before, after)


def test_loop_else_inside_if():
    before = """
    def f(x):
        if x > 0:
            while x < 10:
                x = x + 1
            else:
                x = -x
        return x
    """
    after = """
    def f(x):
        if x > 0:
            while x < 10:
                x = x + 1
            x = -x
        return x
    """
    check(loop_else, before, after)


def test_loop_without_else_is_unchanged():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
        return x
    """
    check_unchanged(loop_else, before)


def test_one_line_else_suite_becomes_statement_lines():
    before = """
    def f(x):
        while x < 10:
            x = x + 1
        else: x = -x; x = x * 2
        return x
    """
    after = """
    def f(x):
        while x < 10:
            x = x + 1
        x = -x
        x = x * 2
        return x
    """
    check(loop_else, before, after)
