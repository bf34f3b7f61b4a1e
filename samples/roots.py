"""Root finding: bisection that `break`s out of a `for` loop, and the secant method that
`return`s from inside a `while`.

Both take the function whose root they look for as an argument (a Python function is a static
argument of a `to_static` function, and it is converted too). `bisect`'s `for i in range(max_iter)`
has a static trip count but a traced `break`: laxify keeps it one `lax.scan` whose remaining
iterations a `lax.cond` on the break flag skips. `secant` mixes a traced `while` with an early `return`. Run:
`python samples/roots.py [--size N] [--diff]` (N: how many polynomials to solve).
"""

from __future__ import annotations

import sys

import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402


@laxify.to_static
def bisect(f, coeffs, lo, hi, tol, max_iter=60):
    """A root of f(x, coeffs) in [lo, hi] (f(lo), f(hi) of opposite signs), and the last step."""
    f_lo = f(lo, coeffs)
    for i in range(max_iter):
        mid = 0.5 * (lo + hi)
        f_mid = f(mid, coeffs)
        if f_mid == 0 or hi - lo < tol:
            break
        if jnp.sign(f_mid) == jnp.sign(f_lo):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return mid, i


@laxify.to_static
def secant(f, coeffs, x0, x1, tol, max_iter=50):
    """A root of f(x, coeffs) by the secant method from x0, x1, and the steps taken."""
    f0, f1 = f(x0, coeffs), f(x1, coeffs)
    n = 0
    while abs(f1) > tol:
        if f1 == f0:  # a flat secant: no next point
            return x1, n
        x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
        f0, f1 = f1, f(x1, coeffs)
        n += 1
        if n >= max_iter:
            break
    return x1, n


def poly(x, coeffs):
    """coeffs[0] * x**(k-1) + ... + coeffs[-1], by Horner's rule."""
    y = jnp.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=3, size_help="random cubics to solve").parse_args(argv)
    result = Result("roots")
    if args.diff:
        print(bisect.diff())
        print(secant.diff())
    f32 = jnp.float32
    cubic = jnp.array([1.0, 0.0, -2.0, -5.0], f32)  # x**3 - 2x - 5, root 2.0945515
    line = jnp.array([2.0, -1.0], f32)              # 2x - 1: bisection of [0, 1] hits 0.5 exactly
    square = jnp.array([1.0, 0.0, -1.0], f32)       # x**2 - 1: secant from -2, 2 is flat at once
    cases = [
        ("bisect x^3-2x-5 on [2, 3], tol 1e-5 (tolerance break)", bisect, (poly, cubic, f32(2), f32(3), 1e-5)),
        ("bisect 2x-1 on [0, 1] (f(mid) == 0 break)", bisect, (poly, line, f32(0), f32(1), 1e-5)),
        ("bisect x^3-2x-5, tol 0, max_iter 10 (no break)", bisect, (poly, cubic, f32(2), f32(3), 0.0, 10)),
        ("secant x^3-2x-5 from 2, 3 (converges)", secant, (poly, cubic, f32(2), f32(3), 1e-5)),
        ("secant x^2-1 from -2, 2 (flat: return inside the while)", secant, (poly, square, f32(-2), f32(2), 1e-6)),
        ("secant x^3-2x-5, tol 0, max_iter 4 (break)", secant, (poly, cubic, f32(2), f32(3), 0.0, 4)),
        ("secant 2x-1 from 0.5 (root at once: no iteration)", secant, (poly, line, f32(0.5), f32(0.5), 1e-6)),
    ]
    timed = cases[0][2]
    result.first = seconds(lambda: bisect(*timed))  # conversion, tracing and compiling
    for label, fn, case in cases:
        check(label, fn(*case), fn.python_function(*case))

    # Random monic cubics: a sign change on [-4, 4], so bisection finds a root there.
    rng = np.random.default_rng(0)
    for i in range(args.size):
        coeffs = jnp.asarray(np.concatenate([[1.0], rng.normal(size=3)]), f32)
        root, _ = bisect(poly, coeffs, f32(-4), f32(4), 1e-6)
        sec, _ = secant(poly, coeffs, root - 0.1, root + 0.1, 1e-6)
        check(f"cubic {i}: bisection {float(root):+.5f}, secant {float(sec):+.5f} agree",
              sec, root, rtol=1e-3, atol=1e-3)

    both = lambda c: (bisect(poly, c, f32(2), f32(3), 1e-5), secant(poly, c, f32(2), f32(3), 1e-5))
    result.constructs = count_constructs(both, cubic)
    note = try_plain_jit(lambda c, lo, hi: bisect.python_function(poly, c, lo, hi, 1e-5), cubic, f32(2), f32(3))
    time_all(result, lambda: bisect.python_function(*timed), lambda: bisect(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
