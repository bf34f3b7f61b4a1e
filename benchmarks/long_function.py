"""A 200-line function for benchmarks/run.py: twenty-two stages, each a traced `if` and then a
traced `while`, a static `for` (a scan), a static `if` on a string, or a `for` over rows with a
traced `if` inside. ``lax_long_function`` in workloads.py is the same program written with
``jax.lax`` (one stage at a time, from the same constants)."""

import jax.numpy as jnp


def long_function(x, w, mode):
    """Twenty-two stages of a made-up iterative map; returns the state, a total and a count."""
    total = jnp.zeros(())
    halvings = 0
    # stage 1
    y = jnp.tanh(w @ x + 0.06)
    if y.sum() > 0.1:
        x = x + 0.06 * y
    else:
        x = x - 0.06 * y
    for i in range(3):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 1))
    # stage 2
    y = jnp.tanh(w @ x + 0.07)
    if y.sum() > 0.2:
        x = x + 0.07 * y
    else:
        x = x - 0.07 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.07)
    # stage 3
    y = jnp.tanh(w @ x + 0.08)
    if y.sum() > 0.3:
        x = x + 0.08 * y
    else:
        x = x - 0.08 * y
    for row in w[:4]:
        if row @ x > 0:
            total = total + 0.08
    # stage 4
    y = jnp.tanh(w @ x + 0.09)
    if y.sum() > 0.4:
        x = x + 0.09 * y
    else:
        x = x - 0.09 * y
    while jnp.max(jnp.abs(x)) > 3.0:
        x = x * 0.5
        halvings += 1
    # stage 5
    y = jnp.tanh(w @ x + 0.1)
    if y.sum() > 0.0:
        x = x + 0.1 * y
    else:
        x = x - 0.1 * y
    for i in range(4):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 5))
    # stage 6
    y = jnp.tanh(w @ x + 0.11)
    if y.sum() > 0.1:
        x = x + 0.11 * y
    else:
        x = x - 0.11 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.11)
    # stage 7
    y = jnp.tanh(w @ x + 0.12)
    if y.sum() > 0.2:
        x = x + 0.12 * y
    else:
        x = x - 0.12 * y
    for row in w[:4]:
        if row @ x > 0:
            total = total + 0.12
    # stage 8
    y = jnp.tanh(w @ x + 0.13)
    if y.sum() > 0.3:
        x = x + 0.13 * y
    else:
        x = x - 0.13 * y
    while jnp.max(jnp.abs(x)) > 4.0:
        x = x * 0.5
        halvings += 1
    # stage 9
    y = jnp.tanh(w @ x + 0.14)
    if y.sum() > 0.4:
        x = x + 0.14 * y
    else:
        x = x - 0.14 * y
    for i in range(2):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 9))
    # stage 10
    y = jnp.tanh(w @ x + 0.15)
    if y.sum() > 0.0:
        x = x + 0.15 * y
    else:
        x = x - 0.15 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.15)
    # stage 11
    y = jnp.tanh(w @ x + 0.16)
    if y.sum() > 0.1:
        x = x + 0.16 * y
    else:
        x = x - 0.16 * y
    for row in w[:4]:
        if row @ x > 0:
            total = total + 0.16
    # stage 12
    y = jnp.tanh(w @ x + 0.17)
    if y.sum() > 0.2:
        x = x + 0.17 * y
    else:
        x = x - 0.17 * y
    while jnp.max(jnp.abs(x)) > 2.0:
        x = x * 0.5
        halvings += 1
    # stage 13
    y = jnp.tanh(w @ x + 0.18)
    if y.sum() > 0.3:
        x = x + 0.18 * y
    else:
        x = x - 0.18 * y
    for i in range(3):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 13))
    # stage 14
    y = jnp.tanh(w @ x + 0.19)
    if y.sum() > 0.4:
        x = x + 0.19 * y
    else:
        x = x - 0.19 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.19)
    # stage 15
    y = jnp.tanh(w @ x + 0.2)
    if y.sum() > 0.0:
        x = x + 0.2 * y
    else:
        x = x - 0.2 * y
    for row in w[:4]:
        if row @ x > 0:
            total = total + 0.2
    # stage 16
    y = jnp.tanh(w @ x + 0.21)
    if y.sum() > 0.1:
        x = x + 0.21 * y
    else:
        x = x - 0.21 * y
    while jnp.max(jnp.abs(x)) > 3.0:
        x = x * 0.5
        halvings += 1
    # stage 17
    y = jnp.tanh(w @ x + 0.22)
    if y.sum() > 0.2:
        x = x + 0.22 * y
    else:
        x = x - 0.22 * y
    for i in range(4):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 17))
    # stage 18
    y = jnp.tanh(w @ x + 0.23)
    if y.sum() > 0.3:
        x = x + 0.23 * y
    else:
        x = x - 0.23 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.23)
    # stage 19
    y = jnp.tanh(w @ x + 0.24)
    if y.sum() > 0.4:
        x = x + 0.24 * y
    else:
        x = x - 0.24 * y
    for row in w[:4]:
        if row @ x > 0:
            total = total + 0.24
    # stage 20
    y = jnp.tanh(w @ x + 0.25)
    if y.sum() > 0.0:
        x = x + 0.25 * y
    else:
        x = x - 0.25 * y
    while jnp.max(jnp.abs(x)) > 4.0:
        x = x * 0.5
        halvings += 1
    # stage 21
    y = jnp.tanh(w @ x + 0.26)
    if y.sum() > 0.1:
        x = x + 0.26 * y
    else:
        x = x - 0.26 * y
    for i in range(2):
        x = 0.9 * x + 0.1 * jnp.sin(x * (i + 21))
    # stage 22
    y = jnp.tanh(w @ x + 0.27)
    if y.sum() > 0.2:
        x = x + 0.27 * y
    else:
        x = x - 0.27 * y
    if mode == "damped":
        x = 0.95 * x
    total = total + jnp.sum(x * 0.27)
    return x, total, halvings
