"""Random functions that call themselves once per call (tail calls, a call whose value the
caller finishes, calls on several paths, values computed before the call and read after it,
a result shared by the paths after an `if` chain, tuple results), on a traced depth, against
eager Python on inputs that stop at once and after several levels: `to_static` gives eager's
value, and nearly every one is one program (transpiler/converters/recursion.py)."""

from __future__ import annotations

import itertools
import random

import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from oracle import eager_and_static, load_source

INPUTS = list(itertools.product((0, 1, 4, 9), (-1.5, 0.3, 2.0)))


def _float(rng: random.Random, names: list[str]) -> str:
    a, b = rng.choice(names), rng.choice(names)
    form = rng.choice(["{a} * 0.5 + {b}", "jnp.tanh({a}) - {b}", "{a} - 0.25 * {b}", "jnp.sin({a} + {b})"])
    return form.format(a=a, b=b)


def _base(rng: random.Random) -> str:
    return rng.choice(["n <= 0", "n < 1", "n <= 0 or x > 3.0", "n <= 1"])


def program(seed: int) -> str:
    rng = random.Random(seed)
    pair = rng.random() < 0.2  # a tuple result
    lines = ["def f(n, x):"]
    names = ["x"]
    if rng.random() < 0.5:
        lines.append(f"    t = {_float(rng, names)}")
        names.append("t")
    base = "(x, x * 2.0)" if pair else rng.choice(["x", "x + 1.0", "0.5"])
    lines += [f"    if {_base(rng)}:", f"        return {base}"]
    if rng.random() < 0.3:
        lines += ["    elif x < -1.0:", f"        return {'(x, -x)' if pair else 'x * 3.0'}"]
    step = rng.choice(["n - 1", "n - 2", "n // 2"])
    arg = _float(rng, names)
    shape = rng.choice(["tail", "finish", "assign", "two", "shared"])
    after = _float(rng, [*names, "r"])
    if pair:
        shape = rng.choice(["tail", "pair"])
    if shape == "tail":
        lines.append(f"    return f({step}, {arg})")
    elif shape == "finish":
        lines.append(f"    return jnp.clip(f({step}, {arg}) * 0.5 + {_float(rng, names)}, -9.0, 9.0)")
    elif shape == "assign":
        lines += [f"    r = f({step}, {arg})", f"    r = jnp.clip({after}, -9.0, 9.0)", "    return r"]
    elif shape == "two":
        lines += [
            f"    if {rng.choice(['x > 0.0', 'n % 2 == 1', 't < 1.0' if 't' in names else 'x < 1.0'])}:",
            f"        return f(n - 1, {arg})",
            f"    r = f({step}, {_float(rng, names)})",
            f"    return jnp.clip({after}, -9.0, 9.0)",
        ]
    elif shape == "shared":
        lines = ["def f(n, x):"]
        lines += [
            f"    if {_base(rng)}:",
            "        r = x",
            "    elif x < -1.0:",
            "        r = -x",
            "    else:",
            f"        r = f({step}, jnp.tanh(x) + 0.5)",
            "        r = r * 0.5 + x",
            "    if n % 3 == 0:",
            "        r = r - 1.0",
            "    return r",
        ]
    else:  # pair
        lines += [f"    (p, q) = f({step}, {arg})", "    return (q, jnp.clip(p - 0.5 * q, -9.0, 9.0))"]
    return "\n".join(lines) + "\n"


SEEDS = range(80)


def test_random_linear_recursion_agrees_with_python_and_converts():
    converted = 0
    for seed in SEEDS:
        text = program(seed)
        fn = load_source(text)
        static = laxify.to_static(fn)
        warned = False
        for n, x in INPUTS:
            args = (jnp.int32(n), jnp.float32(x))
            want, got, warns = eager_and_static(fn, static, args)
            warned |= warns
            assert got[0] == want[0], (text, (n, x), want, got)
            if want[0] == "error":
                assert got == want, (text, (n, x), want, got)
            else:
                np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5, err_msg=f"{text} {(n, x)}")
        converted += not warned and "_lx.recursion(" in static.source
    # Before the recursion converter none of these converted (each fell back to eager Python).
    assert converted >= 78, converted


@pytest.mark.parametrize("seed", [3, 41])
def test_the_programs_are_the_same_from_run_to_run(seed):
    assert program(seed) == program(seed)
