"""The accelerator path of the contact stage (core/control_flow.py) on this CPU.

On a GPU, for batches of up to DENSE_MAX_PAIRS pairs, the broad phase evaluates every pair
(no rounds, no conditions) and the narrow phase runs all its iterations, masked after
convergence, instead of exiting early. Both
must give the answers of the CPU path: masking an iteration leaves the iterate exactly as
the early exit left it, and a pair's narrow phase is the same arithmetic whether it runs in
a buffer of near pairs or among all pairs. XLA may still round a differently shaped program
differently (an ulp in a sin or exp), so single evaluations agree within a few ulps and whole
runs within 1e-12 relative (a few ulps per step over ~1,100 steps, far below the 1e-9 m the
contact geometry resolves).
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.contact.broad_phase import compacted_map
from jaxmedusa.contact.shapes.narrow_phase import cold_warm, pair_geometry
from jaxmedusa.core import Settings
from jaxmedusa.core.control_flow import ENV, branchless, dense_pairs
from jaxmedusa.io import load_scenario
from jaxmedusa.solver import simulate

from helpers import EXAMPLES


@pytest.fixture
def accelerator_path(monkeypatch):
    """Trace the accelerator path (JAXMEDUSA_BRANCHLESS=1) with fresh compilations."""
    def use(on: bool):
        monkeypatch.setenv(ENV, "1" if on else "0")
        jax.clear_caches()
        assert branchless() is on

    yield use
    jax.clear_caches()


@pytest.mark.parametrize("share", [0.1, 0.6])
def test_compacted_map_dense_equals_rounds(share):
    """37 pairs, capacity 8 (5 rounds): 3 near pairs (one round) or 23 (three rounds)."""
    rng = np.random.default_rng(7)
    n = 37
    x = jnp.asarray(rng.normal(size=(n, 3)))
    near = jnp.asarray(rng.random(n) < share)
    default = jnp.full((n,), -1.0)
    fn = lambda v: jnp.sin(v[0]) * jnp.exp(v[1]) + v[2] ** 3  # noqa: E731
    packed = compacted_map(fn, near, x, default)
    dense = compacted_map(fn, near, x, default, dense=True)
    # the same function in two differently shaped programs: XLA may round sin/exp differently
    # (1 ulp seen), so 4 ulps; the masks (which items hold -1) must agree exactly
    np.testing.assert_allclose(np.asarray(dense), np.asarray(packed), rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(np.asarray(dense) == -1.0, ~np.asarray(near))
    # against the definition, op by op (sin and exp may round differently there: 4 ulps)
    expect = np.where(np.asarray(near), np.sin(x[:, 0]) * np.exp(x[:, 1]) + x[:, 2] ** 3, -1.0)
    np.testing.assert_allclose(np.asarray(dense), expect, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("dy, yaw", [(0.3, 0.0), (1.1, 0.2), (-0.6, -0.4)])
def test_narrow_phase_unrolled_equals_early_exit(dy, yaw):
    """Two overlapping cars (2.1 m between centres, offset dy, car 2 yawed): the search from a
    cold start runs several iterations and stops early on the CPU; masked, it must end on the
    same iterate: the geometry agrees to rounding (1e-12 relative; the search resolves ~1e-13
    in unit coordinates, and one ulp in a fused expression is 2e-16)."""
    axes = jnp.array([2.3, 0.9, 0.7])
    c, s = np.cos(yaw), np.sin(yaw)
    F2 = jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    args = (jnp.zeros(3), jnp.eye(3), axes, jnp.array([4.4, dy, 0.05]), F2, axes, cold_warm())
    early = jax.jit(lambda *a: pair_geometry("superellipsoid", *a))(*args)
    masked = jax.jit(lambda *a: pair_geometry("superellipsoid", *a, unrolled=True))(*args)
    assert bool(early.touching)
    for name, a, b in zip(early._fields, early, masked):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12, atol=1e-15, err_msg=name)


@pytest.mark.slow  # two compiles of the contact loop (~55 s); the two tests above are its reduced twins
def test_offset_collision_same_on_both_paths(accelerator_path):
    """The offset example under the crush law with vehicle 2 started 1.4 m closer (contact from
    ~0.3 s), two lateral offsets, through the collision: final positions and velocities agree
    within 1e-12 relative."""
    sc, _ = load_scenario(EXAMPLES / "offset")
    v2 = dataclasses.replace(sc.vehicles[1], x=sc.vehicles[1].x - 1.4)
    sc = dataclasses.replace(sc, vehicles=[sc.vehicles[0], v2])
    second = dataclasses.replace(sc, vehicles=[sc.vehicles[0], dataclasses.replace(v2, y=0.9)])
    settings = Settings(end_time=0.45, dt=4e-4, step_control="constant", contact_law="crush")
    batch, state = build_batch([sc, second], dt=settings.dt)
    out = {}
    for on in (False, True):
        accelerator_path(on)
        assert dense_pairs(2) is on
        res = simulate(batch, state, settings, record=False)
        out[on] = jax.device_get((res.final.vehicles.r, res.final.vehicles.v, res.final.clock.status))
    r0, v0, st0 = out[False]
    r1, v1, st1 = out[True]
    assert np.all(st0 == 0) and np.all(st1 == 0)
    assert np.abs(v0[:, 0, 0] - 22.0).max() > 0.5  # the collision happened: vehicle 1 slowed
    np.testing.assert_allclose(r1, r0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v1, v0, rtol=1e-12, atol=1e-10)
