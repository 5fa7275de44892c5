"""A brake fraction as a fit unknown (fit/problem.py's per-wheel tables) against the closed
form of a braked stop, and the fit file's refusals of lock and of brake bounds above 1.

A car on Fiala tires (friction independent of the load) braked at the fraction f of the
peak friction on every wheel decelerates at f mu_p g (EDC: attempted force = f mu_p Fz per
wheel, and the Fz sum to m g whatever the pitch), so from v0 it stops after
d(f) = v0^2 / (2 f mu_p g), and d'(f) = -d / f.
"""
import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.fit import FitError, FitOptions, FitProblem, FitSpec, Observation, Unknown, fit_from_dict, solve_fit
from jaxmedusa.io.validation import InputErrors
from jaxmedusa.physics.tire.fiala import FIALA_185SR14
from jaxmedusa.study.targets import parse_target

MU_P = FIALA_185SR14["mu_p"]
V0 = 10.0  # [m/s]
F_TRUE = 0.5  # [-] brake fraction of the observation
DT = 4e-4  # [s], constant steps (the smooth laws' study step)
SETTINGS = Settings(end_time=4.0, dt=DT, step_control="constant", contact=False, end_condition="rest",
                    rest_speed=0.05, rest_hold=0.2)
STUDIES = Path(__file__).resolve().parents[2] / "studies"


def distance(f):
    """Closed-form stopping distance [m] at brake fraction f (module docstring)."""
    return V0**2 / (2 * f * MU_P * GRAVITY)


@pytest.fixture(scope="module")
def braked_car(model1_at_equilibrium, single_scenario):
    from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium

    m = dataclasses.replace(model1_at_equilibrium, tire_model="fiala")
    sc = single_scenario(with_equilibrium(m, solve_equilibrium(m)), speed=V0, name="braked")
    return dataclasses.replace(sc, vehicles=[dataclasses.replace(sc.vehicles[0], brake=DriverTable(values=(0.3,)))])


def _spec(base, path="vehicles.1.brake", bounds=(0.05, 0.95)):
    target = parse_target(path, base, "unknowns.f.path", InputErrors("<test>"))
    return FitSpec(name="brake", base=base, settings=SETTINGS,
                   unknowns=[Unknown(name="f", path=path, target=target, initial=0.3, bounds=bounds, spread=0.1)],
                   observations=[Observation(index=0, vehicle=0, time=float("nan"),
                                             values=(("x", distance(F_TRUE), 0.01),), at_rest=True)],
                   options=FitOptions(starts=1, max_iterations=12))


def test_brake_fraction_fitted_from_a_stopping_distance(braked_car):
    # The base scenario brakes at 0.3; the unknown sets every wheel's fraction (the whole
    # table). The observation is the closed-form distance at f = 0.5 (11.226 m).
    problem = FitProblem(_spec(braked_car))
    h = 1e-3

    def one(f):  # rest x and its forward-mode derivative in f
        return jax.jvp(lambda x: problem.predict(x)[0][0], (f[None],), (np.ones(1),))

    # values at f - h, f, f + h and the derivatives there in one vmapped call (one compilation)
    d3, df3 = (np.asarray(a) for a in jax.jit(jax.vmap(one))(F_TRUE + np.array([-h, 0.0, h])))
    # the simulated stop at 0.5 against the closed form: 0.2 % (the pitch transient of the first
    # 0.3 s and the creep below V_REG, tests/physics/test_braking.py; measured 0.034 %)
    d_sim = float(d3[1])
    print(f"distance: simulated {d_sim:.5f} m, closed form {distance(F_TRUE):.5f} m")
    assert d_sim == pytest.approx(distance(F_TRUE), rel=0.002)
    # forward mode through the loop that ends at rest: against the closed form d'(f) = -d / f
    # (0.2 %, the distance's own tolerance; measured 1.6e-4) and central differences (h = 1e-3:
    # d is smooth in f, truncation h^2 d''' / 6 / d' = h^2 / f^2 = 4e-6 relative; 1e-4 holds
    # it with the round-off of a 7,000-step run; measured 4e-6)
    df = float(df3[1])
    assert df == pytest.approx(-distance(F_TRUE) / F_TRUE, rel=0.002)
    central = float(d3[2] - d3[0]) / (2 * h)
    print(f"d rest_x / d f: forward {df:.6f}, central {central:.6f}, closed form {-distance(F_TRUE) / F_TRUE:.6f}")
    assert df == pytest.approx(central, rel=1e-4)
    # the fit from 0.3 recovers the fraction the closed form says: the simulated distance is
    # within 0.2 % of the closed form, and f d(f) is constant, so f within 0.2 % of 0.5
    # (measured 0.50017)
    result = solve_fit(problem, starts=np.array([[0.3]]))
    print(f"fitted f = {result.estimate[0]:.6f}, steps {result.steps}")
    assert result.estimate[0] == pytest.approx(F_TRUE, rel=0.002)
    assert abs(result.residuals[0]) < 1.0  # the distance met to within sigma (1 cm)


def test_one_wheels_brake_knot_moves_only_that_wheel(braked_car):
    # vehicles.1.brake.values.1.3 (knot 1 of the rear-left wheel): the built table holds the
    # value at that wheel only, the others keep the base scenario's 0.3
    problem = FitProblem(_spec(braked_car, path="vehicles.1.brake.values.1.3"))
    batch, _ = problem.apply(np.array([0.7]))
    values = np.asarray(batch.driver.wheels.brake_values[0, 0])  # (Kw, W)
    np.testing.assert_array_equal(values[:, :4], [[0.3, 0.3, 0.7, 0.3]] * values.shape[0])


def _fit_dict(path, bounds):
    return {
        "scenario": {"medusa": {"folder": str(STUDIES / "medusa" / "offset")}, "road": {"flat": True}},
        "simulation": {"end_time": 1.0, "dt": 4e-4, "step_control": "constant", "contact_law": "crush"},
        "unknowns": {"f": {"path": path, "initial": 0.5, **({"bounds": bounds} if bounds else {})}},
        "observations": [{"vehicle": 1, "time": 1.0, "x": 20.0, "sigma": {"x": 0.1}}],
    }


def test_the_fit_file_takes_brake_and_throttle_and_refuses_lock_and_brake_above_one():
    spec = fit_from_dict(_fit_dict("vehicles.1.brake.values.1.2", [0.0, 1.0]))
    assert spec.unknowns[0].target.kind == "wheel" and spec.unknowns[0].target.index == (0, 1)
    spec = fit_from_dict(_fit_dict("vehicles.2.throttle", [0.0, 2000.0]))
    assert spec.unknowns[0].target.name == "throttle"
    # lock is 0 or 1: not a continuous unknown (exit code 2, the key named)
    with pytest.raises(FitError, match=r"unknowns\.f\.path: 'vehicles\.1\.lock': lock is 0 or 1"):
        fit_from_dict(_fit_dict("vehicles.1.lock", [0.0, 1.0]))
    # above 1 the wheel locks (a jump): a brake unknown needs bounds within [0, 1]
    with pytest.raises(FitError, match=r"unknowns\.f\.bounds: a brake fraction needs bounds within \[0, 1\]"):
        fit_from_dict(_fit_dict("vehicles.1.brake", [0.2, 1.5]))
    with pytest.raises(FitError, match=r"unknowns\.f\.bounds"):
        fit_from_dict(_fit_dict("vehicles.1.brake", None))
