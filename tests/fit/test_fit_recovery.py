"""`jaxmedusa fit` recovers the values that made synthetic observations, and its standard
errors are the Gauss-Newton ones of an independent finite-difference Jacobian.

One vehicle of the report's straight example, steered at a constant 1.5 deg at 21 m/s
(the tires' lateral forces make position, heading and speed nonlinear in the unknowns),
0.4 s simulated (cheap to compile: one vehicle, no contact). The observations are the
simulator's own values at a saved sample (the sampled run, not the fit's in-run tracker),
without noise, so a correct fit returns the true values to solver tolerance. The fit
starts at 18 m/s and 0.5 deg.
"""
from __future__ import annotations

import copy

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import tomli_w
from typer.testing import CliRunner

from helpers import EXAMPLES
from jaxmedusa.core.safe_math import heading
from jaxmedusa.fit import FitProblem, fit_from_dict
from jaxmedusa_cli.app import app

TRUTH = np.array([21.0, 1.5])  # v1 speed [m/s], v1 steering [deg]
SIGMA = {"x": 0.01, "y": 0.01, "heading_deg": 0.05, "speed": 0.01}  # [m, m, deg, m/s]
BASE = {
    "scenario": {"path": str(EXAMPLES / "straight")},
    "simulation": {"end_time": 0.4, "save_every": 0.1},
    "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "initial": 18.0, "bounds": [15.0, 28.0]},
                 "v1_steer": {"path": "vehicles.1.steering_deg", "initial": 0.5}},
    "fit": {"starts": 3, "max_iterations": 12, "rtol": 1e-9, "atol": 1e-9},
}


def _observed(problem: FitProblem, x):
    """{time: {quantity: value}} at the saved samples nearest 0.3 s and 0.4 s of the sampled run."""
    run = problem.run(jnp.asarray(x))
    s = run.samples
    t = np.asarray(s.t[0])
    saved = np.asarray(s.saved[0])
    out = {}
    for want in (0.3, 0.4):
        i = int(np.argmin(np.where(saved, np.abs(t - want), np.inf)))
        v = np.asarray(s.v[0, i, 0])
        out[float(t[i])] = {"x": float(s.r[0, i, 0, 0]), "y": float(s.r[0, i, 0, 1]),
                            "heading_deg": float(np.degrees(heading(s.F[0, i, 0]))), "speed": float(np.hypot(v[0], v[1]))}
    return out


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fit")
    # the truth's observations, from a problem whose initial values are the truth
    truth_table = copy.deepcopy(BASE)
    truth_table["observations"] = [{"vehicle": 1, "time": 0.4, "y": 0.0, "sigma": {"y": 1.0}}]
    truth_problem = FitProblem(fit_from_dict(truth_table))
    obs = _observed(truth_problem, TRUTH)
    (t1, q1), (t2, q2) = obs.items()
    assert abs(t2 - 0.4) < 1e-9  # the last sample is at end_time (constant steps of 5e-5 s): "end" is that time
    table = copy.deepcopy(BASE)
    table["observations"] = [{"vehicle": 1, "time": t1, **q1, "sigma": SIGMA},
                             {"vehicle": 1, "time": "end", "y": q2["y"], "heading_deg": q2["heading_deg"],
                              "sigma": {"y": SIGMA["y"], "heading_deg": SIGMA["heading_deg"]}}]
    path = tmp / "synthetic.toml"
    path.write_bytes(tomli_w.dumps(table).encode())
    out = tmp / "out"
    result = CliRunner().invoke(app, ["fit", str(path), "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output

    # independent Jacobian: central differences of the sampled run's values (same steps at every x)
    problem = FitProblem(fit_from_dict(table))
    names = ["x", "y", "heading_deg", "speed", "y", "heading_deg"]
    times = [t1] * 4 + [t2] * 2
    sig = np.array([SIGMA[q] for q in names])

    def values(x):
        o = _observed(problem, x)
        return np.array([o[t][q] for t, q in zip(times, names)])

    h = np.array([1e-4, 1e-4])  # truncation ~h^2 f''' ~ 1e-8 relative; rounding ~1e-15 / 1e-4 = 1e-11
    J = np.stack([(values(TRUTH + h[j] * e) - values(TRUTH - h[j] * e)) / (2 * h[j]) for j, e in enumerate(np.eye(2))], 1)
    J /= sig[:, None]
    return {"out": out, "output": result.output, "std_fd": np.sqrt(np.diag(np.linalg.inv(J.T @ J)))}


def test_fit_recovers_the_truth_well_within_its_standard_errors(fitted):
    fit = pd.read_parquet(fitted["out"] / "fit.parquet")
    assert list(fit["parameter"]) == ["v1_speed", "v1_steer"]
    err = np.abs(fit["estimate"].to_numpy() - TRUTH) / fit["std_error"].to_numpy()
    assert np.all(err < 0.01), err  # noise-free data: only the solver tolerance (1e-9) separates them
    assert list(fit["initial"]) == [18.0, 0.5]
    assert list(fit["lower"]) == [15.0, -np.inf] and list(fit["upper"]) == [28.0, np.inf]


def test_standard_errors_match_a_finite_difference_jacobian(fitted):
    fit = pd.read_parquet(fitted["out"] / "fit.parquet")
    # (J^T W J)^-1 from forward mode vs from central differences: FD truncation is ~1e-8 relative
    np.testing.assert_allclose(fit["std_error"].to_numpy(), fitted["std_fd"], rtol=1e-5)


def test_starts_and_residual_tables(fitted):
    starts = pd.read_parquet(fitted["out"] / "starts.parquet")
    assert len(starts) == 3 and starts["best"].sum() == 1
    assert list(starts.loc[0, ["v1_speed_initial", "v1_steer_initial"]]) == [18.0, 0.5]  # start 0 = the file's
    best = starts[starts["best"]].iloc[0]
    assert best["cost"] < 1e-6  # chi^2 of noise-free data at the truth is 0 (up to the tolerance)
    res = pd.read_parquet(fitted["out"] / "residuals.parquet")
    assert len(res) == 6 and list(res["vehicle"].unique()) == [1]
    assert np.all(np.abs(res["normalized"]) < 1e-3)
    np.testing.assert_allclose(res["residual"], res["fitted"] - res["observed"], atol=1e-12)
    np.testing.assert_allclose(res["normalized"], res["residual"] / res["sigma"], rtol=1e-12)


def test_fitted_trajectory_passes_through_the_observations(fitted):
    traj = pd.read_parquet(fitted["out"] / "trajectory.parquet")
    res = pd.read_parquet(fitted["out"] / "residuals.parquet")
    t1 = float(res["time"].iloc[0])
    row = traj.iloc[int(np.argmin(np.abs(traj["time"] - t1)))]
    obs = res[res["time"] == t1].set_index("quantity")["observed"]
    # the fitted run at the observation's sample: within 0.01 sigma (the recovered truth)
    assert abs(row["x"] - obs["x"]) < 1e-4 and abs(row["y"] - obs["y"]) < 1e-4
    assert "agree with the best" in fitted["output"] and "v1_speed" in fitted["output"]
