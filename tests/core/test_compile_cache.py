"""The persistent compilation cache switch (core/compile_cache.py): on in the named folder,
off by the environment variable, and a second process loads what the first compiled."""
from __future__ import annotations

import os
import subprocess
import sys

import jax

from jaxmedusa.core import compile_cache, executable_cache

CHILD = """
import time, jax, jax.numpy as jnp
import jaxmedusa
from jaxmedusa.core.compile_cache import enable
enable()
f = jax.jit(lambda x: jnp.sum(jnp.sin(jnp.outer(x, x)) @ jnp.cos(x)))
print(float(f(jnp.arange(300.0))))
"""


def test_env_switches_it_off(monkeypatch, tmp_path):
    monkeypatch.setenv(compile_cache.ENV, "0")
    assert compile_cache.enable(tmp_path / "c") is None
    assert not (tmp_path / "c").exists()


def test_second_process_reads_what_the_first_wrote(tmp_path):
    """Two fresh interpreters with the cache in tmp_path: the first writes an entry, the
    second finds it (the folder's file list is unchanged by the second run: a hit writes
    nothing) and computes the same value."""
    env = dict(os.environ, **{compile_cache.ENV: str(tmp_path), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"})
    child = CHILD.replace("enable()", "enable(); jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)")
    out1 = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True).stdout
    files1 = sorted(p.name for p in tmp_path.iterdir())
    assert files1, "the first run wrote no cache entry"
    out2 = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == files1
    assert out1 == out2


def test_enable_sets_the_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(compile_cache.ENV, raising=False)
    before = jax.config.jax_compilation_cache_dir
    try:
        assert compile_cache.enable(tmp_path / "jc") == tmp_path / "jc"
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "jc")
        assert executable_cache.folder() == tmp_path / "jc" / "executables"  # executables beside it
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
        executable_cache.disable()
