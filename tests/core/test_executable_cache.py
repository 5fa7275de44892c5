"""Compiled programs on disk (core/executable_cache.py): the stored executable computes the
plain jitted call's numbers bit for bit, is written once and read back (not traced or
compiled again) by a later call, and every part of the key (static arguments, shapes, the
package's source) makes a new entry; a corrupt file is compiled again. `prepare` builds a
program's compile on a thread of its own, once however many callers ask, and a build that
fails there is done again by the call that needs it; a deferred one is traced on that thread
once another program has been lowered, or when the call needs it."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core import compile_cache, executable_cache
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.save_grid import prev_of
from jaxmedusa.solver.simulate import advance, cached_advance

from helpers import single


@pytest.fixture
def folder(tmp_path):
    assert executable_cache.enable(tmp_path) == tmp_path
    yield tmp_path
    executable_cache.disable()


def _inputs(models, n_scenarios=1, end_time=0.004):
    settings = Settings(end_time=end_time, dt=1e-3, save_every=1e-3, step_control="constant")
    scenarios = [single(models[0], speed=20.0 + k, steering_deg=2.0) for k in range(n_scenarios)]
    batch, state = build_batch(scenarios, dt=settings.dt)
    return batch, state, settings


def _call(fn, batch, state, settings):
    return fn(batch, state, None, settings, 3, prev=prev_of(state))


def _assert_identical(a, b):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert jax.tree.structure(a) == jax.tree.structure(b) and len(la) == len(lb) > 0
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))  # the same XLA program: bit for bit


def _entries(folder):
    return sorted(p.name for p in folder.glob(f"*{executable_cache.SUFFIX}"))


def test_stored_executable_equals_the_plain_call_and_is_read_back(models, folder, monkeypatch):
    batch, state, settings = _inputs(models)
    plain = _call(advance, batch, state, settings)
    first = _call(cached_advance, batch, state, settings)
    _assert_identical(plain, first)
    assert len(_entries(folder)) == 1
    # a new process: nothing in memory; the program must come from the file, not a new trace
    monkeypatch.setattr(executable_cache, "_programs", {})

    def no_trace(*args):
        raise AssertionError("traced again although the file was there")

    monkeypatch.setattr(executable_cache, "_compile", no_trace)
    _assert_identical(plain, _call(cached_advance, batch, state, settings))
    # and its own outputs go back in (as run.py's chunks do) without a new program
    (state2, metrics2, prev2), _ = first
    a = cached_advance(batch, state2, metrics2, settings, 3, prev=prev2)
    _assert_identical(advance(batch, state2, metrics2, settings, 3, prev=prev2), a)


def test_static_arguments_shapes_and_source_make_new_entries(models, folder, monkeypatch):
    batch, state, settings = _inputs(models)
    _call(cached_advance, batch, state, settings)
    _call(cached_advance, *_inputs(models, end_time=0.005))  # another Settings
    _call(cached_advance, *_inputs(models, n_scenarios=2))  # another batch size
    assert len(_entries(folder)) == 3
    monkeypatch.setattr(executable_cache, "_source_digest", lambda: "an edited package")
    _call(cached_advance, batch, state, settings)
    assert len(_entries(folder)) == 4


def test_a_corrupt_entry_is_compiled_again(models, folder, monkeypatch):
    batch, state, settings = _inputs(models)
    plain = _call(advance, batch, state, settings)
    _call(cached_advance, batch, state, settings)
    (entry,) = folder.glob(f"*{executable_cache.SUFFIX}")
    entry.write_bytes(b"not a program")
    monkeypatch.setattr(executable_cache, "_programs", {})
    _assert_identical(plain, _call(cached_advance, batch, state, settings))
    assert entry.read_bytes() != b"not a program" and len(_entries(folder)) == 1


def test_off_means_the_plain_call(models, tmp_path):
    executable_cache.disable()
    batch, state, settings = _inputs(models)
    _assert_identical(_call(advance, batch, state, settings), _call(cached_advance, batch, state, settings))
    assert not list(tmp_path.iterdir())



@partial(jax.jit, static_argnames=("power",))
def _polynomial(x, scale, power: int):
    return {"y": scale * x**power + 1.0}


_cached_polynomial = executable_cache.cached(_polynomial, ("power",))


def _counting_compiles(monkeypatch):
    """A list that gets one entry (the compiling thread's name) per compile of the cache."""
    names, original = [], executable_cache._compile_lowered

    def counted(*args):
        names.append(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(executable_cache, "_compile_lowered", counted)
    return names


def _wait_for_builds():
    for t in threading.enumerate():
        if t.name.startswith("jaxmedusa-compile-"):
            t.join(timeout=60.0)


def test_a_prepared_program_is_built_once_on_its_own_thread(folder, monkeypatch):
    compiles = _counting_compiles(monkeypatch)
    x = np.linspace(0.0, 2.0, 5)
    # shapes only, and a Python float: the call's scalar is weakly typed, so is the prepared one
    _cached_polynomial.prepare(jax.ShapeDtypeStruct(x.shape, x.dtype), 3.0, power=2)
    _cached_polynomial.prepare(x, 3.0, power=2)  # asked again while (or after) it builds: no second build
    _wait_for_builds()
    assert compiles == ["jaxmedusa-compile-_polynomial"]
    out = _cached_polynomial(x, 3.0, power=2)
    np.testing.assert_array_equal(np.asarray(out["y"]), 3.0 * x**2 + 1.0)  # exact in float64 for these x
    assert len(compiles) == 1 and len(_entries(folder)) == 1
    # callers on several threads at once: still one build of a new key
    results = []
    workers = [threading.Thread(target=lambda: results.append(_cached_polynomial(x, 2.0, power=3))) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(compiles) == 2 and len(results) == 3
    for r in results:
        np.testing.assert_array_equal(np.asarray(r["y"]), 2.0 * x**3 + 1.0)


def test_a_prepared_build_that_fails_is_built_again_by_the_call(folder, monkeypatch):
    original, tries = executable_cache._compile_lowered, []

    def fails_first(*args):
        tries.append(threading.current_thread().name)
        if len(tries) == 1:
            raise RuntimeError("out of memory while compiling")
        return original(*args)

    monkeypatch.setattr(executable_cache, "_compile_lowered", fails_first)
    x = np.arange(4.0)
    _cached_polynomial.prepare(x, 1.0, power=1)
    _wait_for_builds()
    np.testing.assert_array_equal(np.asarray(_cached_polynomial(x, 1.0, power=1)["y"]), x + 1.0)
    assert tries == ["jaxmedusa-compile-_polynomial", threading.current_thread().name]


def test_a_deferred_preparation_waits_for_another_programs_lowering(folder, monkeypatch):
    compiles = _counting_compiles(monkeypatch)
    x = np.array([-1.0, -0.5, 0.5, 2.0])  # every power below exact in float64
    _cached_polynomial.prepare(x, 2.0, power=2, defer=True)  # nothing traced yet: no thread
    assert not [t for t in threading.enumerate() if t.name.startswith("jaxmedusa-compile-")]
    np.testing.assert_array_equal(np.asarray(_cached_polynomial(x, 1.0, power=3)["y"]), x**3 + 1.0)
    _wait_for_builds()  # that call's lowering started the deferred build, on a thread of its own
    assert sorted(compiles) == sorted([threading.current_thread().name, "jaxmedusa-compile-_polynomial"])
    np.testing.assert_array_equal(np.asarray(_cached_polynomial(x, 2.0, power=2)["y"]), 2.0 * x**2 + 1.0)
    assert len(compiles) == 2 and len(_entries(folder)) == 2
    # with no other build to follow, the call that needs the program starts it (and waits)
    _cached_polynomial.prepare(x, 3.0, power=4, defer=True)
    np.testing.assert_array_equal(np.asarray(_cached_polynomial(x, 3.0, power=4)["y"]), 3.0 * x**4 + 1.0)
    assert compiles[2:] == ["jaxmedusa-compile-_polynomial"]


def test_prepare_does_nothing_while_the_cache_is_off(monkeypatch):
    executable_cache.disable()
    compiles = _counting_compiles(monkeypatch)
    _cached_polynomial.prepare(np.arange(3.0), 1.0, power=2)
    assert compiles == [] and not [t for t in threading.enumerate() if t.name.startswith("jaxmedusa-compile-")]


MODEL = Path(__file__).resolve().parents[2] / "studies" / "medusa" / "offset" / "model.dat"
RECOMPILE_CHILD = """
import sys
import jax, numpy as np
from jaxmedusa.core import compile_cache, executable_cache
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.save_grid import prev_of
from jaxmedusa.solver.simulate import advance, cached_advance
sys.path.insert(0, sys.argv[2])
from helpers import single
compile_cache.enable()
settings = Settings(end_time=0.004, dt=1e-3, save_every=1e-3, step_control="constant")
batch, state = build_batch([single(read_models(sys.argv[3])[0], speed=20.0, steering_deg=2.0)], dt=settings.dt)
fn = cached_advance if sys.argv[1] == "cached" else advance
out = fn(batch, state, None, settings, 3, prev=prev_of(state))
print(repr([np.asarray(x).tolist() for x in jax.tree.leaves(out)]))
"""


def test_a_program_compiled_again_is_stored_whole(tmp_path):
    """Fresh processes sharing one cache folder: an entry compiled a second time (its file
    deleted, JAX's compilation cache on) must be compiled afresh, not served by that cache,
    whose executables serialise without some kernels on CPU: the copy
    stored then is loaded by a third process, called, and must give the plain call's numbers.
    The cached program's compile writes no entry to that cache (the plain call's is there)."""
    env = dict(os.environ, **{compile_cache.ENV: str(tmp_path)})
    tests = Path(__file__).resolve().parents[1]

    def child(mode):
        return subprocess.run([sys.executable, "-c", RECOMPILE_CHILD, mode, str(tests), str(MODEL)], env=env,
                              capture_output=True, text=True, check=True).stdout

    plain = child("plain")
    assert [p.name for p in tmp_path.glob("jit_advance-*")]  # the plain call's entry in JAX's cache
    assert child("cached") == plain
    # the cached program's compile writes none there: it would be deleted at once (its name
    # begins with jit_advance_ and the entry's key follows: jit_advance_<key>-<hash>)
    assert not list(tmp_path.glob("jit_advance_*"))
    (entry,) = (tmp_path / "executables").glob(f"*{executable_cache.SUFFIX}")
    entry.unlink()
    assert child("cached") == plain  # compiled again and stored
    assert len(list((tmp_path / "executables").glob(f"*{executable_cache.SUFFIX}"))) == 1
    assert child("cached") == plain  # the stored copy, loaded and run
