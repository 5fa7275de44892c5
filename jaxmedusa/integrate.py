"""Time stepping: MEDUSA's predictor-corrector step (1.52) with main.c's step-size control.

`scenario_step` advances one scenario by one (possibly rejected) step; simulate.py drives
a batch: every scenario keeps its own t and dt, and finished or failed scenarios
are masked (DESIGN.md, "Numerics").
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .contact_law import ContactTerms
from .params import DriverParams, Settings
from .state import STATUS_CONTACT_NOT_CONVERGED, STATUS_NAN, STATUS_OFF_ROAD, STATUS_OK, PairState, SimState, VehicleState
from .vehicle import vehicle_rates


class PairInfo(NamedTuple):
    """What the contact stage saw on this step, per pair (P, ...)."""

    touching: jnp.ndarray  # (P,) bool, phi1 <= 0 on the predicted state
    phi1: jnp.ndarray  # (P,) gap along n1 [m] (large positive when not a candidate)
    force: jnp.ndarray  # (P,) normal contact force magnitude [N] (law-specific, see contact_law.py)
    gamma: jnp.ndarray  # (P, 2) multipliers gamma1, gamma2 after this step (MEDUSA law; 0 otherwise)
    crush: jnp.ndarray = None  # (P, 2) dynamic crush of body 1, 2 [m] (other laws: the overlap)
    residual: jnp.ndarray = None  # (P, 2) permanent crush [m] (crush law; 0 otherwise)
    power: jnp.ndarray = None  # (P, 2) power into each structure [W] (crush law; 0 otherwise)


class StepInfo(NamedTuple):
    """Per-step diagnostics for in-run outcome metrics (outcomes.py)."""

    accepted: jnp.ndarray  # () bool, the step was taken (t advanced by dt)
    dt: jnp.ndarray  # () the step size used [s]
    contact_dv: jnp.ndarray  # (V, 3) contact acceleration of each vehicle's centre of mass [m/s^2]
    pairs: PairInfo
    crash: object = None  # crush_law.CrashInfo per vehicle (pairs and barriers together)


def table_value(times, values, linear, t):
    """Driver table value at time t: piecewise constant (value[i] on [times[i], times[i+1])),
    or piecewise linear when `linear` is 1; held constant outside the table."""
    if times.shape[0] == 1:  # a constant input (static shape): no search
        return values[0]
    idx = jnp.clip(jnp.searchsorted(times, t, side="right") - 1, 0, times.shape[0] - 1)
    return jnp.where(linear > 0.5, jnp.interp(t, times, values), values[idx])


def driver_inputs(d: DriverParams, t):
    """Steering angle [rad] and front tire speed [m/s] of one vehicle at time t."""
    steer = table_value(d.steer_times, d.steer_values, d.steer_linear, t)
    speed = table_value(d.speed_times, d.speed_values, d.speed_linear, t)
    return steer, speed


def no_contact(batch_item, r_pred, F_pred, v, W, pairs: PairState, settings: Settings, geom=None):
    """Contact stage for runs without contact: nothing touches. A contact stage returns
    (any pair touching, new PairState, ContactTerms, PairInfo, solver failed)."""
    n, p = r_pred.shape[0], pairs.gamma.shape[0]
    z3, z33 = jnp.zeros((n, 3)), jnp.zeros((n, 3, 3))
    info = PairInfo(touching=jnp.zeros((p,), bool), phi1=jnp.full((p,), jnp.inf), force=jnp.zeros((p,)),
                    gamma=jnp.zeros((p, 2)), crush=jnp.zeros((p, 2)), residual=jnp.zeros((p, 2)), power=jnp.zeros((p, 2)))
    return jnp.asarray(False), pairs, ContactTerms(z3, z33, z3, z33), info, jnp.asarray(False)


def uses_contact(settings: Settings, n_vehicles: int) -> bool:
    return settings.contact and n_vehicles >= 2


def _contact_stage(settings: Settings, n_vehicles: int):
    if not uses_contact(settings, n_vehicles):
        return no_contact
    from .contact_step import contact_stage  # noqa: PLC0415  (imports contact.py only when needed)

    return contact_stage


def _all_finite(tree):
    """True when no leaf holds a NaN or an infinity. One sum per leaf: any NaN or inf makes
    it non-finite (cheaper than an elementwise isfinite and an all-reduction: ~15% of a step)."""
    return jnp.isfinite(sum(jnp.sum(x) for x in jax.tree.leaves(tree)))


def predict(state: SimState):
    """Predictor of eq (1.52)_1: z1~ = z1 + dt z2 (positions and directors)."""
    vs, dt = state.vehicles, state.clock.dt
    return vs.r + dt * vs.v, vs.F + dt * vs.W


def scenario_step(batch_item, state: SimState, settings: Settings, geom=None) -> tuple[SimState, StepInfo]:
    """One step of main.c `integrate()` for one scenario (no batch axis).

    Predict z1~ = z1 + dt z2; detect contact on the prediction (updating the multipliers);
    if there is contact and dt >= DT_MIN, shrink dt by 1.4641 and redo the step later;
    otherwise take the step z <- z + dt * rates(z1~, z2, alpha_lag), eq (1.52).
    `geom` (contact_step.PairGeometry of this scenario's pairs) may be precomputed by a
    batched caller; otherwise the contact stage computes it.
    """
    vs, clk = state.vehicles, state.clock
    dt = clk.dt
    valid = batch_item.valid
    r_pred, F_pred = predict(state)

    stage = _contact_stage(settings, vs.r.shape[0])
    touching, pairs, c, pair_info, contact_failed = stage(batch_item, r_pred, F_pred, vs.v, vs.W, state.pairs, settings, geom)
    # --- crush law / barriers (docs/crash-law.md) ---
    barrier_state, barrier_info = state.barriers, None
    if batch_item.barriers is not None and settings.contact:
        from .barrier import barrier_stage  # noqa: PLC0415

        cb, barrier_state, barrier_info = barrier_stage(
            batch_item.barriers, state.barriers, r_pred, F_pred, vs.v, vs.W, batch_item.vehicle, batch_item.contact,
            valid, settings.contact_law, settings.contact_geometry)
        c = ContactTerms(*[x + y for x, y in zip(c, cb)])
        touching = touching | jnp.any(barrier_info.touching)
    from .crush_law import crash_info  # noqa: PLC0415

    crash = crash_info(pair_info, barrier_info, vs.r.shape[0])
    if settings.contact_law == "crush":
        touching = jnp.asarray(False)  # a constant step: the crush law never redoes a step in contact
    # --- end crush law / barriers ---
    accept = jnp.logical_not(touching) | (dt < settings.dt_min)

    steer, speed = jax.vmap(driver_inputs, in_axes=(0, None))(batch_item.driver, clk.t)
    rates, _, (seg, s, off_road) = jax.vmap(
        vehicle_rates, in_axes=(0, None, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None)
    )(batch_item.vehicle, batch_item.road, r_pred, F_pred, vs.v, vs.W, vs.alpha_lag, vs.alpha_rate,
      vs.road_seg, vs.road_s, steer, speed, settings.tires)

    # A fusion boundary: without it XLA copies the whole rate computation (tires, road) into
    # each state update and into the finiteness check below, evaluating it several times.
    rates, c = jax.lax.optimization_barrier((rates, c))
    m = valid[:, None]  # padding vehicles do not move
    m33 = valid[:, None, None]
    new_vs = VehicleState(
        r=jnp.where(m, vs.r + dt * (rates.dr + c.dr), vs.r),  # eq (1.52)_4
        F=jnp.where(m33, vs.F + dt * (rates.dF + c.dF), vs.F),
        v=jnp.where(m, vs.v + dt * (rates.dv + c.dv), vs.v),  # eq (1.52)_5
        W=jnp.where(m33, vs.W + dt * (rates.dW + c.dW), vs.W),
        alpha_lag=jnp.where(m, vs.alpha_lag + dt * rates.dalpha, vs.alpha_lag),  # eq (1.52)_6
        alpha_rate=jnp.where(m, rates.dalpha, vs.alpha_rate),
        road_seg=jnp.where(valid, seg, vs.road_seg),
        road_s=jnp.where(valid, s, vs.road_s),
    )
    left_road = jnp.any(off_road & valid)
    finite = _all_finite(new_vs)
    # Only an accepted step can fail; a failed scenario keeps its last good state.
    status = jnp.where(accept & left_road, STATUS_OFF_ROAD,
                       jnp.where(accept & jnp.logical_not(finite), STATUS_NAN,
                                 jnp.where(accept & contact_failed, STATUS_CONTACT_NOT_CONVERGED, STATUS_OK)))
    status = status.astype(jnp.int32)
    ok = status == STATUS_OK
    take = accept & ok

    # main.c: after an accepted step without contact, grow dt by 1.1 once `just_reduced`
    # has counted 100 steps down; a predicted contact above DT_MIN shrinks dt and holds it.
    grow = jnp.logical_not(touching) & (clk.hold < 0) & (dt < settings.dt)
    new_dt = jnp.where(accept, jnp.where(grow, dt * settings.grow, dt), dt / settings.shrink)
    new_hold = jnp.where(accept, clk.hold - 1, settings.hold_steps)
    clock = clk.__class__(
        t=jnp.where(take, clk.t + dt, clk.t),
        dt=jnp.where(ok, new_dt, dt),
        hold=jnp.where(ok, new_hold, clk.hold),
        t_saved=clk.t_saved,
        status=status,
        steps=clk.steps + take.astype(jnp.int32),
    )
    pairs = jax.tree.map(lambda new, old: jnp.where(ok, new, old), pairs, state.pairs)
    barrier_state = jax.tree.map(lambda new, old: jnp.where(ok, new, old), barrier_state, state.barriers)
    vehicles = jax.tree.map(lambda new, old: jnp.where(take, new, old), new_vs, vs)
    info = StepInfo(accepted=take, dt=dt, contact_dv=jnp.where(m, c.dv, 0.0), pairs=pair_info, crash=crash)
    return SimState(vehicles=vehicles, pairs=pairs, clock=clock, barriers=barrier_state), info
