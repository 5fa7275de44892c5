"""Fit observations at rest and of skid lengths (fit/spec.py, fit/problem.py).

The car's driven front wheels (tire speed 0.11 m/s) brake it from 3 m/s to a crawl below
rest_speed = 0.2 m/s, sliding at first (tests/analysis/test_skid_marks.py): the run ends at
rest, and the front wheels leave marks.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

from helpers import EXAMPLES
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.fit import FitProblem, fit_from_dict
from jaxmedusa.fit.spec import FitError
from jaxmedusa.solver.simulate import simulate

SIM = {"end_time": 1.5, "dt": 2e-4, "step_control": "constant", "end_condition": "rest", "rest_speed": 0.2}


def _table(observations, simulation=SIM):
    return {
        "scenario": {"medusa": {"folder": str(EXAMPLES / "straight")}, "road": {"flat": True},
                     "overrides": {"vehicles": {"1": {"tire_speed": 0.11}}}},
        "simulation": simulation,
        "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "initial": 3.0, "bounds": [2.0, 4.0]}},
        "observations": observations,
    }


REST = {"vehicle": 1, "time": "rest", "x": 1.0, "heading_deg": 0.0, "skid_length": 1.0,
        "sigma": {"x": 0.1, "heading_deg": 1.0, "skid_length": 0.1}}


def test_rest_and_skid_observations_read_the_runs_end_and_its_marks():
    problem = FitProblem(fit_from_dict(_table([REST])))
    pred, ok = jax.jit(problem.predict)(np.array([3.0]))
    assert bool(ok)
    # the same scenario through the study's metrics (analysis/rest.py): rest x, heading, skid length
    batch, state = problem.apply(np.array([3.0]))
    res = simulate(batch, state, problem.spec.settings, tracker=Outcomes(), record=False)
    m = jax.device_get(outcome_arrays(batch, res.final, res.metrics, Outcomes()))
    assert m["rest_time"][0, 0] > 0.0  # the car did come to rest
    np.testing.assert_allclose(np.asarray(pred), [m["rest_x"][0, 0], m["rest_heading"][0, 0],
                                                 m["skid_length"][0, 0]], rtol=0, atol=1e-12)
    assert np.asarray(pred)[2] > 0.5  # the front wheels slid (tests/analysis/test_skid_marks.py)


@pytest.mark.parametrize("change, key", [
    ({"time": 1.0}, "observations[0].skid_length"),  # a whole-run quantity at a time
    ({"time": "rest", "_sim": {"end_time": 1.5}}, "observations[0].time"),  # rest without end_condition "rest"
])
def test_rest_observations_are_checked(change, key):
    obs = {**REST, **{k: v for k, v in change.items() if not k.startswith("_")}}
    with pytest.raises(FitError, match=key.replace("[", r"\[").replace("]", r"\]")):
        fit_from_dict(_table([obs], change.get("_sim", SIM)))
