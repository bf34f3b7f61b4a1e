"""Functions measured by benchmarks/run.py: each laxify input next to the `jax.lax` program a
careful person would write by hand for it (the hand-written ones carry a `lax_` prefix)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

_ROOT = Path(__file__).resolve().parent.parent


def _load_quickstart():
    spec = importlib.util.spec_from_file_location("_laxify_bench_quickstart", _ROOT / "samples" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- (a, b) the quickstart function: `while` with an `if` inside ------------------------------
collatz = _load_quickstart().collatz


def lax_collatz(x):
    def cond(carry):
        return carry[0] > 1

    def body(carry):
        x, peak, steps = carry
        x = lax.cond(x % 2 == 0, lambda x: x // 2, lambda x: 3 * x + 1, x)
        return x, jnp.maximum(peak, x), steps + 1

    _, peak, steps = lax.while_loop(cond, body, (x, x, 0))
    return steps, peak


# -- (a) a typical ~50-line function ----------------------------------------------------------
def typical(x, w, n_iters, tol, mode):
    """A training-loop-ish function: static and traced ifs, a while, static and traced fors."""
    # Normalise the input; the mode string is static, so this `if` stays Python.
    if mode == "center":
        x = x - x.mean()
    elif mode == "scale":
        x = x / (jnp.abs(x).max() + 1e-6)
    else:
        x = x

    # A few damped fixed-point steps with a data-dependent clip.
    y = x
    for i in range(n_iters):
        z = jnp.tanh(w @ y)
        if jnp.linalg.norm(z) > 10.0:
            z = z / jnp.linalg.norm(z) * 10.0
        y = 0.5 * y + 0.5 * z

    # Refine until the residual is small, with a safety cap.
    residual = jnp.linalg.norm(jnp.tanh(w @ y) - y)
    steps = 0
    while (residual > tol) & (steps < 100):
        y = 0.9 * y + 0.1 * jnp.tanh(w @ y)
        residual = jnp.linalg.norm(jnp.tanh(w @ y) - y)
        steps += 1

    # Per-row statistics with a sign-dependent branch.
    total = jnp.zeros(())
    count = 0
    for row in w:
        s = row @ y
        if s > 0:
            total = total + s
            count += 1
        elif s < -1.0:
            total = total - 0.5 * s
        else:
            total = total + 0.0

    # Final classification.
    if total > residual:
        label = 1
    else:
        label = 0
    score = total / jnp.maximum(count, 1)
    if mode == "center":
        score = score * 2.0
    return y, score, label, steps


# -- (c) bigger workloads ---------------------------------------------------------------------
def rnn(params, xs, n):
    """An Elman RNN over n time steps (static n: lax.scan)."""
    W, U, b = params
    h = jnp.zeros(W.shape[0])
    for t in range(n):
        h = jnp.tanh(W @ h + U @ xs[t] + b)
    return h


def lax_rnn(params, xs, n):
    W, U, b = params

    def step(h, x):
        return jnp.tanh(W @ h + U @ x + b), None

    h, _ = lax.scan(step, jnp.zeros(W.shape[0]), xs[:n])
    return h


def newton(a, tol):
    """Elementwise sqrt on a large vector: a traced `while` with a damped step in an `if`."""
    x = jnp.where(a > 1.0, a, 1.0)
    err = jnp.max(jnp.abs(x * x - a))
    iters = 0
    while err > tol:
        x_new = 0.5 * (x + a / x)
        err_new = jnp.max(jnp.abs(x_new * x_new - a))
        if err_new < err:
            x = x_new
            err = err_new
        else:
            x = 0.5 * (x + x_new)
            err = jnp.max(jnp.abs(x * x - a))
        iters += 1
    return x, iters


def lax_newton(a, tol):
    x = jnp.where(a > 1.0, a, 1.0)
    err = jnp.max(jnp.abs(x * x - a))

    def cond(carry):
        return carry[1] > tol

    def body(carry):
        x, err, iters = carry
        x_new = 0.5 * (x + a / x)
        err_new = jnp.max(jnp.abs(x_new * x_new - a))

        def accept(_):
            return x_new, err_new

        def damp(_):
            xd = 0.5 * (x + x_new)
            return xd, jnp.max(jnp.abs(xd * xd - a))

        x, err = lax.cond(err_new < err, accept, damp, None)
        return x, err, iters + 1

    x, _, iters = lax.while_loop(cond, body, (x, err, 0))
    return x, iters


# -- (d) a static `for i in range(n)` loop, for first-call time vs trip count -----------------
def make_static_loop():
    """A fresh function object each call (same code object): jax's trace caches start cold."""

    def static_loop(x, n):
        acc = jnp.zeros_like(x)
        for i in range(n):
            acc = acc + jnp.sin(x * i)
        return acc

    return static_loop


def make_lax_static_loop():
    def lax_static_loop(x, n):
        def body(i, acc):
            return acc + jnp.sin(x * i)

        return lax.fori_loop(0, n, body, jnp.zeros_like(x))

    return lax_static_loop


__all__ = [
    "collatz", "lax_collatz", "typical", "rnn", "lax_rnn", "newton", "lax_newton",
    "make_static_loop", "make_lax_static_loop", "jax",
]
