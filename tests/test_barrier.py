"""Rigid barriers (jaxmedusa.barrier): closed-form vehicle-wall geometry against brute force,
box faces and engaged width, the [[barriers]] input table, and every law against a wall."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.barrier import BarrierSpec, barrier_params, wall_geometry
from jaxmedusa.build import build_batch
from jaxmedusa.contact import gauge
from jaxmedusa.inputs import scenario_from_dict
from jaxmedusa.legacy import MedusaInputError
from jaxmedusa.params import Settings
from jaxmedusa.scenario import Scenario, VehicleSpec
from jaxmedusa.simulate import simulate

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
    """Car along E1, wall x = 2.3 facing -E1, centre at x = 0.4: the front (x = 2.4) is 0.1 m in."""
    g = wall_geometry(_one(BarrierSpec("plane", (2.3, 0, 0), (-1.0, 0, 0))), jnp.array([0.4, 0, 0.5]), jnp.eye(3),
                      AXES, EPS, EPS, 0.1)
    assert bool(g.touching)
    assert float(g.depth) == pytest.approx(0.1, abs=1e-12)
    np.testing.assert_allclose(g.T, [2.4, 0.0, 0.5], atol=1e-9)  # the middle of the front face
    assert float(g.width) == pytest.approx(1.6, abs=1e-12)  # the car's full width (an unbounded wall)
    np.testing.assert_allclose(g.n, [-1.0, 0, 0])


@pytest.mark.parametrize("yaw, pitch", [(0.3, 0.0), (-0.7, 0.1), (2.5, -0.05)])
def test_plane_depth_matches_brute_force_over_the_surface(yaw, pitch):
    """depth = n.p0 - min over the body of n.x: the closed form (support function) against the
    extreme of 40000 random surface points, which come within a few mm of the true extreme."""
    r, F = jnp.array([0.3, -0.2, 0.4]), _rot(yaw, pitch)
    normal = np.array([-0.8, -0.6, 0.0])
    g = wall_geometry(_one(BarrierSpec("plane", (1.5, 0.5, 0.0), tuple(normal))), r, F, AXES, EPS, EPS, 0.1)
    pts = _surface(r, F)
    brute = float(normal @ np.array([1.5, 0.5, 0.0]) - np.min(pts @ normal))
    assert float(g.depth) >= brute - 1e-12 and float(g.depth) < brute + 5e-3
    # the deepest point found by brute force is close to the closed-form one along the normal
    deepest = pts[np.argmin(pts @ normal)]
    assert float(normal @ (deepest - np.asarray(g.T))) == pytest.approx(0.0, abs=5e-3)


def test_box_wall_face_and_engaged_width():
    """A 1 m wide box post 3 m long (yawed 90 deg: long along E2... here 0: long along E1), centre
    (3.6, 1.2): the car (front at x = 2.4 when at x = 0.4) hits its -E1 face; the engaged width is
    the overlap of the car's [-0.8, 0.8] with the face's [0.7, 1.7] across E2 = 0.1 m; the force
    point moves to the middle of that band (y = 0.75)."""
    spec = BarrierSpec("box", (2.4 - 0.05 + 1.5, 1.2, 0.5), size=(3.0, 1.0, 2.0))
    g = wall_geometry(_one(spec), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01)
    assert bool(g.touching) and float(g.depth) == pytest.approx(0.05, abs=1e-9)
    np.testing.assert_allclose(g.n, [-1.0, 0, 0], atol=1e-12)
    assert float(g.width) == pytest.approx(0.1, abs=1e-12)
    assert float(g.T[1]) == pytest.approx(0.75, abs=1e-12)
    far = BarrierSpec("box", (3.0, 2.0, 0.5), size=(3.0, 1.0, 2.0))  # beside the car: y from 1.5
    assert not bool(wall_geometry(_one(far), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01).touching)
    turned = BarrierSpec("box", (2.4 - 0.05 + 0.5, 0.0, 0.5), size=(3.0, 1.0, 2.0), yaw_deg=90.0)  # thin side
    g = wall_geometry(_one(turned), jnp.array([0.4, 0, 0.5]), jnp.eye(3), AXES, EPS, EPS, 0.01)
    assert float(g.depth) == pytest.approx(0.05, abs=1e-9) and float(g.width) == pytest.approx(1.6, abs=1e-12)


BASE = {"models": [{"mass": 1500.0, "ix": 500.0, "iy": 2500.0, "iz": 2700.0, "young": 6e8, "nu": 0.3,
                    "volume": 0.42, "l1": 1.0, "l2": 1.5, "track": 1.4, "h1": 0.0, "h2": 0.0, "spring_ref": 0.15,
                    "c1": 4e4, "c2": 4e4, "d1": 1500.0, "d2": 1200.0, "tire_lag": 0.0016,
                    "contact_dims": [4.0, 1.6, 1.3], "eq_r3": 0.05, "eq_F": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}],
        "vehicles": [{"model": 1, "x": 0.0, "y": 0.0, "speed": 2.0}]}


def test_barriers_table_is_read_and_checked():
    sc, _ = scenario_from_dict({**BASE, "barriers": [{"type": "plane", "position": [2.1, 0, 0], "normal": [-2, 0, 0]},
                                                     {"type": "box", "position": [0, 5, 0], "size": [10, 1, 2],
                                                      "yaw_deg": 10}]})
    assert sc.barriers[0] == BarrierSpec("plane", (2.1, 0.0, 0.0), (-2.0, 0.0, 0.0))
    assert sc.barriers[1].kind == "box" and sc.barriers[1].yaw_deg == 10.0
    assert sc.models[0].crush_b_front == 550e3  # crush coefficients default
    bad = [({"type": "wall", "position": [0, 0, 0]}, "barriers[1].type"),
           ({"type": "plane", "position": [0, 0, 0]}, "barriers[1].normal: missing"),
           ({"type": "plane", "position": [0, 0, 0], "normal": [0, 0, 0]}, "nonzero"),
           ({"type": "box", "position": [0, 0, 0], "size": [1, -1, 1]}, "barriers[1].size"),
           ({"type": "box", "position": [0, 0, 0], "size": [1, 1, 1], "normal": [1, 0, 0]}, "unknown key 'normal'")]
    for table, words in bad:
        with pytest.raises(MedusaInputError, match=words.replace("[", r"\[").replace("]", r"\]")):
            scenario_from_dict({**BASE, "barriers": [table]}, source="s.toml")
    with pytest.raises(MedusaInputError, match=r"models\[1\].crush_b_side"):
        scenario_from_dict({**BASE, "models": [{**BASE["models"][0], "crush_b_side": 0.0}]}, source="s.toml")


@pytest.mark.parametrize("law", ["crush", "physical", "medusa"])
def test_every_law_stops_a_car_at_a_wall(law):
    """2 m/s into a wall 5 cm ahead, no tires: every law turns the car back (vx < 0 after
    0.3 s); the crush and physical laws rebound with 0 < e < 1 and conserve momentum
    through the wall's impulse: m dv equals the time integral of the contact force, which
    here is all the x-force there is (delta_v from the contact acceleration)."""
    sc, _ = scenario_from_dict({**BASE, "barriers": [{"type": "plane", "position": [2.05, 0, 0],
                                                      "normal": [-1, 0, 0]}]})
    st = Settings(end_time=0.3, dt=5e-5, contact_law=law, tires=False, save_every=0.3)
    batch, s0 = build_batch([sc], dt=st.dt)
    from jaxmedusa.outcomes import Outcomes, outcome_arrays

    res = simulate(batch, s0, st, tracker=Outcomes())
    m = outcome_arrays(batch, res.final, res.metrics, Outcomes())
    vx = float(res.final.vehicles.v[0, 0, 0])
    assert vx < 0.0
    if law != "medusa":
        e = float(m["restitution"][0, 0])
        assert 0.0 < e < 1.0 and e == pytest.approx(-vx / 2.0, abs=0.02)  # 0.02: tire-free roll-off, z bounce
        np.testing.assert_allclose(float(m["delta_v_vec"][0, 0, 0]), vx - 2.0, atol=1e-6)
