"""The optional on-disk conversion cache (LAXIFY_CACHE_DIR / laxify.set_cache_dir): a second
process reuses the first one's conversion and gets the same program; an edited source or a
changed global misses; a damaged file is converted again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types

import jax.numpy as jnp
import numpy as np
import pytest

import laxify
from laxify import _disk_cache, conversion

MODULE = '''
import jax.numpy as jnp

SCALE = 2.0


def grow(x, n):
    # doubles until the sum reaches n
    while x.sum() < n:
        x = x * SCALE
    if x[0] > 3:
        y = x - 1
    else:
        y = x + 1
    return y
'''

SCRIPT = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp
import laxify, laxify.conversion as C

converted = []
original = C._convert
C._convert = lambda fn, code: (converted.append(fn.__name__), original(fn, code))[1]

import user_module
static = laxify.to_static(user_module.grow)
outs = [static(jnp.ones(3), n).tolist() for n in (1.0, 10.0, 100.0)]
n_before_inspection = len(converted)
prims = sorted({e.primitive.name for e in jax.make_jaxpr(laxify.convert(user_module.grow))(jnp.ones(3), 10.0).eqns})
print(json.dumps({"converted": n_before_inspection, "outs": outs, "source": static.source,
                  "diff": str(static.diff()), "prims": prims}))
'''


def _run(folder, cache) -> dict:
    env = dict(os.environ, LAXIFY_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, str(folder / "script.py"), str(folder)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _eager(x, n, scale=2.0):
    x = np.asarray(x, np.float32)
    while x.sum() < n:
        x = x * scale
    return (x - 1 if x[0] > 3 else x + 1).tolist()


@pytest.fixture
def project(tmp_path):
    (tmp_path / "user_module.py").write_text(MODULE)
    (tmp_path / "script.py").write_text(SCRIPT)
    return tmp_path


def test_a_second_process_reuses_the_conversion(project):
    cache = project / "cache"
    first = _run(project, cache)
    assert first["converted"] == 1
    assert len(list(cache.rglob("*.lxc"))) == 1
    second = _run(project, cache)
    assert second["converted"] == 0  # read from disk: not converted again
    assert second["source"] == first["source"]
    assert second["diff"] == first["diff"]  # the parsed source is made again when asked for
    assert second["outs"] == first["outs"] == [_eager(np.ones(3), n) for n in (1.0, 10.0, 100.0)]
    assert {"while", "cond"} <= set(second["prims"])


def test_an_edited_file_or_a_changed_global_misses(project):
    cache = project / "cache"
    _run(project, cache)
    (project / "user_module.py").write_text(MODULE.replace("SCALE = 2.0", "SCALE = 3.0"))
    rescaled = _run(project, cache)  # the file's text is part of the key
    assert rescaled["converted"] == 1
    assert rescaled["outs"] == [_eager(np.ones(3), n, 3.0) for n in (1.0, 10.0, 100.0)]
    # A global defined elsewhere: a library function first, then a function of the user's,
    # whose calls the conversion routes through the runtime (same text, other program).
    (project / "helper.py").write_text("import jax.numpy as jnp\nact = jnp.abs\n")
    (project / "user_module.py").write_text(MODULE.replace("import jax.numpy as jnp", "from helper import act")
                                            .replace("return y", "return act(y)"))
    library = _run(project, cache)
    assert library["converted"] == 1
    assert _run(project, cache)["converted"] == 0
    (project / "helper.py").write_text("def act(v):\n    return -v\n")
    user = _run(project, cache)
    assert user["converted"] >= 1  # not the stored program
    assert user["outs"] == [(-np.array(_eager(np.ones(3), n))).tolist() for n in (1.0, 10.0, 100.0)]
    assert user["source"] != library["source"]


def _fresh_function(source: str, name: str, tmp_path) -> types.FunctionType:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    namespace: dict = {"__name__": name, "jnp": jnp}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]


def test_set_cache_dir_and_damaged_files(tmp_path, monkeypatch):
    monkeypatch.setattr(_disk_cache, "_directory", _disk_cache._UNSET)
    monkeypatch.delenv(_disk_cache.ENV, raising=False)
    assert _disk_cache.cache_dir() is None
    source = textwrap.dedent('''
        def halve(x):
            while x.sum() > 1:
                x = x / 2
            return x
        ''')
    cache = tmp_path / "cache"
    laxify.set_cache_dir(cache)
    try:
        fn = _fresh_function(source, "halve", tmp_path)
        expected = laxify.to_static(fn)(jnp.full(4, 3.0))
        (stored,) = cache.rglob("*.lxc")
        conversion.clear_cache()
        calls = []
        original = conversion._convert
        monkeypatch.setattr(conversion, "_convert", lambda f, c: (calls.append(f), original(f, c))[1])
        again = laxify.to_static(fn)(jnp.full(4, 3.0))
        assert calls == []  # from disk
        np.testing.assert_array_equal(again, expected)
        stored.write_bytes(b"{not json\n")
        conversion.clear_cache()
        damaged = laxify.to_static(fn)(jnp.full(4, 3.0))
        assert len(calls) == 1  # converted again (and the file rewritten)
        np.testing.assert_array_equal(damaged, expected)
        assert stored.read_bytes() != b"{not json\n"
    finally:
        laxify.set_cache_dir(None)
    assert _disk_cache.cache_dir() is None
