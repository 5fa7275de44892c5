"""Time histories of a run: speed, yaw rate and (when crash_pulse.parquet exists) the crash pulse.

    fig = histories_figure(load_run("results/offset"))

Speed is the table's horizontal speed sqrt(vx^2 + vy^2) [m/s]; the yaw rate [deg/s] is the
rate of the heading atan2(d12, d11) (run_data.yaw_rate). Contact episodes shade the time
axis. The crash pulse table (analysis/crash_pulse.py writes it with the crush law: columns
vehicle, time, t_rel, in_contact, ax, ay, az, a_long, a_lat [m/s^2], raw and with a _cfc60
suffix) is drawn as the longitudinal pulse a_long, raw thin and CFC-filtered thick, on its
own time axis (the pulse lasts ~0.1 s of a run of seconds). Another table with time,
vehicle and acceleration columns is drawn column by column: names with "raw" thin, "filt"
thick, others plain. An empty pulse table (no contact) draws no third axes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from jaxmedusa.plot.plan_view import vehicle_color
from jaxmedusa.plot.run_data import RunData, yaw_rate

_NOT_PULSE = ("time", "vehicle", "scenario", "sample_id", "t_rel", "in_contact")


def _pulse_columns(pulse: pd.DataFrame) -> list[str]:
    """The acceleration columns to draw: a_long and its filtered versions (a_long_cfc<N>)
    for the crash_pulse.py table, else every numeric, non-boolean column but time and ids."""
    if pulse is None or pulse.empty:
        return []
    if "a_long" in pulse.columns:
        return ["a_long"] + sorted(c for c in pulse.columns if c.startswith("a_long_cfc"))
    return [c for c in pulse.columns if c not in _NOT_PULSE and pd.api.types.is_numeric_dtype(pulse[c])
            and not pd.api.types.is_bool_dtype(pulse[c])]


def _pulse_style(column: str) -> dict:
    if "raw" in column or column == "a_long":
        return dict(lw=0.6, alpha=0.6)
    if "filt" in column or "_cfc" in column:
        return dict(lw=1.6)
    return dict(lw=1.0)


def _shade_contacts(ax, run: RunData) -> None:
    ev = run.events
    if ev is None or ev.empty:
        return
    t_end = float(run.trajectory["time"].max())
    for start, end in zip(ev["start"], ev["end"]):
        ax.axvspan(start, end if np.isfinite(end) else t_end, color="0.85", lw=0, zorder=0, gid="contact-span")


def histories_figure(run: RunData) -> Figure:
    """Figure with 2 axes (speed, yaw rate; one time axis) or 3 (and the crash pulse, on the
    pulse's own time span)."""
    pulse = run.crash_pulse
    cols = _pulse_columns(pulse)
    n = 3 if cols else 2
    fig = Figure(figsize=(9, 2.4 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1)
    axes[1].sharex(axes[0])
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
                axes[2].plot(p["time"], p[c], color=color, label=f"{label}: {c}", **_pulse_style(c))
    axes[0].set_ylabel("speed [m/s]")
    axes[1].set_ylabel("yaw rate [deg/s]")
    for ax in axes[:2]:
        _shade_contacts(ax, run)
        ax.grid(alpha=0.3)
    axes[0].tick_params(labelbottom=False)
    axes[1].set_xlabel("time [s]")
    if cols:
        long = "a_long" in cols
        axes[2].set_ylabel("longitudinal pulse [m/s^2]" if long else "crash pulse")
        axes[2].set_xlabel("time [s] (crash pulse" + (": thin raw, thick CFC filtered)" if long else ")"))
        axes[2].legend(fontsize="x-small", ncol=2)
        axes[2].grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    axes[0].set_title(f"{run.name}: time histories" + (" (grey: contact)" if run.events is not None
                                                         and len(run.events) else ""))
    return fig
