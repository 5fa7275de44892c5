"""Pictures of a sweep (scenarios.parquet): per metric, a map over two parameters and a histogram.

    figs = sweep_figures(load_sweep("results/offset"), metrics=["delta_v"], x="lateral_offset", y="speed_difference")

For each metric stem (default DEFAULT_METRICS) and each vehicle column v<n>_<stem>, one row
of two axes: a map over the parameters x, y (a heat map of the per-cell mean for a grid
design, a scatter coloured by the value for random designs; a colour bar either way) and a
histogram of the values. Scenarios whose status is not ok are marked with red crosses on
the map and left out of the histogram; null values (no contact) are grey rings. With one
parameter the map is the metric against it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from matplotlib.figure import Figure

from jaxmedusa.core.status import NOT_FAILURES, is_failure

DEFAULT_METRICS = ("delta_v", "final_y", "contact_duration")
_NOT_PARAMETERS = {"sample_id", "status", "status_name", "end_time", "steps"}


@dataclass
class SweepData:
    name: str
    table: pd.DataFrame
    parameters: list[str]
    grid: bool  # grid design (heat maps) or random (scatter)
    units: dict | None = None  # column -> unit (the table's field metadata)
    sampler: str | None = None  # the study's sampler kind ("grid", "sobol", "random", ...), when stored

    @property
    def design(self) -> str:
        """How the design is named in titles: its sampler kind, else grid or scattered."""
        return f"{self.sampler} design" if self.sampler else ("grid" if self.grid else "scattered design")

    def label(self, col: str) -> str:
        unit = (self.units or {}).get(col)
        return f"{col} [{unit}]" if unit and unit != "-" else col


def _is_product_grid(table: pd.DataFrame, x: str, y: str) -> bool:
    """Every (x, y) combination of the unique values occurs: a grid design."""
    ux, uy = table[x].nunique(), table[y].nunique()
    pairs = table[[x, y]].drop_duplicates()
    return ux * uy == len(pairs) and ux > 1 and uy > 1 and len(pairs) < len(table) + 1 and ux * uy <= len(table)


def load_sweep(folder: str | Path) -> SweepData:
    """Read <folder>/scenarios.parquet and its study metadata (parameters, sampler kind)."""
    path = Path(folder) / "scenarios.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    table = pd.read_parquet(path)
    schema = pq.read_schema(path)
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    units = {f.name: f.metadata[b"unit"].decode() for f in schema if f.metadata and b"unit" in f.metadata}
    if "jaxmedusa.parameters" in meta:
        params = [p for p in json.loads(meta["jaxmedusa.parameters"]) if p in table.columns]
    else:  # the columns between sample_id and status (io.scenarios_table order)
        cols = list(table.columns)
        end = cols.index("status") if "status" in cols else len(cols)
        params = [c for c in cols[:end] if c not in _NOT_PARAMETERS]
    kind = None
    if "jaxmedusa.study_spec" in meta:
        kind = json.loads(meta["jaxmedusa.study_spec"]).get("sampler", {}).get("kind")
    grid = kind == "grid" if kind else (len(params) >= 2 and _is_product_grid(table, params[0], params[1]))
    return SweepData(name=meta.get("jaxmedusa.study_name", Path(folder).name), table=table, parameters=params,
                     grid=grid, units=units, sampler=kind)


def metric_columns(table: pd.DataFrame, stem: str) -> list[str]:
    """The per-vehicle columns v<n>_<stem> (or the column `stem` itself), by vehicle."""
    if stem in table.columns:
        return [stem]
    pat = re.compile(rf"^v(\d+)_{re.escape(stem)}$")
    found = sorted((int(m.group(1)), c) for c in table.columns if (m := pat.match(c)))
    return [c for _, c in found]


def failed_mask(table: pd.DataFrame) -> np.ndarray:
    """Rows of failed runs; not_at_rest (end_condition "rest", end_time first) is a complete run."""
    if "status_name" in table.columns:
        return (~table["status_name"].isin([s.label for s in NOT_FAILURES])).to_numpy()
    if "status" in table.columns:
        return np.asarray(is_failure(table["status"].to_numpy()), bool)
    return np.zeros(len(table), bool)


def _map(fig, ax, sweep: SweepData, col: str, x: str, y: str | None, failed: np.ndarray) -> None:
    t = sweep.table
    val = t[col].to_numpy(dtype=float)
    good = ~failed & np.isfinite(val)
    null = ~failed & ~np.isfinite(val)
    if y is None:  # one parameter: metric against it
        ax.plot(t[x][good], val[good], ".", ms=4)
        ax.set_xlabel(x)
        ax.set_ylabel(sweep.label(col))
        if failed.any():
            lo = np.nanmin(val[good]) if good.any() else 0.0
            ax.plot(t[x][failed], np.full(failed.sum(), lo), "x", color="red", ms=7, gid="failed",
                    label=f"failed ({failed.sum()})")
            ax.legend(fontsize="small")
        return
    if sweep.grid:
        cells = t[~failed].pivot_table(index=y, columns=x, values=col, aggfunc="mean")
        mesh = ax.pcolormesh(cells.columns.to_numpy(float), cells.index.to_numpy(float), cells.to_numpy(float),
                             shading="nearest", cmap="viridis", gid="heatmap")
        fig.colorbar(mesh, ax=ax, label=sweep.label(col))
    else:
        sc = ax.scatter(t[x][good], t[y][good], c=val[good], s=12, cmap="viridis", gid="scatter")
        fig.colorbar(sc, ax=ax, label=sweep.label(col))
    if null.any():
        ax.scatter(t[x][null], t[y][null], s=14, facecolors="none", edgecolors="0.6", lw=0.7, gid="null",
                   label=f"no value ({null.sum()})")
    if failed.any():
        ax.plot(t[x][failed], t[y][failed], "x", color="red", ms=7, mew=1.5, ls="none", gid="failed",
                label=f"failed ({failed.sum()})")
    if null.any() or failed.any():
        ax.legend(fontsize="x-small", loc="upper right")
    ax.set_xlabel(x)
    ax.set_ylabel(y)


def sweep_figures(sweep: SweepData, metrics=DEFAULT_METRICS, x: str | None = None,
                  y: str | None = None) -> dict[str, Figure]:
    """{metric stem: Figure} (module docstring). Raises ValueError for unknown parameters and
    for a metric with no column; x, y default to the first two parameters."""
    params = sweep.parameters
    for name, p in (("--x", x), ("--y", y)):
        if p is not None and p not in sweep.table.columns:
            raise ValueError(f"{name} {p}: not a column of scenarios.parquet (parameters: {', '.join(params)})")
    x = x or (params[0] if params else None)
    y = y or (next((p for p in params if p != x), None))
    if x is None:
        raise ValueError("scenarios.parquet has no parameter columns to map over")
    failed = failed_mask(sweep.table)
    figs = {}
    for stem in metrics:
        cols = metric_columns(sweep.table, stem)
        if not cols:
            raise ValueError(f"metric {stem!r}: no column {stem} or v<n>_{stem} in scenarios.parquet")
        fig = Figure(figsize=(10, 3.4 * len(cols) + 0.5), layout="constrained")
        axes = np.atleast_2d(fig.subplots(len(cols), 2, width_ratios=(1.4, 1)))
        for row, col in zip(axes, cols):
            _map(fig, row[0], sweep, col, x, y, failed)
            vals = sweep.table[col].to_numpy(dtype=float)[~failed]
            vals = vals[np.isfinite(vals)]
            row[1].hist(vals, bins=min(40, max(5, int(np.sqrt(len(vals))) + 1)), color="tab:blue", alpha=0.8)
            row[1].set_xlabel(sweep.label(col))
            row[1].set_ylabel("scenarios")
            row[1].set_title(f"{len(vals)} values" + (f", {failed.sum()} failed left out" if failed.any() else ""),
                             fontsize="small")
        fig.suptitle(f"{sweep.name}: {stem} over {x}" + (f" and {y}" if y else "") + f" ({sweep.design}, "
                     f"{len(sweep.table)} scenarios)")
        figs[stem] = fig
    return figs
