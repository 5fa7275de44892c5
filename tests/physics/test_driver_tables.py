"""Driver tables that change during a run: the evade manoeuvre's steering (report section 3.5,
hard-wired in the report's vehicle.c) against the C conditions, the car's response to it,
and tables of different lengths padded across a batch, each scenario as it runs alone."""
from __future__ import annotations

import math
from dataclasses import replace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch, driver_params
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.physics.driver import driver_inputs
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.core.status import Status

from helpers import EXAMPLES


def evade_c(t):
    """The report's vehicle.c: steer_angle [deg] as a function of time (studies/medusa/evade)."""
    return (0 if t < 0.30 else 3 if t < 0.50 else 9 if t < 0.70 else 3 if t < 0.85 else 0 if t < 1.10
            else -3 if t < 1.25 else -7 if t < 1.45 else -3 if t < 1.60 else 0)


@pytest.fixture(scope="module")
def evade():
    sc, _ = load_scenario(EXAMPLES / "evade")
    return replace(sc, vehicles=sc.vehicles[:1])  # the evading car alone (no contact)


def test_evade_table_reproduces_the_c_conditions(evade):
    veh = evade.vehicles[0]
    d = driver_params(veh, len(veh.steering.times) + 3)  # padded beyond its 9 knots
    f = jax.jit(jax.vmap(lambda t: driver_inputs(jax.tree.map(jnp.asarray, d), t)[0]))
    knots = np.array([0.30, 0.50, 0.70, 0.85, 1.10, 1.25, 1.45, 1.60])
    t = np.concatenate([np.linspace(0.0, 2.0, 401), knots, knots - 1e-9, knots + 1e-9])
    expected = np.radians([evade_c(x) for x in t])
    # piecewise constant: the table returns the stored value itself (exact)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(t))), expected)


def test_the_car_follows_the_steering_as_it_changes(evade):
    settings = Settings(end_time=0.6, save_every=0.01, contact=False)
    res = simulate(*build_batch([evade], dt=settings.dt), settings)
    assert int(res.final.clock.status[0]) == Status.OK
    ok = np.asarray(res.samples.saved[0])
    t = np.asarray(res.samples.t[0])[ok]
    F = np.asarray(res.samples.F[0, :, 0])[ok]
    heading = np.arctan2(F[:, 1, 0], F[:, 0, 0])
    # before 0.30 s the inputs are 0 and the car symmetric: no heading at all (to rounding)
    assert np.max(np.abs(heading[t < 0.30 - 1e-9])) < 1e-12
    # left turn (positive steering, counter-clockwise) once the table switches to 3 and 9 deg:
    # the tire lag (TIRE 1.6 ms) and the yaw inertia delay it by a few hundredths of a second
    later = t > 0.40
    assert np.all(heading[later] > 0.0) and np.all(np.diff(heading[t > 0.35]) > 0.0)


def test_tables_of_different_lengths_padded_in_a_batch(evade):
    """A: the evade steering (9 knots) with constant tire speed; B: constant steering and a
    linear tire-speed table (2 knots). In one batch both are padded to 9 knots; each must run
    bit for bit as alone (B alone has tables of 2 knots)."""
    a = evade
    vb = replace(evade.vehicles[0], steering=DriverTable(values=(2.0,)),
                 tire_speed=DriverTable(times=(0.0, 0.2), values=(22.0, 24.0), kind="linear"))
    b = replace(evade, name="b", vehicles=[vb])
    settings = Settings(end_time=0.4, save_every=0.05, contact=False)
    both = simulate(*build_batch([a, b], dt=settings.dt), settings)
    a_alone = simulate(*build_batch([a, a], dt=settings.dt), settings)  # same shapes as `both`
    b_alone = simulate(*build_batch([b, b], dt=settings.dt), settings)  # 2-knot tables
    for name in ("r", "v", "F", "W", "alpha_lag"):
        np.testing.assert_array_equal(np.asarray(getattr(both.final.vehicles, name)[0]),
                                      np.asarray(getattr(a_alone.final.vehicles, name)[0]))
        np.testing.assert_array_equal(np.asarray(getattr(both.final.vehicles, name)[1]),
                                      np.asarray(getattr(b_alone.final.vehicles, name)[0]))
    # and the tables did act: B's driven front wheels (22 -> 24 m/s at 0.2 s, faster than the
    # car) push it ahead of A, which rolls freely
    assert float(both.final.vehicles.v[1, 0, 0]) > float(both.final.vehicles.v[0, 0, 0]) + 0.1
    assert math.isfinite(float(both.final.clock.t[1]))
