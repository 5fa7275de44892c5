"""The worked example studies/fit_offset_rest.toml (docs/fit.md, "Worked example: rest positions")."""
from __future__ import annotations

import math
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmedusa.fit import FitProblem, load_fit

FILE = Path(__file__).resolve().parents[2] / "studies" / "fit_offset_rest.toml"
TRUTH = np.array([22.0, 20.0])  # [m/s], the printed scenario's speeds


def test_the_example_reads_rest_observations():
    spec = load_fit(FILE)
    assert spec.settings.end_condition == "rest" and spec.settings.contact_law == "crush"
    assert all(o.at_rest and math.isnan(o.time) for o in spec.observations)
    assert [u.path for u in spec.unknowns] == ["vehicles.1.speed", "vehicles.2.speed"]
    assert spec.base.vehicles[0].lock.times == (0.0, 1.5)  # every wheel locked from 1.5 s


@pytest.mark.slow
def test_observations_are_the_rest_positions_at_the_truth():
    """(About a minute.) The file's values are the simulator's rest positions at the truth,
    rounded to 1 cm: each within half a centimetre (the rounding) plus 1e-9 m. (Derivatives
    of a rest position through this collision: tests/fit/test_rest_derivative_collision.py
    and docs/gradients.md.)"""
    problem = FitProblem(load_fit(FILE))
    pred, ok = jax.jit(problem.predict)(TRUTH)
    assert bool(ok)
    np.testing.assert_allclose(np.asarray(pred), problem._value, atol=0.005 + 1e-9)
