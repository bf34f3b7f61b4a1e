"""An adaptive-step ODE integrator: the embedded Bogacki–Shampine 3(2) Runge–Kutta pair.

`while t < t_end` on traced times becomes a `lax.while_loop`; the accept/reject `if err <= 1`
becomes a `lax.cond` inside it, followed by the usual step-size control. The right-hand side is
a Python function passed as a static argument and converted too. Checked against the same code
run eagerly (runs with rejected steps, and with none), against exact solutions, and against
diffrax's `Bosh3` when diffrax is installed. Run: `python samples/ode.py [--size N] [--diff]`
(N: periods of the oscillator to integrate).
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
def integrate(f, y0, t0, t_end, args, h0, rtol=1e-4, atol=1e-6):
    """y(t_end) for y' = f(t, y, args), y(t0) = y0, and the numbers of accepted and rejected steps."""
    t, y, h = t0, y0, h0
    k1 = f(t, y, args)
    accepted, rejected = 0, 0
    while t < t_end:
        h = jnp.minimum(h, t_end - t)
        k2 = f(t + 0.5 * h, y + 0.5 * h * k1, args)
        k3 = f(t + 0.75 * h, y + 0.75 * h * k2, args)
        y_new = y + h * (2 / 9 * k1 + 1 / 3 * k2 + 4 / 9 * k3)
        k4 = f(t + h, y_new, args)
        error = h * (-5 / 72 * k1 + 1 / 12 * k2 + 1 / 9 * k3 - 1 / 8 * k4)  # 3rd minus 2nd order
        scale = atol + rtol * jnp.maximum(jnp.abs(y), jnp.abs(y_new))
        err = jnp.sqrt(jnp.mean((error / scale) ** 2))
        if err <= 1.0:  # accept; k4 is the next step's k1 (first same as last)
            t, y, k1 = t + h, y_new, k4
            accepted += 1
        else:
            rejected += 1
        h = h * jnp.clip(0.9 * err ** (-1 / 3), 0.2, 5.0)
    return y, accepted, rejected


def decay(t, y, rate):
    return -rate * y


def van_der_pol(t, y, mu):
    x, v = y[0], y[1]
    return jnp.stack([v, mu * (1 - x * x) * v - x])


def oscillator(t, y, omega):
    return jnp.stack([y[1], -omega * omega * y[0]])


def with_diffrax(y0, t_end, omega) -> None:
    try:
        import diffrax
    except ImportError:
        print("diffrax is not installed: no comparison with diffrax.Bosh3")
        return
    term = diffrax.ODETerm(lambda t, y, args: oscillator(t, y, args))
    sol = diffrax.diffeqsolve(term, diffrax.Bosh3(), 0.0, t_end, 0.01, y0, args=omega,
                              stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8),
                              max_steps=100_000)
    got, _, _ = integrate(oscillator, y0, jnp.float32(0), jnp.float32(t_end), omega, jnp.float32(0.01), 1e-6, 1e-8)
    check("the oscillator agrees with diffrax.Bosh3", got, sol.ys[-1], rtol=1e-2, atol=1e-3)


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=2, size_help="periods of the oscillator").parse_args(argv)
    result = Result("ode")
    if args.diff:
        print(integrate.diff())
    f32 = jnp.float32
    y1 = jnp.array([1.0], f32)
    y2 = jnp.array([2.0, 0.0], f32)
    cases = [
        ("decay, h0 = 1 (rejected steps first)", (decay, y1, f32(0), f32(3), f32(2.0), f32(1.0))),
        ("decay, h0 = 1e-3 (no rejection)", (decay, y1, f32(0), f32(3), f32(2.0), f32(1e-3))),
        ("Van der Pol mu = 1, h0 = 0.5", (van_der_pol, y2, f32(0), f32(5), f32(1.0), f32(0.5))),
        ("t_end == t0 (no step)", (decay, y1, f32(0), f32(0), f32(2.0), f32(0.1))),
    ]
    timed = cases[2][1]
    result.first = seconds(lambda: integrate(*timed))  # conversion, tracing and compiling
    paths = set()
    for label, case in cases:
        got = integrate(*case)
        want = integrate.python_function(*case)
        check(f"{label}: {int(got[1])} accepted, {int(got[2])} rejected", got, want, rtol=1e-4, atol=1e-5)
        paths |= {"accept"} if int(got[1]) else set()
        paths |= {"reject"} if int(got[2]) else set()
    assert paths == {"accept", "reject"}, paths

    y, _, _ = integrate(decay, y1, f32(0), f32(3), f32(2.0), f32(1.0))
    check("decay matches exp(-2t) at t = 3", y, np.exp(-6.0) * np.ones(1), rtol=1e-2, atol=1e-5)
    t_end = 2 * np.pi * args.size
    y, accepted, rejected = integrate(oscillator, y2, f32(0), f32(t_end), f32(1.0), f32(0.01), 1e-6, 1e-8)
    check(f"oscillator over {args.size} periods ({int(accepted)} steps) returns to its start",
          y, y2, rtol=1e-3, atol=1e-3)
    with_diffrax(y2, t_end, f32(1.0))

    result.constructs = count_constructs(integrate, *timed)
    note = try_plain_jit(lambda *a: integrate.python_function(van_der_pol, *a), *timed[1:])
    time_all(result, lambda: integrate.python_function(*timed), lambda: integrate(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
