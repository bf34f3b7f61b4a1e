"""Small functions the tool goldens are taken on (line numbers matter: append, do not insert)."""

import jax.numpy as jnp


def helper(x):
    return x * 2


def counter(x):
    k = 0
    while x.sum() > 1.0:
        x = x / 2
        k += 1
    return x, k


def search(x):
    for i in range(10):
        if x[i % 3] > 5:
            break
        x = x + 1
    return x


def branches(x, n):
    if n > 2:
        x = x * 2
    elif x.sum() > 0:
        x = x - 1
    else:
        x = x + 1
    print(x)
    return helper(x)


def dispatch(x, mode):
    match mode:
        case 1:
            x = x + 1
        case _:
            x = x * 0
    return x


def prefix_sums(x):
    for j in range(3):
        x = x[: j + 1].sum() + x
    for row in x:
        if row > 0:
            continue
        x = x + row
    return x


def tiny(x):
    if x > 0:
        x = -x
    return x


def first_big(x, limit):
    steps = 0
    for i in range(10):
        if x[i % 3] > limit:
            break
        x = x + 1
        steps += 1
    return x, steps


def validated(x):
    if jnp.any(jnp.isnan(x)):
        raise ValueError("nan")
    for t in range(3):
        x = x * 2
        if x.sum() > 100:
            raise FloatingPointError(f"big at {t}")
    return x


def safe_ratio(a, b):
    try:
        if b == 0:
            raise ZeroDivisionError("b is zero")
        r = a / b
    except ZeroDivisionError:
        r = -1.0
    return r
