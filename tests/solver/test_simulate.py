"""Whole-vehicle dynamics against conservation laws, symmetry and the linear single-track model."""
import math
from dataclasses import replace

import jax
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace as pytree_replace
from jaxmedusa.physics.vehicle import vehicle_params
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.core.status import Status
from jaxmedusa.physics.tire.calspan import cornering_stiffness

from helpers import single, without_damping


def saved(res, field, b=0):
    return np.asarray(getattr(res.samples, field)[b])[np.asarray(res.samples.saved[b])]


def run(scenarios, **kw):
    # the analytic superellipsoid shape: compiles in seconds (medusa_search, the MEDUSA law's default, ~40 s)
    settings = Settings(**{"contact_geometry": "superellipsoid", **kw})
    batch, state = build_batch(scenarios if isinstance(scenarios, list) else [scenarios], dt=settings.dt)
    return simulate(batch, state, settings)


def test_save_times_follow_main_c():
    # main.c saves at t = 0 and whenever t - t_old >= 0.999999 s, and steps while t <= t_end.
    # Without contact its steps (5e-5 s) land on the 0.01 s grid, so its save times are the
    # exact grid that jaxmedusa saves on (solver/save_grid.py), to round-off of t.
    from helpers import EXAMPLES  # noqa: F401
    from jaxmedusa.io.medusa_files import read_models  # noqa: F401
    res = run(single(read_models(EXAMPLES / "offset" / "model.dat")[0], speed=10.0), end_time=0.1, save_every=0.01)
    t = saved(res, "t")
    np.testing.assert_allclose(t, np.arange(11) * 0.01, atol=1e-12)
    assert float(res.final.clock.t[0]) > 0.1
    assert int(res.final.clock.steps[0]) in (2000, 2001)


def test_energy_is_conserved_without_damping_and_tires(model1_at_equilibrium):
    # Drop the undamped car from 2 cm above equilibrium with a pitch rate: springs and the
    # elastic chassis are conservative, so (1.33) must stay constant up to the O(dt) error
    # of the scheme, which halves when dt halves.
    m = without_damping(replace(model1_at_equilibrium, eq_r3=model1_at_equilibrium.eq_r3 + 0.02))
    spreads = []
    for dt in (5e-5, 2.5e-5):
        res = run(single(m, speed=5.0), end_time=1.0, save_every=0.005, dt=dt, tires=False)
        e = saved(res, "energy")[:, 0]
        z = saved(res, "r")[:, 0, 2]
        spreads.append(np.ptp(e))
        # Bound from the motion itself: a first-order step of an oscillation of frequency w
        # and energy E makes the energy oscillate by ~ w dt E (for symplectic Euler on
        # x'' = -w^2 x, H + w^2 dt x v / 2 is conserved exactly). Heave: amplitudes A of z and
        # w A of v_z (half their ranges) give w and E = m (w A)^2 / 2. The pitch motion and
        # the stiff chassis modes add to it: allow 2 w dt E (at dt = 5e-5 s: w = 9.8 1/s,
        # E = 29 J, w dt E = 1.4e-2 J; measured spread 1.56e-2 J).
        vz = saved(res, "v")[:, 0, 2]
        w = np.ptp(vz) / np.ptp(z)
        E = 0.5 * m.mass * (0.5 * np.ptp(vz)) ** 2
        assert np.ptp(e) < 2 * w * dt * E
    # first order: halving dt halves the spread (0.25 at second order); the O(dt^2) part is
    # ~ w dt ~ 5e-4 of it, so 0.45..0.55 (measured 0.500)
    assert 0.45 < spreads[1] / spreads[0] < 0.55


def test_free_rolling_straight_keeps_speed_and_lane(models):
    res = run(single(models[0], speed=22.0), end_time=1.0, save_every=0.05)
    v = saved(res, "v")[:, 0]
    r = saved(res, "r")[:, 0]
    assert int(res.final.clock.status[0]) == Status.OK
    np.testing.assert_allclose(v[:, 0], 22.0, atol=1e-9)  # free rolling: no longitudinal force
    assert np.max(np.abs(r[:, 1])) < 1e-9  # symmetric: stays on y = 0
    assert r[-1, 0] == pytest.approx(22.0, rel=1e-6)


def test_driven_front_wheels_faster_than_car_accelerate_it(model1_at_equilibrium):
    res = run(single(model1_at_equilibrium, speed=20.0, tire_speed=21.0), end_time=0.5, save_every=0.05)
    vx = saved(res, "v")[:, 0, 0]
    assert vx[-1] > 20.3 and np.all(np.diff(vx[2:]) > 0)
    slow = run(single(model1_at_equilibrium, speed=20.0, tire_speed=19.0), end_time=0.5, save_every=0.05)
    assert saved(slow, "v")[-1, 0, 0] < 19.8


def test_steady_turn_matches_linear_single_track_model(model1_at_equilibrium):
    m = model1_at_equilibrium
    delta_deg, speed = 1.0, 15.0
    res = run(single(m, speed=speed, steering_deg=delta_deg), end_time=4.0, save_every=0.05)
    F, W, v = saved(res, "F")[:, 0], saved(res, "W")[:, 0], saved(res, "v")[:, 0]
    yaw_rate = (F[:, 0, 0] * W[:, 1, 0] - F[:, 1, 0] * W[:, 0, 0]) / (F[:, 0, 0] ** 2 + F[:, 1, 0] ** 2)
    late = slice(-20, None)  # the last second
    assert np.ptp(yaw_rate[late]) < 0.01 * np.mean(yaw_rate[late])  # steady
    u = float(np.mean(np.hypot(v[late, 0], v[late, 1])))
    # Linear single-track model: r = U delta / (L + K U^2), K = m L2/(L Cf) - m L1/(L Cr),
    # axle cornering stiffnesses = 2 dFy/dalpha of this tire at the static axle loads.
    p = vehicle_params(m)
    L = m.l1 + m.l2
    w = m.mass * 9.81
    cf = 2 * float(cornering_stiffness(w * m.l2 / L / 2, p.tire.params[0]))
    cr = 2 * float(cornering_stiffness(w * m.l1 / L / 2, p.tire.params[0]))
    k_us = m.mass * m.l2 / (L * cf) - m.mass * m.l1 / (L * cr)
    expected = u * math.radians(delta_deg) / (L + k_us * u * u)
    assert np.mean(yaw_rate[late]) > 0  # positive steering turns left
    assert np.mean(yaw_rate[late]) == pytest.approx(expected, rel=0.03)


def test_batch_equals_scenarios_run_one_by_one(models):
    # XLA may vectorise a batch differently from a single scenario (different rounding).
    # Positions, directors and velocities agree to 1e-12. The director velocities W carry the
    # stiff chassis modes (omega ~ sqrt(V mu / my33) ~ 1.6e3 rad/s), which turn the 1e-15
    # round-off of F into ~1e-12 noise in W, so W is compared at omega * 1e-12 * 10.
    scenarios = [single(models[0], speed=s, steering_deg=d, tire_speed=ts, y=y)
                 for s, d, ts, y in [(20.0, 0.5, 0.0, 0.0), (22.0, -1.0, 23.0, 1.0), (18.0, 2.0, 0.0, -2.0),
                                     (25.0, 0.0, 24.0, 0.5)]]
    scenarios.append(single(models[1], speed=21.0, steering_deg=3.0))
    together = run(scenarios, end_time=0.3, save_every=0.05)
    for b, sc in enumerate(scenarios):
        alone = run(sc, end_time=0.3, save_every=0.05)
        for field, atol in (("r", 1e-12), ("F", 1e-12), ("v", 1e-12), ("W", 2e-8), ("energy", 1e-9)):
            np.testing.assert_allclose(np.asarray(getattr(together.samples, field)[b]),
                                       np.asarray(getattr(alone.samples, field)[0]), rtol=1e-12, atol=atol)


def test_padded_vehicles_do_not_change_results(models):
    from jaxmedusa.core.scenario import Scenario
    one = single(models[0], speed=20.0, steering_deg=1.0)
    two = Scenario("two", [models[0]], [one.vehicles[0], replace(one.vehicles[0], y=50.0)])
    settings = Settings(end_time=0.2, save_every=0.05, contact_geometry="superellipsoid")
    batch, state = build_batch([one, two], dt=settings.dt)  # `one` is padded to 2 vehicles
    assert np.asarray(batch.valid).tolist() == [[True, False], [True, True]]
    res = simulate(batch, state, settings)
    np.testing.assert_allclose(np.asarray(res.samples.r[0, :, 0]), np.asarray(res.samples.r[1, :, 0]), atol=1e-12)
    assert np.all(np.asarray(res.samples.r[0, :, 1]) == np.asarray(res.samples.r[0, 0, 1]))  # padding stays put


def test_nan_scenario_is_flagged_and_neighbours_unaffected(models):
    good = single(models[0], speed=20.0, steering_deg=2.0)
    settings = Settings(end_time=0.1, save_every=0.05, contact_geometry="superellipsoid")
    batch, state = build_batch([good, good, good], dt=settings.dt)
    # the builder rejects a NaN speed (bad input), so the NaN goes into the built state:
    # scenario 1's forward velocity
    v = state.vehicles.v.at[1, 0, 0].set(math.nan)
    state = pytree_replace(state, vehicles=pytree_replace(state.vehicles, v=v))
    res = simulate(batch, state, settings)
    status = np.asarray(res.final.clock.status)
    assert status.tolist() == [Status.OK, Status.NAN, Status.OK]
    alone = run(good, end_time=0.1, save_every=0.05)
    # Not bitwise: a batch of 3 and a batch of 1 may be vectorised differently by XLA (other
    # rounding; test_batch_equals_scenarios_run_one_by_one): positions agree to 1e-12 m there
    # over 0.3 s. A NaN that leaked into a neighbour would make it NaN or flag it.
    for b in (0, 2):
        np.testing.assert_allclose(np.asarray(res.final.vehicles.r[b]), np.asarray(alone.final.vehicles.r[0]),
                                   rtol=1e-12, atol=1e-12)


def test_gradient_through_the_run_is_finite_and_matches_finite_differences(models):
    # Forward-mode derivative of the final lateral position w.r.t. the steering angle.
    settings = Settings(end_time=0.3, save_every=0.1, contact_geometry="superellipsoid")

    def final_y(delta_deg):
        sc = single(models[0], speed=20.0)
        batch, state = build_batch([sc], dt=settings.dt)
        steer = batch.driver.steer_values + delta_deg * math.pi / 180
        batch = replace(batch, driver=replace(batch.driver, steer_values=steer))
        return simulate(batch, state, settings, record=False).final.vehicles.r[0, 0, 1]

    d = 1.0
    g = float(jax.jacfwd(final_y)(d))
    h = 1e-4
    fd = (float(final_y(d + h)) - float(final_y(d - h))) / (2 * h)
    assert np.isfinite(g) and g == pytest.approx(fd, rel=1e-4)


def test_fixed_step_path_gives_reverse_mode_gradients(models):
    # jax.grad cannot pass the adaptive while_loop; the fixed-step scan path serves reverse mode.
    from jaxmedusa.solver.simulate import simulate_fixed

    settings = Settings(end_time=0.2, save_every=0.1, contact_geometry="superellipsoid")
    batch, state = build_batch([single(models[0], speed=20.0, steering_deg=1.0)], dt=settings.dt)
    adaptive = simulate(batch, state, settings, record=False).final
    fixed = simulate_fixed(batch, state, settings)
    # Without contact MEDUSA's step never changes, so both paths take the same 4000 steps
    # (the adaptive loop one more, since t accumulates to just below 0.2).
    assert int(fixed.clock.steps[0]) == 4000
    assert int(adaptive.clock.steps[0]) == 4001
    # one step of 5e-5 s at ~20 m/s apart
    np.testing.assert_allclose(np.asarray(fixed.vehicles.r), np.asarray(adaptive.vehicles.r), atol=1.1 * 20 * 5e-5)

    def final_y(steer_offset):
        b = replace(batch, driver=replace(batch.driver, steer_values=batch.driver.steer_values + steer_offset))
        return simulate_fixed(b, state, settings).vehicles.r[0, 0, 1]

    g = float(jax.grad(final_y)(0.0))
    h = 1e-6
    fd = (float(final_y(h)) - float(final_y(-h))) / (2 * h)
    assert np.isfinite(g) and g == pytest.approx(fd, rel=1e-5)
