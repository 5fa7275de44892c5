"""Pictures of results folders (matplotlib, Agg backend: no display needed).

    from jaxmedusa.plot import plot_results
    paths = plot_results("results/offset", out="results/offset/plots", fmt="png")

`plot_results` decides from the folder what to draw (`folder_kind`):
  run          trajectory.parquet   -> plan_view.<fmt>, histories.<fmt>, and with several
                                       vehicles plan_view_moving.<fmt> (frame moving with them)
  sweep        scenarios.parquet    -> sweep_<metric>.<fmt> per metric
  sensitivity  sensitivity.parquet  -> sensitivity_<method>.<fmt> per method
A folder with several of these gets all of them.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; must precede pyplot anywhere in the process

from jaxmedusa.plot.histories import histories_figure  # noqa: E402  (after the backend is chosen)
from jaxmedusa.plot.plan_view import plan_view_figure  # noqa: E402
from jaxmedusa.plot.run_data import load_run  # noqa: E402
from jaxmedusa.plot.sensitivity_bars import load_sensitivity, sensitivity_figures  # noqa: E402
from jaxmedusa.plot.sweep_maps import DEFAULT_METRICS, load_sweep, sweep_figures  # noqa: E402

__all__ = ["FORMATS", "folder_kind", "plot_results"]

FORMATS = ("png", "svg", "pdf")
DPI = 110  # PNG resolution: readable text, small files


def folder_kind(folder: str | Path) -> list[str]:
    """The kinds of results in `folder`: any of "run", "sweep", "sensitivity"."""
    folder = Path(folder)
    kinds = []
    for kind, name in (("run", "trajectory.parquet"), ("sweep", "scenarios.parquet"),
                       ("sensitivity", "sensitivity.parquet")):
        if (folder / name).exists():
            kinds.append(kind)
    return kinds


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)  # tight: equal-aspect plan views leave margins
    return path


def plot_results(folder: str | Path, out: str | Path | None = None, fmt: str = "png", x: str | None = None,
                 y: str | None = None, metrics=None) -> list[Path]:
    """Draw every picture the folder allows into `out` (default <folder>/plots). Returns the
    files written. Raises FileNotFoundError for a folder with no known table and
    ValueError for a bad format, parameter or metric."""
    folder = Path(folder)
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    kinds = folder_kind(folder)
    if not kinds:
        raise FileNotFoundError(f"{folder}: no trajectory.parquet, scenarios.parquet or sensitivity.parquet")
    out = Path(out) if out is not None else folder / "plots"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if "run" in kinds:
        run = load_run(folder)
        written.append(_save(plan_view_figure(run), out / f"plan_view.{fmt}"))
        if len(run.vehicles) > 1:  # relative motion: the collision itself
            written.append(_save(plan_view_figure(run, moving=True), out / f"plan_view_moving.{fmt}"))
        written.append(_save(histories_figure(run), out / f"histories.{fmt}"))
    if "sweep" in kinds:
        figs = sweep_figures(load_sweep(folder), metrics=metrics or DEFAULT_METRICS, x=x, y=y)
        written += [_save(f, out / f"sweep_{name}.{fmt}") for name, f in figs.items()]
    if "sensitivity" in kinds:
        figs = sensitivity_figures(load_sensitivity(folder))
        written += [_save(f, out / f"sensitivity_{name}.{fmt}") for name, f in figs.items()]
    return written
