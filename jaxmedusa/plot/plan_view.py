"""Plan view of a run: vehicle outlines from the directors, centre paths, contacts, road.

    fig = plan_view_figure(load_run("results/offset"))

Outline of a vehicle at one instant: the horizontal section X3 = 0 of its contact shape
(contact.py, frame "affine"), x = r + F diag(a) y with a the contact semi-axes [m] and y on
the unit section: the superellipse |y1|^(2/eps2) + |y2|^(2/eps2) = 1 (eq. 1.45; eps2 = 1
gives the ellipse of the "ellipsoid" kind; the "box" kind draws the box's rectangle),
projected on the E1-E2 plane. Drawn every `every` seconds, fading from light (start) to
opaque (end). Contact episodes (contact_events.parquet) are marked at their contact point
with vehicle a's outward normal n1 as an arrow. With a road (road.dat points in the table's
metadata) the spline centreline and lane lines every LANE_WIDTH are drawn.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from jaxmedusa.analysis.skids import mark_polylines
from jaxmedusa.physics.road import spline_coefficients
from jaxmedusa.plot.run_data import RunData, directors

OUTLINE_EVERY = 0.1  # [s] between drawn outlines
OUTLINE_POINTS = 72  # vertices per outline
ALPHA_FIRST, ALPHA_LAST = 0.12, 0.9  # outline opacity at the first and the last drawn instant
LANE_WIDTH = 3.0  # [m], MEDUSA common.h LANEWIDTH (outcomes.LANE_WIDTH)
NORMAL_LENGTH = 1.0  # [m], drawn length of a contact normal
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
          "tab:olive", "tab:cyan", "tab:gray")


def vehicle_color(number: int) -> str:
    return COLORS[(number - 1) % len(COLORS)]


def unit_section(shape: dict, n: int = OUTLINE_POINTS) -> np.ndarray:
    """(n, 3) points y of the unit shape's section y3 = 0, counter-clockwise."""
    theta = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    c, s = np.cos(theta), np.sin(theta)
    kind = shape.get("kind", "superellipsoid")
    if kind == "box":
        # a square, vertices spread over its four sides (the rectangle after scaling)
        m = np.maximum(np.abs(c), np.abs(s))
        y1, y2 = c / m, s / m
    else:
        e = 1.0 if kind == "ellipsoid" else float(shape.get("eps2", 0.4))
        y1, y2 = np.sign(c) * np.abs(c) ** e, np.sign(s) * np.abs(s) ** e  # |y1|^(2/e) + |y2|^(2/e) = 1
    return np.stack([y1, y2, np.zeros(n)], axis=1)


def outlines(r: np.ndarray, F: np.ndarray, semi_axes, shape: dict, n: int = OUTLINE_POINTS) -> np.ndarray:
    """(N, n, 2) plan outlines for positions r (N, 3) [m] and directors F (N, 3, 3)."""
    y = unit_section(shape, n) * np.asarray(semi_axes, float)[None, :]  # (n, 3) material points [m]
    x = r[:, None, :] + np.einsum("nij,kj->nki", F, y)
    return x[..., :2]


def outline_times(times: np.ndarray, every: float = OUTLINE_EVERY) -> np.ndarray:
    """Indices of the samples on the `every` grid (1e-6 s: the save grid is exact) and the last."""
    on = np.abs(times / every - np.round(times / every)) * every < 1e-6
    idx = np.flatnonzero(on)
    if len(times) and (not len(idx) or idx[-1] != len(times) - 1):
        idx = np.append(idx, len(times) - 1)
    return idx


def road_lines(road: np.ndarray, lateral_max: float, n_per_segment: int = 40):
    """Centreline (M, 2) and lane lines [(M, 2), ...] of a road.dat spline (user segments),
    lanes of LANE_WIDTH on both sides out to `lateral_max` [m]."""
    f = spline_coefficients(np.asarray(road, float))
    coef, s_lo, s_hi = f["coef"], f["s_lo"], f["s_hi"]
    pts, tans = [], []
    for k in range(1, coef.shape[0] - 1):  # segments 2..NS-1 join user point 1 to user point n
        s = np.linspace(s_lo[k], s_hi[k], n_per_segment)[:, None]
        c = coef[k]
        pts.append(c[0] + c[1] * s + c[2] * s ** 2 + c[3] * s ** 3)
        tans.append(c[1] + 2.0 * c[2] * s + 3.0 * c[3] * s ** 2)
    p, t = np.concatenate(pts)[:, :2], np.concatenate(tans)[:, :2]
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1) / np.linalg.norm(t, axis=1, keepdims=True)
    n_lanes = int(np.clip(np.ceil((lateral_max - 0.5 * LANE_WIDTH) / LANE_WIDTH), 0, 4))
    offsets = [sgn * (0.5 + k) * LANE_WIDTH for k in range(n_lanes + 1) for sgn in (1.0, -1.0)]
    return p, [p + o * normal for o in offsets]


def _lateral_max(centre: np.ndarray, xy: np.ndarray) -> float:
    """Largest distance [m] of the points xy (N, 2) from the polyline's nearest vertex."""
    d = np.linalg.norm(xy[:, None, :] - centre[None, ::4, :], axis=-1)
    return float(d.min(axis=1).max()) if len(xy) else 0.0


def frame_velocity(run: RunData) -> np.ndarray:
    """(2,) [m/s] the mean initial horizontal velocity of the vehicles: the moving view's frame."""
    t0 = run.trajectory[run.trajectory["time"] == run.trajectory["time"].min()]
    return t0[["vx", "vy"]].to_numpy().mean(axis=0)


def draw_plan(ax, run: RunData, t_max: float | None = None, every: float = OUTLINE_EVERY,
              fade: bool = True, limits=None, moving: np.ndarray | None = None) -> dict:
    """Draw the plan view of `run` up to time t_max (None: the whole run) on `ax`.

    `moving` (2,) [m/s]: draw in a frame moving at this velocity (positions x - u t), so
    that the vehicles' relative motion shows; None: the ground frame.

    Outline polygons carry gid "outline-<n>" (vehicle n), paths "path-<n>", skid marks
    "skid-<n>" (analysis/skids.py: each run of samples with wheel<k>_skid true, drawn thick
    and dark in the ground frame only, where marks lie), contact markers "contact",
    normals "normal", road lines "road", residual crush profiles "crush-<n>"
    (damage.parquet, on the outline at t_max). Returns counts per kind."""
    counts = {"outlines": 0, "contacts": 0, "skid_marks": 0}
    t_end = float(run.trajectory["time"].max())
    t_max = t_end if t_max is None else t_max
    all_xy = []
    u = np.zeros(2) if moving is None else np.asarray(moving, float)

    def shift(xy, t):  # ground -> moving frame; xy (..., 2), t broadcast against xy[..., 0]
        return xy - np.asarray(t)[..., None] * u

    if run.road is not None and moving is None:
        centre_probe, _ = road_lines(run.road, 0.0)
        lat = _lateral_max(centre_probe, run.trajectory[["x", "y"]].to_numpy())
        centre, lanes = road_lines(run.road, lat)
        ax.plot(centre[:, 0], centre[:, 1], color="0.55", lw=0.8, ls="-.", gid="road", zorder=0)
        for lane in lanes:
            ax.plot(lane[:, 0], lane[:, 1], color="0.35", lw=1.0, gid="road", zorder=0)
    for veh in run.vehicles:
        n = veh["number"]
        rows = run.vehicle(n)
        rows = rows[rows["time"] <= t_max + 1e-9]
        if rows.empty:
            continue
        color = vehicle_color(n)
        times = rows["time"].to_numpy()
        r = rows[["x", "y", "z"]].to_numpy().copy()
        r[:, :2] = shift(r[:, :2], times)
        ax.plot(r[:, 0], r[:, 1], color=color, lw=1.0, gid=f"path-{n}", label=veh.get("name", f"vehicle {n}"))
        if moving is None:
            counts["skid_marks"] += _draw_skid_marks(ax, rows, n)
        idx = outline_times(times, every) if fade else np.array([len(times) - 1])
        shapes = outlines(rows[["x", "y", "z"]].to_numpy()[idx], directors(rows.iloc[idx]), veh["contact_semi_axes"],
                          run.shape)
        shapes = shift(shapes, times[idx][:, None])
        for k, poly in zip(idx, shapes):
            w = times[k] / t_end if t_end > 0 else 1.0
            alpha = ALPHA_FIRST + (ALPHA_LAST - ALPHA_FIRST) * w if fade else ALPHA_LAST
            ax.add_patch(Polygon(poly, closed=True, fill=False, edgecolor=color, lw=0.8, alpha=alpha,
                                 gid=f"outline-{n}"))
            counts["outlines"] += 1
        all_xy.append(shapes.reshape(-1, 2))
        all_xy.append(r[:, :2])
        if "hitch_x" in rows.columns and np.isfinite(rows["hitch_x"].to_numpy()).any():
            counts["hitches"] = counts.get("hitches", 0) + _draw_hitch(ax, rows, r, idx, shift, times, color)
    ev = run.events
    if ev is not None and "point_x" in ev.columns and len(ev):
        ev = ev[ev["start"] <= t_max + 1e-9].copy()
        if len(ev):
            ev[["point_x", "point_y"]] = shift(ev[["point_x", "point_y"]].to_numpy(), ev["geometry_time"].to_numpy())
            ax.plot(ev["point_x"], ev["point_y"], ls="none", marker="x", ms=7, mew=1.6, color="k",
                    gid="contact", label="contact (episode start)", zorder=5)
            ax.quiver(ev["point_x"], ev["point_y"], NORMAL_LENGTH * ev["normal_x"], NORMAL_LENGTH * ev["normal_y"],
                      angles="xy", scale_units="xy", scale=1.0, color="k", width=0.004, gid="normal", zorder=5)
            counts["contacts"] = len(ev)
            # both vehicles' outlines at the first contact, drawn bold (the contact's step lies
            # between two samples: positions and directors interpolated linearly to its time)
            first = ev.sort_values("start").iloc[0]
            for n in (int(first["vehicle_a"]), int(first["vehicle_b"])):
                rows = _at_time(run.vehicle(n), float(first["geometry_time"]))
                veh = next(v for v in run.vehicles if v["number"] == n)
                poly = outlines(rows[["x", "y", "z"]].to_numpy(), directors(rows), veh["contact_semi_axes"],
                                run.shape)[0]
                poly = shift(poly, first["geometry_time"])
                ax.add_patch(Polygon(poly, closed=True, fill=False, edgecolor=vehicle_color(n), lw=2.0,
                                     gid="contact-outline", zorder=4))
    counts["crush"] = draw_crush(ax, run, t_max, shift)
    if limits is None and all_xy:
        xy = np.concatenate(all_xy)
        pad = 2.0
        limits = (xy[:, 0].min() - pad, xy[:, 0].max() + pad, xy[:, 1].min() - pad, xy[:, 1].max() + pad)
    if limits is not None:
        ax.set_xlim(limits[0], limits[1])
        ax.set_ylim(limits[2], limits[3])
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    return counts



def _draw_skid_marks(ax, rows: pd.DataFrame, n: int) -> int:
    """Every wheel's skid marks of vehicle n (trajectory columns wheel<k>_x/_y/_skid); the count."""
    drawn, k = 0, 1
    while f"wheel{k}_skid" in rows.columns:
        for mark in mark_polylines(rows[f"wheel{k}_x"], rows[f"wheel{k}_y"], rows[f"wheel{k}_skid"]):
            ax.plot(mark[:, 0], mark[:, 1], color="0.15", lw=2.2, alpha=0.7, solid_capstyle="butt",
                    marker="." if len(mark) == 1 else None, gid=f"skid-{n}", zorder=1)
            drawn += 1
        k += 1
    return drawn


def crush_points(row, semi_axes) -> np.ndarray:
    """(6, 3) material points [m] of a damage row's C1..C6 (analysis/damage.py): the stations
    across the damaged face, pushed in from the contact shape's face by the residual crush."""
    a0, a1 = float(semi_axes[0]), float(semi_axes[1])
    c = np.array([row[f"c{i}"] for i in range(1, 7)])
    s = row["damage_offset"] + row["damage_width"] * (0.5 - np.linspace(0.0, 1.0, 6))  # C1 left / front
    z = np.zeros(6)
    return {"F": lambda: np.stack([a0 - c, s, z], 1), "B": lambda: np.stack([-a0 + c, s, z], 1),
            "L": lambda: np.stack([s, a1 - c, z], 1), "R": lambda: np.stack([s, -a1 + c, z], 1)}[row["area"]]()


def draw_crush(ax, run: RunData, t_max: float, shift) -> int:
    """Each vehicle's residual crush profiles (damage.parquet) on its outline at t_max: a bold
    line through C1..C6 and the CDC beside C1 (gid "crush-<n>"). Returns the rows drawn."""
    if run.damage is None or not len(run.damage):
        return 0
    drawn = 0
    for _, row in run.damage.iterrows():
        n = int(row["vehicle"])
        rows = run.vehicle(n)
        rows = rows[rows["time"] <= t_max + 1e-9]
        if rows.empty or row["damage_width"] <= 0.0:
            continue
        veh = next(v for v in run.vehicles if v["number"] == n)
        last = rows.iloc[[-1]]
        F = directors(last)[0]
        pts = last[["x", "y", "z"]].to_numpy()[0] + crush_points(row, veh["contact_semi_axes"]) @ F.T
        xy = shift(pts[:, :2], float(last["time"].iloc[0]))
        ax.plot(xy[:, 0], xy[:, 1], color="crimson", lw=2.5, solid_capstyle="round", gid=f"crush-{n}", zorder=6)
        if row["cdc"]:
            ax.annotate(row["cdc"], xy[0], fontsize="x-small", color="crimson", gid=f"crush-{n}", zorder=6,
                        xytext=(3, 3), textcoords="offset points")
        drawn += 1
    return drawn


def _draw_hitch(ax, rows: pd.DataFrame, r: np.ndarray, idx, shift, times, color) -> int:
    """A towed vehicle's drawbar (its centre to the hitch point) and the hitch (a dot) at the
    outline times idx; gid "hitch" (docs/trailers.md). Returns the number drawn."""
    h = shift(rows[["hitch_x", "hitch_y"]].to_numpy()[idx], times[idx])
    c = r[idx, :2]
    for a, b in zip(c, h):
        ax.plot([a[0], b[0]], [a[1], b[1]], color=color, lw=1.2, gid="hitch", zorder=3)
    ax.plot(h[:, 0], h[:, 1], ls="none", marker="o", ms=3.5, color="k", gid="hitch", zorder=4)
    return len(idx)


def _at_time(rows: pd.DataFrame, t: float) -> pd.DataFrame:
    """One row: every numeric column of a vehicle's rows interpolated linearly to time t [s]."""
    numeric = rows.select_dtypes("number")
    return pd.DataFrame({c: [np.interp(t, rows["time"].to_numpy(), numeric[c].to_numpy())] for c in numeric})

def plan_view_figure(run: RunData, every: float = OUTLINE_EVERY, moving: bool = False) -> Figure:
    """A figure with the plan view of the whole run (one axes); `moving`: in the frame
    moving at the vehicles' mean initial velocity (frame_velocity), which shows relative
    motion (platoon collisions), the ground frame otherwise."""
    u = frame_velocity(run) if moving else None
    probe = Figure()
    draw_plan(probe.add_subplot(), run, every=every, moving=u)  # for the data extent
    (x0, x1), (y0, y1) = probe.axes[0].get_xlim(), probe.axes[0].get_ylim()
    width = 11.0
    height = float(np.clip(width * (y1 - y0) / max(x1 - x0, 1e-9), 1.6, 9.0)) + 1.5  # equal scales + labels
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    counts = draw_plan(ax, run, every=every, moving=u)
    if moving:
        ax.set_xlabel(f"x - ({u[0]:.3g} m/s) t [m]")
        ax.set_ylabel(f"y - ({u[1]:.3g} m/s) t [m]" if abs(u[1]) > 1e-9 else "y [m]")
    t_end = float(run.trajectory["time"].max())
    ax.set_title(f"{run.name}: plan view{' in the moving frame' if moving else ''}, 0-{t_end:g} s, outlines every {every:g} s (light = early)"
                 + (f"; x: {counts['contacts']} contact episode(s), arrows: normals, bold: first contact"
                    if counts["contacts"] else ""), fontsize="medium")
    ax.legend(loc="best", fontsize="small", framealpha=0.85, ncol=min(len(run.vehicles) + 1, 6))
    return fig
