"""Compiled programs kept on disk: a second process skips tracing, lowering and compiling.

JAX's persistent compilation cache (core/compile_cache.py) saves the XLA compilation, but
each new process must still trace the Python step function and lower it to StableHLO before
it can even look the compiled program up: for the offset example's `advance` that was ~3.6 s
of a warm ~4 s start on this 2-core CPU. `cached(jitted, static_argnames)` wraps a jitted
function: the first call with a given key lowers and compiles it (as a plain call would; the
compilation cache serves the XLA compile when it has it) and writes the serialised
executable (jax.experimental.serialize_executable); later calls, in this process or the
next, load the executable and call it: no tracing, no lowering, no cache lookup.

The key is a SHA-256 of everything the executable depends on: the source of every module of
the jaxmedusa package (any edit invalidates every entry), the JAX and jaxlib versions, the
backend, its device kind and the host CPU's feature flags (an executable holds machine code
for this CPU), the XLA options (XLA_FLAGS, core/xla_flags.py), float64 on or off, the
control-flow choice (core/control_flow.py), the
function's name, the repr of every static argument (Settings and trackers are frozen
dataclasses whose repr lists every field), and the tree structure (static pytree fields
included), shapes and dtypes of the array arguments. A stale
entry can therefore not be found; deleting the folder is always safe. Anything unexpected
(a corrupt file, an executable the runtime refuses, arrays on several devices) falls back to
compiling again or to the plain jitted call.

Off until `enable(folder)`: the `jaxmedusa` command turns it on with the compilation cache
(folder $XDG_CACHE_HOME/jaxmedusa/jax/executables); library users and the tests call plain jit.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
import platform
import tempfile
from pathlib import Path

import jax
import jaxlib
from jax.experimental import serialize_executable

from jaxmedusa.core.control_flow import branchless

__all__ = ["enable", "disable", "cached", "folder", "SUFFIX"]

SUFFIX = ".jaxexe"
_state = {"folder": None}
_programs: dict[str, tuple] = {}  # key -> (compiled executable, output tree), this process
_keys: dict[tuple, str] = {}  # (source, name, static arguments, tree, shapes, x64) -> key, this process


def enable(path: str | os.PathLike) -> Path | None:
    """Keep compiled programs in `path` (created); None (and off) when it cannot be created."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    _state["folder"] = p
    return p


def disable() -> None:
    _state["folder"] = None
    _programs.clear()
    _keys.clear()


def folder() -> Path | None:
    return _state["folder"]


@functools.cache
def _source_digest() -> str:
    """SHA-256 of every .py file of the jaxmedusa package (names and contents)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


@functools.cache
def _host_cpu() -> str:
    """The CPU's model and feature flags (Linux), else what `platform` knows: compiled code
    for one CPU may not run on another that shares the cache folder (a network home)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        return "\n".join(sorted({ln for ln in lines if ln.startswith(("model name", "flags", "Features"))}))
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


def _key(name: str, static: dict, tree, leaves) -> str:
    shapes = tuple((tuple(x.shape), str(x.dtype)) for x in leaves)
    memo = (_source_digest(), name, tuple(sorted(static.items())), tree, shapes, jax.config.jax_enable_x64)
    if memo not in _keys:  # (a study calls `advance` ~60 times: hash the long strings once)
        device = jax.devices()[0]
        parts = [_source_digest(), jax.__version__, jaxlib.__version__, device.platform, device.device_kind,
                 _host_cpu(), os.environ.get("XLA_FLAGS", ""), str(jax.config.jax_enable_x64), str(branchless()), name,
                 repr(memo[2]),
                 str(tree), repr(list(shapes))]
        _keys[memo] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return _keys[memo]


def _one_device(leaves) -> bool:
    return all(len(x.sharding.device_set) <= 1 for x in leaves if isinstance(x, jax.Array))


def _compile(key: str, jitted, static: dict, tree, leaves):
    """(compiled executable of the flat function of `leaves`, output tree structure)."""
    out_tree = []

    def flat(*lv):
        out = jitted(**jax.tree.unflatten(tree, lv), **static)
        out_tree.append(jax.tree.structure(out))
        return jax.tree.leaves(out)

    # Compiled afresh, never served by the persistent compilation cache: an executable loaded
    # from that cache serialises without some of its kernels on XLA's CPU backend (JAX
    # 0.10.2: the stored copy then fails with "Function ... not found" when called). So the
    # program is named after this cache's key (the name is part of that cache's key) and its
    # entry there is removed once written.
    flat.__name__ = flat.__qualname__ = f"{jitted.__name__}_{key[:16]}"
    compiled = jax.jit(flat).lower(*leaves).compile()
    cache_dir = jax.config.jax_compilation_cache_dir
    if cache_dir:
        for entry in Path(cache_dir).glob(f"jit_{flat.__name__}-*"):
            entry.unlink(missing_ok=True)
    return compiled, out_tree[0]


def _load(path: Path):
    with open(path, "rb") as f:
        blob = pickle.load(f)
    compiled = serialize_executable.deserialize_and_load(blob["executable"], blob["in_tree"], blob["out_tree"])
    return compiled, blob["tree"]


def _store(path: Path, compiled, out_tree) -> None:
    executable, in_tree, flat_out_tree = serialize_executable.serialize(compiled)
    blob = pickle.dumps({"executable": executable, "in_tree": in_tree, "out_tree": flat_out_tree, "tree": out_tree})
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # atomic: a reader sees all or nothing
    with os.fdopen(fd, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)


def _program(key: str, jitted, static: dict, tree, leaves):
    """The (compiled executable, output tree) of a key: from memory, from disk, or compiled now."""
    if key in _programs:
        return _programs[key]
    path = _state["folder"] / f"{key}{SUFFIX}"
    program = None
    if path.exists():
        try:
            program = _load(path)
        except Exception:  # corrupt, truncated or refused by this runtime: compile again
            program = None
    if program is None:
        program = _compile(key, jitted, static, tree, leaves)
        try:
            _store(path, *program)
        except Exception:  # read-only folder, an unpicklable tree: keep it in memory only
            pass
    _programs[key] = program
    return program


def cached(jitted, static_argnames: tuple[str, ...]):
    """`jitted` (a jax.jit function with these static arguments, passed by name or position)
    served from compiled programs while the cache is enabled; the plain call otherwise."""
    signature = inspect.signature(jitted)

    @functools.wraps(jitted)
    def call(*args, **kwargs):
        if _state["folder"] is None:
            return jitted(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        static = {k: v for k, v in bound.arguments.items() if k in static_argnames}
        dynamic = {k: v for k, v in bound.arguments.items() if k not in static_argnames}
        leaves, tree = jax.tree.flatten(dynamic)
        if not _one_device(leaves):
            return jitted(*args, **kwargs)
        # committed inputs: the executable is compiled for arrays on this device, which the
        # first call's fresh host arrays and later calls' outputs then both are
        device = jax.devices()[0]
        if not all(isinstance(x, jax.Array) and x.committed and x.sharding.device_set == {device} for x in leaves):
            # (device_put costs ~10 ms a call even for arrays already there)
            leaves = jax.device_put(leaves, device)
        key = _key(f"{jitted.__module__}.{jitted.__qualname__}", static, tree, leaves)
        compiled, out_tree = _program(key, jitted, static, tree, leaves)
        return jax.tree.unflatten(out_tree, compiled(*leaves))

    return call
