"""JAX's persistent compilation cache in a user cache folder: compile a run once per machine.

A contact run compiles for several seconds; the compiled program depends only on the shapes
and the static settings, so a second run of the same scenario or study (same batch size,
same settings) can load it from disk instead. The `jaxmedusa` command turns the cache on
(`enable()`) unless the environment variable JAXMEDUSA_COMPILE_CACHE is "0", "off", "false"
or "no", or the command line says `--no-compile-cache`; a path in the variable replaces the
default folder, which is $XDG_CACHE_HOME/jaxmedusa/jax (~/.cache/jaxmedusa/jax).
Library users call `enable()` themselves (importing jaxmedusa changes no global setting
except float64 and the XLA options of core/xla_flags.py).

The cache is keyed by JAX on the program, the JAX/XLA version and the device, so a stale
entry is never loaded; deleting the folder is always safe. Its subfolder `executables/` keeps
the serialised executables of the simulation loop (core/executable_cache.py), so that a second
process skips tracing and lowering as well as the compilation.
"""
from __future__ import annotations

import os
from pathlib import Path

import jax

from jaxmedusa.core import executable_cache

__all__ = ["enable", "default_folder", "ENV", "OFF_VALUES", "MIN_COMPILE_SECONDS"]

ENV = "JAXMEDUSA_COMPILE_CACHE"
OFF_VALUES = ("0", "off", "false", "no")
# Programs that compile faster than this are not written. 0: every program, since a run
# also compiles a dozen small helpers (builder, trackers, tables) of 0.1-0.5 s each, which
# together cost seconds of a second run if only the simulation loop is cached.
MIN_COMPILE_SECONDS = 0.0


def default_folder() -> Path:
    """$XDG_CACHE_HOME/jaxmedusa/jax, or ~/.cache/jaxmedusa/jax."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jaxmedusa" / "jax"


def enable(folder: str | os.PathLike | None = None, *, respect_env: bool = True) -> Path | None:
    """Turn the persistent compilation cache on; returns its folder, or None when it stays off.

    folder: where to keep it (default: the ENV variable's path if it names one, else
    `default_folder()`). respect_env: when True, ENV set to an OFF_VALUES entry keeps it off.
    A folder that cannot be created leaves the cache off (a warning-free fallback: caching
    is an optimisation, never a reason to fail a run).
    """
    env = os.environ.get(ENV, "").strip()
    if respect_env and env.lower() in OFF_VALUES:
        return None
    path = Path(folder) if folder is not None else (Path(env).expanduser() if env else default_folder())
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    executable_cache.enable(path / "executables")  # and whole executables: a second run skips tracing too
    return path
