"""Where and when each vehicle comes to rest, how far it travels and how long its skid marks
are: metrics of a run, accumulated inside the jitted loop (a tracker, part of
analysis.outcomes.Outcomes; `jaxmedusa run` runs it alone for its summary).

Per vehicle (arrays [V]; table columns v{n}_<name>, n 1-based):

    rest_x, rest_y [m]   its centre of mass at the end of the run, where it is at rest
    rest_heading [deg]   its heading there: atan2(d12, d11), as final_heading (-180, 180]
    rest_time [s]        the end time of the accepted step from which it has been still
                         (ScenarioClock.still_since: speed and yaw rate below the thresholds
                         of Settings.rest_speed, solver/end_condition.py), -1 when it still
                         moves at the end of the run; tables give null then, and null
                         rest_x, rest_y, rest_heading. With end_condition = "rest" every
                         vehicle of a run that ends at rest (status ok) has one; with "time"
                         the vehicles still at end_time do.
    distance [m]         path length of its centre of mass in the road plane (x, y) over the
                         run: the sum of |delta (x, y)| over accepted steps (bounce and pitch
                         of the body add nothing; the sampled speed's integral is the check)
    skid_length [m]      the longest total skid mark of any one of its wheels
                         (analysis/skids.py); 0 without a skid flag

A vehicle at rest still pitches back on its springs from the braking, and its centre of
mass moves with it: the rest position holds part of that, a few millimetres
(studies/truck.toml, locked wheels, 1.0 m from the centre of mass down to the axles: it
stops with 0.38 deg of pitch, and when its run ends at rest 0.2 s later the centre of mass
has come back 5 mm, moving at 0.043 m/s, the pitch 0.04 deg), far below what a site
survey resolves.

Everything is per scenario and branch-free; values and forward-mode derivatives are NaN-free
(safe_norm at a standing vehicle). The rest position's derivatives are those of the final
state: the stop time moves in whole steps, and at rest the state no longer changes with it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp

from jaxmedusa.analysis.skids import SkidState, SkidTracker
from jaxmedusa.core.safe_math import heading, safe_norm

__all__ = ["RestTracker", "RestState", "REST_METRICS", "AT_REST_ONLY"]

# Metric name -> trailing shape per vehicle, in output order (outcomes.VEHICLE_METRICS).
REST_METRICS = {"rest_x": (), "rest_y": (), "rest_heading": (), "rest_time": (), "distance": (), "skid_length": ()}
# Metrics that are null in tables where the vehicle is not at rest at the end (rest_time < 0;
# io.tables repeats the list, with the units in io.tables.METRIC_UNITS).
AT_REST_ONLY = ("rest_x", "rest_y", "rest_heading", "rest_time")
_DEG = 180.0 / math.pi


class RestState(NamedTuple):
    """Per scenario accumulators (leaves [V, ...]; [B, V, ...] batched)."""

    xy: jnp.ndarray  # (V, 2) centre of mass after the last accepted step [m]
    distance: jnp.ndarray  # (V,) [m]
    skids: SkidState


def _n_wheels(batch_item) -> int:
    return batch_item.vehicle.X.shape[-2]  # the wheel assembly points X (W, 3)


@dataclass(frozen=True)
class RestTracker:
    """In-run tracker (solver/trackers.py) of the rest metrics (module docstring)."""

    def init(self, batch_item, state) -> RestState:
        vs = state.vehicles
        return RestState(xy=vs.r[:, :2], distance=jnp.zeros(vs.r.shape[:1], vs.r.dtype),
                         skids=SkidTracker().init(batch_item, state, _n_wheels(batch_item)))

    def update(self, m: RestState, batch_item, state, info) -> RestState:
        xy = state.vehicles.r[:, :2]
        ok = info.accepted & batch_item.valid
        step = safe_norm(xy - m.xy, axis=-1)
        return RestState(xy=jnp.where(ok[:, None], xy, m.xy), distance=m.distance + jnp.where(ok, step, 0.0),
                         skids=SkidTracker().update(m.skids, batch_item, state, info))

    def summarize(self, m: RestState, batch_item, state, xp=jnp) -> dict:
        """{name: (V,)} of REST_METRICS for one scenario from its accumulators and final state
        (xp: jax.numpy, or numpy for host arrays: `jaxmedusa run`'s summary)."""
        vs, since = state.vehicles, state.clock.still_since
        return {"rest_x": vs.r[:, 0], "rest_y": vs.r[:, 1], "rest_heading": heading(vs.F, xp=xp) * _DEG,
                "rest_time": xp.where(since >= 0.0, since, -1.0), "distance": m.distance,
                "skid_length": xp.max(m.skids.length, axis=-1)}
