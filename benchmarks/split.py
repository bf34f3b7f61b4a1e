"""Split fallback (docs/semantics.md "Split fallback"): a function with a traced `while` of N
iterations and one statement that must stay Python (a string built from a traced value, or a
list grown to a traced length), before, after and inside the loop; and the string before a
traced `if` whose branch does a few operations, then the loop ("str, if").

Per case, the median time of one call (result waited for) of
- split: `to_static` as it runs now (each loop, and each traced `if`'s taken branch that does
  some operation, compiled as a program of its own; the rest eager);
- eager: the whole-function fallback without splitting (the converted function run
  eagerly, op by op: every iteration of the loop is Python dispatching JAX ops);
- compiled: `to_static` of the same function without the Python statement (one program);
- stmt: the statement's own Python cost, alone, on concrete values;
and the first call of the split function (its failed trace, the eager run, the compile of the
loop) against the first call of the compiled one. Inside the loop: an outer loop of 3
iterations holds the statement and the N-iteration loop. Then a second table: a split function
whose traced `if` takes a branch of k operations: as it runs now, with the branch always
compiled, and with it run eagerly as before (the figures behind `runtime/split.py`'s LIGHT_OPS:
which branches are worth a program).

A third table: a statement that needs Python (`float()`, `int()`, `str()`, `.item()`, a
string-valued conditional expression) after a compiled loop of some weight, against the same
function without it, with the statement's own eager cost and what the split adds beyond both.

Run: `.venv/bin/python benchmarks/split.py` (`--quick`: N = 100 only, as `make bench` runs it).
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings

import jax
import jax.numpy as jnp

import laxify
from laxify.runtime.split import splitting

# -- the functions: statement before / after / inside, and without it --------------------------


def str_before(x, n):
    s = str(int(x * 1000))
    acc, i = x, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    return acc, s


def str_after(x, n):
    acc, i = x, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    s = str(int(acc * 1000))
    return acc, s


def str_inside(x, n):
    s = ""
    acc, k = x, 0
    while k < 3:
        i = 0
        while i < n:
            acc = acc * 0.999 + 0.001
            i += 1
        s = s + str(int(acc * 1000))
        k += 1
    return acc, s


def str_branch(x, n):
    s = str(int(x * 1000))
    if x > 0:  # a traced `if` whose branch does a few operations
        y = jnp.sin(x) * 0.5 + x * x
        y = jnp.where(y > 1.0, y - 1.0, y) * 0.25 + 0.1
    else:
        y = -x
    acc, i = y, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    return acc, s


def plain_branch(x, n):
    if x > 0:
        y = jnp.sin(x) * 0.5 + x * x
        y = jnp.where(y > 1.0, y - 1.0, y) * 0.25 + 0.1
    else:
        y = -x
    return plain(y, n)


def plain(x, n):
    acc, i = x, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    return acc


def plain_inside(x, n):
    acc, k = x, 0
    while k < 3:
        i = 0
        while i < n:
            acc = acc * 0.999 + 0.001
            i += 1
        k += 1
    return acc


def list_before(x, n, m):
    out = []
    j = 0
    while j < m:
        out.append(x * j)
        j += 1
    acc, i = x, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    return acc, out


def list_after(x, n, m):
    acc, i = x, 0
    while i < n:
        acc = acc * 0.999 + 0.001
        i += 1
    out = []
    j = 0
    while j < m:
        out.append(acc * j)
        j += 1
    return acc, out


def list_inside(x, n, m):
    out = []
    acc, k = x, 0
    while k < 3:
        i = 0
        while i < n:
            acc = acc * 0.999 + 0.001
            i += 1
        j = 0
        while j < m:
            out.append(acc * j)
            j += 1
        k += 1
    return acc, out


def plain_m(x, n, m):
    return plain(x, n)


def plain_inside_m(x, n, m):
    return plain_inside(x, n)


def stmt_str(x):
    return str(int(x * 1000))


def stmt_list(x, m):
    out = []
    j = 0
    while j < m:
        out.append(x * j)
        j += 1
    return out


CASES = [
    # name, function, statement-free function, statement alone, takes m
    ("str before", str_before, plain, 1, False),
    ("str after", str_after, plain, 1, False),
    ("str inside", str_inside, plain_inside, 3, False),
    ("str, if", str_branch, plain_branch, 1, False),
    ("list before", list_before, plain_m, 1, True),
    ("list after", list_after, plain_m, 1, True),
    ("list inside", list_inside, plain_inside_m, 3, True),
]


def _time(fn, args, budget: float, least: int = 3, most: int = 201) -> float:
    times = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < most):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _first_call(make, args) -> float:
    fn = make()
    t = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - t


def _eager_whole(static_fn):
    """Today's whole-function fallback: the converted function run eagerly, no splitting."""
    converted = static_fn.converted()

    def run(*args):
        with splitting(None):  # (no plan: every loop is the dispatcher's Python loop)
            return converted(*args)

    return run


# -- a statement that needs Python after a compiled loop of some weight -------------------------


def _settle(h, n):
    i = 0
    while i < n:
        h = jnp.tanh(h * 0.9 + 0.1)
        i += 1
    return h


def then_float(h, n):
    h = _settle(h, n)
    return h, float(h.mean())


def then_int(h, n):
    h = _settle(h, n)
    return h, int(h.sum())


def then_str(h, n):
    h = _settle(h, n)
    return h, str(h.mean())


def then_item(h, n):
    h = _settle(h, n)
    return h, h.mean().item()


def then_label(h, n):
    h = _settle(h, n)
    label = "big" if h.mean() > 0.5 else "small"
    return h, label


def then_nothing(h, n):
    h = _settle(h, n)
    return h, h.mean()


def _alone(statement):
    """The statement of a ``then_*`` function run by itself on a ready array, eagerly."""
    return {
        then_float: lambda h: float(h.mean()),
        then_int: lambda h: int(h.sum()),
        then_str: lambda h: str(h.mean()),
        then_item: lambda h: h.mean().item(),
        then_label: lambda h: "big" if h.mean() > 0.5 else "small",
    }[statement]


def statement_table(quick: bool) -> None:
    """Per statement after a loop of n steps over a state of `width` floats: the function as
    `to_static` runs it (split where the statement needs Python: the loop compiled, the
    statement eager), the same function without the statement (one program), their ratio, the
    statement alone on a ready array, and what the split adds beyond the two (laxify's own
    dispatch)."""
    sizes = [(256, 1000)] if quick else [(1, 10_000), (256, 1000), (256, 10_000)]
    print()
    print("| width | n | statement | split? | function us | without us | ratio | statement alone us | added us |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for width, n in sizes:
        h, count = jnp.linspace(-1.0, 1.0, width, dtype=jnp.float32), jnp.int32(n)
        without = laxify.to_static(then_nothing)
        without(h, count)
        ready = jax.block_until_ready(_settle(h, 3))
        for fn in (then_float, then_int, then_str, then_item, then_label):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                static = laxify.to_static(fn)
                static(h, count)
            split = any(issubclass(w.category, laxify.FallbackWarning) for w in caught)
            alone = _alone(fn)
            # (side by side, in turns: the machine's drift falls on both)
            t_fn, t_without, t_alone = [], [], []
            for _ in range(5):
                t_fn.append(_time(static, (h, count), 0.2))
                t_without.append(_time(without, (h, count), 0.2))
                t_alone.append(_time(lambda: alone(ready), (), 0.1))
            a, b, c = (statistics.median(t) * 1e6 for t in (t_fn, t_without, t_alone))
            added = a - b - c if split else a - b
            print(f"| {width} | {n:,} | {fn.__name__[5:]} | {'yes' if split else 'no'} | {a:.0f} | {b:.0f} | "
                  f"{a / b:.2f} | {c:.0f} | {added:.0f} |")


# -- a traced `if` whose branch does k operations: its branch compiled, or run eagerly ---------


@laxify.do_not_convert
def _ops(x, k):
    for _ in range(k):  # (Python as written: k operations in a row)
        x = x * 0.999
    return x


def branch_ops(x, k):
    tag = str(int(x))  # the function is split
    if x > 0:
        x = _ops(x, k)
    return x, tag


def branch_table() -> None:
    """Per k, in us a call: the split function as it runs now (its branch compiled from
    ``LIGHT_OPS`` operations on, else run as it is); with every branch compiled
    (``LIGHT_OPS = 0``); with the branch run eagerly as before (``run_branch`` replaced by the
    plain call of the branch)."""
    from laxify.runtime import split as split_module

    x = jnp.float32(0.5)
    print()
    print("| branch operations | as now us | compiled us | eager as before us |")
    print("|---:|---:|---:|---:|")
    compiled, light = split_module.run_branch, split_module.LIGHT_OPS
    variants = [(compiled, light), (compiled, 0), (lambda fn, operands, site: fn(*operands), light)]
    try:
        for k in (0, 1, 2, 4, 8, 16):
            times = []
            for run_branch, light_ops in variants:
                split_module.run_branch, split_module.LIGHT_OPS = run_branch, light_ops
                fn = laxify.to_static(branch_ops, fallback="silent", static_argnums=1)
                fn(x, k)
                times.append(_time(fn, (x, k), 0.5))
            print(f"| {k} | " + " | ".join(f"{t * 1e6:.1f}" for t in times) + " |")
    finally:
        split_module.run_branch, split_module.LIGHT_OPS = compiled, light


def _ms(t: float) -> str:
    return f"{t * 1e3:.3f}" if t < 0.1 else f"{t * 1e3:.1f}"


def main(argv) -> None:
    quick = "--quick" in argv
    ns = [100] if quick else [100, 10_000]
    x, m = jnp.float32(0.5), jnp.int32(5)
    rows = []
    warnings.simplefilter("ignore", laxify.FallbackWarning)
    for n in ns:
        for name, fn, free, repeats, takes_m in CASES:
            args = (x, jnp.int32(n), m) if takes_m else (x, jnp.int32(n))
            split = laxify.to_static(fn, fallback="silent")
            compiled = laxify.to_static(free)
            first_split = _first_call(lambda: laxify.to_static(fn, fallback="silent"), args)
            first_compiled = _first_call(lambda: laxify.to_static(free), args)
            split(*args)
            compiled(*args)
            eager = _eager_whole(split)
            t_split = _time(split, args, 1.0)
            t_compiled = _time(compiled, args, 1.0)
            t_eager = _time(eager, args, 2.0 if n <= 100 else 3.0, least=3, most=21)
            stmt = (lambda: stmt_list(x, m)) if takes_m else (lambda: stmt_str(x))
            t_stmt = _time(lambda: [stmt() for _ in range(repeats)], (), 0.5)
            rows.append((n, name, t_split, t_eager, t_compiled, t_stmt, first_split, first_compiled))
            print(f"  done: N={n} {name}", file=sys.stderr, flush=True)
    print("| N | case | split ms | eager ms | compiled ms | stmt ms | split/eager | split/compiled "
          "| split/(compiled+stmt) | 1st call split ms | 1st call compiled ms |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, name, ts, te, tc, tst, fs, fc in rows:
        print(f"| {n:,} | {name} | {_ms(ts)} | {_ms(te)} | {_ms(tc)} | {_ms(tst)} | {ts / te:.4f} | "
              f"{ts / tc:.2f} | {ts / (tc + tst):.2f} | {_ms(fs)} | {_ms(fc)} |")
    statement_table(quick)
    # A tree whose split run compiles no `if` branch has no run_branch: no second table there.
    if hasattr(__import__("laxify.runtime.split").runtime.split, "run_branch"):
        branch_table()


if __name__ == "__main__":
    main(sys.argv[1:])
