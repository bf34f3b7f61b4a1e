"""Mandelbrot and Julia sets by escape time: a traced `while` per point, vectorised with `jax.vmap`.

`escape_time` is the textbook loop, `while abs(z) <= 2 and n < max_iter`, written for one point.
laxify turns it into one `lax.while_loop`; `jax.vmap` then runs it over a whole grid (the batched
loop runs until the slowest point escapes, masking the others). Plain `jax.jit` cannot trace the
loop at all. The eager oracle runs the same function point by point on a coarser grid.
Run: `python samples/mandelbrot.py [--size 200] [--png mandelbrot.png] [--diff]` (the PNG needs
matplotlib, used only when installed).
"""

from __future__ import annotations

import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, time_all, try_plain_jit  # noqa: E402


def escape_time(z, c, max_iter):
    """Iterations of z -> z*z + c before |z| > 2 (max_iter if it never escapes)."""
    n = 0
    while abs(z) <= 2.0 and n < max_iter:
        z = z * z + c
        n += 1
    return n


escape = laxify.to_static(escape_time)


@partial(jax.jit, static_argnums=1)
def mandelbrot(cs, max_iter):
    """Escape times of z0 = 0 under z -> z*z + c for every c of the grid."""
    return jax.vmap(lambda c: escape(jnp.zeros_like(c), c, max_iter))(cs.ravel()).reshape(cs.shape)


@partial(jax.jit, static_argnums=2)
def julia(zs, c, max_iter):
    """Escape times of every start z of the grid under z -> z*z + c for one fixed c."""
    return jax.vmap(lambda z: escape(z, c, max_iter))(zs.ravel()).reshape(zs.shape)


def grid(rows: int, cols: int, re: tuple[float, float], im: tuple[float, float]) -> jax.Array:
    x = np.linspace(*re, cols, dtype=np.float32)
    y = np.linspace(*im, rows, dtype=np.float32)
    return jnp.asarray(x[None, :] + 1j * y[:, None], dtype=jnp.complex64)


def eager_grid(zs, c, max_iter) -> np.ndarray:
    """The oracle: plain Python, one point at a time (c=None: Mandelbrot, c is the point)."""
    out = [int(escape_time(z if c is not None else jnp.zeros_like(z), c if c is not None else z, max_iter))
           for z in zs.ravel()]
    return np.asarray(out).reshape(zs.shape)


def ascii_art(counts: np.ndarray, max_iter: int) -> str:
    shades = " .:-=+*#%@"
    idx = (np.asarray(counts) * (len(shades) - 1)) // max_iter
    return "\n".join("".join(shades[i] for i in row) for row in idx)


def write_png(path: str, images: dict[str, np.ndarray]) -> None:
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no PNG written to {path}")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(images), figsize=(6 * len(images), 4))
    for ax, (title, img) in zip(axes, images.items()):
        ax.imshow(img, cmap="magma", origin="lower")
        ax.set_title(title)
        ax.axis("off")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> Result:
    parser = arg_parser(__doc__, default_size=24, size_help="grid rows (columns: 1.5x)")
    parser.add_argument("--png", metavar="PATH", help="write both images to PATH (needs matplotlib)")
    parser.add_argument("--max-iter", type=int, default=40)
    args = parser.parse_args(argv)
    result = Result("mandelbrot")
    rows, cols, max_iter = args.size, args.size * 3 // 2, args.max_iter
    c_julia = jnp.complex64(-0.8 + 0.156j)

    if args.diff:
        print(escape.diff())

    # The oracle on a coarse grid: it holds points that escape at once (|c| > 2), later, and never.
    coarse_m = grid(rows // 3, cols // 3, (-2.5, 1.0), (-1.25, 1.25))
    coarse_j = grid(rows // 3, cols // 3, (-1.6, 1.6), (-1.0, 1.0))
    want_m = eager_grid(coarse_m, None, max_iter)
    want_j = eager_grid(coarse_j, c_julia, max_iter)
    assert (want_m == 1).any() and ((want_m > 1) & (want_m < max_iter)).any() and (want_m == max_iter).any()
    check(f"mandelbrot {coarse_m.shape} laxify+vmap vs eager per point", mandelbrot(coarse_m, max_iter), want_m)
    check(f"julia c={complex(c_julia):.3f} {coarse_j.shape} vs eager per point",
          julia(coarse_j, c_julia, max_iter), want_j)

    # The full grid, against a vectorised NumPy version of the same recurrence (a point on the
    # boundary may escape one step apart where NumPy and XLA round differently).
    full = grid(rows, cols, (-2.5, 1.0), (-1.25, 1.25))
    image = np.asarray(mandelbrot(full, max_iter))
    z, ref = np.zeros_like(np.asarray(full)), np.zeros(full.shape, int)
    for _ in range(max_iter):
        alive = np.abs(z) <= 2.0
        z = np.where(alive, z * z + np.asarray(full), z)
        ref += alive
    same = float(np.mean(image == ref))
    check(f"mandelbrot {full.shape} vs a vectorised NumPy loop: {same:.2%} equal", same >= 0.999, True)
    result.constructs = count_constructs(mandelbrot, coarse_m, max_iter)
    print()
    print(ascii_art(image[:: max(1, rows // 16), :: max(1, cols // 48)], max_iter))
    print()

    # Timings on the coarse grid (the eager oracle is point by point).
    fresh = grid(rows // 3, cols // 3, (-1.6, 1.6), (-1.0, 1.0))
    note = try_plain_jit(lambda z, c: escape_time(z, c, max_iter), jnp.complex64(0), jnp.complex64(0.1))
    # A new static max_iter, so that the first laxify call traces and compiles.
    time_all(result, lambda: eager_grid(fresh, c_julia, max_iter + 1),
             lambda: julia(fresh, c_julia, max_iter + 1), jit_note=note)
    if args.png:
        julia_image = np.asarray(julia(grid(rows, cols, (-1.6, 1.6), (-1.0, 1.0)), c_julia, max_iter))
        write_png(args.png, {"Mandelbrot": image, f"Julia c={complex(c_julia):.3f}": julia_image})
    return result


if __name__ == "__main__":
    main()
