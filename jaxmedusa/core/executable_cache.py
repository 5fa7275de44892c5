"""Compiled programs kept on disk: a second process skips tracing, lowering and compiling.

JAX's persistent compilation cache (core/compile_cache.py) saves the XLA compilation, but
each new process must still trace the Python step function and lower it to StableHLO before
it can even look the compiled program up: for the offset example's `advance` that was ~3.6 s
of a warm ~4 s start on this 2-core CPU. `cached(jitted, static_argnames)` wraps a jitted
function: the first call with a given key lowers and compiles it (afresh: JAX's compilation
cache neither serves nor keeps these programs, see _lower) and writes the serialised
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

`call.prepare(*args)` traces and lowers a key's program and leaves its XLA compile to a
thread of its own. `call.prepare(*args, defer=True)` leaves the tracing to that thread too,
and starts it once another program of the cache has been traced and lowered: that program's
XLA compile holds no GIL, and its first seconds (XLA's HLO passes) keep one core busy. A
study so defers its outcome summaries (~1.5 s of tracing and ~1.5 s of compiling on this
2-core CPU) into its time loop's compile, where they add little to the wall time. A call
that finds its key still being built waits for it (and starts it, if it was deferred).

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
import threading
from concurrent.futures import Future
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
_building: dict[str, Future] = {}  # key -> its program, while one thread builds it
_lock = threading.Lock()  # guards _programs, _building and _deferred (chunks and `prepare` run on threads)
_deferred: dict[str, object] = {}  # key -> its claimed build's thread, not yet started (prepare(defer=True))


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
    with _lock:
        _programs.clear()
        _deferred.clear()
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


def _name(jitted, key: str) -> str:
    """The compiled program's name (see _lower)."""
    return f"{jitted.__name__}_{key[:16]}"


def _lower(key: str, jitted, static: dict, tree, leaves):
    """(the flat function of `leaves` traced and lowered, its output tree structure)."""
    out_tree = []

    def flat(*lv):
        out = jitted(**jax.tree.unflatten(tree, lv), **static)
        out_tree.append(jax.tree.structure(out))
        return jax.tree.leaves(out)

    # Compiled afresh, never served by the persistent compilation cache: an executable loaded
    # from that cache serialises without some of its kernels on XLA's CPU backend (JAX
    # 0.10.2: the stored copy then fails with "Function ... not found" when called). So the
    # program is named after this cache's key (the name is part of that cache's key) and no
    # entry is written there (_compile_lowered).
    flat.__name__ = flat.__qualname__ = _name(jitted, key)
    return jax.jit(flat).lower(*leaves), out_tree[0]


def _compile_lowered(lowered):
    """The XLA compile of a lowered program (it releases the GIL: a thread can run it).
    It writes no entry to JAX's persistent compilation cache (see _lower): its minimum compile
    time is raised for this thread (a context that is not public API: jax._src.config). Writing
    the entry serialised and compressed the executable, 0.47 s of `advance`'s compile in a cold
    256-scenario sweep on a 2-core Intel Xeon, while both chunks waited, only to delete it."""
    from jax._src import config as jax_config

    with jax_config.persistent_cache_min_compile_time_secs(float("inf")):
        return lowered.compile()


def _compile(key: str, jitted, static: dict, tree, leaves):
    """(compiled executable of the flat function of `leaves`, output tree structure)."""
    lowered, out_tree = _lower(key, jitted, static, tree, leaves)
    _start_deferred()  # this thread's tracing is done; its XLA compile leaves the GIL to them
    return _compile_lowered(lowered), out_tree


def _start_deferred(key: str | None = None) -> None:
    """Start the deferred builds (all of them, or the one of `key` if it is deferred)."""
    with _lock:
        starting = list(_deferred) if key is None else [key] if key in _deferred else []
        threads = [_deferred.pop(k) for k in starting]
    for t in threads:
        t.start()


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


def _path(key: str) -> Path:
    return _state["folder"] / f"{key}{SUFFIX}"


def _from_disk(key: str):
    """The stored program of a key, or None (no file; or corrupt, truncated or refused by
    this runtime: then it is compiled again)."""
    if _path(key).exists():
        try:
            return _load(_path(key))
        except Exception:
            pass
    return None


def _kept(key: str, program):
    try:
        _store(_path(key), *program)
    except Exception:  # read-only folder, an unpicklable tree: keep it in memory only
        pass
    return program


def _claim(key: str) -> Future | None:
    """The key's Future if this caller is now the one to build it; None if it is built or
    being built."""
    with _lock:
        if key in _programs or key in _building:
            return None
        pending = _building[key] = Future()
        return pending


def _release(key: str, pending: Future, error: BaseException) -> None:
    """Give up a claimed build: the waiting callers, and later ones, build it themselves
    (a prepared build's error then surfaces in the call that needs it)."""
    with _lock:
        del _building[key]
    pending.set_exception(error)


def _settle(key: str, pending: Future, make) -> tuple:
    """Build a claimed key's program with `make()` and hand it to every waiting caller."""
    try:
        program = make()
    except BaseException as error:
        _release(key, pending, error)
        raise
    with _lock:
        _programs[key] = program
        del _building[key]
    pending.set_result(program)
    return program


def _program(key: str, jitted, static: dict, tree, leaves):
    """The (compiled executable, output tree) of a key: from memory, from the thread
    building it, from disk, or compiled now (and stored). Built once however many threads ask."""
    while True:
        with _lock:
            if key in _programs:
                return _programs[key]
            pending = _building.get(key)
            mine = pending is None  # this caller builds it
            if mine:
                pending = _building[key] = Future()
        if mine:
            return _settle(key, pending,
                           lambda: _from_disk(key) or _kept(key, _compile(key, jitted, static, tree, leaves)))
        _start_deferred(key)  # (a deferred build of this key starts now, as the call needs it)
        try:
            return pending.result()
        except Exception:  # that build failed: try it here
            continue


def cached(jitted, static_argnames: tuple[str, ...]):
    """`jitted` (a jax.jit function with these static arguments, passed by name or position)
    served from compiled programs while the cache is enabled; the plain call otherwise.
    `.prepare(*args, **kwargs)` traces and lowers the program of those arguments (arrays or
    abstract values: only shapes, dtypes and weak types are used), starts its compile (or
    its load from disk) on a daemon thread and returns; it does nothing while the cache is off.
    `.prepare(*args, defer=True, **kwargs)` leaves the tracing to that thread too, started
    once another program of this cache has been traced and lowered (its XLA compile, which
    holds no GIL, then runs beside this tracing) or once a call needs this program."""
    signature = inspect.signature(jitted)
    name = f"{jitted.__module__}.{jitted.__qualname__}"

    def split(args, kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        static = {k: v for k, v in bound.arguments.items() if k in static_argnames}
        dynamic = {k: v for k, v in bound.arguments.items() if k not in static_argnames}
        leaves, tree = jax.tree.flatten(dynamic)
        return static, leaves, tree

    @functools.wraps(jitted)
    def call(*args, **kwargs):
        if _state["folder"] is None:
            return jitted(*args, **kwargs)
        static, leaves, tree = split(args, kwargs)
        if not _one_device(leaves):
            return jitted(*args, **kwargs)
        # committed inputs: the executable is compiled for arrays on this device, which the
        # first call's fresh host arrays and later calls' outputs then both are
        device = jax.devices()[0]
        if not all(isinstance(x, jax.Array) and x.committed and x.sharding.device_set == {device} for x in leaves):
            # (device_put costs ~10 ms a call even for arrays already there)
            leaves = jax.device_put(leaves, device)
        key = _key(name, static, tree, leaves)
        compiled, out_tree = _program(key, jitted, static, tree, leaves)
        return jax.tree.unflatten(out_tree, compiled(*leaves))

    def prepare(*args, defer: bool = False, **kwargs) -> None:
        if _state["folder"] is None:
            return
        static, leaves, tree = split(args, kwargs)
        if not _one_device(leaves):
            return
        # weak types kept, as the call's arrays have them
        leaves = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in map(jax.typeof, leaves)]
        key = _key(name, static, tree, leaves)
        pending = _claim(key)
        if pending is None:
            return
        thread = functools.partial(threading.Thread, target=_quietly, daemon=True,
                                   name=f"jaxmedusa-compile-{jitted.__name__}")
        stored = _path(key).exists()
        make = lambda: _from_disk(key) or _kept(key, _compile(key, jitted, static, tree, leaves))  # noqa: E731
        if defer and not stored:  # traced on the thread, once it starts (_start_deferred)
            with _lock:
                _deferred[key] = thread(args=(key, pending, make))
            return
        if not stored:
            # traced and lowered here: tracing is Python, and on a thread it would take turns
            # with the caller's own tracing for the GIL; only the XLA compile runs beside it
            try:
                lowered, out_tree = _lower(key, jitted, static, tree, leaves)
            except BaseException as error:
                _release(key, pending, error)  # the call traces again and raises there
                if isinstance(error, Exception):
                    return
                raise
            make = lambda: _kept(key, (_compile_lowered(lowered), out_tree))  # noqa: E731
        thread(args=(key, pending, make)).start()

    call.prepare = prepare
    return call


def _quietly(key: str, pending: Future, make) -> None:
    try:
        _settle(key, pending, make)
    except BaseException:  # the call that needs the program builds it again and raises there
        pass
