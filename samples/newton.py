"""Newton's method with a data-dependent stopping rule: `while err > tol` on a traced error.

The loop becomes one `lax.while_loop`; `tol` is a Python float, so it stays a static
constant of the compiled program. Run: `python samples/newton.py`.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import laxify


@laxify.to_static
def newton_sqrt(a, tol):
    """sqrt(a) elementwise by Newton's iteration, and the number of iterations it took."""
    x = jnp.where(a > 1.0, a, 1.0)  # a start above the root converges monotonically
    err = jnp.max(jnp.abs(x * x - a))
    iters = 0
    while err > tol:
        x = 0.5 * (x + a / x)
        err = jnp.max(jnp.abs(x * x - a))
        iters += 1
    return x, iters


def main() -> None:
    print(newton_sqrt.diff())
    print()
    eager = newton_sqrt.python_function
    for a in ([1.0], [2.0, 9.0], [1e-4, 0.5, 3.0, 1e6]):
        a = jnp.asarray(a, jnp.float32)
        x, iters = newton_sqrt(a, 1e-4 * float(jnp.max(a)))
        want_x, want_iters = eager(a, 1e-4 * float(jnp.max(a)))
        assert np.allclose(x, want_x) and int(iters) == int(want_iters), (a, x, iters)
        assert np.allclose(x, np.sqrt(np.asarray(a)), rtol=1e-3, atol=1e-2)
        print(f"sqrt({np.asarray(a)}) = {np.asarray(x)} in {int(iters)} iterations   OK")


if __name__ == "__main__":
    main()
