"""Converted functions on many devices, with JAX's own machinery: NamedSharding over a Mesh
under jax.jit, and shard_map. The device count is fixed when jax starts, so the checks run in a
subprocess with 8 host CPU devices (sharded_program.py, which compares every result with the
single-device one and with eager Python)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(__file__).resolve().parent / "sharded_program.py"


def test_eight_devices_data_parallel_and_shard_map_match_single_device():
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip())
    result = subprocess.run([sys.executable, str(PROGRAM)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    lines = result.stdout.splitlines()
    assert lines[-1] == "done", result.stdout
    checks = [line for line in lines if line.startswith("ok ")]
    assert any("NamedSharding" in line for line in checks), result.stdout
    assert any("shard_map" in line for line in checks), result.stdout
    assert "FallbackWarning" not in result.stderr, result.stderr
