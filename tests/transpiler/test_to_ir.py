"""SSA construction, golden tests: Python source before, the IR text after (LibCST style).

Each function is exec'd under a fresh file name registered in linecache, so line 1 of
``before`` is its ``def`` line and ``loc(line:col)`` in the IR counts from there.
"""

from __future__ import annotations

import itertools
import linecache
import textwrap


from laxify.ir.core import Span
from laxify.ir.ops import CondOp, UndefOp
from laxify.ir.printer import print_function
from laxify.transpiler.analysis.positions import statement_positions
from laxify.transpiler.pipeline import convert_source
from laxify.transpiler.source import get_source
from laxify.transpiler.to_ir import Fallback, build_ir

_names = itertools.count()


def define(before: str):
    """The function defined by ``before`` (its only top-level def), with its source findable."""
    src = textwrap.dedent(before).lstrip("\n")
    filename = f"<laxify-to-ir-test-{next(_names)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(src, filename, "exec"), namespace)
    (fn,) = [v for v in namespace.values() if getattr(v, "__code__", None) is not None]
    return fn


def ir_text(before: str) -> str:
    return print_function(convert_source(define(before)).ir)


def check(before: str, after: str) -> None:
    assert ir_text(before) == textwrap.dedent(after).strip("\n")


def test_straight_line():
    before = """
    def f(x, y):
        z = x + y  # add
        z = z * 2
        return z
    """
    after = r"""
    func @f(%x.0, %y.0) {params_code = 'x, y'} {
      %z.0 = py(%x.0, %y.0) {code = 'z = x + y  # add', kind = 'stmt', static = 'operands'} loc(2:4)
      %z.1 = py(%z.0) {code = 'z = z * 2', kind = 'stmt', static = 'operands'} loc(3:4)
      %0 = py(%z.1) {code = 'z', kind = 'expr', static = 'operands'} loc(4:4)
      return(%0) loc(4:4)
    }
    """
    check(before, after)


def test_if_else_carried_read_only_and_branch_local_names():
    # `y` is carried out, `t` only read inside (an input, not a result), `tmp` is local to the
    # true branch (neither an input nor a result), `x` is not touched by the branches.
    before = """
    def f(x, n):
        y = x * 2
        t = n
        if x.sum() > 0:
            tmp = y + 1
            y = tmp * t
        else:
            y = y - t
        return y
    """
    after = r"""
    func @f(%x.0, %n.0) {params_code = 'x, n'} {
      %y.0 = py(%x.0) {code = 'y = x * 2', kind = 'stmt', static = 'operands'} loc(2:4)
      %t.0 = py(%n.0) {code = 't = n', kind = 'stmt', static = 'operands'} loc(3:4)
      %0 = py(%x.0) {code = 'x.sum() > 0', kind = 'expr', static = 'never'} loc(4:4)
      %y.5 = cond(%0, %y.0, %t.0) {
      ^(%y.1, %t.1):
        %tmp.0 = py(%y.1) {code = 'tmp = y + 1', kind = 'stmt', static = 'operands'} loc(5:8)
        %y.2 = py(%tmp.0, %t.1) {code = 'y = tmp * t', kind = 'stmt', static = 'operands'} loc(6:8)
        yield(%y.2)
      } {
      ^(%y.3, %t.2):
        %y.4 = py(%y.3, %t.2) {code = 'y = y - t', kind = 'stmt', static = 'operands'} loc(8:8)
        yield(%y.4)
      } loc(4:4)
      %1 = py(%y.5) {code = 'y', kind = 'expr', static = 'operands'} loc(9:4)
      return(%1) loc(9:4)
    }
    """
    check(before, after)


def test_if_without_else_yields_the_input():
    before = """
    def f(x):
        if x > 0:
            x = -x
        return x
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %0 = py(%x.0) {code = 'x > 0', kind = 'expr', static = 'operands'} loc(2:4)
      %x.4 = cond(%0, %x.0) {
      ^(%x.1):
        %x.2 = py(%x.1) {code = 'x = -x', kind = 'stmt', static = 'operands'} loc(3:8)
        yield(%x.2)
      } {
      ^(%x.3):
        yield(%x.3)
      } loc(2:4)
      %1 = py(%x.4) {code = 'x', kind = 'expr', static = 'operands'} loc(4:4)
      return(%1) loc(4:4)
    }
    """
    check(before, after)


def test_elif_chain_is_one_cond_with_a_test_region_per_elif():
    before = """
    def f(x):
        if x > 0:
            y = 1
        elif x < 0:
            y = -1
        else:
            y = 0
        return y
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %0 = py(%x.0) {code = 'x > 0', kind = 'expr', static = 'operands'} loc(2:4)
      %y.3 = cond(%0, %x.0) {num_tests = 1} {
      ^(%x.2):
        %1 = py(%x.2) {code = 'x < 0', kind = 'expr', static = 'operands'} loc(4:4)
        yield(%1)
      } {
      ^(%x.1):
        %y.0 = py() {code = 'y = 1', kind = 'stmt', static = 'always', value = 1} loc(3:8)
        yield(%y.0)
      } {
      ^(%x.3):
        %y.1 = py() {code = 'y = -1', kind = 'stmt', static = 'always', value = -1} loc(5:8)
        yield(%y.1)
      } {
      ^(%x.4):
        %y.2 = py() {code = 'y = 0', kind = 'stmt', static = 'always', value = 0} loc(7:8)
        yield(%y.2)
      } loc(2:4)
      %2 = py(%y.3) {code = 'y', kind = 'expr', static = 'operands'} loc(8:4)
      return(%2) loc(8:4)
    }
    """
    check(before, after)


def test_elif_chain_of_500_arms_is_one_cond():
    arms = "".join(f"    elif x == {k}:\n        y = {k}\n" for k in range(1, 500))
    fn = define(f"def f(x):\n    if x == 0:\n        y = 0\n{arms}    return y\n")
    (op,) = [op for op in convert_source(fn).ir.body.ops if op.name == "cond"]
    assert op.num_tests == 499 and len(op.branches) == 501
    assert [op.name for op in op.walk()].count("cond") == 1


def test_while():
    before = """
    def f(x):
        i = 0
        while x.sum() < 10:
            x = x * 2
            i += 1
        return x, i
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %i.0 = py() {code = 'i = 0', kind = 'stmt', static = 'always', value = 0} loc(2:4)
      %x.4, %i.4 = while(%x.0, %i.0) {num_carries = 2} {
      ^(%x.1, %i.1):
        %0 = py(%x.1) {code = 'x.sum() < 10', kind = 'expr', static = 'never'} loc(3:4)
        yield(%0)
      } {
      ^(%x.2, %i.2):
        %x.3 = py(%x.2) {code = 'x = x * 2', kind = 'stmt', static = 'operands'} loc(4:8)
        %i.3 = py(%i.2) {code = 'i += 1', kind = 'stmt', static = 'operands'} loc(5:8)
        yield(%x.3, %i.3)
      } loc(3:4)
      %1 = py(%x.4, %i.4) {code = 'x, i', kind = 'expr', static = 'operands'} loc(6:4)
      return(%1) loc(6:4)
    }
    """
    check(before, after)


def test_while_loop_local_temporary_is_not_carried():
    before = """
    def f(x, n):
        while x.sum() < n:
            t = x * 2
            x = t + 1
        return x
    """
    after = r"""
    func @f(%x.0, %n.0) {params_code = 'x, n'} {
      %x.4 = while(%x.0, %n.0) {num_carries = 1} {
      ^(%x.1, %n.1):
        %0 = py(%x.1, %n.1) {code = 'x.sum() < n', kind = 'expr', static = 'never'} loc(2:4)
        yield(%0)
      } {
      ^(%x.2, %n.2):
        %t.0 = py(%x.2) {code = 't = x * 2', kind = 'stmt', static = 'operands'} loc(3:8)
        %x.3 = py(%t.0) {code = 'x = t + 1', kind = 'stmt', static = 'operands'} loc(4:8)
        yield(%x.3)
      } loc(2:4)
      %1 = py(%x.4) {code = 'x', kind = 'expr', static = 'operands'} loc(5:4)
      return(%1) loc(5:4)
    }
    """
    check(before, after)


def test_for_range_one_argument():
    before = """
    def f(x):
        for i in range(3):
            x = x + i
        return x
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %0 = py() {code = '3', kind = 'expr', static = 'always', value = 3} loc(2:4)
      %1 = py() {code = '0', kind = 'expr', static = 'always', value = 0} loc(2:4)
      %2 = py() {code = '1', kind = 'expr', static = 'always', value = 1} loc(2:4)
      %x.3 = for_range(%1, %0, %2, %x.0) {num_carries = 1, range_args = 1} {
      ^(%i.0, %x.1):
        %x.2 = py(%x.1, %i.0) {code = "x = _lx.python_op('+', x, i, 'x')", kind = 'stmt', static = 'operands', plain = 'x = x + i'} loc(3:8)
        yield(%x.2)
      } loc(2:4)
      %3 = py(%x.3) {code = 'x', kind = 'expr', static = 'operands'} loc(4:4)
      return(%3) loc(4:4)
    }
    """
    check(before, after)


def test_for_range_two_arguments():
    before = """
    def f(x, n):
        for i in range(1, n):
            x = x + i
        return x
    """
    after = r"""
    func @f(%x.0, %n.0) {params_code = 'x, n'} {
      %0 = py() {code = '1', kind = 'expr', static = 'always', value = 1} loc(2:4)
      %1 = py(%n.0) {code = 'n', kind = 'expr', static = 'operands'} loc(2:4)
      %2 = py() {code = '1', kind = 'expr', static = 'always', value = 1} loc(2:4)
      %x.3 = for_range(%0, %1, %2, %x.0) {num_carries = 1, range_args = 2} {
      ^(%i.0, %x.1):
        %x.2 = py(%x.1, %i.0) {code = "x = _lx.python_op('+', x, i, 'x')", kind = 'stmt', static = 'operands', plain = 'x = x + i'} loc(3:8)
        yield(%x.2)
      } loc(2:4)
      %3 = py(%x.3) {code = 'x', kind = 'expr', static = 'operands'} loc(4:4)
      return(%3) loc(4:4)
    }
    """
    check(before, after)


def test_for_range_three_arguments_negative_step():
    before = """
    def f(x, a, b):
        for i in range(a, b, -1):
            x = x * i
        return x
    """
    after = r"""
    func @f(%x.0, %a.0, %b.0) {params_code = 'x, a, b'} {
      %0 = py(%a.0) {code = 'a', kind = 'expr', static = 'operands'} loc(2:4)
      %1 = py(%b.0) {code = 'b', kind = 'expr', static = 'operands'} loc(2:4)
      %2 = py() {code = '-1', kind = 'expr', static = 'always', value = -1} loc(2:4)
      %x.3 = for_range(%0, %1, %2, %x.0) {num_carries = 1, range_args = 3} {
      ^(%i.0, %x.1):
        %x.2 = py(%x.1, %i.0) {code = "x = _lx.python_op('*', x, i, 'x')", kind = 'stmt', static = 'operands', plain = 'x = x * i'} loc(3:8)
        yield(%x.2)
      } loc(2:4)
      %3 = py(%x.3) {code = 'x', kind = 'expr', static = 'operands'} loc(4:4)
      return(%3) loc(4:4)
    }
    """
    check(before, after)


def test_for_over_an_array_with_a_tuple_target():
    before = """
    def f(xs, acc):
        for a, b in xs:
            acc = acc + a * b
        return acc
    """
    after = r"""
    func @f(%xs.0, %acc.0) {params_code = 'xs, acc'} {
      %0 = py(%xs.0) {code = 'xs', kind = 'expr', static = 'operands'} loc(2:4)
      %acc.3 = scan(%0, %acc.0) {num_carries = 1} {
      ^(%_lx_item.0, %acc.1):
        %a.0, %b.0 = py(%_lx_item.0) {code = 'a, b = _lx_item', kind = 'stmt', static = 'operands'} loc(2:4)
        %acc.2 = py(%acc.1, %a.0, %b.0) {code = 'acc = acc + a * b', kind = 'stmt', static = 'operands'} loc(3:8)
        yield(%acc.2)
      } loc(2:4)
      %1 = py(%acc.3) {code = 'acc', kind = 'expr', static = 'operands'} loc(4:4)
      return(%1) loc(4:4)
    }
    """
    check(before, after)


def test_loop_target_used_after_the_loop_is_carried():
    # Python: after the loop `x` holds the last element (and is unbound if `xs` is empty).
    before = """
    def f(xs):
        s = 0.0
        for x in xs:
            s = s + x
        return s, x
    """
    after = r"""
    func @f(%xs.0) {params_code = 'xs'} {
      %s.0 = py() {code = 's = 0.0', kind = 'stmt', static = 'always', value = 0.0} loc(2:4)
      %0 = py(%xs.0) {code = 'xs', kind = 'expr', static = 'operands'} loc(3:4)
      %x.1 = undef() loc(3:4)
      %s.3, %x.2 = scan(%0, %s.0, %x.1) {num_carries = 2} {
      ^(%x.0, %s.1, %1):
        %s.2 = py(%s.1, %x.0) {code = 's = s + x', kind = 'stmt', static = 'operands'} loc(4:8)
        yield(%s.2, %x.0)
      } loc(3:4)
      %2 = py(%s.3, %x.2) {code = 's, x', kind = 'expr', static = 'operands'} loc(5:4)
      return(%2) loc(5:4)
    }
    """
    check(before, after)


def test_range_index_used_after_the_loop_is_carried():
    before = """
    def f(x, n):
        for i in range(n):
            x = x + i
        return x, i
    """
    after = r"""
    func @f(%x.0, %n.0) {params_code = 'x, n'} {
      %0 = py(%n.0) {code = 'n', kind = 'expr', static = 'operands'} loc(2:4)
      %1 = py() {code = '0', kind = 'expr', static = 'always', value = 0} loc(2:4)
      %2 = py() {code = '1', kind = 'expr', static = 'always', value = 1} loc(2:4)
      %i.1 = undef() loc(2:4)
      %x.3, %i.2 = for_range(%1, %0, %2, %x.0, %i.1) {num_carries = 2, range_args = 1} {
      ^(%i.0, %x.1, %3):
        %x.2 = py(%x.1, %i.0) {code = "x = _lx.python_op('+', x, i, 'x')", kind = 'stmt', static = 'operands', plain = 'x = x + i'} loc(3:8)
        yield(%x.2, %i.0)
      } loc(2:4)
      %4 = py(%x.3, %i.2) {code = 'x, i', kind = 'expr', static = 'operands'} loc(4:4)
      return(%4) loc(4:4)
    }
    """
    check(before, after)


def test_index_used_as_a_slice_bound_is_marked_python():
    before = """
    def f(x, n):
        for i in range(n):
            x = x + x[:i].sum()
        return x
    """
    (loop,) = [op for op in convert_source(define(before)).ir.body.ops if op.name == "for_range"]
    assert loop.attributes["python_index"] == "the index `i` is a slice bound"


def test_kept_try_star_records_a_fallback_and_with_becomes_a_with_op():
    before = """
    def f(x):
        try:
            y = x + 1
        except* ValueError:
            y = x
        with ctx() as fh:
            z = y
        return z
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %y.0 = py(%x.0) {code = 'try:\n    y = x + 1\nexcept* ValueError:\n    y = x', kind = 'stmt', static = 'never', fallback = '`except*` clauses (exception groups) are not converted'} loc(2:4)
      %z.1 = with(%y.0) {code = 'with _lx.unsuppressing(_lx.call(ctx)) as fh:', num_targets = 1} {
      ^(%y.1, %fh.0):
        %z.0 = py(%y.1) {code = 'z = y', kind = 'stmt', static = 'operands'} loc(7:8)
        yield(%z.0)
      } loc(6:4)
      %0 = py(%z.1) {code = 'z', kind = 'expr', static = 'operands'} loc(8:4)
      return(%0) loc(8:4)
    }
    """
    check(before, after)
    fallbacks = convert_source(define(before)).fallbacks
    assert fallbacks == [Fallback(Span(2, 4), "try", "`except*` clauses (exception groups) are not converted", 5)]


def test_try_becomes_a_try_op_whose_later_blocks_start_from_unknown_values():
    before = """
    def f(x):
        k = 0
        try:
            k = x + 1
        except ValueError as e:
            w = k
        finally:
            z = k
        return z
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %k.0 = py() {code = 'k = 0', kind = 'stmt', static = 'always', value = 0} loc(2:4)
      %z.0 = undef() loc(3:4)
      %z.8 = try(%x.0, %k.0, %z.0) {headers = ('try:', 'except _lx.internal_errors:', 'except ValueError as e:', 'finally:'), targets = (0, 0, 1, 0), places = ((3, 4), (5, 4), (5, 4), (7, 4))} {
      ^(%x.1, %k.1, %z.1):
        %k.2 = py(%x.1) {code = 'k = x + 1', kind = 'stmt', static = 'operands'} loc(4:8)
        yield(%z.1)
      } {
      ^(%x.2, %k.3, %z.2):
        py() {code = 'raise', kind = 'stmt', static = 'never'} loc(5:4)
        yield(%z.2)
      } {
      ^(%x.3, %k.4, %z.3, %e.0):
        %w.0 = py(%k.4) {code = 'w = k', kind = 'stmt', static = 'operands'} loc(6:8)
        yield(%z.3)
      } {
      ^(%x.4, %k.5, %z.4):
        %z.7 = with(%k.5, %z.4) {code = 'with _lx.finally_block():', num_targets = 0} {
        ^(%k.6, %z.5):
          %z.6 = py(%k.6) {code = 'z = k', kind = 'stmt', static = 'operands'} loc(8:8)
          yield(%z.6)
        } loc(7:4)
        yield(%z.7)
      } loc(3:4)
      %0 = py(%z.8) {code = 'z', kind = 'expr', static = 'operands'} loc(9:4)
      return(%0) loc(9:4)
    }
    """
    check(before, after)


def test_with_whose_as_target_is_an_attribute_stays_python():
    before = """
    def f(x):
        with ctx() as self.fh:
            z = x
        return z
    """
    (fallback,) = convert_source(define(before)).fallbacks
    assert fallback == Fallback(Span(2, 4), "with", "its `as` target is not a plain name", 3)


def test_nested_def_without_return_is_kept_without_fallback():
    before = """
    def f(x):
        def g(v):
            v = v + x
        g(x)
        return x
    """
    after = r"""
    func @f(%x.0) {params_code = 'x', cells = ('x',)} {
      %g.0 = py(%x.0) {code = 'def g(v):\n    v = v + x', kind = 'stmt', static = 'never'} loc(2:4)
      py(%g.0, %x.0) {code = '_lx.call(g, x)', kind = 'stmt', static = 'always'} loc(4:4)
      %0 = py(%x.0) {code = 'x', kind = 'expr', static = 'operands'} loc(5:4)
      return(%0) loc(5:4)
    }
    """
    check(before, after)
    assert convert_source(define(before)).fallbacks == []


def test_if_containing_return_is_a_fallback_in_build_ir():
    """SSA construction alone (without the converters that rewrite `return`) keeps such an
    `if` whole as Python and records why, with the lines it covers."""
    fn = define("""
    def f(x):
        y = x
        if x > 0:
            y = x + 1
            return y
        return -y
    """)
    src = get_source(fn)
    positions = statement_positions(src.text, src.node, src.first_line, src.indent)
    ir_fn, fallbacks = build_ir(src, positions)
    assert print_function(ir_fn) == textwrap.dedent(r"""
    func @f(%x.0) {params_code = 'x'} {
      %y.0 = py(%x.0) {code = 'y = x', kind = 'stmt', static = 'operands'} loc(2:4)
      %y.1 = py(%x.0, %y.0) {code = 'if x > 0:\n    y = x + 1\n    return y', kind = 'stmt', static = 'never', fallback = 'it contains a `return` statement'} loc(3:4)
      %0 = py(%y.1) {code = '-y', kind = 'expr', static = 'operands'} loc(6:4)
      return(%0) loc(6:4)
    }
    """).strip("\n")
    assert fallbacks == [Fallback(Span(3, 4), "if", "it contains a `return` statement", 5)]


def test_nested_def_keeps_its_own_return():
    before = """
    def f(x):
        def g(v):
            return v + 1
        return g(x) * 2
    """
    after = r"""
    func @f(%x.0) {params_code = 'x'} {
      %g.0 = py() {code = 'def g(v):\n    return v + 1', kind = 'stmt', static = 'never'} loc(2:4)
      %0 = py(%g.0, %x.0) {code = '_lx.call(g, x) * 2', kind = 'expr', static = 'never'} loc(4:4)
      return(%0) loc(4:4)
    }
    """
    check(before, after)


def test_if_containing_return_keeps_its_line():
    before = """
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    """
    ir_fn = convert_source(define(before)).ir
    conds = [op for op in ir_fn.walk() if isinstance(op, CondOp)]
    assert conds[0].span == Span(2, 4)


def test_rewritten_return_keeps_its_line():
    before = """
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    """
    ir_fn = convert_source(define(before)).ir
    (op,) = [op for op in ir_fn.walk() if op.attributes.get("code") == "_lx_retval = -x"]
    assert op.span == Span(4, 4)


def test_undef_has_a_span():
    before = """
    def f(xs):
        for x in xs:
            pass
        return x
    """
    ir_fn = convert_source(define(before)).ir
    (undef,) = [op for op in ir_fn.walk() if isinstance(op, UndefOp)]
    assert undef.span == Span(2, 4)
