"""Time histories of a run: speed, yaw rate and (when crash_pulse.parquet exists) the crash pulse.

    fig = histories_figure(load_run("results/offset"))

Speed is the table's horizontal speed sqrt(vx^2 + vy^2) [m/s]; the yaw rate [deg/s] is the
rate of the heading atan2(d12, d11) (run_data.yaw_rate). Contact episodes shade the time
axis. The crash pulse table (another module writes it) has columns time, vehicle and
acceleration columns: those named with "raw" are drawn thin, "filt" thick, others plain.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from jaxmedusa.plot.plan_view import vehicle_color
from jaxmedusa.plot.run_data import RunData, yaw_rate


def _pulse_columns(pulse: pd.DataFrame) -> list[str]:
    return [c for c in pulse.columns if c not in ("time", "vehicle", "scenario", "sample_id")
            and pd.api.types.is_numeric_dtype(pulse[c])]


def _shade_contacts(ax, run: RunData) -> None:
    ev = run.events
    if ev is None or ev.empty:
        return
    t_end = float(run.trajectory["time"].max())
    for start, end in zip(ev["start"], ev["end"]):
        ax.axvspan(start, end if np.isfinite(end) else t_end, color="0.85", lw=0, zorder=0, gid="contact-span")


def histories_figure(run: RunData) -> Figure:
    """Figure with 2 axes (speed, yaw rate) or 3 (and the crash pulse), sharing the time axis."""
    pulse = run.crash_pulse
    cols = _pulse_columns(pulse) if pulse is not None else []
    n = 3 if cols else 2
    fig = Figure(figsize=(9, 2.4 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True)
    for veh in run.vehicles:
        rows = run.vehicle(veh["number"])
        t = rows["time"].to_numpy()
        color = vehicle_color(veh["number"])
        label = veh.get("name", f"vehicle {veh['number']}")
        axes[0].plot(t, rows["speed"].to_numpy(), color=color, label=label)
        axes[1].plot(t, np.degrees(yaw_rate(rows)), color=color, label=label)
        if cols:
            p = pulse[pulse["vehicle"] == veh["number"]].sort_values("time")
            for c in cols:
                style = dict(lw=0.6, alpha=0.6) if "raw" in c else dict(lw=1.6) if "filt" in c else dict(lw=1.0)
                axes[2].plot(p["time"], p[c], color=color, label=f"{label}: {c}", **style)
    axes[0].set_ylabel("speed [m/s]")
    axes[1].set_ylabel("yaw rate [deg/s]")
    if cols:
        axes[2].set_ylabel("crash pulse")
        axes[2].legend(fontsize="x-small", ncol=2)
    for ax in axes:
        _shade_contacts(ax, run)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    axes[-1].set_xlabel("time [s]")
    axes[0].set_title(f"{run.name}: time histories" + (" (grey: contact)" if run.events is not None
                                                         and len(run.events) else ""))
    return fig
