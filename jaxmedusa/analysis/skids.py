"""Skid marks: where each tire slides on the road (EDC's skid flag, WheelInfo.sliding).

In the run (`SkidTracker`, a part of analysis.rest.RestTracker, per scenario): per wheel, the
length of the path its road contact point (WheelInfo.point, the assembly point projected on
the road plane) travels in the road plane (x, y) over accepted steps that begin and end with
the wheel sliding, summed over all of that wheel's marks. Steps are the run's own (5e-5 s:
1.5 mm at 30 m/s), so a mark's ends are missed by at most one step's travel each.

In the trajectory table (io/tables.py, `wheel_columns`): per sample, vehicle and wheel k
(1-based: front-left, front-right, rear-left, rear-right, then further axles left, right):
    wheel{k}_x, wheel{k}_y [m]   the tire's road contact point at the sample time
    wheel{k}_skid (bool)         the tire slides there (EDC's skid flag)
A skid mark is a run of consecutive samples of one wheel with wheel{k}_skid true, drawn as
the polyline through their points (`mark_polylines`, plot/plan_view.py); with the default
0.01 s between samples its ends are known to one sample's travel (0.3 m at 30 m/s), the
tracker's length to one step's.

Mark table (`mark_columns`, `jaxmedusa run`'s skid_marks.parquet when some wheel slid): one
row per mark: vehicle and wheel (1-based), mark (0-based per wheel), t_start, t_end [s],
x_start, y_start, x_end, y_end [m] (its first and last sampled points), length [m] (along
its sampled points: up to one sample interval's travel shorter at each end than the run's
own, the metric's).

Per vehicle metric (analysis/rest.py): skid_length, the longest of its wheels' totals: EDC
reports marks per wheel; the longest wheel's is what an investigator compares with the
longest measured mark (in a straight locked-wheel stop every wheel leaves the stopping
distance).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.safe_math import safe_norm

__all__ = ["SkidTracker", "SkidState", "wheel_sliding", "mark_polylines", "mark_columns", "MARK_UNITS"]

MARK_UNITS = {"t_start": "s", "t_end": "s", "x_start": "m", "y_start": "m", "x_end": "m", "y_end": "m", "length": "m"}


class SkidState(NamedTuple):
    """Per scenario, leaves [V, W, ...] ([B, V, W, ...] batched)."""

    point: jnp.ndarray  # (V, W, 2) contact point of the last accepted step [m]
    sliding: jnp.ndarray  # (V, W) bool, the wheel slid on the last accepted step
    length: jnp.ndarray  # (V, W) total length of the wheel's marks [m]


def wheel_sliding(wheels):
    """The skid flag of a WheelInfo ([V, W] bool), or None where the tire models give none."""
    return None if wheels is None else getattr(wheels, "sliding", None)


@dataclass(frozen=True)
class SkidTracker:
    """Per-wheel skid-mark lengths (module docstring); init/update for one scenario."""

    def init(self, batch_item, state, n_wheels: int) -> SkidState:
        n = state.vehicles.r.shape[0]
        dtype = state.vehicles.r.dtype
        return SkidState(point=jnp.zeros((n, n_wheels, 2), dtype), sliding=jnp.zeros((n, n_wheels), bool),
                         length=jnp.zeros((n, n_wheels), dtype))

    def update(self, m: SkidState, batch_item, state, info) -> SkidState:
        sliding = wheel_sliding(info.wheels)
        if sliding is None:  # no skid flag (a hand-made StepInfo): no marks
            return m
        ok = info.accepted & batch_item.valid[:, None]  # (V, 1)
        point = info.wheels.point[..., :2]
        both = ok & sliding & m.sliding
        step = safe_norm(point - m.point, axis=-1)  # NaN-free gradient at a standing wheel
        return SkidState(point=jnp.where(ok[..., None], point, m.point),
                         sliding=jnp.where(ok, sliding, m.sliding),
                         length=m.length + jnp.where(both, step, 0.0))


def mark_polylines(x, y, skid) -> list[np.ndarray]:
    """The marks of one wheel from its samples: x, y (S,) [m], skid (S,) bool -> a list of
    (n, 2) arrays, one per run of consecutive sliding samples (a single sample: a dot)."""
    skid = np.asarray(skid, bool)
    edges = np.diff(np.concatenate([[0], skid.astype(np.int8), [0]]))
    starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    xy = np.stack([np.asarray(x, float), np.asarray(y, float)], axis=-1)
    return [xy[a:b] for a, b in zip(starts, stops)]


def mark_columns(t, point, skid, valid) -> dict:
    """The mark table (module docstring) of one scenario's samples: t (S,) [s], point
    (S, V, W, 3) [m], skid (S, V, W) bool, valid (V,) bool; rows ordered by vehicle, wheel,
    mark. Numpy in, numpy out."""
    t, point, skid = np.asarray(t, float), np.asarray(point, float), np.asarray(skid, bool)
    rows = []
    for v in np.nonzero(np.asarray(valid, bool))[0]:
        for w in range(point.shape[2]):
            edges = np.diff(np.concatenate([[0], skid[:, v, w].astype(np.int8), [0]]))
            for k, (a, b) in enumerate(zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0])):
                xy = point[a:b, v, w, :2]
                rows.append((v + 1, w + 1, k, t[a], t[b - 1], *xy[0], *xy[-1],
                             float(np.sum(np.hypot(*np.diff(xy, axis=0).T)))))
    names = ("vehicle", "wheel", "mark", "t_start", "t_end", "x_start", "y_start", "x_end", "y_end", "length")
    cols = list(zip(*rows)) if rows else [()] * len(names)
    types = (np.int32, np.int32, np.int32) + (np.float64,) * 7
    return {n: np.asarray(c, ty) for n, c, ty in zip(names, cols, types)}
