"""Pure-Python functions of the standard library and of installed packages, called by converted
code (docs/semantics.md, "Calls"): converted like the user's own (colorsys's helper `_v` and its
traced `if`s), while array libraries (jax, numpy, ...) and C functions run as written; a
package can be moved to either side (laxify.keep_packages / laxify.convert_packages)."""

from __future__ import annotations

import bisect
import colorsys
import heapq
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from harness import check
from laxify.ir import user_code

f32 = jnp.float32

# Every path of hls_to_rgb and its helper _v: s == 0; l <= 0.5 or not; the hue in each of the
# four ranges of _v (h + 1/3 and h - 1/3 wrap around 1.0).
HLS = [(f32(h), f32(l), f32(s)) for h, l, s in [
    (0.5, 0.5, 0.0), (0.05, 0.3, 0.6), (0.3, 0.7, 0.4), (0.55, 0.4, 0.9), (0.8, 0.6, 0.2), (0.95, 0.5, 1.0)]]
RGB = [tuple(map(f32, c)) for c in [(0.2, 0.4, 0.4), (1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.1, 0.9, 0.3),
                                    (0.0, 0.0, 0.0), (0.3, 0.1, 0.9), (0.9, 0.9, 0.1)]]


def test_a_stdlib_function_and_its_helper_convert():
    check(colorsys.hls_to_rgb, *HLS, expect_prims={"cond"})


def test_max_and_min_in_a_stdlib_function_convert():
    check(colorsys.rgb_to_hsv, *RGB, expect_prims={"cond"})
    check(colorsys.rgb_to_hls, *RGB, expect_prims={"cond"})


def hue_of(r, g, b):
    h, _, _ = colorsys.rgb_to_hsv(r, g, b)  # a call on a module attribute
    if h > 0.5:
        return h - 1.0
    return h


def test_user_code_calling_a_stdlib_function_converts_it():
    check(hue_of, *RGB, expect_prims={"cond"})


def test_the_rule_by_package():
    assert user_code.converts_calls_of(colorsys._v) and user_code.converts_calls_of(heapq.nsmallest)
    assert not user_code.converts_calls_of(logging.getLogger)  # the standard library's infrastructure
    assert not user_code.converts_calls_of(jax.tree_util.tree_map)  # an array library
    assert user_code.keeps_module(np) and user_code.keeps_module(jnp) and not user_code.keeps_module(colorsys)
    assert user_code.converts_calls_of(hue_of)  # the user's own


def test_a_package_kept_as_written_runs_its_helpers_unconverted():
    laxify.keep_packages("colorsys")
    try:
        assert not user_code.converts_calls_of(colorsys._v)
        # hls_to_rgb itself is converted (to_static was asked to); its helper _v runs as
        # written and needs a concrete value: the function falls back, with the eager value.
        with pytest.warns(laxify.FallbackWarning, match="concrete"):
            got = laxify.to_static(colorsys.hls_to_rgb)(*HLS[1])
        np.testing.assert_allclose(got, colorsys.hls_to_rgb(*HLS[1]), rtol=1e-6)
    finally:
        laxify.convert_packages("colorsys")
    assert user_code.converts_calls_of(colorsys._v)


def test_package_names_are_checked():
    with pytest.raises(TypeError, match="top-level package names"):
        laxify.keep_packages("os.path")


# bisect's C functions (bisect_left/bisect_right) convert through the module's own pure-Python
# definitions: a binary search whose bounds become traced is one lax.while_loop. The oracle is
# the C function itself, run eagerly.
SORTED = jnp.asarray([1, 3, 3, 5, 8, 13])
SEARCHES = [(SORTED, jnp.int32(x)) for x in (-4, 0, 1, 3, 4, 13, 20)]
FLOATS = jnp.asarray([-1.5, 0.0, 0.0, 2.25, 7.0])
FLOAT_SEARCHES = [(FLOATS, f32(x)) for x in (-2.0, 0.0, 2.25, 9.0, np.nan)]


@pytest.mark.parametrize("fn", [bisect.bisect_left, bisect.bisect_right], ids=lambda f: f.__name__)
def test_bisect_of_a_traced_value_is_one_program(fn):
    check(fn, *SEARCHES, *FLOAT_SEARCHES, expect_prims={"while", "cond"})


def insertion_points(a, x):
    lo = bisect.bisect_left(a, x)
    return lo, bisect.bisect_right(a, x) - lo  # where x goes, and how many equal it


def test_user_code_calling_bisect_converts_it():
    check(insertion_points, *SEARCHES, expect_prims={"while", "cond"})


def test_only_functions_that_change_no_argument_have_twins():
    from laxify.runtime.pure_twins import pure_twin
    twin = pure_twin(bisect.bisect_left)
    assert twin is not None and twin is not bisect.bisect_left and twin.__code__.co_filename == bisect.__file__
    assert pure_twin(bisect.insort) is None and pure_twin(len) is None and pure_twin(heapq.heappush) is None
    assert bisect.bisect_left is not twin  # the module itself is untouched
