"""Greedy and beam-search decoding with a toy recurrent language model.

Greedy decoding is `while token != EOS and length < max_len` on traced values: one
`lax.while_loop` whose output is a fixed-size token buffer plus the length. Beam search runs
`for t in range(max_len)` and `break`s once every beam has emitted EOS: one `lax.scan` whose
remaining steps are skipped. Both are checked against the same code run eagerly, on models that
stop at once, stop midway, and never stop. Run: `python samples/decoding.py [--size L] [--diff]`
(L: the longest sequence).
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

EOS, BOS, PAD = 0, 1, -1
VOCAB, HIDDEN = 12, 16


def init_model(seed: int, eos_bias: float) -> dict[str, jax.Array]:
    rng = np.random.default_rng(seed)
    model = {
        "embed": rng.normal(size=(VOCAB, HIDDEN)),
        "recur": rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "out": rng.normal(size=(HIDDEN, VOCAB)),
        "bias": np.where(np.arange(VOCAB) == EOS, eos_bias, 0.0),
    }
    return {name: jnp.asarray(value, jnp.float32) for name, value in model.items()}


def step(model, h, token):
    """One step of the model: the next hidden state and the log-probabilities of the next token."""
    h = jnp.tanh(model["embed"][token] + h @ model["recur"])
    return h, jax.nn.log_softmax(h @ model["out"] + model["bias"])


@laxify.to_static
def greedy(model, first, max_len):
    """Append the most likely token until EOS or max_len tokens; PAD after the end."""
    tokens = jnp.full(max_len, PAD)
    h = jnp.zeros(HIDDEN)
    token = first
    length = 0
    while token != EOS and length < max_len:
        h, logp = step(model, h, token)
        token = jnp.argmax(logp)
        tokens = tokens.at[length].set(token)
        length += 1
    return tokens, length


@laxify.to_static
def beam_search(model, beams, max_len):
    """The `beams` most likely sequences (and their log-probabilities) from BOS; a finished
    beam only extends with EOS at no cost. Stops early once every beam has finished."""
    seqs = jnp.full((beams, max_len), PAD)
    scores = jnp.full(beams, -jnp.inf).at[0].set(0.0)  # one live beam to start with
    h = jnp.zeros((beams, HIDDEN))
    last = jnp.full(beams, BOS)
    done = jnp.zeros(beams, bool)
    for t in range(max_len):
        h, logp = step(model, h, last)  # step works on a batch of beams as it is
        only_eos = jnp.where(jnp.arange(VOCAB) == EOS, 0.0, -jnp.inf)
        logp = jnp.where(done[:, None], only_eos, logp)
        scores, flat = jax.lax.top_k((scores[:, None] + logp).ravel(), beams)
        src, last = flat // VOCAB, flat % VOCAB
        seqs = seqs[src].at[:, t].set(last)
        h, done = h[src], done[src] | (last == EOS)
        if jnp.all(done):
            break
    return seqs, scores, t + 1


def main(argv: list[str] | None = None) -> Result:
    args = arg_parser(__doc__, default_size=12, size_help="maximum sequence length").parse_args(argv)
    result = Result("decoding")
    max_len = args.size
    if args.diff:
        print(greedy.diff())
        print(beam_search.diff())
    models = {"EOS likely": init_model(3, 4.0), "EOS sometimes": init_model(3, 1.0),
              "EOS never": init_model(3, -30.0)}

    model = models["EOS sometimes"]
    result.first = seconds(lambda: beam_search(model, 3, max_len))  # conversion, tracing, compiling
    lengths = set()
    for name, m in models.items():
        for first in (EOS, BOS):
            got = greedy(m, jnp.int32(first), max_len)
            want = greedy.python_function(m, jnp.int32(first), max_len)
            check(f"greedy, {name}, first token {first}: length {int(got[1])}", got, want)
            lengths.add("none" if int(got[1]) == 0 else "max" if int(got[1]) == max_len else "mid")
        got = beam_search(m, 3, max_len)
        want = beam_search.python_function(m, 3, max_len)
        check(f"beam search (3 beams), {name}: {int(got[2])} steps", got, want, rtol=1e-4, atol=1e-4)
        lengths.add("beam stops early" if int(got[2]) < max_len else "beam runs to the end")
    assert lengths == {"none", "mid", "max", "beam stops early", "beam runs to the end"}, lengths

    result.constructs = count_constructs(
        lambda m, s: (greedy(m, s, max_len), beam_search(m, 3, max_len)), model, jnp.int32(BOS))
    note = try_plain_jit(lambda m: greedy.python_function(m, jnp.int32(BOS), max_len), model)
    time_all(result, lambda: beam_search.python_function(model, 3, max_len),
             lambda: beam_search(model, 3, max_len), jit_note=note)
    return result


if __name__ == "__main__":
    main()
