"""Rigid barriers (contact/barrier.py): closed-form vehicle-wall geometry against brute force,
box faces and engaged width, and every law's push against a wall (ContactLaw.wall_terms)."""
from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import barrier_params, build_batch
from jaxmedusa.contact.barrier import barrier_stage, wall_contact
from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import gauge
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import BarrierSpec, Scenario, VehicleSpec
from jaxmedusa.solver.simulate import simulate

AXES = jnp.array([2.0, 0.8, 0.65])
EPS = 0.4


def _one(spec):
    return jax.tree.map(lambda x: jnp.asarray(x[0]), barrier_params([spec]))


def _rot(yaw, pitch=0.0):
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1.0]])
    ry = np.array([[cp, 0, sp], [0, 1.0, 0], [-sp, 0, cp]])
    return jnp.asarray(rz @ ry)


def _surface(r, F, n=40000, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n, 3))
    y = w / np.asarray(jax.vmap(lambda v: gauge(v, "superellipsoid", EPS, EPS))(jnp.asarray(w)))[:, None]
    return np.asarray(r) + (y * np.asarray(AXES)) @ np.asarray(F).T


def test_plane_depth_of_an_upright_car_is_exact():
    """Car along E1, wall x = 2.3 facing -E1, centre at x = 0.4: the front (x = 2.4) is 0.1 m in
    (exact up to round-off: 1e-12; the point to 1e-9 through the powers of the dual gauge)."""
    g = wall_contact(_one(BarrierSpec("plane", (2.3, 0, 0), (-1.0, 0, 0))), jnp.array([0.4, 0, 0.5]), jnp.eye(3),
                     AXES, EPS, EPS, 0.1)
    assert bool(g.touching)
    assert float(g.depth) == pytest.approx(0.1, abs=1e-12)
    np.testing.assert_allclose(g.T, [2.4, 0.0, 0.5], atol=1e-9)  # the middle of the front face
    assert float(g.width) == pytest.approx(1.6, abs=1e-12)  # the car's full width (an unbounded wall)
    np.testing.assert_allclose(g.n, [-1.0, 0, 0])


@pytest.mark.parametrize("yaw, pitch", [(0.3, 0.0), (-0.7, 0.1), (2.5, -0.05)])
def test_plane_depth_matches_brute_force_over_the_surface(yaw, pitch):
    """depth = n.p0 - min over the body of n.x: the closed form (support function) against the
    extreme of 40000 random surface points, which come within a few mm (5e-3) of the true one."""
    r, F = jnp.array([0.3, -0.2, 0.4]), _rot(yaw, pitch)
    normal = np.array([-0.8, -0.6, 0.0])
    g = wall_contact(_one(BarrierSpec("plane", (1.5, 0.5, 0.0), tuple(normal))), r, F, AXES, EPS, EPS, 0.1)
    pts = _surface(r, F)
    brute = float(normal @ np.array([1.5, 0.5, 0.0]) - np.min(pts @ normal))
    assert brute - 1e-12 <= float(g.depth) < brute + 5e-3
    deepest = pts[np.argmin(pts @ normal)]  # the brute-force deepest point lies at the same depth
    assert float(normal @ (deepest - np.asarray(g.T))) == pytest.approx(0.0, abs=5e-3)


def test_box_wall_face_and_engaged_width():
    """A 1 m wide box post 3 m long along E1, centre (3.85, 1.2): the car (front at x = 2.4,
    centre x = 0.4) hits its -E1 face 5 cm deep; the engaged width is the overlap of the car's
    [-0.8, 0.8] with the face's [0.7, 1.7] across E2 = 0.1 m, the force point at its middle
    (y = 0.75). A box beside the car is not touched; turned 90 deg, its 1 m face spans the
    car's whole width. Exact to round-off (1e-9 through the dual gauge's powers)."""
    spec = BarrierSpec("box", (2.4 - 0.05 + 1.5, 1.2, 0.5), size=(3.0, 1.0, 2.0))
    g = wall_contact(_one(spec), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01)
    assert bool(g.touching) and float(g.depth) == pytest.approx(0.05, abs=1e-9)
    np.testing.assert_allclose(g.n, [-1.0, 0, 0], atol=1e-12)
    assert float(g.width) == pytest.approx(0.1, abs=1e-12)
    assert float(g.T[1]) == pytest.approx(0.75, abs=1e-12)
    far = BarrierSpec("box", (3.0, 2.0, 0.5), size=(3.0, 1.0, 2.0))  # beside the car: y from 1.5
    assert not bool(wall_contact(_one(far), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01).touching)
    turned = BarrierSpec("box", (2.4 - 0.05 + 0.5, 0.0, 0.5), size=(3.0, 1.0, 2.0), yaw_deg=90.0)
    g = wall_contact(_one(turned), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01)
    assert float(g.depth) == pytest.approx(0.05, abs=1e-9) and float(g.width) == pytest.approx(1.6, abs=1e-12)


def test_barrier_params_reject_impossible_walls():
    with pytest.raises(ValueError, match="barrier 1: kind"):
        barrier_params([BarrierSpec("wall", (0, 0, 0))])
    with pytest.raises(ValueError, match="barrier 2: a plane needs a nonzero normal"):
        barrier_params([BarrierSpec("plane", (0, 0, 0)), BarrierSpec("plane", (0, 0, 0), normal=(0, 0, 0))])
    with pytest.raises(ValueError, match="barrier 1: box sizes must be > 0"):
        barrier_params([BarrierSpec("box", (0, 0, 0), size=(1, 0, 1))])


def wall_scenario(models, gap, speed=2.0):
    """Model 1 of the report driving along E1 at `speed` towards a plane wall whose face is
    `gap` [m] ahead of the car's contact shape (negative: overlapping)."""
    sc = Scenario("wall", [models[0]], [VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=speed)])
    front = 0.5 * models[0].contact_dims[0]
    return dataclasses.replace(sc, barriers=[BarrierSpec("plane", (front + gap, 0.0, 0.0), (-1.0, 0.0, 0.0))])


@pytest.mark.parametrize("law", LAWS.names())
def test_every_law_pushes_a_car_back_from_a_wall(models, law):
    """A car 5 cm into a wall, closing at 2 m/s: every law's push on it points back along the
    wall normal (-E1) and has no sideways part; nothing when the wall is 1 m away. The
    multipliers (MEDUSA) and the largest overlap (crush law) become the barrier state."""
    for gap, touching in ((-0.05, True), (1.0, False)):
        batch, state = build_batch([wall_scenario(models, gap)], dt=5e-5)
        b, s = jax.tree.map(lambda x: x[0], (batch, state))
        vs = s.vehicles
        terms, new, info = jax.jit(barrier_stage, static_argnums=(6,))(b, s.barriers, vs.r, vs.F, vs.v, vs.W,
                                                                       Settings(contact_law=law))
        push = np.asarray(terms.dr if law == "medusa" else terms.dv)[0]  # MEDUSA's main push is positional
        assert bool(info.crush.touching[0, 0]) is touching
        if not touching:
            assert all(float(jnp.abs(x).max()) == 0.0 for x in terms)
            continue
        assert push[0] < 0.0 and abs(push[1]) < 1e-9 * abs(push[0])  # sideways: round-off only
        assert float(info.force[0, 0]) > 0.0
        if law == "medusa":
            assert float(new.gamma[0, 0, 0]) < 0.0  # gamma1 -= p1 * depth
        if law == "crush":
            # the front reaches 5 cm in (the body is pitched by the equilibrium directors: a bit more)
            assert 0.05 <= float(new.crush[0, 0, 0]) < 0.06  # the largest overlap (memory[0])


@pytest.mark.slow
@pytest.mark.parametrize("law", ["physical", "medusa"])
def test_every_law_stops_a_car_at_a_wall(models, law):
    """(About a minute per law.) 2 m/s into a wall 5 mm ahead, no tires: every law turns the
    car back (vx < 0 after 0.3 s); the physical law rebounds with 0 < e < 1, and delta-V from
    the contact acceleration is the whole change of vx (no other x-force without tires: 1e-6
    of round-off). The crush law's run is in tests/analysis/test_crash_calibration.py."""
    st = Settings(end_time=0.3, dt=5e-5, contact_law=law, tires=False, save_every=0.3)
    batch, s0 = build_batch([wall_scenario(models, 0.005)], dt=st.dt)
    tracker = Outcomes(damage=False, rest=False)  # reads the crash and delta-V metrics only
    res = simulate(batch, s0, st, tracker=tracker, record=False)
    m = outcome_arrays(batch, res.final, res.metrics, tracker)
    vx = float(res.final.vehicles.v[0, 0, 0])
    assert vx < 0.0
    if law == "physical":
        e = float(m["restitution"][0, 0])
        assert 0.0 < e < 1.0 and e == pytest.approx(-vx / 2.0, abs=0.02)  # 0.02: the body's pitch and bounce
        np.testing.assert_allclose(float(m["delta_v_vec"][0, 0, 0]), vx - 2.0, atol=1e-6)
