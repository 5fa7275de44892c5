"""Lowered programs kept on disk (jax.export): a second process skips tracing and lowering.

JAX's persistent compilation cache (core/compile_cache.py) saves the XLA compilation, but
each new process must still trace the Python step function and lower it to StableHLO
before it can even look the compiled program up: for the offset example's `advance` that is
~3.6 s of a warm ~4 s start on this 2-core CPU (trace 2.9 s, lower 0.7 s, cache load 0.4 s).
`cached(jitted, static_argnames)` wraps a jitted function: the first call with a given key
exports it (jax.export: trace + lower, as a plain call would) and writes the serialised
program; later calls, in this process or the next, deserialise it and call it under
`jax.jit`, whose compilation the persistent compilation cache then serves.

The key is a SHA-256 of everything the lowered program depends on: the source of every
module of the jaxmedusa package (any edit invalidates every entry), the JAX and jaxlib
versions, the backend and its device kind, float64 on or off, the function's name, the
repr of every static argument (Settings and trackers are frozen dataclasses whose repr lists
every field), and the tree structure (static pytree fields included), shapes and dtypes of
the array arguments. A stale entry can therefore not be found; deleting the folder is always
safe. Anything unexpected (a corrupt file, a missing `flatbuffers`, arrays on several
devices) falls back to the plain jitted call.

Off until `enable(folder)`: the `jaxmedusa` command turns it on with the compilation cache
(folder $XDG_CACHE_HOME/jaxmedusa/exported); library users and the tests call plain jit.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
import tempfile
from pathlib import Path

import jax
import jaxlib

__all__ = ["enable", "disable", "cached", "folder", "SUFFIX"]

SUFFIX = ".jaxexport"
_state = {"folder": None}
_programs: dict[str, tuple] = {}  # key -> (jitted call of the exported program, output tree), this process


def enable(path: str | os.PathLike) -> Path | None:
    """Keep exported programs in `path` (created); None (and off) when it cannot be created."""
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


def _key(name: str, static: dict, tree, leaves) -> str:
    device = jax.devices()[0]
    parts = [_source_digest(), jax.__version__, jaxlib.__version__, device.platform, device.device_kind,
             str(jax.config.jax_enable_x64), name, repr(sorted(static.items())), str(tree),
             repr([(tuple(x.shape), str(x.dtype)) for x in leaves])]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _one_device(leaves) -> bool:
    return all(len(x.sharding.device_set) <= 1 for x in leaves if isinstance(x, jax.Array))


def _export(jitted, static: dict, tree, leaves):
    """(jax.export.Exported of the flat function, output tree structure)."""
    out_tree = []

    def flat(*lv):
        out = jitted(**jax.tree.unflatten(tree, lv), **static)
        out_tree.append(jax.tree.structure(out))
        return jax.tree.leaves(out)

    structs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in leaves]
    exported = jax.export.export(jax.jit(flat))(*structs)
    return exported, out_tree[0]


def _load(path: Path):
    with open(path, "rb") as f:
        blob = pickle.load(f)
    return jax.export.deserialize(bytearray(blob["exported"])), blob["out_tree"]


def _store(path: Path, exported, out_tree) -> None:
    blob = pickle.dumps({"exported": bytes(exported.serialize()), "out_tree": out_tree})
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # atomic: a reader sees all or nothing
    with os.fdopen(fd, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)


def _program(key: str, jitted, static: dict, tree, leaves):
    """The (jitted exported call, output tree) of a key: from memory, from disk, or exported now."""
    if key in _programs:
        return _programs[key]
    path = _state["folder"] / f"{key}{SUFFIX}"
    exported = None
    if path.exists():
        try:
            exported, out_tree = _load(path)
        except Exception:  # corrupt, truncated or from an incompatible JAX: export again
            exported = None
    if exported is None:
        exported, out_tree = _export(jitted, static, tree, leaves)
        try:
            _store(path, exported, out_tree)
        except Exception:  # read-only folder, no flatbuffers, an unpicklable tree: keep it in memory only
            pass
    _programs[key] = (jax.jit(exported.call), out_tree)
    return _programs[key]


def cached(jitted, static_argnames: tuple[str, ...]):
    """`jitted` (a jax.jit function with these static arguments, passed by name or position)
    served from exported programs while the cache is enabled; the plain call otherwise."""
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
        # committed inputs: the exported call's program then has the same input shardings on the
        # first call (fresh host arrays) as on later ones (its own outputs), so it compiles once
        leaves = jax.device_put(leaves, jax.devices()[0])
        key = _key(f"{jitted.__module__}.{jitted.__qualname__}", static, tree, leaves)
        program, out_tree = _program(key, jitted, static, tree, leaves)
        return jax.tree.unflatten(out_tree, program(*leaves))

    return call
