"""An observation at end_time is captured when the constant control's last step reaches
end_time only to round-off (12500 steps of 2e-4 s end at t = 2.4999999999998 s)."""
from __future__ import annotations

import jax
import numpy as np

from helpers import EXAMPLES
from jaxmedusa.fit import FitProblem, fit_from_dict

TABLE = {
    "scenario": {"path": str(EXAMPLES / "straight")},
    "simulation": {"end_time": 2.5, "dt": 2e-4, "step_control": "constant"},
    "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "initial": 20.0, "bounds": [15.0, 25.0]}},
    "observations": [{"vehicle": 1, "time": "end", "x": 0.0, "sigma": {"x": 1.0}}],
}


def test_observation_at_end_time_reached_only_to_round_off():
    problem = FitProblem(fit_from_dict(TABLE))
    obs, final = jax.jit(problem.observe)(np.array([20.0]))
    t_end = float(final.clock.t[0])
    # the premise: the run stops short of 2.5 s by round-off only (constant control: t >= end - dt/2)
    assert 2.5 - 1e-9 < t_end < 2.5
    assert bool(obs.seen[0, 0])
    # the state at T is the final state: T lies 1e-12 s past it, at 20 m/s < 1e-10 m away
    # (tolerance 1e-9 m: that distance plus round-off of the Hermite weights at s = 1)
    np.testing.assert_allclose(np.asarray(obs.r[0, 0]), np.asarray(final.vehicles.r[0]), atol=1e-9)
    assert float(final.vehicles.r[0, 0, 0]) > 40.0  # it did drive 2.5 s at about 20 m/s
