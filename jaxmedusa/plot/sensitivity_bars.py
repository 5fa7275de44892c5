"""Bar charts of a sensitivity table (sensitivity.parquet): S1/ST or Morris mu*/sigma.

Table columns: output, parameter, method, index, value, conf (conf: half-width of the
confidence interval, drawn as an error bar; NaN draws none). One figure per method, one
axes per output, grouped bars per parameter with one bar per index.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

COLUMNS = ("output", "parameter", "method", "index", "value", "conf")
INDEX_ORDER = ("S1", "ST", "mu_star", "sigma", "mu", "S2")


def load_sensitivity(folder: str | Path) -> pd.DataFrame:
    path = Path(folder) / "sensitivity.parquet"
    table = pd.read_parquet(path)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")
    return table


def _order(indices) -> list[str]:
    known = [i for i in INDEX_ORDER if i in indices]
    return known + sorted(i for i in indices if i not in known)


def sensitivity_figures(table: pd.DataFrame) -> dict[str, Figure]:
    """{method: Figure} with one axes per output (module docstring)."""
    figs = {}
    for method, tm in table.groupby("method", sort=True):
        outputs = list(dict.fromkeys(tm["output"]))
        fig = Figure(figsize=(8, 2.8 * len(outputs) + 0.5), layout="constrained")
        axes = np.atleast_1d(fig.subplots(len(outputs), 1, squeeze=False)[:, 0])
        for ax, out in zip(axes, outputs):
            t = tm[tm["output"] == out]
            params = list(dict.fromkeys(t["parameter"]))
            idx = _order(set(t["index"]))
            width = 0.8 / len(idx)
            pos = np.arange(len(params))
            for k, name in enumerate(idx):
                s = t[t["index"] == name].set_index("parameter").reindex(params)
                conf = s["conf"].to_numpy(float)
                # an index without an interval (Morris sigma and mu) gets no error bar, not a 0-wide one
                ax.bar(pos + (k - (len(idx) - 1) / 2) * width, s["value"].to_numpy(float), width,
                       yerr=conf if np.isfinite(conf).any() else None, capsize=3, label=name, gid=f"bar-{name}")
            ax.set_xticks(pos, params)
            ax.axhline(0.0, color="0.3", lw=0.6)
            ax.set_title(out, fontsize="medium")
            ax.legend(fontsize="small")
            ax.grid(axis="y", alpha=0.3)
        fig.suptitle(f"sensitivity ({method}); error bars: confidence intervals")
        figs[str(method)] = fig
    return figs
