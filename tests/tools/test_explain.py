"""f.explain(): one row per construct the user wrote, the decision and the reason (goldens)."""

from __future__ import annotations

from html.parser import HTMLParser
import textwrap

import jax
import numpy as np

F3 = jax.ShapeDtypeStruct((3,), np.float32)
F4 = jax.ShapeDtypeStruct((4,), np.float32)
I32 = jax.ShapeDtypeStruct((), np.int32)


def golden(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def test_break_guard_folds_into_the_loop_row(static):
    # The break guard is not a row of its own (an `if` at line 19, where the user wrote a `for`).
    assert str(static("search").explain(F3)) == golden("""
        search:
          line 19   for  lax.scan  trip count is static: 10; break → flag, remaining iterations skipped
          line 20   if   lax.cond  condition depends on x, i (traced)
        """)


def test_unspecialised_says_what_decides(static):
    assert str(static("counter").explain()) == golden("""
        counter (not specialised: pass arguments to decide traced vs static):
          line 12   while  lax.while_loop  condition depends on x; Python if it is a Python value
        """)


def test_elif_chain_print_and_call(static):
    f = static("branches")
    assert str(f.explain(F3, I32)) == golden("""
        branches:
          line 27   if/elif  lax.switch       condition depends on n, x (traced)
          line 33   print    jax.debug.print  prints x each time the program runs
          line 34   call     converted        `helper` is converted too when it is your Python code; library functions are called as they are
        """)
    # n static and > 2: the chain is decided while tracing; the row stays.
    rows = str(f.explain(F3, 3)).splitlines()
    assert rows[1].split()[:5] == ["line", "27", "if/elif", "static", "Python"]
    assert "only the branch taken is traced" in rows[1]


def test_match_static_subject(static):
    assert str(static("dispatch").explain(F3, 1)) == golden("""
        dispatch:
          line 38   match  static Python  condition depends on mode: known for these arguments, only the branch taken is traced
        """)


def test_unrolled_loop_says_why_and_continue_folds(static):
    assert str(static("prefix_sums").explain(F4)) == golden("""
        prefix_sums:
          line 47   for  unrolled  the index `j` is a slice bound: the loop runs as Python
          line 49   for  lax.scan  iterates over the leading axis of x: 4 steps; continue → flag, rest of the body skipped
          line 50   if   lax.cond  condition depends on row (traced)
        """)


def test_traced_bounds_are_a_fori_loop(code):
    import laxify

    def f(x, n):
        for i in range(n):
            x = x + i
        return x

    text = str(laxify.to_static(f).explain(F3, I32))
    assert "fori_loop" in text and "trip count depends on n (traced)" in text
    assert "lax.scan" in str(laxify.to_static(f).explain(F3, 5))
    assert "trip count is static: 5" in str(laxify.to_static(f).explain(F3, 5))


def test_no_row_names_a_made_up_name(static, code):
    for name in ("counter", "search", "branches", "dispatch", "prefix_sums", "tiny"):
        assert "_lx" not in str(static(name).explain()), name


def test_html_form_is_a_table_with_one_row_per_entry(static):
    explanation = static("search").explain(F3)

    class Rows(HTMLParser):
        rows = 0

        def handle_starttag(self, tag, attrs):
            self.rows += tag == "tr"

    parser = Rows()
    parser.feed(explanation._repr_html_())
    assert parser.rows == 1 + len(explanation.entries)
    assert "remaining iterations skipped" in explanation._repr_html_()


COUNT = 0


def test_kept_python_says_why_and_what_it_costs():
    import laxify

    def f(x):
        global COUNT
        if x.sum() > 0:
            COUNT = COUNT + 1
        return x

    rows = str(laxify.to_static(f).explain(F3)).splitlines()
    assert rows[1].split()[:5] == ["line", str(f.__code__.co_firstlineno + 2), "if", "fell", "back"]
    assert "`COUNT`" in rows[1] and "it reads x, traced here" in rows[1] and "eagerly" in rows[1]


def test_the_guard_after_a_raise_folds_into_the_loop_row(static):
    # Only `raise`s set the flag (`_lx.not_raised`): its guard is no row of its own either.
    assert str(static("validated").explain(F3)) == golden("""
        validated:
          line 73   if   lax.cond  condition depends on x (traced)
          line 75   for  lax.scan  trip count is static: 3; return → flag, the rest skipped once it has run
          line 77   if   lax.cond  condition depends on x (traced)
        """)


def test_a_caught_raise_folds_and_its_handler_is_a_row(static):
    # The guard around the rest of the `try` body is no row; the handler is an `except` row at
    # the `try`'s line (transpiler/converters/caught_raises.py).
    rows = str(static("safe_ratio").explain(F3, F3)).splitlines()
    assert rows[0] == "safe_ratio:"
    assert [row.split()[:4] for row in rows[1:]] == [
        ["line", "83", "try", "static"],
        ["line", "83", "except", "lax.cond"],
        ["line", "84", "if", "lax.cond"],
    ]
    assert "a `raise` it catches fired" in rows[2]
