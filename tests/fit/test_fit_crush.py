"""Fitting with a measured crush profile (fit/spec.py CRUSH_QUANTITIES, fit/problem.py): C1..C6
of a vehicle's first collision observed at the end, each with a sigma.

The independent figure is Campbell's speed line of the law's own A, B (CRASH3): a barrier
test at speed V leaves C = (V - b0) / b1 with b1 = sqrt(B w / m), b0 = (A / B) b1, so
dC/dV = 1 / b1."""
from __future__ import annotations

import copy
import math
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.fit import FitProblem, fit_from_dict

ROOT = Path(__file__).resolve().parents[2]
MASS, WIDTH, A_FRONT, B_FRONT = 1573.0, 1.6, 44e3, 550e3
B1 = math.sqrt(B_FRONT * WIDTH / MASS)  # [1/s]
B0 = A_FRONT / B_FRONT * B1  # [m/s]
V = 56.0 / 3.6

FIT = {
    "scenario": {"path": str(ROOT / "studies" / "medusa" / "barrier")},  # the car 0.3 m from the wall
    "simulation": {"end_time": 0.18, "dt": 4e-4, "step_control": "constant", "save_every": 0.16},
    "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "initial": V, "bounds": [10.0, 25.0]}},
    "observations": [{"vehicle": 1, "time": "end", **{f"c{i}": 0.55 for i in range(1, 7)},
                      "sigma": {f"c{i}": 0.02 for i in range(1, 7)}}],
    "fit": {"starts": 1, "max_iterations": 3},
}


def _spec(data=FIT):
    return fit_from_dict(copy.deepcopy(data), base_dir=ROOT)


def test_crush_is_observed_at_the_end_only():
    data = copy.deepcopy(FIT)
    data["observations"][0]["time"] = 0.1
    with pytest.raises(Exception, match=r"observations\[0\]\.c1"):
        fit_from_dict(data, base_dir=ROOT)


def test_crush_needs_its_sigma():
    data = copy.deepcopy(FIT)
    data["observations"][0]["sigma"].pop("c3")
    with pytest.raises(Exception, match=r"observations\[0\]\.sigma\.c3"):
        fit_from_dict(data, base_dir=ROOT)


@pytest.fixture(scope="module")
def problem():
    return FitProblem(_spec())


def test_predicted_profile_is_campbells_crush(problem):
    """At the true speed the predicted C1..C6 are equal (full-width wall) and within 3 % of
    Campbell's (V - b0) / b1 = 0.577 m (the suspension and the pitching body take 1.3 % of
    the speed: measured 0.569 m); the residuals are (model - 0.55) / 0.02."""
    pred, ok = problem.predict(np.array([V]))
    pred = np.asarray(pred)
    assert bool(ok)
    assert np.ptp(pred) < 1e-9 and pred[0] == pytest.approx((V - B0) / B1, rel=0.03)
    np.testing.assert_allclose(np.asarray(problem.residuals(np.array([V]))), (pred - 0.55) / 0.02, rtol=1e-12)


@pytest.mark.slow
def test_crush_residual_derivative_is_campbells_slope(problem):
    """Forward-mode derivative of C1 with respect to the impact speed through the whole run:
    1 / b1 = 0.0423 s within 5 % (the share the suspension takes grows little with speed)."""
    d = jax.jacfwd(lambda x: problem.predict(x)[0])(np.array([V]))
    assert float(d[0, 0]) == pytest.approx(1.0 / B1, rel=0.05)
