"""Run every sample at its small size in one process and print one line per sample: the
control flow laxify produced, agreement with eager Python, and the speed-up of a cached laxify
call over eager Python. The last step of `make demo`; exits non-zero when a sample disagrees.
Run: `python samples/_summary.py [--only NAME ...]`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

import jax
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Result, count_constructs, fmt, seconds  # noqa: E402


# The first samples have no `main(argv) -> Result`: the summary checks and times their function
# on one input that takes the loops (their own runs check every path).
def _quickstart(module) -> Result:
    import jax.numpy as jnp
    import laxify

    f, x = laxify.to_static(module.collatz), jnp.int32(27)
    return _measure("quickstart", f, (x,), lambda: module.collatz(x))


def _newton(module) -> Result:
    import jax.numpy as jnp

    a = jnp.asarray([1e-4, 0.5, 3.0, 1e6], jnp.float32)
    f = module.newton_sqrt
    return _measure("newton", f, (a, 100.0), lambda: f.python_function(a, 100.0))


def _rnn(module) -> Result:
    import jax
    import numpy as np

    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    params = (jax.random.normal(keys[0], (16, 16)) / np.sqrt(16), jax.random.normal(keys[1], (16, 4)),
              jax.numpy.zeros(16))
    xs = jax.random.normal(keys[2], (50, 4))
    f = module.rnn
    return _measure("rnn", f, (params, xs, 50), lambda: f.python_function(params, xs, 50))


def _adaptive_models(module) -> Result:
    import jax
    import laxify

    # The Equinox model: a pytree, so that it can also be traced by count_constructs (an NNX
    # module cannot be passed into an outer jax trace).
    model = module.EqxAdaptive(3, 8, key=jax.random.key(0))
    x = jax.random.normal(jax.random.key(7), (16, 3))
    target = jax.numpy.sin(x.sum(axis=1))
    f = laxify.to_static(module.loss_fn)
    return _measure("adaptive_models", f, (model, x, target), lambda: module.loss_fn(model, x, target))


def _measure(name: str, f, args: tuple, eager: Callable) -> Result:
    """The summary of a sample without `main(argv) -> Result`: its function on one input."""
    result = Result(name)
    result.first = seconds(lambda: f(*args))
    result.ok = all(np.allclose(g, w, rtol=1e-5, atol=1e-6) for g, w in
                    zip(jax.tree_util.tree_leaves(f(*args)), jax.tree_util.tree_leaves(eager())))
    result.constructs = count_constructs(f, *args)
    result.eager = seconds(eager, 3)  # the median: not the run that compiles the ops
    result.cached = seconds(lambda: f(*args), 20)
    return result


ADAPTERS = {"quickstart": _quickstart, "newton": _newton, "rnn": _rnn, "adaptive_models": _adaptive_models}


def run_one(name: str) -> tuple[Result, str]:
    """Run one sample with its output hidden; its result, and OK, DIFFERS or ERROR."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            module = importlib.import_module(name)
            if name in ADAPTERS:
                result = ADAPTERS[name](module)
            else:
                result = module.main([])
    except SystemExit as e:  # a disagreement (samples exit non-zero with both sides)
        return Result(name, ok=False, notes=[str(e.code)]), "DIFFERS"
    except Exception:
        return Result(name, ok=False, notes=[traceback.format_exc()]), "ERROR"
    return result, "OK" if result.ok else "DIFFERS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="sample names (default: all)")
    args = parser.parse_args(argv)
    names = args.only or [p.stem for p in sorted(HERE.glob("*.py")) if not p.stem.startswith("_")]
    order = [n for n in ADAPTERS if n in names] + [n for n in names if n not in ADAPTERS]

    print(f"\nRunning {len(order)} samples at their small sizes ...\n")
    header = (f"{'sample':16s} {'lax control flow in the program':34s} {'vs eager':9s}"
              f" {'eager':>9s} {'cached':>9s} {'speed-up':>9s}")
    print(header)
    print("-" * len(header))
    failed = []
    t_all = time.perf_counter()
    for name in order:
        r, agree = run_one(name)
        speedup = f"{r.speedup:,.0f}x" if r.speedup else "-"
        print(f"{name:16s} {r.constructs or '-':34s} {agree:9s} {fmt(r.eager):>9s} {fmt(r.cached):>9s} {speedup:>9s}",
              flush=True)
        if not r.ok:
            failed.append(r)
    print(f"\n{len(order) - len(failed)}/{len(order)} samples agree with eager Python"
          f" ({time.perf_counter() - t_all:.0f} s). `python samples/<name>.py --diff` shows what laxify changed.")
    for r in failed:
        print(f"\n{r.name}:\n" + "\n".join(r.notes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
