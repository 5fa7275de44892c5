"""The state of every vehicle at given times, captured inside the run (an in-run tracker).

`ObservationTracker(times)` keeps the last accepted state and, on the accepted step that
crosses an observation time T (t_prev <= T <= t_new, first such step), stores r and the directors F at T by
cubic Hermite interpolation with their rates v and W (exact to O(h^4) for smooth motion,
h = the step), and v linearly. The steps are the run's own (MEDUSA's adaptive ones or
constant ones), so T need not lie on any grid, and no samples are stored: the fit's
evaluation is one while loop (solver.simulate.finish), with no scan over save slots.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp

from jaxmedusa.analysis.damage import DamageState, DamageTracker
from jaxmedusa.solver.save_grid import hermite  # the tables' save grid interpolates the same way

__all__ = ["ObservationTracker", "Observed", "hermite"]


class Observed(NamedTuple):
    """Tracker metrics of one scenario. prev_*: the last accepted state; r, F, v: the states
    at the observation times, [T, V, ...] (zeros until the time is crossed)."""

    prev_t: jnp.ndarray  # ()
    prev_r: jnp.ndarray  # (V, 3)
    prev_F: jnp.ndarray  # (V, 3, 3)
    prev_v: jnp.ndarray  # (V, 3)
    prev_W: jnp.ndarray  # (V, 3, 3)
    r: jnp.ndarray  # (T, V, 3) [m]
    F: jnp.ndarray  # (T, V, 3, 3) directors as columns
    v: jnp.ndarray  # (T, V, 3) [m/s]
    seen: jnp.ndarray  # (T,) bool: the time was crossed
    damage: DamageState | None = None  # crush profiles (analysis/damage.py) when crush is observed


@dataclass(frozen=True)
class ObservationTracker:
    """In-run tracker (solver/trackers.py) of the vehicles' states at `times` [s]; with
    `damage`, also their crush profiles (analysis.damage.DamageTracker)."""

    times: tuple[float, ...]
    damage: bool = False

    def init(self, batch_item, state) -> Observed:
        vs = state.vehicles
        n_t = len(self.times)
        return Observed(prev_t=state.clock.t, prev_r=vs.r, prev_F=vs.F, prev_v=vs.v, prev_W=vs.W,
                        r=jnp.zeros((n_t,) + vs.r.shape, vs.r.dtype), F=jnp.zeros((n_t,) + vs.F.shape, vs.F.dtype),
                        v=jnp.zeros((n_t,) + vs.v.shape, vs.v.dtype), seen=jnp.zeros((n_t,), bool),
                        damage=DamageTracker().init(batch_item, state) if self.damage else None)

    def update(self, m: Observed, batch_item, state, info) -> Observed:
        vs, t1 = state.vehicles, state.clock.t
        T = jnp.asarray(self.times)
        moved = info.accepted & (t1 > m.prev_t)
        # T <= t1 + 1 ns, once: the constant control's last step ends on end_time only to
        # round-off (t = 2.4999999999998 after 12500 steps of 2e-4 s), and an observation
        # at end_time must still be captured (s clipped to 1; 1 ns moves a car 2e-8 m)
        cross = moved & ~m.seen & (m.prev_t <= T) & (T <= t1 + 1e-9)  # (T,)
        h = jnp.where(moved, t1 - m.prev_t, 1.0)  # no division by zero on rejected steps
        s = jnp.clip((T - m.prev_t) / h, 0.0, 1.0)
        s3, s4 = s[:, None, None], s[:, None, None, None]
        r = hermite(s3, h, m.prev_r, m.prev_v, vs.r, vs.v)
        F = hermite(s4, h, m.prev_F, m.prev_W, vs.F, vs.W)
        v = (1 - s3) * m.prev_v + s3 * vs.v
        c3, c4 = cross[:, None, None], cross[:, None, None, None]
        keep = lambda new, old: jnp.where(moved, new, old)  # noqa: E731
        return Observed(prev_t=keep(t1, m.prev_t), prev_r=keep(vs.r, m.prev_r), prev_F=keep(vs.F, m.prev_F),
                        prev_v=keep(vs.v, m.prev_v), prev_W=keep(vs.W, m.prev_W),
                        r=jnp.where(c3, r, m.r), F=jnp.where(c4, F, m.F), v=jnp.where(c3, v, m.v),
                        seen=m.seen | cross,
                        damage=DamageTracker().update(m.damage, batch_item, state, info) if self.damage else None)
