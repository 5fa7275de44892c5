"""The exact save grid: samples at t_k = k * save_every and at end_time, whatever the steps.

The steps are the step control's own (MEDUSA's adaptive rule by default); saving never
changes a step. A save slot steps a scenario until its clock reaches the slot's save time
T (t >= T), keeping the state before the last accepted step (`Prev`), and the sample is the
state at T interpolated between that step's two ends t0 <= T <= t1 (`interpolate`):

  * r and the directors F: cubic Hermite with their rates v and W at both ends, the same
    interpolant as the fit's observation tracker (fit/observe.py), so a fitted observation
    at a grid time and the table's row agree;
  * v and W: linear (their rates, the accelerations, are not kept).

Why this is enough: eq. (1.52) is first order, its global error O(h) (h the step: 5e-5 s,
down to 3.5e-6 s in contact). Between two steps the scheme's own points follow a smooth
path to O(h^2) only (r_n+1 - r_n = h v_n, not h (v_n + v_n+1) / 2), so any interpolant
of the step's two ends is O(h^2) from it. Against "a step of s = sigma h that ends at the
save time" (r_n + s v_n) the Hermite r differs by exactly h sigma^2 (1 - sigma)
|v_n+1 - v_n| <= 4/27 |a| h^2 for an acceleration a (F likewise with W), linear v by
s (h - s) |da/dz1 . z2| (tests/solver/test_save_grid.py checks both, the second by its
h^2 scaling). At h = 5e-5 s and |a| = 10 m/s^2 that is 4e-9 m, far below the scheme's own
O(h) error and below the 7 digits MEDUSA's "%e" prints. A higher order would need more
than two points per save time and buy nothing. In contact the MEDUSA
law adds a position term to the rate of r (gamma1 n, eq. 1.52), so Hermite's slopes v are
off there by that term; the ends still match and the step is below 5e-6 s.

main.c instead saves the state of the first step with t - t_last_save >= 0.999999
save_every. While no contact has shrunk the step, its steps land on the grid (5e-5 s
divides 0.01 s) and it saves the grid states: here the interpolation weight is then 0 or
1 up to round-off of t (~1e-13 s), so the same state is saved and printed. After a
contact its save times drift (t_last_save is the drifted time): in the report's offset
example by +2 ms at 3 s, and its last sample is 2.992 s, not 3 s (docs/numerics.md).

Per scenario and branch-free; leaves carry the batch axis [B] where the loop holds them.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxmedusa.core.params import GRID_SNAP, Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.state import SimState

__all__ = ["Prev", "prev_of", "after_step", "next_save_time", "reached", "interpolate", "hermite", "GRID_SNAP"]


class Prev(NamedTuple):
    """The state before the last accepted step (leaves [B, ...]): one end of the step that
    crossed the save time."""

    t: jnp.ndarray  # [B] [s]
    r: jnp.ndarray  # [B, V, 3] [m]
    F: jnp.ndarray  # [B, V, 3, 3] directors as columns
    v: jnp.ndarray  # [B, V, 3] [m/s]
    W: jnp.ndarray  # [B, V, 3, 3] [1/s]


def prev_of(state: SimState) -> Prev:
    """The current state as a Prev (before any step: the t = 0 sample needs no bracket)."""
    vs = state.vehicles
    return Prev(t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W)


def after_step(prev: Prev, before: SimState, after: SimState) -> Prev:
    """Prev after one attempt of the loop: the state `before` it where it was an accepted
    step (t advanced), the old Prev where it was redone, masked or failed."""
    moved = after.clock.t > before.clock.t  # [B]

    def pick(new, old):
        return jnp.where(moved.reshape(moved.shape + (1,) * (new.ndim - 1)), new, old)

    return jax.tree.map(pick, prev_of(before), prev)


def next_save_time(t_saved, settings: Settings):
    """The save time after `t_saved` [B] (t_saved < 0 before the first sample):
    k * save_every with k recovered from t_saved by rounding (no accumulated round-off),
    end_time in place of a grid time within GRID_SNAP save intervals of it or past it, and
    +inf once end_time is saved (the slot then steps to the end of the run)."""
    s = settings.save_every
    k = jnp.where(t_saved < 0.0, 0.0, jnp.round(t_saved / s) + 1.0)
    grid = k * s
    target = jnp.where(grid >= settings.end_time - GRID_SNAP * s, settings.end_time, grid)
    return jnp.where(t_saved >= settings.end_time, jnp.inf, target)


def reached(state: SimState, target, settings: Settings):
    """[B] bool: the clock reached the save time, to within GRID_SNAP save intervals (the
    "constant" control's last step can end a round-off short of end_time)."""
    return state.clock.t >= target - GRID_SNAP * settings.save_every


def hermite(s, h, x0, dx0, x1, dx1):
    """Cubic Hermite interpolation at fraction s of an interval of length h between x0 and
    x1 with rates dx0 and dx1 (s broadcasts against the values' leading axes)."""
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    return h00 * x0 + h10 * h * dx0 + h01 * x1 + h11 * h * dx1


def interpolate(state: SimState, prev: Prev, target, valid) -> SimState:
    """The state at `target` [B] between prev (t0 <= target) and state (t1 >= target):
    r, F cubic Hermite with rates v, W; v, W linear (module docstring); clock.t = target.
    Padding vehicles (valid [B, V] False) never move, whatever their v: linear for them.
    Where t1 == t0 (no step yet) or target is +inf, the state itself. Other leaves are the
    state's."""
    t0, t1 = prev.t, state.clock.t
    target = jnp.where(jnp.isfinite(target), target, t1)  # +inf: no save time left (next_save_time)
    span = t1 - t0
    has_span = span > 0.0
    h = jnp.where(has_span, span, 1.0)  # double-where: no 0/0 in values or gradients
    s = jnp.where(has_span, jnp.clip((target - t0) / h, 0.0, 1.0), 1.0)

    def axes(x, ref):
        return x.reshape(x.shape + (1,) * (ref.ndim - 1))

    vs = state.vehicles
    hv, sv = axes(h, vs.r), axes(s, vs.r)
    hm, sm = axes(h, vs.F), axes(s, vs.F)

    def lerp(x0, x1, w):
        return x0 + w * (x1 - x0)

    moves = valid[..., None]
    vs = replace(vs,
                 r=jnp.where(moves, hermite(sv, hv, prev.r, prev.v, vs.r, vs.v), lerp(prev.r, vs.r, sv)),
                 F=jnp.where(moves[..., None], hermite(sm, hm, prev.F, prev.W, vs.F, vs.W), lerp(prev.F, vs.F, sm)),
                 v=lerp(prev.v, vs.v, sv),
                 W=lerp(prev.W, vs.W, sm))
    return replace(state, vehicles=vs, clock=replace(state.clock, t=target))
