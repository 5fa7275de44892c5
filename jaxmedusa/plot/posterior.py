"""Pictures of an inference folder (`jaxmedusa infer`): marginal and pairwise posteriors,
and the posterior-predictive positions at the observation times.

    from jaxmedusa.plot.posterior import plot_posterior
    paths = plot_posterior("results/infer_offset_brake", out="results/infer_offset_brake/plots")

posterior_pairs.<fmt>: a corner plot of posterior.parquet, histograms of each parameter on
the diagonal (the 5, 50 and 95 % quantiles of summary.parquet marked), the draws of each pair
below it (divergent draws in red).
posterior_predictive.<fmt> (when predictive.parquet is there): the vehicles' positions at the
observation times simulated for posterior draws, over the plan view (x, y [m], equal axes),
with the observed positions and their 2-sigma boxes.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["is_posterior_folder", "posterior_pairs_figure", "predictive_figure", "plot_posterior"]


def is_posterior_folder(folder: str | Path) -> bool:
    return (Path(folder) / "posterior.parquet").is_file()


def posterior_pairs_figure(draws: pd.DataFrame, summary: pd.DataFrame | None = None):
    names = [c for c in draws.columns if c not in ("chain", "draw", "log_density", "divergent")]
    n = len(names)
    fig, axes = plt.subplots(n, n, figsize=(2.6 * n + 0.6, 2.6 * n + 0.6), squeeze=False)
    div = draws["divergent"].to_numpy(bool)
    for i, yi in enumerate(names):
        for j, xj in enumerate(names):
            ax = axes[i, j]
            if j > i:
                ax.set_visible(False)
                continue
            if i == j:
                ax.hist(draws[xj], bins=40, color="tab:blue", alpha=0.8)
                if summary is not None and xj in set(summary["parameter"]):
                    row = summary.set_index("parameter").loc[xj]
                    for q, ls in (("q05", ":"), ("q50", "-"), ("q95", ":")):
                        ax.axvline(row[q], color="k", ls=ls, lw=1)
                    ax.set_title(f"{xj}: {row['q50']:.3g} [{row['q05']:.3g}, {row['q95']:.3g}]", fontsize=8)
                ax.set_yticks([])
            else:
                ax.plot(draws[xj][~div], draws[yi][~div], ".", ms=1.5, alpha=0.4, color="tab:blue")
                if div.any():
                    ax.plot(draws[xj][div], draws[yi][div], ".", ms=3, color="tab:red")
            if i == n - 1:
                ax.set_xlabel(xj)
            if j == 0 and i > 0:
                ax.set_ylabel(yi)
    fig.suptitle("posterior: marginals (5/50/95 %) and pairs", fontsize=10)
    fig.tight_layout()
    return fig


def predictive_figure(pred: pd.DataFrame):
    """pred: one row per posterior draw, vehicle and time: draw, vehicle (1-based), time, x, y,
    observed_x, observed_y, sigma_x, sigma_y (NaN where not observed)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (key, g) in enumerate(pred.groupby(["vehicle", "time"])):
        c = colors[k % len(colors)]
        ax.plot(g["x"], g["y"], ".", ms=3, alpha=0.5, color=c, label=f"vehicle {key[0]}, t = {key[1]:g} s: predicted")
        ox, oy, sx, sy = (g[col].iloc[0] for col in ("observed_x", "observed_y", "sigma_x", "sigma_y"))
        if np.isfinite(ox) and np.isfinite(oy):
            ax.plot(ox, oy, "x", ms=9, mew=2, color="k")
            ax.add_patch(plt.Rectangle((ox - 2 * sx, oy - 2 * sy), 4 * sx, 4 * sy, fill=False, ec="k", lw=0.8))
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("posterior predictive positions (dots), observed (x, 2-sigma box)", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_posterior(folder: str | Path, out: str | Path | None = None, fmt: str = "png") -> list[Path]:
    folder = Path(folder)
    out = Path(out) if out is not None else folder / "plots"
    out.mkdir(parents=True, exist_ok=True)
    draws = pd.read_parquet(folder / "posterior.parquet")
    summary = pd.read_parquet(folder / "summary.parquet") if (folder / "summary.parquet").is_file() else None
    written = []
    fig = posterior_pairs_figure(draws, summary)
    written.append(out / f"posterior_pairs.{fmt}")
    fig.savefig(written[-1], dpi=110, bbox_inches="tight")
    plt.close(fig)
    if (folder / "predictive.parquet").is_file():
        fig = predictive_figure(pd.read_parquet(folder / "predictive.parquet"))
        written.append(out / f"posterior_predictive.{fmt}")
        fig.savefig(written[-1], dpi=110, bbox_inches="tight")
        plt.close(fig)
    return written
