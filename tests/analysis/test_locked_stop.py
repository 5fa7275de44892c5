"""A locked-wheel stop against its closed form: end at rest, rest position, skid marks, and
the rest position's derivative with respect to the initial speed.

Every wheel of the car is locked from t = 0 (physics/wheel_controls.py): it slides at the
Fiala tire's mu_s, whose friction does not depend on the load, so the car decelerates at
mu_s g, stops after v0 / (mu_s g) and v0^2 / (2 mu_s g), and every wheel leaves a mark as
long as the stopping distance (tests/physics/test_braking.py checks the distances to 2 %).
"""
import dataclasses

import jax
import numpy as np
import pytest

from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.core.status import Status
from jaxmedusa.fit import FitProblem
from jaxmedusa.fit.spec import FitSpec, Observation, Unknown
from jaxmedusa.physics.tire.fiala import FIALA_185SR14
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.study.spec import Target

MU_S = FIALA_185SR14["mu_s"]
V0 = 12.0  # [m/s]
HOLD = 0.2  # [s]
DT = 2e-4  # [s], constant steps (the smooth laws' study step is 4e-4 s)
SETTINGS = Settings(end_time=3.0, dt=DT, step_control="constant", contact=False, end_condition="rest",
                    rest_speed=0.05, rest_hold=HOLD)


@pytest.fixture(scope="module")
def locked_car(model1_at_equilibrium, single_scenario):
    from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium

    m = dataclasses.replace(model1_at_equilibrium, tire_model="fiala")
    sc = single_scenario(with_equilibrium(m, solve_equilibrium(m)), speed=V0, name="locked")
    return dataclasses.replace(sc, vehicles=[dataclasses.replace(sc.vehicles[0], lock=DriverTable(values=(1.0,)))])


@pytest.fixture(scope="module")
def stop(locked_car):
    batch, state = build_batch([locked_car], dt=DT)
    res = jax.device_get(simulate(batch, state, SETTINGS, tracker=Outcomes(), record=False))
    return res, jax.device_get(outcome_arrays(batch, res.final, res.metrics, Outcomes()))


def test_locked_stop_ends_one_hold_after_the_closed_form_rest(stop):
    res, m = stop
    assert int(res.final.clock.status[0]) == Status.OK
    # speed below rest_speed at (v0 - rest_speed) / (mu_s g); the run ends rest_hold later.
    # 2 % of that time: the stopping distance's tolerance (pitch transient at the start)
    t_still = (V0 - SETTINGS.rest_speed) / (MU_S * GRAVITY)
    t_end = float(res.final.clock.t[0])
    assert t_end - t_still == pytest.approx(HOLD, abs=0.02 * t_still)
    assert m["rest_time"][0, 0] == pytest.approx(t_still, rel=0.02)
    x_stop = V0**2 / (2 * MU_S * GRAVITY)
    assert m["rest_x"][0, 0] == pytest.approx(x_stop, rel=0.02)
    assert m["distance"][0, 0] == pytest.approx(x_stop, rel=0.02)


def test_every_locked_wheel_marks_the_stopping_distance(stop):
    res, m = stop
    marks = np.asarray(res.metrics.rest.skids.length[0, 0])  # (4,) per wheel
    x_stop = V0**2 / (2 * MU_S * GRAVITY)
    # each wheel slides from the first step to standstill: its mark is the stopping distance
    # (2 %, as the distance itself; the first step's 2.4 mm is not counted)
    np.testing.assert_allclose(marks, x_stop, rtol=0.02)
    assert m["skid_length"][0, 0] == pytest.approx(marks.max(), abs=0.0)
    # straight ahead every wheel travels as the centre of mass: the marks agree with the
    # distance to the pitch's fore-aft motion of the contact points (millimetres)
    np.testing.assert_allclose(marks, m["distance"][0, 0], atol=0.01)


def test_rest_position_derivative_matches_central_differences(locked_car):
    # forward mode through the loop that ends at rest, as `jaxmedusa fit` takes it (jacfwd of
    # the residual model), against central differences in the initial speed (h = 0.01 m/s:
    # rest x is smooth in v0, truncation h^2 x''' / 6 ~ 1e-7 relative), 1e-3 relative; and
    # the closed form d(v0^2 / (2 mu_s g)) / d v0 = v0 / (mu_s g), 2 %.
    target = Target(kind="vehicle", name="speed", items=(0,), path="vehicles.1.speed")
    spec = FitSpec(name="locked", base=locked_car, settings=SETTINGS,
                   unknowns=[Unknown(name="v0", path="vehicles.1.speed", target=target, initial=V0, bounds=None,
                                     spread=1.0)],
                   observations=[Observation(index=0, vehicle=0, time=float("nan"), values=(("x", 0.0, 1.0),),
                                             at_rest=True)])
    problem = FitProblem(spec)
    model = jax.jit(lambda x: problem.predict(x)[0][0])
    dx = float(jax.jit(jax.jacfwd(lambda x: problem.predict(x)[0][0]))(np.array([V0]))[0])
    h = 0.01
    central = (float(model(np.array([V0 + h]))) - float(model(np.array([V0 - h])))) / (2 * h)
    assert dx == pytest.approx(central, rel=1e-3)
    assert dx == pytest.approx(V0 / (MU_S * GRAVITY), rel=0.02)
