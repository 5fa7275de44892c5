"""The inference's tables: posterior.parquet (the draws) and summary.parquet (ArviZ).

posterior.parquet, one row per draw: chain (0-based), draw (0-based, after warmup), one
column per parameter (the unknowns', then the nuisance parameters', in their units),
log_density (the log posterior of the draw in the sampler's unconstrained coordinates, up
to a constant) and divergent (NUTS reported a divergent trajectory for it).

summary.parquet, one row per parameter: parameter, path, mean, sd, q05, q50, q95 (the 5, 50
and 95 % quantiles of the pooled draws), r_hat (rank-normalised split R-hat, Vehtari et al.
2021) and ess_bulk (bulk effective sample size), both from arviz.summary; prior (the
family and its parameters, as text).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from jaxmedusa.io.tables import provenance, write_table

__all__ = ["posterior_table", "summary_table", "write_infer"]


def _arviz():
    with warnings.catch_warnings():  # ArviZ 0.2x announces its 1.0 refactor on import
        warnings.simplefilter("ignore", FutureWarning)
        import arviz
    return arviz


def posterior_table(names: list[str], theta: np.ndarray, log_density: np.ndarray, divergent: np.ndarray) -> pd.DataFrame:
    """theta (C, D, n) in the parameters' units; log_density, divergent (C, D)."""
    C, D, _ = theta.shape
    cols = {"chain": np.repeat(np.arange(C), D), "draw": np.tile(np.arange(D), C)}
    cols.update({name: theta[:, :, j].ravel() for j, name in enumerate(names)})
    cols.update(log_density=log_density.ravel(), divergent=divergent.ravel().astype(bool))
    return pd.DataFrame(cols)


def summary_table(names: list[str], theta: np.ndarray, paths: list[str] | None = None,
                  priors: list[str] | None = None) -> pd.DataFrame:
    """ArviZ's summary of theta (C, D, n): mean, sd, quantiles, r_hat, ess_bulk per parameter."""
    az = _arviz()
    data = az.from_dict(posterior={name: theta[:, :, j] for j, name in enumerate(names)})
    quantiles = {"q05": lambda x: np.quantile(x, 0.05), "q50": lambda x: np.quantile(x, 0.5),
                 "q95": lambda x: np.quantile(x, 0.95)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # R-hat of a single chain: NaN with a warning
        s = az.summary(data, var_names=names, stat_funcs=quantiles, extend=True, round_to="none")
    out = pd.DataFrame({"parameter": names})
    if paths is not None:
        out["path"] = paths
    for col in ("mean", "sd", "q05", "q50", "q95", "r_hat", "ess_bulk"):
        out[col] = s.loc[names, col].to_numpy(float)
    if priors is not None:
        out["prior"] = priors
    return out


def write_infer(out: str | Path, posterior: pd.DataFrame, summary: pd.DataFrame, meta: dict | None = None) -> dict:
    """Write OUT/posterior.parquet and OUT/summary.parquet (with `meta` as Parquet metadata)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"posterior": out / "posterior.parquet", "summary": out / "summary.parquet"}
    meta = provenance(meta)
    write_table(pa.Table.from_pandas(posterior, preserve_index=False), paths["posterior"], meta)
    write_table(pa.Table.from_pandas(summary, preserve_index=False), paths["summary"], meta)
    return paths
