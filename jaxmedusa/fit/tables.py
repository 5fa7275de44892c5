"""The fit's tables: fit.parquet, starts.parquet, residuals.parquet and the fitted run's
trajectory.parquet (the run command's writer, io.tables.write_trajectory).

fit.parquet, one row per unknown: parameter (its name in [unknowns]), path, estimate,
std_error (sqrt of the diagonal of the Gauss-Newton covariance (J^T W J)^-1), initial,
lower, upper (-inf / inf without bounds); in the unknowns' units.

starts.parquet, one row per start: start (0 = the initial values), cost (chi^2 = sum of
squared weighted residuals at the start's solution), steps, converged (optimistix met its
tolerances), best (the row whose estimate fit.parquet reports), agrees (cost within 1 of the
best's, i.e. statistically as good, and every unknown within one std_error of the
estimate), then per unknown `<name>_initial` and `<name>` (the start's solution).

residuals.parquet, one row per observed quantity: observation (0-based position in
[[observations]], as error messages count it), vehicle (1-based), time [s], quantity (x,
y, heading_deg, speed), observed, fitted, sigma, residual (fitted - observed; heading
wrapped to (-180, 180]) and normalized (residual / sigma).
"""
from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pyarrow as pa

from jaxmedusa.fit.problem import FitProblem
from jaxmedusa.fit.solve import FitResult
from jaxmedusa.io.tables import provenance, write_table, write_trajectory

__all__ = ["fit_table", "starts_table", "residuals_table", "agreeing_starts", "write_fit"]


def fit_table(problem: FitProblem, result: FitResult) -> pd.DataFrame:
    u = problem.spec.unknowns
    return pd.DataFrame({
        "parameter": [x.name for x in u], "path": [x.path for x in u],
        "estimate": result.estimate, "std_error": result.std_error,
        "initial": [x.initial for x in u], "lower": [x.lower for x in u], "upper": [x.upper for x in u],
    })


def agreeing_starts(result: FitResult) -> np.ndarray:
    """(S,) bool: the start's cost is within 1 of the best (Delta chi^2 < 1: as good within
    the data's noise) and its solution within one std_error of the estimate in every unknown."""
    close_cost = result.cost <= result.cost[result.best] + 1.0
    with np.errstate(invalid="ignore"):
        close_x = np.all(np.abs(result.final - result.estimate) <= result.std_error, axis=1)
    return close_cost & close_x


def starts_table(problem: FitProblem, result: FitResult) -> pd.DataFrame:
    n = len(result.cost)
    cols = {"start": np.arange(n), "cost": result.cost, "steps": result.steps.astype(np.int64),
            "converged": result.converged.astype(bool), "best": np.arange(n) == result.best,
            "agrees": agreeing_starts(result)}
    for i, x in enumerate(problem.spec.unknowns):
        cols[f"{x.name}_initial"] = result.initial[:, i]
        cols[x.name] = result.final[:, i]
    return pd.DataFrame(cols)


def residuals_table(problem: FitProblem, result: FitResult) -> pd.DataFrame:
    rows = problem.rows
    sigma = np.array([r[5] for r in rows])
    observed = np.array([r[4] for r in rows])
    residual = result.residuals * sigma
    return pd.DataFrame({
        "observation": [r[0] for r in rows], "vehicle": [r[1] + 1 for r in rows], "time": [r[2] for r in rows],
        "quantity": [r[3] for r in rows], "observed": observed, "fitted": observed + residual, "sigma": sigma,
        "residual": residual, "normalized": result.residuals,
    })


def _write(df: pd.DataFrame, path: Path, meta: dict) -> Path:
    return write_table(pa.Table.from_pandas(df, preserve_index=False), path, provenance(meta))


def write_fit(problem: FitProblem, result: FitResult, out: str | Path, trajectory: bool = True) -> dict[str, Path]:
    """Write the four tables into `out` (module docstring); returns {name: path}. The
    trajectory is the scenario at the estimate, simulated with samples every save_every."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = problem.spec
    meta = {"fit.source": spec.source, "fit.name": spec.name, "fit.best_start": str(result.best),
            "fit.cost": repr(float(result.cost[result.best])), "fit.residuals": str(len(result.residuals))}
    paths = {
        "fit": _write(fit_table(problem, result), out / "fit.parquet", meta),
        "starts": _write(starts_table(problem, result), out / "starts.parquet", meta),
        "residuals": _write(residuals_table(problem, result), out / "residuals.parquet", meta),
    }
    if trajectory:
        run = problem.run(jax.numpy.asarray(result.estimate))  # simulate's own jit: cached per settings and shapes
        paths["trajectory"] = write_trajectory(run.samples, problem.batch, out / "trajectory.parquet",
                                               metadata={**meta, "fit.estimate": repr(list(map(float, result.estimate)))})
    return paths
