"""Driver brake, lock and throttle per wheel (physics/wheel_controls.py): EDC's conventions
against closed forms. Fiala tires: their friction does not depend on the load, so the
stopping distance of the whole car is v^2 / (2 mu g) whatever the load transfer."""
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.physics.tire.fiala import FIALA_185SR14
from jaxmedusa.physics.wheel_controls import V_REG, controlled_forces
from jaxmedusa.solver.simulate import simulate

MU_P, MU_S = FIALA_185SR14["mu_p"], FIALA_185SR14["mu_s"]
FREE = Settings(end_time=1.0, contact=False, step_control="constant")


@pytest.fixture(scope="module")
def fiala_car(model1_at_equilibrium):
    from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium

    m = dataclasses.replace(model1_at_equilibrium, tire_model="fiala")
    return with_equilibrium(m, solve_equilibrium(m))


def _with(sc, **tables):
    veh = dataclasses.replace(sc.vehicles[0], **{k: DriverTable(values=(v,)) for k, v in tables.items()})
    return dataclasses.replace(sc, vehicles=[veh])


def test_stopping_distances_threshold_and_locked(fiala_car, single_scenario):
    # One batch: 20, 30, 40 m/s, each at brake fraction 1.0 (the threshold of lock: mu_peak on
    # every wheel) and with every wheel locked (mu_slide). Stopping distance v^2 / (2 mu g);
    # 2 % (the tolerance) covers the pitch transient (the suspension settles in ~0.3 s
    # while the deceleration is mu g on average) and the creep below V_REG (~0.3 mm).
    speeds = (20.0, 30.0, 40.0)
    scs = [_with(single_scenario(fiala_car, speed=v, name=f"{k}{v}"), **{k: 1.0}) for v in speeds for k in ("brake", "lock")]
    batch, state = build_batch(scs)
    res = simulate(batch, state, dataclasses.replace(FREE, end_time=40.0 / (MU_S * GRAVITY) + 0.3), record=False)
    x = np.asarray(res.final.vehicles.r[:, 0, 0]).reshape(3, 2)
    v_end = np.linalg.norm(np.asarray(res.final.vehicles.v[:, 0]), axis=1)
    assert np.all(v_end < 1e-3)  # every car has stopped
    for i, v in enumerate(speeds):
        assert x[i, 0] == pytest.approx(v * v / (2 * MU_P * GRAVITY), rel=0.02)
        assert x[i, 1] == pytest.approx(v * v / (2 * MU_S * GRAVITY), rel=0.02)
        # locked vs threshold: the distances stand as mu_peak / mu_slide (1.25 here), 0.5 %
        assert x[i, 1] / x[i, 0] == pytest.approx(MU_P / MU_S, rel=0.005)


def test_rolling_resistance_and_throttle(fiala_car, single_scenario):
    # Coasting from 20 m/s with f_r = 0.015: deceleration f_r g, so after 1 s v = 20 - 0.147 m/s.
    # Throttle 800 N on each front wheel from rest: a = 1600 N / 1573 kg for 1 s. 1 % on the
    # change of speed (pitch transients average out over the second).
    coast = single_scenario(dataclasses.replace(fiala_car, rolling_resistance=0.015), speed=20.0, name="coast")
    drive = dataclasses.replace(single_scenario(fiala_car, name="drive"), vehicles=[dataclasses.replace(
        single_scenario(fiala_car).vehicles[0], throttle=DriverTable(values=((800.0, 800.0, 0.0, 0.0),)))])
    batch, state = build_batch([coast, drive])
    v = np.asarray(simulate(batch, state, FREE, record=False).final.vehicles.v[:, 0, 0])
    assert 20.0 - v[0] == pytest.approx(0.015 * GRAVITY * 1.0, rel=0.01)
    assert v[1] == pytest.approx(1600.0 / fiala_car.mass * 1.0, rel=0.01)


def test_brake_level_derivative_matches_central_differences(fiala_car, single_scenario):
    # x(1 s) of a car braking at fraction b from 20 m/s: d x / d b by forward mode against central
    # differences (h = 1e-3: x is nearly linear in b, truncation ~1e-9 m), 1e-5 relative; and
    # against the closed form -mu_p g t^2 / 2 (every wheel at b mu_p Fz), 1 %.
    batch, state = build_batch([_with(single_scenario(fiala_car, speed=20.0), brake=0.5)])
    settings = dataclasses.replace(FREE, dt=1e-4)

    def x_end(b):
        wheels = dataclasses.replace(batch.driver.wheels, brake_values=jnp.full_like(batch.driver.wheels.brake_values, b))
        bt = dataclasses.replace(batch, driver=dataclasses.replace(batch.driver, wheels=wheels))
        return simulate(bt, state, settings, record=False).final.vehicles.r[0, 0, 0]

    f = jax.jit(x_end)
    _, dx = jax.jvp(f, (jnp.asarray(0.5),), (jnp.asarray(1.0),))
    h = 1e-3
    fd = (f(0.5 + h) - f(0.5 - h)) / (2 * h)
    assert np.isfinite(float(dx))
    assert float(dx) == pytest.approx(float(fd), rel=1e-5)
    assert float(dx) == pytest.approx(-0.5 * MU_P * GRAVITY, rel=0.01)


def test_friction_circle_and_locked_wheel_forces():
    # EDC's friction circle at fraction 0.6: Fx = -0.6 mu Fz and the lateral force limited to
    # sqrt(1 - 0.36) mu Fz = 0.8 mu Fz when the tire asks for more; a locked wheel slides at
    # mu_s Fz against its velocity (to |v| / sqrt(|v|^2 + V_REG^2) = 1 - 3e-6 at 20 m/s).
    fz, mu_p, mu_s = jnp.full(3, 4000.0), jnp.full(3, 0.9), jnp.full(3, 0.7)
    vx, vy = jnp.full(3, 20.0), jnp.array([0.0, 2.0, 2.0])
    fy0 = jnp.array([0.0, 3500.0, 3500.0])
    fx, fy, sl = controlled_forces(jnp.zeros(3), fy0, jnp.zeros(3, bool), fz, vx, vy, mu_p, mu_s,
                                   jnp.array([0.6, 0.6, 0.0]), jnp.array([0.0, 0.0, 1.0]), jnp.zeros(3), 0.0)
    d = 20.0 / math.sqrt(400.0 + V_REG**2)
    assert float(fx[0]) == pytest.approx(-0.6 * 0.9 * 4000.0 * d, rel=1e-12)
    assert float(fy[0]) == 0.0 and not bool(sl[0])
    assert math.hypot(float(fx[1]), float(fy[1])) == pytest.approx(0.9 * 4000.0, rel=1e-12)  # on the circle
    assert bool(sl[1])  # attempted force outside the circle: sliding
    speed = math.hypot(20.0, 2.0)
    assert float(fx[2]) == pytest.approx(-0.7 * 4000.0 * 20.0 / speed, rel=1e-5)
    assert float(fy[2]) == pytest.approx(0.7 * 4000.0 * 2.0 / speed, rel=1e-5)  # fy > 0 pushes along -e_y
    assert bool(sl[2])


def test_batches_without_controls_compile_them_out(models, single_scenario):
    # MEDUSA's cars: no per-wheel tables, no zones -> nothing new in the step.
    batch, _ = build_batch([single_scenario(models[0], speed=10.0)])
    assert batch.driver.wheels is None and batch.zones is None
