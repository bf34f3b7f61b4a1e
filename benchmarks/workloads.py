"""Functions measured by benchmarks/run.py: each laxify input next to the `jax.lax` program a
careful person would write by hand for it (the hand-written ones carry a `lax_` prefix).

The hand-written programs use the primitives the Python would map to (`lax.cond`/`switch` for
an `if`, `while_loop` for a `while`, `scan`/`fori_loop` for a `for`), not a different algorithm
(a vectorised `jnp.where` rewrite): the question measured is what laxify's program costs next
to the same program written by hand. ``WORKLOADS`` lists them with their inputs.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from long_function import long_function  # noqa: E402


def _load_sample(name: str):
    """A module of samples/ (its `@laxify.to_static` functions are read back as Python)."""
    samples = str(_ROOT / "samples")
    if samples not in sys.path:
        sys.path.insert(0, samples)  # the samples import their `_common`
    spec = importlib.util.spec_from_file_location(f"_laxify_bench_{name}", _ROOT / "samples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python(fn):
    """The function as written under a sample's ``@laxify.to_static``."""
    return getattr(fn, "python_function", fn)


# -- (a, b) the quickstart function: `while` with an `if` inside ------------------------------
collatz = _load_sample("quickstart").collatz


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



# -- samples ----------------------------------------------------------------------------------
newton_sqrt = _python(_load_sample("newton").newton_sqrt)
sample_rnn = _python(_load_sample("rnn").rnn)
kmeans = _python(_load_sample("kmeans").kmeans)
_integers = _load_sample("integers")
edit_distance = _python(_integers.edit_distance)
escape_time = _python(_load_sample("mandelbrot").escape_time)


def lax_newton_sqrt(a, tol):
    x = jnp.where(a > 1.0, a, 1.0)
    err = jnp.max(jnp.abs(x * x - a))

    def body(carry):
        x, _, iters = carry
        x = 0.5 * (x + a / x)
        return x, jnp.max(jnp.abs(x * x - a)), iters + 1

    x, _, iters = lax.while_loop(lambda c: c[1] > tol, body, (x, err, 0))
    return x, iters


def lax_kmeans(points, centres, max_iter):
    k = centres.shape[0]

    def cond(carry):
        return jnp.logical_not(carry[3])

    def body(carry):
        centres, assign, steps, _ = carry
        dist = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
        new_assign = jnp.argmin(dist, axis=1)
        stop = jnp.all(new_assign == assign) | (steps == max_iter)

        def update(_):
            counts = jnp.bincount(new_assign, length=k)
            sums = jax.ops.segment_sum(points, new_assign, num_segments=k)
            moved = sums / jnp.where(counts > 0, counts, 1)[:, None]
            return jnp.where((counts > 0)[:, None], moved, centres), new_assign, steps + 1

        centres, assign, steps = lax.cond(stop, lambda _: (centres, assign, steps), update, None)
        return centres, assign, steps, stop

    init = (centres, jnp.full(points.shape[0], -1), 0, False)
    centres, assign, steps, _ = lax.while_loop(cond, body, init)
    return centres, assign, steps


def lax_edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    table = jnp.zeros((n + 1, m + 1), jnp.int32)
    table = table.at[:, 0].set(jnp.arange(n + 1)).at[0, :].set(jnp.arange(m + 1))

    def row(i, table):
        def cell(j, table):
            substitute = lax.cond(a[i - 1] == b[j - 1], lambda: table[i - 1, j - 1], lambda: table[i - 1, j - 1] + 1)
            best = jnp.minimum(substitute, jnp.minimum(table[i - 1, j], table[i, j - 1]) + 1)
            return table.at[i, j].set(best)

        return lax.fori_loop(1, m + 1, cell, table)

    return lax.fori_loop(1, n + 1, row, table)[n, m]


def mandelbrot(cs, max_iter):
    """Escape times of a grid (the sample's `escape_time`, vmapped)."""
    return jax.vmap(lambda c: escape_time(jnp.zeros_like(c), c, max_iter))(cs)


def lax_mandelbrot(cs, max_iter):
    def one(c):
        def cond(carry):
            z, n = carry
            return (jnp.abs(z) <= 2.0) & (n < max_iter)

        def body(carry):
            z, n = carry
            return z * z + c, n + 1

        return lax.while_loop(cond, body, (jnp.zeros_like(c), 0))[1]

    return jax.vmap(one)(cs)


# -- synthetic workloads ----------------------------------------------------------------------
def if_heavy(x, n):
    """A piecewise map over n steps: an if/elif chain and two ifs per step, on scalars."""
    acc = jnp.zeros((), x.dtype)
    for i in range(n):
        v = x[i]
        if v > 1.0:
            y = v - 1.0
        elif v < -1.0:
            y = v + 1.0
        elif v > 0:
            y = v * v
        else:
            y = -v * v
        if acc > 10.0:
            acc = acc * 0.5
        acc = acc + y
        if y < 0:
            acc = acc - 0.01
    return acc


def lax_if_heavy(x, n):
    def step(acc, v):
        index = jnp.where(v > 1.0, 0, jnp.where(v < -1.0, 1, jnp.where(v > 0, 2, 3)))
        y = lax.switch(index, [lambda v: v - 1.0, lambda v: v + 1.0, lambda v: v * v, lambda v: -v * v], v)
        acc = lax.cond(acc > 10.0, lambda a: a * 0.5, lambda a: a, acc)
        acc = acc + y
        acc = lax.cond(y < 0, lambda a: a - 0.01, lambda a: a, acc)
        return acc, None

    return lax.scan(step, jnp.zeros((), x.dtype), x[:n])[0]


def while_heavy(x, tol):
    """Scale into range, then a damped fixed-point iteration whose steps run an inner while."""
    scale = 0
    while jnp.max(jnp.abs(x)) > 1.0:
        x = x * 0.5
        scale += 1
    iters = 0
    err = jnp.max(jnp.abs(x - jnp.cos(x)))
    while err > tol:
        y = jnp.cos(x)
        damp = 1.0
        while jnp.max(jnp.abs(y - x)) * damp > 0.25:
            damp = damp * 0.5
        x = x + damp * (y - x)
        err = jnp.max(jnp.abs(x - jnp.cos(x)))
        iters += 1
    return x, scale, iters


def lax_while_heavy(x, tol):
    x, scale = lax.while_loop(lambda c: jnp.max(jnp.abs(c[0])) > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))

    def body(carry):
        x, _, iters = carry
        y = jnp.cos(x)
        damp = lax.while_loop(lambda d: jnp.max(jnp.abs(y - x)) * d > 0.25, lambda d: d * 0.5, jnp.float32(1.0))
        x = x + damp * (y - x)
        return x, jnp.max(jnp.abs(x - jnp.cos(x))), iters + 1

    x, _, iters = lax.while_loop(lambda c: c[1] > tol, body, (x, jnp.max(jnp.abs(x - jnp.cos(x))), 0))
    return x, scale, iters


def list_accumulation(x, n):
    """n steps of a recurrence, each step's output appended to a list and stacked."""
    ys = []
    h = x
    for t in range(n):
        h = jnp.sin(h) + 0.01 * t
        ys.append(2.0 * h)
    return jnp.stack(ys), h


def lax_list_accumulation(x, n):
    def step(h, t):
        h = jnp.sin(h) + 0.01 * t
        return h, 2.0 * h

    h, ys = lax.scan(step, x, jnp.arange(n))
    return ys, h


def lax_long_function(x, w, mode):
    """``long_function`` written with jax.lax: the same twenty-two stages."""
    total = jnp.zeros(())
    halvings = 0
    for k in range(1, 23):
        a = round(0.05 + 0.01 * k, 2)
        y = jnp.tanh(w @ x + a)
        x = lax.cond(y.sum() > round(0.1 * (k % 5), 1), lambda x, y: x + a * y, lambda x, y: x - a * y, x, y)
        kind = k % 4
        if kind == 0:
            limit = 2 + k % 3
            x, halvings = lax.while_loop(lambda c: jnp.max(jnp.abs(c[0])) > limit,
                                         lambda c: (c[0] * 0.5, c[1] + 1), (x, halvings))
        elif kind == 1:
            x = lax.fori_loop(0, 2 + k % 3, lambda i, x: 0.9 * x + 0.1 * jnp.sin(x * (i + k)), x)
        elif kind == 2:
            if mode == "damped":
                x = 0.95 * x
            total = total + jnp.sum(x * a)
        else:
            def row_step(total, row):
                return lax.cond(row @ x > 0, lambda t: t + a, lambda t: t, total), None

            total = lax.scan(row_step, total, w[:4])[0]
    return x, total, halvings


# -- early exit: a `break` at step 3 of 10,000 ------------------------------------------------
EARLY_EXIT_STEPS = 10_000


def first_above(x, limit):
    """The running sum of x up to the step where it first exceeds limit, and that step."""
    total = x[0] * 0
    for i in range(EARLY_EXIT_STEPS):
        if total > limit:
            break
        total = total + x[i]
    return total, i


def lax_first_above(x, limit):
    def cond(carry):
        total, i = carry
        return (i < EARLY_EXIT_STEPS) & (total <= limit)

    def body(carry):
        total, i = carry
        return total + x[i], i + 1

    total, i = lax.while_loop(cond, body, (x[0] * 0, 0))
    return total, jnp.minimum(i, EARLY_EXIT_STEPS - 1)


# -- the registry -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    """One row of the benchmark: ``fn`` (what laxify converts, and eager Python runs) and
    ``hand`` (the hand-written jax.lax program) on the inputs ``make_args(quick)`` gives."""

    name: str
    constructs: str
    fn: Callable
    hand: Callable
    make_args: Callable[[bool], tuple]
    static_argnums: tuple[int, ...] = ()
    unrolls: bool = False  # jax.jit(fn) runs: no traced condition, Python unrolls the loops
    eager: bool = True  # fn runs eagerly (not under vmap)


def _key(i: int):
    return jax.random.PRNGKey(i)


def _rnn_args(quick):
    hidden, features, steps = (64, 16, 50) if quick else (256, 64, 1000)
    k = jax.random.split(_key(0), 3)
    params = (jax.random.normal(k[0], (hidden, hidden)) / np.sqrt(hidden),
              jax.random.normal(k[1], (hidden, features)) / np.sqrt(features), jnp.zeros(hidden))
    return params, jax.random.normal(k[2], (steps, features)), steps


def _kmeans_args(quick):
    per = 50 if quick else 2000
    means = np.array([[0.0, 0.0], [3.0, 2.0], [0.0, 3.5]], np.float32)
    noise = np.random.default_rng(0).normal(size=(3, per, 2)).astype(np.float32)
    points = jnp.asarray((means[:, None, :] + noise).reshape(-1, 2))
    return points, points[:3], 100


def _grid(quick):
    n = 32 if quick else 256
    re, im = np.meshgrid(np.linspace(-2.0, 0.6, n), np.linspace(-1.2, 1.2, n))
    return jnp.asarray((re + 1j * im).astype(np.complex64).ravel()), 50


def _edit_args(quick):
    n = 12 if quick else 40
    rng = np.random.default_rng(1)
    return jnp.asarray(rng.integers(0, 4, n), jnp.int32), jnp.asarray(rng.integers(0, 4, n + 3), jnp.int32)


def _long_args(quick):
    n = 16 if quick else 128
    k = jax.random.split(_key(3), 2)
    return jax.random.normal(k[0], (n,)), jax.random.normal(k[1], (n, n)) / np.sqrt(n), "damped"


WORKLOADS: list[Workload] = [
    Workload("quickstart collatz(27)", "while, if", collatz, lax_collatz, lambda q: (jnp.int32(27),)),
    Workload("newton sqrt (sample)", "while", newton_sqrt, lax_newton_sqrt,
             lambda q: (jnp.linspace(1e-3, 1e4, 1 << (12 if q else 20), dtype=jnp.float32), 1e-2),
             static_argnums=(1,)),
    Workload("rnn (sample)", "for (scan)", sample_rnn, lax_rnn, _rnn_args, static_argnums=(2,), unrolls=True),
    Workload("kmeans (sample)", "while True + break, for, if", kmeans, lax_kmeans, _kmeans_args,
             static_argnums=(2,)),
    Workload("edit distance (sample)", "nested for, if", edit_distance, lax_edit_distance, _edit_args),
    Workload("mandelbrot (sample, vmap)", "while with `and`, vmap", mandelbrot, lax_mandelbrot, _grid,
             static_argnums=(1,), eager=False),
    Workload("if-heavy", "for, elif chain, 2 ifs", if_heavy, lax_if_heavy,
             lambda q: (jax.random.normal(_key(1), (200 if q else 2000,)) * 2.0, 200 if q else 2000),
             static_argnums=(1,)),
    Workload("while-heavy", "3 whiles, nested", while_heavy, lax_while_heavy,
             lambda q: (jax.random.normal(_key(2), (256 if q else 65536,)) * 10.0, 1e-4), static_argnums=(1,)),
    Workload("list accumulation", "for, append, stack", list_accumulation, lax_list_accumulation,
             lambda q: (jnp.linspace(0.0, 1.0, 64 if q else 4096), 50 if q else 1000), static_argnums=(1,),
             unrolls=True),
    Workload("200-line function", "22 stages: if, while, for", long_function, lax_long_function, _long_args,
             static_argnums=(2,)),
]


__all__ = [
    "collatz", "lax_collatz", "typical", "rnn", "lax_rnn", "newton", "lax_newton",
    "make_static_loop", "make_lax_static_loop", "jax", "Workload", "WORKLOADS", "first_above",
    "lax_first_above", "EARLY_EXIT_STEPS", "long_function", "lax_long_function",
]
