"""First calls: how many times laxify traces the user's code, and what the first call costs
against the same program written by hand (DESIGN §7: at most two traces per input signature,
with or without `raise`s; a first call with validation raises within 1.3x of the program
hand-written with `jax.experimental.checkify`).

    .venv/bin/python benchmarks/first_call.py [--rounds N]

Traces: a helper called in the loop body of Collatz, counted each time Python enters it
(`sys.setprofile`, which laxify cannot see), on the first call of `to_static` and of
`jax.jit(laxify.convert(f))`, without a `raise`, with a guard at the top, and with a `raise`
inside the loop.

First call: convert + trace + compile + run, JAX already warm, each round on a new copy of the
function (a new code object: nothing converted or compiled before), medians of interleaved
rounds. A 50-step RNN (`h = tanh(h @ W + x)` in `for t in range(n)`), with and without a NaN
check of the input at the top and a divergence check in the loop; hand-written: `lax.scan`
under `jax.jit`, and with the checks, `checkify.check` functionalized by `checkify.checkify`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
import warnings

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify

import laxify

# -- traces ------------------------------------------------------------------------------------


def step(x):
    return jnp.where(x % 2 == 0, x // 2, 3 * x + 1)


def collatz(x):
    steps = 0
    while x > 1:
        x = step(x)
        steps += 1
    return steps


def collatz_guard(x):
    if x < 1:
        raise ValueError(f"x must be positive, got {x}")
    steps = 0
    while x > 1:
        x = step(x)
        steps += 1
    return steps


def collatz_raise_in_loop(x):
    steps = 0
    while x > 1:
        x = step(x)
        if x > 100000:
            raise FloatingPointError(f"diverged at step {steps}")
        steps += 1
    return steps


def _fresh(fn):
    """A copy of ``fn`` with a code object of its own (no conversion or trace cached)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def traces_of(fn, route: str) -> int:
    """How many times the first call of ``fn`` (by ``route``) enters ``step``."""
    count = [0]
    code = step.__code__  # (the converted helper has a code object of its own, named as the original)

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == code.co_name and frame.f_code.co_filename == code.co_filename:
            count[0] += 1

    converted = laxify.to_static(_fresh(fn)) if route == "to_static" else jax.jit(laxify.convert(_fresh(fn)))
    sys.setprofile(profile)
    try:
        converted(jnp.int32(27))
    finally:
        sys.setprofile(None)
    return count[0]


# -- first call --------------------------------------------------------------------------------

N_STEPS = 50


def rnn(x, W, h):
    for t in range(N_STEPS):
        h = jnp.tanh(h @ W + x[t])
    return h


def rnn_checked(x, W, h):
    if jnp.any(jnp.isnan(x)):
        raise ValueError("the input holds NaN")
    for t in range(N_STEPS):
        h = jnp.tanh(h @ W + x[t])
        if jnp.linalg.norm(h) > 100.0:
            raise FloatingPointError(f"diverged at step {t}")
    return h


def rnn_by_hand():
    def run(x, W, h):
        def body(h, xt):
            return jnp.tanh(h @ W + xt), None

        return lax.scan(body, h, x)[0]

    return jax.jit(run)


def rnn_checked_by_hand():
    def run(x, W, h):
        checkify.check(jnp.logical_not(jnp.any(jnp.isnan(x))), "the input holds NaN")

        def body(h, xt):
            h, t = h
            h = jnp.tanh(h @ W + xt)
            checkify.check(jnp.linalg.norm(h) <= 100.0, "diverged at step {t}", t=t)
            return (h, t + 1), None

        return lax.scan(body, (h, 0), x)[0][0]

    checked = jax.jit(checkify.checkify(run))

    def call(*args):
        error, out = checked(*args)
        error.throw()
        return out

    return call


def _first_call(make, args) -> float:
    fn = make()
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - start


def first_calls(rounds: int) -> dict[str, float]:
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (N_STEPS, 16)) * 0.1
    W = jax.random.normal(key, (16, 16)) * 0.1
    h = jnp.zeros(16)
    args = (x, W, h)
    makers = {
        "to_static, no raise": lambda: laxify.to_static(_fresh(rnn)),
        "hand-written lax": rnn_by_hand,
        "to_static, with raises": lambda: laxify.to_static(_fresh(rnn_checked)),
        "hand-written checkify": rnn_checked_by_hand,
    }
    for make in makers.values():  # warm JAX (and laxify's imports) once
        _first_call(make, args)
    times: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(rounds):
        for name, make in makers.items():
            times[name].append(_first_call(make, args))
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    warnings.simplefilter("ignore")
    print(f"jax {jax.__version__}, Python {sys.version.split()[0]}")
    print("\nTraces of the user's code on the first call (entries of the loop body's helper):\n")
    print("| function | to_static | jax.jit(convert) |")
    print("|---|---|---|")
    for fn in (collatz, collatz_guard, collatz_raise_in_loop):
        print(f"| {fn.__name__} | {traces_of(fn, 'to_static')} | {traces_of(fn, 'convert')} |")
    medians = first_calls(rounds)
    print(f"\nFirst call of a {N_STEPS}-step RNN (convert + trace + compile + run), medians of {rounds} rounds:\n")
    print("| first call | laxify | hand-written | ratio |")
    print("|---|---|---|---|")
    pairs = (("to_static, no raise", "hand-written lax"), ("to_static, with raises", "hand-written checkify"))
    for ours, theirs in pairs:
        a, b = medians[ours], medians[theirs]
        print(f"| {ours} vs {theirs} | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
