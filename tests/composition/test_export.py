"""Export round trip: `f.export(..., path=...)` in one process, `laxify.load(path)` in a fresh
one where the module that defined `f` no longer exists; a polymorphic batch dimension
(`jax.export.symbolic_shape`); gradients through the loaded program (`vjp_order`); and the
artifact is jax.export's flatbuffer serialization, loaded without pickle."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import laxify

# The user's module: a converted model with a per-example traced `while` and `if`, a
# batch-level bounded `while`, and a loss for gradients.
USER_MODULE = '''
import jax
import jax.numpy as jnp
import laxify


def refine(x):
    steps = 0
    while jnp.abs(x).sum() < 4.0:
        x = x * 1.5 + 0.1
        steps += 1
    if steps > 5:
        x = -x
    return x


@laxify.to_static
def predict(w, xs):
    h = jnp.tanh(xs @ w)
    return jax.vmap(laxify.convert(refine))(h)


@laxify.to_static
@laxify.loop_options(max_iters=16)
def loss(w, xs):
    h = xs @ w
    while jnp.abs(h).sum() < 20.0:
        h = h * 1.2 + jnp.sin(h)
    return (h ** 2).mean()
'''

# Exports from the user's module, and saves what eager Python gives (.npy, no pickle).
EXPORT = '''
import sys
import numpy as np
import jax, jax.numpy as jnp
from jax import export
import user_model

out = sys.argv[1]
rng = np.random.default_rng(0)
w = jnp.asarray(rng.normal(size=(3, 2)) * 0.8, jnp.float32)
np.save(f"{out}/w.npy", np.asarray(w))
for n in (4, 7):
    xs = jnp.asarray(rng.normal(size=(n, 3)), jnp.float32)
    np.save(f"{out}/xs{n}.npy", np.asarray(xs))
    # Eager Python, example by example: the oracle.
    h = jnp.tanh(xs @ w)
    np.save(f"{out}/eager{n}.npy", np.stack([np.asarray(user_model.refine(r)) for r in h]))
    np.save(f"{out}/inprocess{n}.npy", np.asarray(user_model.predict(w, xs)))
    np.save(f"{out}/loss{n}.npy", np.asarray(user_model.loss.python_function(w, xs)))
    np.save(f"{out}/grad{n}.npy", np.asarray(jax.grad(user_model.loss.python_function)(w, xs)))

xs4 = jnp.asarray(np.load(f"{out}/xs4.npy"))
data = user_model.predict.export(w, xs4, path=f"{out}/fixed.jax")
assert open(f"{out}/fixed.jax", "rb").read() == data
(b,) = export.symbolic_shape("b")
batch = jax.ShapeDtypeStruct((b, 3), jnp.float32)
user_model.predict.export(w, batch, path=f"{out}/poly.jax")
user_model.loss.export(w, batch, path=f"{out}/loss.jax", vjp_order=1)
print("exported")
'''

# Loads and runs in a process that cannot import the user's module, with pickle disabled.
LOAD = '''
import pickle
import sys


def refuse(*args, **kwargs):
    raise AssertionError("laxify.load used pickle")


pickle.load = pickle.loads = refuse
pickle.Unpickler = refuse
try:
    import user_model
except ImportError:
    pass
else:
    raise AssertionError("the defining module is still importable")

import numpy as np
import jax
import jax.numpy as jnp
import laxify

out = sys.argv[1]
w = jnp.asarray(np.load(f"{out}/w.npy", allow_pickle=False))
xs4 = jnp.asarray(np.load(f"{out}/xs4.npy", allow_pickle=False))

fixed = laxify.load(f"{out}/fixed.jax")
got = fixed(w, xs4)
np.testing.assert_allclose(np.asarray(got), np.load(f"{out}/eager4.npy"), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(np.asarray(got), np.load(f"{out}/inprocess4.npy"), rtol=1e-6, atol=1e-7)
print("ok fixed shape")

poly = laxify.load(open(f"{out}/poly.jax", "rb").read())
loss = laxify.load(f"{out}/loss.jax")
for n in (4, 7):
    xs = jnp.asarray(np.load(f"{out}/xs{n}.npy", allow_pickle=False))
    np.testing.assert_allclose(np.asarray(poly(w, xs)), np.load(f"{out}/eager{n}.npy"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(loss(w, xs)), np.load(f"{out}/loss{n}.npy"), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(w, xs)), np.load(f"{out}/grad{n}.npy"),
                               rtol=1e-4, atol=1e-6)
    print("ok batch", n)

# The bytes are jax.export's serialization: jax.export.deserialize reads them as they are.
exported = jax.export.deserialize(bytearray(open(f"{out}/poly.jax", "rb").read()))
assert "b" in str(exported.in_avals[1].shape), exported.in_avals
print("done")
'''


def run(script: str, cwd: Path, out: Path) -> str:
    env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    env.pop("PYTHONPATH", None)
    result = subprocess.run([sys.executable, "-c", script, str(out)], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "FallbackWarning" not in result.stderr, result.stderr
    return result.stdout


def test_export_then_load_in_a_fresh_process_without_the_source(tmp_path):
    source_dir, run_dir, out = tmp_path / "src", tmp_path / "elsewhere", tmp_path / "artifacts"
    for folder in (source_dir, run_dir, out):
        folder.mkdir()
    (source_dir / "user_model.py").write_text(USER_MODULE)
    assert run(EXPORT, source_dir, out).strip() == "exported"

    for path in source_dir.iterdir():  # the module and its bytecode cache
        if path.is_dir():
            for cached in path.iterdir():
                cached.unlink()
            path.rmdir()
        else:
            path.unlink()
    source_dir.rmdir()

    lines = run(LOAD, run_dir, out).splitlines()
    assert lines == ["ok fixed shape", "ok batch 4", "ok batch 7", "done"], lines


def test_artifact_is_jax_export_serialization_not_pickle(tmp_path):
    def clip_until(x):
        while x.max() > 1.0:
            x = x / 2
        return x

    f = laxify.to_static(clip_until)
    x = jnp.array([3.0, 0.5, 9.0], jnp.float32)
    data = f.export(x, path=tmp_path / "clip.jax")
    assert (tmp_path / "clip.jax").read_bytes() == data
    assert not data.startswith(b"\x80")  # a pickle starts with its protocol opcode
    exported = jax.export.deserialize(bytearray(data))
    assert isinstance(exported, jax.export.Exported)
    np.testing.assert_allclose(exported.call(x), clip_until(x))
    assert "while" in exported.mlir_module()
    # The loader's code path: jax.export.deserialize, no pickle module.
    assert "pickle" not in inspect.getsource(laxify.load)
    assert "pickle" not in laxify.load.__code__.co_names


def masked_row_sum(x):
    acc = jnp.zeros(x.shape[1], x.dtype)
    for i in range(x.shape[0]):  # a symbolic trip count: a traced loop
        if x[i].sum() > 0:
            acc = acc + x[i]
    return acc


def stacked_rows(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * i)
    return jnp.stack(out)


def test_symbolic_batch_dimension_as_a_loop_bound():
    (b,) = jax.export.symbolic_shape("b")
    loaded = laxify.load(laxify.to_static(masked_row_sum).export(jax.ShapeDtypeStruct((b, 2), jnp.float32)))
    for n in (1, 3, 6):
        x = jnp.asarray(np.random.default_rng(n).normal(size=(n, 2)), jnp.float32)
        np.testing.assert_allclose(loaded(x), masked_row_sum(x), rtol=1e-6)


def test_symbolic_trip_count_of_an_appending_loop_says_add_max_iters():
    """Where the function does not allow a symbolic dimension (a list of that many rows), the
    error is laxify's located one with its fix."""
    (b,) = jax.export.symbolic_shape("b")
    with pytest.raises(laxify.ConversionError, match=r"(?s)`out`.*max_iters") as info:
        laxify.to_static(stacked_rows).export(jax.ShapeDtypeStruct((b, 2), jnp.float32))
    assert f'line {stacked_rows.__code__.co_firstlineno + 2}' in str(info.value)


def test_function_without_source_warns_instead_of_crashing(tmp_path):
    """Regression: a function without source called from `python -c` code made the
    FallbackWarning itself raise while laxify warned at the `-c` line (ImportError on 3.11:
    '__main__' is not a built-in module; ValueError on 3.13: module globals without a loader).
    The function is exec'd from text no cache holds, so it has no source on every Python
    (3.13 keeps the source of `-c` code itself)."""
    script = textwrap.dedent("""
        import warnings
        import jax.numpy as jnp
        import laxify

        exec(compile("def halve(x):\\n    while x.max() > 1.0:\\n        x = x / 2\\n    return x\\n",
                     "<text kept nowhere>", "exec"))

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(laxify.to_static(halve)(jnp.array([3.0, 0.5])).tolist())
        assert caught and all(w.category is laxify.FallbackWarning for w in caught), caught
        assert "no source text" in str(caught[0].message), caught[0].message
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[0.75, 0.125]"
