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
def test_observations_are_the_rest_positions_at_the_truth_and_their_derivatives_match_differences():
    problem = FitProblem(load_fit(FILE))
    model = jax.jit(lambda x: problem.predict(x)[0])
    at_truth = np.asarray(model(TRUTH))
    # the file's values are these, rounded to 1 cm
    np.testing.assert_allclose(at_truth, problem._value, atol=0.005 + 1e-9)
    # forward mode through the run that ends at rest (jaxmedusa fit's Jacobian) against
    # central differences, h = 0.01 m/s, 1e-3 relative on the rest x of both cars (the
    # derivatives that carry the fit: ~3 m per m/s); the locked wheels keep every tire on
    # the same side of the lock transition
    jac = np.asarray(jax.jit(jax.jacfwd(lambda x: problem.predict(x)[0]))(TRUTH))
    h = 0.01
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        central = (np.asarray(model(TRUTH + e)) - np.asarray(model(TRUTH - e))) / (2 * h)
        for row in (0, 2):  # rest x of vehicle 1 and 2
            assert jac[row, j] == pytest.approx(central[row], rel=1e-3, abs=1e-3), (row, j)
