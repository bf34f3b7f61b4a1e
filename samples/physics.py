"""Bouncing balls in a box: a time-stepping simulation with collision `if`s.

Each step applies gravity, moves the balls, reflects them off the walls
(`if pos < radius: ... elif pos > size - radius:`) and resolves ball-ball collisions
(`for j in range(i + 1, n)`, `if dist < 2 * radius:`, `if approaching:`). laxify turns the time
loop over a traced number of steps into a `lax.fori_loop`, the per-ball loops into `lax.scan`s,
the wall `if`/`elif` into a `lax.switch` and the collision tests into `lax.cond`s: one compiled
program whatever the number of steps. (The loop over `i` stays an unrolled Python loop: its
index is a bound of `range(i + 1, n)`, so laxify keeps it a Python int and each inner loop a
scan with static bounds; `f.explain()` says so.) Checked against eager Python on runs with wall
bounces and ball collisions, and for energy conservation in an elastic box without gravity.
Run: `python samples/physics.py [--size STEPS] [--diff]`.
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
def simulate(pos, vel, steps, dt, gravity, radius, size, restitution):
    """Positions and velocities after `steps` steps, and the numbers of wall and ball collisions."""
    n = pos.shape[0]
    walls, hits = 0, 0
    for _ in range(steps):
        vel = vel.at[:, 1].add(-gravity * dt)
        pos = pos + dt * vel
        for i in range(n):
            for d in range(2):
                if pos[i, d] < radius:
                    pos = pos.at[i, d].set(2 * radius - pos[i, d])
                    vel = vel.at[i, d].set(-restitution * vel[i, d])
                    walls += 1
                elif pos[i, d] > size - radius:
                    pos = pos.at[i, d].set(2 * (size - radius) - pos[i, d])
                    vel = vel.at[i, d].set(-restitution * vel[i, d])
                    walls += 1
        for i in range(n):
            for j in range(i + 1, n):
                delta = pos[j] - pos[i]
                dist = jnp.sqrt(delta @ delta)
                if dist < 2 * radius:
                    normal = delta / dist
                    approach = (vel[i] - vel[j]) @ normal
                    if approach > 0:  # equal masses: exchange the normal components
                        vel = vel.at[i].add(-approach * normal).at[j].add(approach * normal)
                        hits += 1
    return pos, vel, walls, hits


def start(n: int, seed: int):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0.2, 0.8, (n, 2)).astype(np.float32)
    vel = rng.normal(0.0, 1.5, (n, 2)).astype(np.float32)
    return jnp.asarray(pos), jnp.asarray(vel)


CHUNK = 10


def side_by_side(pos, vel, steps, *params):
    """laxify and eager Python over `steps` steps, both restarted every CHUNK steps from laxify's
    state. The paths are chaotic: a rounding difference (XLA fuses what eager Python runs op by
    op) grows until some collision happens a step apart, so only short runs can agree."""
    got, want = [], []
    for done in range(0, steps, CHUNK):
        n = jnp.int32(min(CHUNK, steps - done))
        got.append(simulate(pos, vel, n, *params))
        want.append(simulate.python_function(pos, vel, n, *params))
        pos, vel = got[-1][0], got[-1][1]
    return got, want


def energy(vel) -> float:
    return float(0.5 * jnp.sum(vel * vel))


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=40, size_help="time steps").parse_args(argv)
    result = Result("physics")
    if args.diff:
        print(simulate.diff())
    steps, f32 = jnp.int32(args.size), jnp.float32  # traced: one program for every number of steps
    # Two balls on a collision course, one passing close above them without touching.
    head_on = (jnp.array([[0.3, 0.5], [0.7, 0.5], [0.5, 0.72]], f32),
               jnp.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5]], f32))
    #        (dt, gravity, radius, box size, restitution)
    elastic = (f32(0.01), f32(0.0), f32(0.1), f32(1.0), f32(1.0))
    bouncy = (f32(0.02), f32(9.8), f32(0.08), f32(1.0), f32(0.9))
    cases = [
        ("head-on, no gravity, elastic", (*head_on, steps, *elastic)),
        ("4 random balls, gravity, restitution 0.9", (*start(4, 0), steps, *bouncy)),
    ]
    timed = cases[1][1]
    result.first = seconds(lambda: simulate(*timed))  # conversion, tracing and compiling
    for label, case in cases:
        got, want = side_by_side(case[0], case[1], args.size, *case[3:])
        walls, hits = sum(int(g[2]) for g in got), sum(int(g[3]) for g in got)
        check(f"{label}: {walls} wall bounces, {hits} collisions", got, want, rtol=1e-4, atol=1e-4)
        assert walls > 0 and hits > 0, "every kind of collision should happen"
    pos, vel, _, _ = simulate(*cases[0][1])
    check("elastic box without gravity keeps the kinetic energy", energy(vel), energy(cases[0][1][1]), rtol=1e-4)
    assert float(pos.min()) >= 0.1 - 1e-6 and float(pos.max()) <= 0.9 + 1e-6, "balls stay in the box"

    result.constructs = count_constructs(simulate, *timed)
    note = try_plain_jit(lambda p, v: simulate.python_function(p, v, *timed[2:]), *timed[:2])
    time_all(result, lambda: simulate.python_function(*timed), lambda: simulate(*timed), jit_note=note)
    return result


if __name__ == "__main__":
    main()
