"""Integer algorithms: Euclid's GCD, Collatz lengths, a prime sieve and edit distance.

- `gcd`: `while b != 0` on traced integers, one `lax.while_loop`; `jax.vmap` runs it on many pairs.
- `collatz_length`: a `while` with an `if`/`else` inside, vmapped over 1..N.
- `sieve`: `for p in range(2, ...)` whose index is a slice bound (`p * p::p`) stays an unrolled
  Python loop (the slice needs a Python int); the `if is_prime[p]` inside becomes a `lax.cond`.
- `edit_distance`: the Levenshtein dynamic-programming table, two nested `for` loops with an
  `if` on the characters: a `lax.scan` in a `lax.scan` around a `lax.cond`, so compile time does
  not grow with the strings' lengths.
Run: `python samples/integers.py [--size N] [--diff]` (N: the range of the Collatz lengths and the
sieve; the random strings are N / 5 long).
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

import laxify

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Result, arg_parser, check, count_constructs, seconds, time_all, try_plain_jit  # noqa: E402


@laxify.to_static
def gcd(a, b):
    """The greatest common divisor of non-negative a and b (Euclid)."""
    while b != 0:
        a, b = b, a % b
    return a


@laxify.to_static
def collatz_length(x):
    """Steps from x down to 1 under x -> x / 2 (even), 3x + 1 (odd)."""
    steps = 0
    while x > 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps


@laxify.to_static
def sieve(n):
    """is_prime[k] for k = 0..n-1 (Eratosthenes); n is a Python int."""
    is_prime = jnp.ones(n, bool).at[:2].set(False)
    for p in range(2, int(n ** 0.5) + 1):
        if is_prime[p]:
            is_prime = is_prime.at[p * p::p].set(False)
    return is_prime


@laxify.to_static
def edit_distance(a, b):
    """Levenshtein distance between the integer sequences a and b."""
    n, m = a.shape[0], b.shape[0]
    table = jnp.zeros((n + 1, m + 1), jnp.int32)
    table = table.at[:, 0].set(jnp.arange(n + 1)).at[0, :].set(jnp.arange(m + 1))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                substitute = table[i - 1, j - 1]
            else:
                substitute = table[i - 1, j - 1] + 1
            best = jnp.minimum(substitute, jnp.minimum(table[i - 1, j], table[i, j - 1]) + 1)
            table = table.at[i, j].set(best)
    return table[n, m]


def encode(word: str) -> jax.Array:
    return jnp.array([ord(ch) for ch in word], jnp.int32)


def levenshtein(a: str, b: str) -> int:
    """A reference in plain Python on strings."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=30,
                      size_help="range of the Collatz lengths and the sieve; 5x the string length").parse_args(argv)
    result = Result("integers")
    if args.diff:
        for fn in (gcd, collatz_length, sieve, edit_distance):
            print(fn.diff())
    i32 = jnp.int32
    n = args.size

    rng = np.random.default_rng(1)
    ra, rb = (jnp.asarray(rng.integers(0, 4, max(4, n // 5)), jnp.int32) for _ in range(2))
    result.first = seconds(lambda: edit_distance(ra, rb))  # conversion, tracing and compiling

    for a, b in ((48, 18), (17, 5), (7, 0), (0, 9), (0, 0)):
        check(f"gcd({a}, {b}) = {int(gcd(i32(a), i32(b)))}", gcd(i32(a), i32(b)), gcd.python_function(i32(a), i32(b)))
    pairs = np.random.default_rng(0).integers(0, 10_000, (2, 64)).astype(np.int32)
    check("gcd of 64 random pairs (jax.vmap) vs numpy.gcd",
          jax.vmap(gcd)(jnp.asarray(pairs[0]), jnp.asarray(pairs[1])), np.gcd(pairs[0], pairs[1]))

    for x in (1, 2, 7, 27):
        check(f"collatz_length({x}) = {int(collatz_length(i32(x)))}",
              collatz_length(i32(x)), collatz_length.python_function(i32(x)))
    lengths = jax.vmap(collatz_length)(jnp.arange(1, n + 1, dtype=jnp.int32))
    check(f"collatz lengths of 1..{n} (jax.vmap) vs plain ints",
          lengths, np.array([collatz_length.python_function(x) for x in range(1, n + 1)]))

    check(f"sieve({n}) vs eager", sieve(n), sieve.python_function(n))
    primes = [k for k in range(2, n) if all(k % d for d in range(2, k))]
    check(f"sieve({n}): {len(primes)} primes, as trial division finds", np.flatnonzero(sieve(n)), np.array(primes))

    for a, b in (("kitten", "sitting"), ("same", "same")):
        got = edit_distance(encode(a), encode(b))
        want = edit_distance.python_function(encode(a), encode(b))
        check(f"edit_distance({a!r}, {b!r}) = {int(got)}", got, want)
        assert int(got) == levenshtein(a, b)

    a, b = ra, rb
    result.constructs = count_constructs(lambda a, b: (gcd(a[0], b[0]), collatz_length(a[0]), sieve(n),
                                                      edit_distance(a, b)), a, b)
    note = try_plain_jit(edit_distance.python_function, a, b)
    want = edit_distance.python_function(a, b)
    check(f"edit distance of two random length-{a.shape[0]} sequences", edit_distance(a, b), want)
    time_all(result, lambda: edit_distance.python_function(a, b), lambda: edit_distance(a, b), jit_note=note)
    return result


if __name__ == "__main__":
    main()
