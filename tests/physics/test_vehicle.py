"""Chassis, suspension geometry and energy, eqs (1.1)-(1.34)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.core.params import inertia_parameters, lame_constants
from jaxmedusa.physics.vehicle import vehicle_params
from jaxmedusa.core.safe_math import orientation_angles
from jaxmedusa.physics.vehicle import energy_medusa, energy_total, intrinsic_director_forces, stored_energy, wheel_headings


def test_inertia_parameters_of_appendix_c_model_1(models):
    # Report, issue text: Appendix C model 1 gives my11 = 2448.5, my22 = 333.5, my33 = 146.1 kg m^2.
    m = models[0]
    np.testing.assert_allclose(inertia_parameters(m.ix, m.iy, m.iz), [2448.5, 333.5, 146.1], atol=0.05)
    # and eq (1.9) maps them back to the moments of inertia
    my = inertia_parameters(m.ix, m.iy, m.iz)
    np.testing.assert_allclose(np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]]) @ my, [m.ix, m.iy, m.iz])


def test_lame_constants():
    lam, mu = lame_constants(200e9, 0.25)  # steel-like: lambda = mu = E/2.5 for nu = 1/4
    assert lam == pytest.approx(80e9) and mu == pytest.approx(80e9)


def test_intrinsic_forces_are_the_gradient_of_stored_energy():
    # eq (1.12) derives from m*psi of eq (1.34): k^i = d(m psi)/d d_i.
    key = jax.random.PRNGKey(0)
    F = jnp.eye(3) + 0.01 * jax.random.normal(key, (3, 3))
    lam, tm = 3.7e7, 1.9e8
    np.testing.assert_allclose(intrinsic_director_forces(F, lam, tm), jax.grad(stored_energy)(F, lam, tm), rtol=1e-10)


def test_rigid_rotation_stores_no_energy_and_no_force():
    c, s = math.cos(0.7), math.sin(0.7)
    Q = jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    assert float(stored_energy(Q, 1e8, 1e8)) == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(intrinsic_director_forces(Q, 1e8, 1e8), 0.0, atol=1e-6)


def test_positive_steering_turns_front_wheels_left():
    ex, ey = wheel_headings(jnp.eye(3), jnp.array([0.0, 0.0, 1.0]), math.radians(10.0))
    assert float(ex[0, 1]) == pytest.approx(math.sin(math.radians(10.0)))  # eq (1.15): ccw about e3
    np.testing.assert_allclose(ex[2], [1.0, 0.0, 0.0])  # rear wheels follow d1, eq (1.14)
    np.testing.assert_allclose(ey[2], [0.0, -1.0, 0.0])  # e_y = e_z x e_x with e_z = -e3
    np.testing.assert_allclose(jnp.sum(ex * ey, axis=1), 0.0, atol=1e-15)


def test_energy_full_and_medusa_differ_by_translational_kinetic_energy(models):
    p = vehicle_params(models[0])
    r, F = jnp.array([1.0, 2.0, 0.05]), jnp.eye(3)
    v, W = jnp.array([20.0, 1.0, 0.1]), 0.01 * jnp.ones((3, 3))
    diff = float(energy_total(p, r, F, v, W) - energy_medusa(p, r, F, v, W))
    assert diff == pytest.approx(0.5 * 1573.0 * (400 + 1 + 0.01), rel=1e-12)
    # at rest, undeformed, at height h: springs + gravity only (eq 1.34)
    e = float(energy_medusa(p, jnp.array([0.0, 0.0, 0.05]), F, jnp.zeros(3), jnp.zeros((3, 3))))
    assert e == pytest.approx(2 * 0.5 * 40000 * (0.05 - 0.15) ** 2 * 2 + 1573 * 9.81 * 0.05, rel=1e-12)


def test_smartpath_angles():
    th = 0.3
    F = jnp.array([[math.cos(th), -math.sin(th), 0.0], [math.sin(th), math.cos(th), 0.0], [0.0, 0.0, 1.0]])
    heading, pitch, roll = orientation_angles(F)
    assert float(heading) == pytest.approx(th) and abs(float(pitch)) < 1e-15 and abs(float(roll)) < 1e-15
    p = 0.05  # nose down by 0.05 rad: d1 = (cos p, 0, -sin p), d3 = (sin p, 0, cos p)
    F = jnp.array([[math.cos(p), 0.0, math.sin(p)], [0.0, 1.0, 0.0], [-math.sin(p), 0.0, math.cos(p)]])
    assert float(orientation_angles(F)[1]) == pytest.approx(p)


def test_wheel_info_contact_points_and_tire_power(model1_at_equilibrium):
    # A vehicle at its static equilibrium rolling at 20 m/s with a small sideslip on the flat
    # plane z = 0: the contact points are the assembly points dropped onto z = 0, and each
    # tire's power is its in-plane force (fx e_x - fy e_y, eq 1.16) dotted with the assembly
    # point's in-plane velocity (eq 1.18), by hand below. Free-rolling tires only dissipate: every power is <= 0.
    from jaxmedusa.physics.vehicle import vehicle_rates

    p = vehicle_params(model1_at_equilibrium)
    r = jnp.array([0.0, 0.0, float(p.eq_r3)])
    F = jnp.asarray(p.eq_F)
    v = jnp.array([20.0, 0.4, 0.0])
    W = jnp.zeros((3, 3)).at[:, 1].set(jnp.array([-0.05, 0.0, 0.0]))  # a yaw rate: d2' = -omega d1
    alpha = jnp.full(4, -0.02)
    _, wheels, _ = vehicle_rates(p, None, r, F, v, W, alpha, jnp.zeros(4), 0, 0.0, 0.0, 0.0)
    rq = r + p.X @ F.T
    np.testing.assert_allclose(wheels.point[:, :2], rq[:, :2], atol=1e-12)
    np.testing.assert_allclose(wheels.point[:, 2], 0.0, atol=1e-12)
    vq = v + p.X @ W.T
    ex = F[:, 0].at[2].set(0.0)  # eq (1.14) on the plane: d1 projected, normalised
    ex = ex / jnp.linalg.norm(ex)
    ey = jnp.cross(jnp.array([0.0, 0.0, -1.0]), ex)  # e_y = e_z x e_x with e_z = -e3 pointing down
    f = wheels.fx[:, None] * ex - wheels.fy[:, None] * ey
    vt = vq.at[:, 2].set(0.0)
    np.testing.assert_allclose(wheels.power, jnp.sum(f * vt, axis=1), rtol=1e-9, atol=1e-9)
    assert np.all(np.asarray(wheels.power) <= 1e-9) and float(jnp.sum(wheels.power)) < -1.0
