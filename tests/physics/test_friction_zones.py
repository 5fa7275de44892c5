"""Friction zones (physics/friction.py): point-in-polygon, smoothing, the mapping onto each
tire model, and braking across zones against hand figures."""
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from matplotlib.path import Path

from jaxmedusa.build import build_batch, zone_params
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import DriverTable, RoadSpec, ZoneSpec
from jaxmedusa.physics import friction

zone_weights = jax.jit(friction.zone_weights)  # one compiled call instead of many small eager ones
road_friction = jax.jit(friction.road_friction)
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14 as G
from jaxmedusa.physics.tire.calspan import tire_forces, tire_params
from jaxmedusa.physics.tire.fiala import fiala_params, fiala_tire_forces
from jaxmedusa.solver.simulate import simulate

L_SHAPE = ((0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (1.0, 1.0), (1.0, 3.0), (0.0, 3.0))  # non-convex


def _zones(*specs):
    z = zone_params(list(specs), len(specs), max(len(s.polygon) for s in specs))
    return jax.tree.map(jnp.asarray, z)


def test_sharp_zone_is_matplotlibs_point_in_polygon():
    # The crossing-number test against matplotlib's Path.contains_points on 400 random points.
    pts = np.random.default_rng(0).uniform([-1.0, -1.0], [5.0, 4.0], (400, 2))
    w = np.asarray(zone_weights(_zones(ZoneSpec(L_SHAPE, 0.5, 0.4)), jnp.asarray(pts)))[0]
    np.testing.assert_array_equal(w, Path(np.array(L_SHAPE)).contains_points(pts).astype(float))


def test_smoothed_boundary_has_finite_slope():
    # width 0.4 m on the L's bottom edge y = 0 (inside above): weight = smoothstep((d + w/2) / w),
    # so 0.5 on the edge with slope d(weight)/dy = 1.5 / w = 3.75 1/m (3 x^2 - 2 x^3 at x = 1/2),
    # and exactly 0 / 1 from w/2 = 0.2 m out / in.
    z = _zones(ZoneSpec(L_SHAPE, 0.5, 0.4, width=0.4))
    weight = lambda y: zone_weights(z, jnp.array([[2.0, y]]))[0, 0]  # noqa: E731
    assert float(weight(0.0)) == pytest.approx(0.5, abs=1e-12)
    assert float(jax.grad(weight)(0.0)) == pytest.approx(3.75, rel=1e-9)
    assert float(weight(-0.2)) == 0.0 and float(weight(0.2)) == 1.0
    corner = jax.grad(lambda p: zone_weights(z, p[None])[0, 0])(jnp.array([1.0, 1.0]))  # the re-entrant corner
    assert np.all(np.isfinite(np.asarray(corner)))


def test_later_zones_lie_on_top_and_outside_is_the_tires_own():
    z = _zones(ZoneSpec(((0, 0), (10, 0), (10, 10), (0, 10)), 0.8, 0.7), ZoneSpec(((5, 0), (10, 0), (10, 10), (5, 10)), 0.3, 0.2))
    mu_p, mu_s = road_friction(z, jnp.array([[2.0, 5.0], [7.0, 5.0], [20.0, 5.0]]), (jnp.full(3, 0.9), jnp.full(3, 0.75)))
    np.testing.assert_array_equal(np.asarray(mu_p), [0.8, 0.3, 0.9])
    np.testing.assert_array_equal(np.asarray(mu_s), [0.7, 0.2, 0.75])


def test_zone_friction_in_calspan_and_fiala_by_hand():
    # CALSPAN on a surface (0.5, 0.35): eqs (1.20)-(1.23) with mu0 = 0.5 and k_mu = 1 - 0.35/0.5,
    # pure side slip alpha = 0.3 rad, Fz = 4000 N, by hand.
    fz, a, mp, ms = 4000.0, 0.3, 0.5, 0.35
    ap0 = 0.0768 * math.sqrt(fz * G["fz_t"]) / (G["t_w"] * (G["t_p"] + 5.0))
    c_a = G["a0"] + G["a1"] * fz - G["a1"] / G["a2"] * fz * fz  # Ks ap0^2 / 2
    sig = math.pi * c_a * math.tan(a) / (4.0 * mp * fz)  # eq (1.22) with s = 0
    f = (G["c1"] * sig**3 + G["c2"] * sig**2 + 4 / math.pi * sig) / (G["c1"] * sig**3 + G["c3"] * sig**2 + G["c4"] * sig + 1)
    mu = mp * (1.0 - (1.0 - ms / mp) * math.sin(a))  # eq (1.21), s3 = sin(alpha)
    assert ap0 > 0
    _, fy = tire_forces(fz, a, 0.0, tire_params(), (mp, ms))
    assert float(fy) == pytest.approx(mu * fz * f, rel=1e-12)  # eq (1.23): Fy = mu Fz f at s = 0
    # Fiala, saturated (abar >= 3): |Fy| = mu Fz with mu = mu_p + (mu_s - mu_p) sin(alpha) of the surface.
    _, fy = fiala_tire_forces(fz, 0.5, 0.0, fiala_params(), (mp, ms))
    assert float(fy) == pytest.approx((mp + (ms - mp) * math.sin(0.5)) * fz, rel=1e-12)


@pytest.fixture(scope="module")
def zone_runs(model1_at_equilibrium, single_scenario):
    """One batch, 1 s at 1 ms samples: split-mu braking (left wheels on 0.9, right on 0.2) and
    its mirror image; and locked wheels crossing from mu 0.8 into mu 0.2 at x = 10 m."""
    m = model1_at_equilibrium
    left = ((-10.0, 0.0), (200.0, 0.0), (200.0, 10.0), (-10.0, 10.0))
    right = ((-10.0, -10.0), (200.0, -10.0), (200.0, 0.0), (-10.0, 0.0))
    everywhere = ((-10.0, -10.0), (200.0, -10.0), (200.0, 10.0), (-10.0, 10.0))
    beyond = ((10.0, -10.0), (200.0, -10.0), (200.0, 10.0), (10.0, 10.0))

    def scene(name, zones, **tables):
        sc = single_scenario(m, speed=20.0, name=name)
        veh = dataclasses.replace(sc.vehicles[0], **{k: DriverTable(values=(v,)) for k, v in tables.items()})
        return dataclasses.replace(sc, vehicles=[veh], road=RoadSpec(zones=zones))

    scs = [scene("split", (ZoneSpec(left, 0.9, 0.9), ZoneSpec(right, 0.2, 0.2)), brake=1.0),
           scene("mirror", (ZoneSpec(left, 0.2, 0.2), ZoneSpec(right, 0.9, 0.9)), brake=1.0),
           scene("cross", (ZoneSpec(everywhere, 0.8, 0.8), ZoneSpec(beyond, 0.2, 0.2)), lock=1.0)]
    batch, state = build_batch(scs)
    res = simulate(batch, state, Settings(end_time=1.0, save_every=1e-3, contact=False, step_control="constant"))
    return m, res.samples


def test_split_mu_braking_yaws_towards_the_high_mu_side(zone_runs):
    # More brake force on the left (0.9 vs 0.2 of Fz) turns the car left (heading > 0, ccw);
    # its mirror image turns right by the same angle (symmetry: 1e-6 relative).
    _, smp = zone_runs
    F = np.asarray(smp.F[:, -1, 0])
    heading = np.arctan2(F[:, 1, 0], F[:, 0, 0])
    assert heading[0] > math.radians(1.0)
    assert heading[1] == pytest.approx(-heading[0], rel=1e-6)


def test_deceleration_changes_when_each_axle_enters_the_zone(zone_runs):
    # Locked wheels slide at mu Fz: deceleration 0.8 g until the front contact points reach
    # x = 10 m (centre of mass at 10 - L1), then between 0.2 g and 0.8 g until the rear ones
    # do (centre at 10 + L2), then 0.2 g. Crossing times by hand: x = 20 t - 0.8 g t^2 / 2 to the
    # first; to the second with the static-load mid deceleration g (0.2 L2 + 0.8 L1) / L (its
    # load-transfer error moves t_r by < 1 ms). Each jump must fall within 3 ms of the hand time.
    m, smp = zone_runs
    t = np.asarray(smp.t[2])
    v = np.asarray(smp.v[2, :, 0, 0])
    decel = -np.gradient(v, t)
    a0 = 0.8 * GRAVITY
    t_f = (20.0 - math.sqrt(400.0 - 2 * a0 * (10.0 - m.l1))) / a0
    v_f = 20.0 - a0 * t_f
    a_mid = GRAVITY * (0.2 * m.l2 + 0.8 * m.l1) / (m.l1 + m.l2)
    t_r = t_f + (v_f - math.sqrt(v_f * v_f - 2 * a_mid * (m.l1 + m.l2))) / a_mid
    at = lambda s: decel[int(round(s / 1e-3))]  # noqa: E731
    assert at(t_f - 0.003) == pytest.approx(a0, rel=0.03)  # before: 0.8 g (pitch ripple < 3 %)
    assert 0.25 * GRAVITY < at(t_f + 0.003) < 0.7 * GRAVITY  # the front axle has crossed
    assert 0.25 * GRAVITY < at(t_r - 0.003) < 0.7 * GRAVITY
    assert at(t_r + 0.003) == pytest.approx(0.2 * GRAVITY, rel=0.1)  # both axles on 0.2
