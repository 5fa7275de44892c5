"""When a run ends: at end_time ("time", MEDUSA's rule) or once every vehicle is at rest ("rest").

`Settings.end_condition` names an `EndCondition` of END_CONDITIONS:

- "time" (the default): the step control's own rule (MEDUSA: while t <= end_time).
- "rest": the run also ends once every valid vehicle has been *still* for `rest_hold`
  seconds; end_time is then a limit, and a scenario that reaches it before its rest gets
  `Status.NOT_AT_REST` (not a failure: its state and metrics are those of a complete run;
  core/status.py).

A vehicle is still when the horizontal speed of its centre of mass |(vx, vy)| is below
`rest_speed` and its yaw rate below rest_speed / R, R the largest horizontal distance of its
wheel assembly points X_q (eq 1.11) from the centre of mass. Why that yaw threshold: the
turning alone then moves no wheel faster than rest_speed, so one number bounds both motions
and scales with the vehicle (the MEDUSA car: R = 1.77 m, 0.05 m/s -> 0.028 rad/s =
1.6 deg/s; a longer truck gets a smaller one). Horizontal only: a car at rest still rocks on
its springs for a second or two.

The defaults, rest_speed = 0.05 m/s and rest_hold = 0.2 s: a car braked at 7 m/s^2 runs
0.2 mm after dropping below 0.05 m/s; a vehicle whose speed only passes through zero (thrown
back by an impact, or reversing under a deceleration a) is below it for 2 * 0.05 / a, under
0.2 s for any a above 0.5 m/s^2, so the hold does not mistake it for rest.

`ScenarioClock.still_since` (V,) holds per vehicle the end time of the accepted step from
which it has been still, -1 while it moves. `update_clock` keeps it after every attempt
under every end condition (analysis/rest.py's metrics read it); `at_rest` says whether the
rest has come: every vehicle still, the last of them for rest_hold. The step controls'
`running` (solver/step_control.py) is false at rest, so every loop that asks it (the
forward while loop, the checkpointed scan, the save slots, `jaxmedusa run`'s and the study
runner's host loops) stops the scenario there; a stopped scenario is masked like a finished
one. Per scenario, branch-free; the name resolves once per compilation.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp

from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.registry import Registry
from jaxmedusa.core.status import Status

__all__ = ["EndCondition", "END_CONDITIONS", "at_rest", "still_vehicles", "update_clock", "flag_limit", "yaw_rate",
           "wheel_reach", "HOLD_ROUND_OFF"]

# t - still_since is a sum of steps: 0.2 s of 5e-5 s steps lands within ~1e-13 s of 0.2 s,
# either side; 1e-9 s of slack keeps the hold from waiting one more step for round-off.
HOLD_ROUND_OFF = 1e-9


@dataclass(frozen=True)
class EndCondition:
    """stops_at_rest: the run ends once every vehicle is at rest (module docstring)."""

    name: str
    stops_at_rest: bool


END_CONDITIONS: Registry[EndCondition] = Registry("end condition")
END_CONDITIONS.register("time", EndCondition("time", stops_at_rest=False))  # MEDUSA: end_time
END_CONDITIONS.register("rest", EndCondition("rest", stops_at_rest=True))  # rest, end_time the limit


def _condition(settings: Settings) -> EndCondition:
    return END_CONDITIONS.resolve(settings.end_condition, where="Settings.end_condition")


def yaw_rate(F, W):
    """d(heading)/dt [rad/s] of the heading atan2(F10, F00) (core.safe_math.heading):
    (F00 W10 - F10 W00) / (F00^2 + F10^2); 0 where d1 is vertical. F, W (..., 3, 3)."""
    den = F[..., 0, 0] ** 2 + F[..., 1, 0] ** 2
    ok = den > 1e-30
    return jnp.where(ok, (F[..., 0, 0] * W[..., 1, 0] - F[..., 1, 0] * W[..., 0, 0]) / jnp.where(ok, den, 1.0), 0.0)


def wheel_reach(X):
    """R [m]: the largest horizontal distance of the wheel assembly points X (..., W, 3) from
    the centre of mass (module docstring); at least 1 mm."""
    return jnp.maximum(jnp.max(jnp.sqrt(X[..., 0] ** 2 + X[..., 1] ** 2), axis=-1), 1e-3)


def still_vehicles(batch_item, state, settings: Settings):
    """(V,) bool: each vehicle is still (module docstring); padding vehicles always are.
    Comparisons of squares: no square root, so nothing to differentiate at rest."""
    vs = state.vehicles
    limit = settings.rest_speed
    slow = vs.v[:, 0] ** 2 + vs.v[:, 1] ** 2 < limit**2
    turning = jnp.abs(yaw_rate(vs.F, vs.W)) * wheel_reach(batch_item.vehicle.X) < limit
    return (slow & turning) | ~batch_item.valid


def update_clock(batch_item, before, after, settings: Settings):
    """`after` (one scenario's state after an attempt) with clock.still_since brought up to
    date where the attempt was an accepted step (t advanced): the step's end time for a
    vehicle that has just become still, kept while it stays still, -1 once it moves."""
    clock = after.clock
    moved = clock.t > before.clock.t
    still = still_vehicles(batch_item, after, settings)
    since = jnp.where(still, jnp.where(clock.still_since < 0.0, clock.t, clock.still_since), -1.0)
    return replace(after, clock=replace(clock, still_since=jnp.where(moved, since, clock.still_since)))


def at_rest(clock, settings: Settings):
    """Bool (clock's batch shape): the run's rest has come (end condition "rest" only; always
    False for "time" and for a hand-made clock without still_since)."""
    if not _condition(settings).stops_at_rest or clock.still_since is None:
        return jnp.zeros(jnp.shape(clock.t), bool)
    since = jnp.asarray(clock.still_since)
    all_still = jnp.all(since >= 0.0, axis=-1)
    return all_still & (clock.t - jnp.max(since, axis=-1) >= settings.rest_hold - HOLD_ROUND_OFF)


def flag_limit(clock, settings: Settings, running):
    """The clock with status NOT_AT_REST where a run ending at rest has stopped (`running`,
    the step control's verdict on this clock, is False) without its rest: it met end_time."""
    if not _condition(settings).stops_at_rest:
        return clock
    limit = (clock.status == Status.OK) & ~running & ~at_rest(clock, settings)
    return replace(clock, status=jnp.where(limit, jnp.int32(Status.NOT_AT_REST), clock.status))
