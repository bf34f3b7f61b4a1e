"""A pole balanced on a cart: an environment's `step` written as a reinforcement-learning
environment writes it, run for thousands of environments at once.

`step` is plain Python: the physics through `math.cos`/`math.sin` of the pole angle, the force
chosen by a conditional expression on the action, a termination test chaining four comparisons
with `or`, and an `if` that resets a terminated episode. laxify turns the `if` into a
`lax.cond` (the conditional expression of two constants into a select, the `or` chain into
logical operations) and gives `math.cos` of a traced angle; `jax.vmap` batches the step (the
cond becomes a select) and a `lax.scan` runs the episode: one compiled program for every
environment and every step. Checked against the same `step` run eagerly, one
environment at a time, on environments that terminate and reset; timed in steps per second
against the same code on Python floats (one environment at a time, as a single environment
runs it) and against a hand-vectorised NumPy port (`np.where` for the `if`s).
Run: `python samples/cartpole.py [--size STEPS] [--envs N] [--diff]`.
"""

from __future__ import annotations

import math
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, fmt  # noqa: E402

GRAVITY = 9.8
CART_MASS = 1.0
POLE_MASS = 0.1
TOTAL_MASS = CART_MASS + POLE_MASS
HALF_LENGTH = 0.5  # half the pole's length
POLE_MOMENT = POLE_MASS * HALF_LENGTH
FORCE = 10.0
DT = 0.02  # seconds between steps (explicit Euler)
ANGLE_LIMIT = 12 * 2 * math.pi / 360  # the episode ends past 12 degrees ...
POSITION_LIMIT = 2.4  # ... or when the cart leaves the track


def step(state, action):
    """One time step: the next state, the reward and whether the episode ended (then the next
    state is the start of a new episode)."""
    x, x_dot, theta, theta_dot = state
    force = FORCE if action == 1 else -FORCE
    cos_t = math.cos(theta)
    sin_t = math.sin(theta)
    # The cart-pole equations of motion (Barto, Sutton and Anderson, 1983).
    temp = (force + POLE_MOMENT * theta_dot**2 * sin_t) / TOTAL_MASS
    theta_acc = (GRAVITY * sin_t - cos_t * temp) / (
        HALF_LENGTH * (4.0 / 3.0 - POLE_MASS * cos_t**2 / TOTAL_MASS))
    x_acc = temp - POLE_MOMENT * theta_acc * cos_t / TOTAL_MASS
    x = x + DT * x_dot
    x_dot = x_dot + DT * x_acc
    theta = theta + DT * theta_dot
    theta_dot = theta_dot + DT * theta_acc
    done = x < -POSITION_LIMIT or x > POSITION_LIMIT or theta < -ANGLE_LIMIT or theta > ANGLE_LIMIT
    if done:
        reward = 0.0
        x, x_dot, theta, theta_dot = 0.0, 0.0, 0.0, 0.0
    else:
        reward = 1.0
    return (x, x_dot, theta, theta_dot), reward, done


converted = laxify.convert(step)


@jax.jit
def episode(states, actions):
    """`actions[t]` (one per environment) applied step by step to every environment: the final
    states, and per step each environment's reward and end flag."""

    def one_step(s, a):
        s, reward, done = jax.vmap(converted)(s, a)
        return s, (reward, done)

    return lax.scan(one_step, states, actions)


def numpy_step(state, action):
    """The same step by hand for NumPy arrays of environments: `np.where` for the `if`s."""
    x, x_dot, theta, theta_dot = state
    force = np.where(action == 1, FORCE, -FORCE)
    cos_t, sin_t = np.cos(theta), np.sin(theta)
    temp = (force + POLE_MOMENT * theta_dot**2 * sin_t) / TOTAL_MASS
    theta_acc = (GRAVITY * sin_t - cos_t * temp) / (HALF_LENGTH * (4.0 / 3.0 - POLE_MASS * cos_t**2 / TOTAL_MASS))
    x_acc = temp - POLE_MOMENT * theta_acc * cos_t / TOTAL_MASS
    x, x_dot = x + DT * x_dot, x_dot + DT * x_acc
    theta, theta_dot = theta + DT * theta_dot, theta_dot + DT * theta_acc
    done = (np.abs(x) > POSITION_LIMIT) | (np.abs(theta) > ANGLE_LIMIT)
    state = tuple(np.where(done, 0.0, v).astype(np.float32) for v in (x, x_dot, theta, theta_dot))
    return state, np.where(done, 0.0, 1.0), done


def starts(n: int, seed: int):
    rng = np.random.default_rng(seed)
    state = tuple(rng.uniform(-0.05, 0.05, n).astype(np.float32) for _ in range(4))
    return state


def eager_episode(state, actions):
    """`step` run eagerly, one environment and one step at a time, on JAX scalars."""
    rewards, dones = [], []
    for a in actions:
        state, reward, done = step(state, a)
        rewards.append(float(reward))
        dones.append(bool(done))
    return state, rewards, dones


def steps_per_second(run, steps: int, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run())
        best = min(best, time.perf_counter() - t0)
    return steps / best


def main(argv: list[str] | None = None) -> Result:
    parser = arg_parser(__doc__, default_size=200, size_help="time steps per episode")
    parser.add_argument("--envs", type=int, default=4096, help="environments run at once (default 4096)")
    args = parser.parse_args(argv)
    result = Result("cartpole")
    if args.diff:
        print(laxify.to_static(step).diff())
    n, steps = args.envs, args.size
    states = tuple(jnp.asarray(v) for v in starts(n, 0))
    actions = jnp.asarray(np.random.default_rng(1).integers(0, 2, (steps, n)), jnp.int32)

    t0 = time.perf_counter()
    final, (rewards, dones) = jax.block_until_ready(episode(states, actions))
    result.first = time.perf_counter() - t0
    ended = int(dones.sum())
    print(f"{n} environments, {steps} steps: {ended} episodes ended, {int(rewards.sum())} reward in all")
    assert ended > 0, "random actions should end some episodes (the reset path)"

    # Eagerly, one environment at a time: those whose episodes end, and two others.
    ends = np.flatnonzero(np.asarray(dones).any(axis=0))
    chosen = sorted({*ends[:4].tolist(), 0, n - 1})
    for e in chosen:
        start = tuple(v[e] for v in states)
        want = eager_episode(start, actions[:, e])
        got = (tuple(v[e] for v in final), np.asarray(rewards[:, e]).tolist(), np.asarray(dones[:, e]).tolist())
        check(f"environment {e} ({sum(want[2])} episode ends) against eager step", got, want, rtol=1e-4, atol=1e-4)

    one = count_constructs(converted, tuple(v[0] for v in states), actions[0, 0])
    result.constructs = f"{one} a step; {count_constructs(episode, states, actions)} (vmapped)"
    timed_steps = n * steps
    result.cached = 1 / steps_per_second(lambda: episode(states, actions), timed_steps)
    # One environment at a time on Python floats, as a single environment runs `step`.
    py_state, py_actions = tuple(float(v[0]) for v in states), [int(a) for a in np.asarray(actions[:, 0])]

    def python_run():
        s = py_state
        for a in py_actions:
            s, _, _ = step(s, a)
        return s

    result.eager = 1 / steps_per_second(python_run, steps)
    np_states, np_actions = starts(n, 0), np.asarray(actions)

    def numpy_run():
        s = np_states
        for a in np_actions:
            s, _, _ = numpy_step(s, a)
        return s

    per_numpy = 1 / steps_per_second(numpy_run, timed_steps)
    print(f"timing (environment steps per second): laxify vmap+scan {1 / result.cached:,.0f}"
          f" | NumPy, vectorised by hand {1 / per_numpy:,.0f} ({per_numpy / result.cached:,.0f}x slower)"
          f" | Python floats, one environment {1 / result.eager:,.0f}; first call {fmt(result.first)}")
    result.notes.append(f"time columns are per environment step; NumPy by hand: {fmt(per_numpy)}")
    return result


if __name__ == "__main__":
    main()
