"""One integration step of one scenario: MEDUSA's predictor-corrector step, eq. (1.52).

    predict z1~ = z1 + dt z2
      -> contact stage on z1~ (contact/stage.py: shapes, laws; new multipliers; then rigid
         barriers, contact/barrier.py via contact/crash.py)
      -> vehicle rates at (z1~, z2) (physics/vehicle.py: road, tires, suspension)
      -> update z <- z + dt (rates + contact terms)
      -> step control: take or redo the step, next dt (solver/step_control.py)

`scenario_step` has no batch axis; solver/simulate.py lifts it with vmap, and every
scenario keeps its own t and dt. A failed scenario (NaN, off the road, contact solver not
converged) keeps its last good state and stops (docs/architecture.md, docs/numerics.md).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxmedusa.contact.crash import CrashInfo, with_barriers
from jaxmedusa.contact.joints import joint_terms
from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.stage import contact_stage, no_contact, uses_contact
from jaxmedusa.contact.types import PairInfo, add_terms
from jaxmedusa.core.fusion import computed_once
from jaxmedusa.core.params import Settings
from jaxmedusa.core.state import ScenarioClock, SimState, VehicleState
from jaxmedusa.core.status import Status
from jaxmedusa.physics.driver import driver_inputs, wheel_inputs
from jaxmedusa.physics.vehicle import WheelInfo, vehicle_rates
from jaxmedusa.solver.step_control import STEP_CONTROLS, StepProposal

__all__ = ["scenario_step", "predict", "rates_of_vehicles", "corrector", "step_status", "StepInfo", "contact_stage_for"]


class StepInfo(NamedTuple):
    """Per-step diagnostics for in-run trackers (solver/trackers.py, analysis/outcomes.py)."""

    accepted: jnp.ndarray  # () bool, the step was taken (t advanced by dt)
    dt: jnp.ndarray  # () the step size used [s]
    contact_dv: jnp.ndarray  # (V, 3) contact acceleration of each vehicle's centre of mass [m/s^2]
    pairs: PairInfo
    crash: CrashInfo | None = None  # per vehicle, pairs and barriers together (contact/crash.py)
    wheels: WheelInfo | None = None  # leaves [V, 4, ...]: tire forces, contact points, power (physics/vehicle.py)


def contact_stage_for(settings: Settings, n_vehicles: int):
    """The contact stage function of a run (static): the pairwise stage, or no contact."""
    return contact_stage if uses_contact(settings, n_vehicles) else no_contact


def _all_finite(tree):
    """True when no leaf holds a NaN or an infinity. One sum per leaf: any NaN or inf makes
    it non-finite (cheaper than an elementwise isfinite and an all-reduction: ~15% of a step)."""
    return jnp.isfinite(sum(jnp.sum(x) for x in jax.tree.leaves(tree)))


def predict(state: SimState):
    """Predictor of eq (1.52)_1: z1~ = z1 + dt z2 (positions and directors)."""
    vs, dt = state.vehicles, state.clock.dt
    return vs.r + dt * vs.v, vs.F + dt * vs.W


def rates_of_vehicles(batch_item, state: SimState, r_pred, F_pred, settings: Settings):
    """Vehicle rates of every vehicle of one scenario at (z1~, z2) and the driver inputs at
    t, vmapped over vehicles: (Rates with leaves [V, ...], WheelInfo with leaves [V, 4, ...],
    (road segment, parameter, off_road))."""
    vs = state.vehicles
    steer, speed = jax.vmap(driver_inputs, in_axes=(0, None))(batch_item.driver, state.clock.t)
    controls = jax.vmap(wheel_inputs, in_axes=(0, None))(batch_item.driver, state.clock.t)  # None without tables
    zones = getattr(batch_item, "zones", None)  # None without friction zones
    rates, wheels, tracking = jax.vmap(
        vehicle_rates, in_axes=(0, None, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None, 0, None)
    )(batch_item.vehicle, batch_item.road, r_pred, F_pred, vs.v, vs.W, vs.alpha_lag, vs.alpha_rate,
      vs.road_seg, vs.road_s, steer, speed, settings.tires, controls, zones)
    return rates, wheels, tracking


def corrector(vs: VehicleState, rates, c, dt, valid, seg, s) -> VehicleState:
    """z <- z + dt (rates + contact terms), eq (1.52)_4-6; padding vehicles do not move."""
    m = valid[:, None]
    m33 = valid[:, None, None]
    return VehicleState(
        r=jnp.where(m, vs.r + dt * (rates.dr + c.dr), vs.r),  # eq (1.52)_4
        F=jnp.where(m33, vs.F + dt * (rates.dF + c.dF), vs.F),
        v=jnp.where(m, vs.v + dt * (rates.dv + c.dv), vs.v),  # eq (1.52)_5
        W=jnp.where(m33, vs.W + dt * (rates.dW + c.dW), vs.W),
        alpha_lag=jnp.where(m, vs.alpha_lag + dt * rates.dalpha, vs.alpha_lag),  # eq (1.52)_6
        alpha_rate=jnp.where(m, rates.dalpha, vs.alpha_rate),
        road_seg=jnp.where(valid, seg, vs.road_seg),
        road_s=jnp.where(valid, s, vs.road_s),
    )


def step_status(accept, left_road, new_vs: VehicleState, contact_failed):
    """Status of an attempt: only an accepted step can fail (off the road, NaN, contact)."""
    status = jnp.where(accept & left_road, Status.OFF_ROAD,
                       jnp.where(accept & jnp.logical_not(_all_finite(new_vs)), Status.NAN,
                                 jnp.where(accept & contact_failed, Status.CONTACT_NOT_CONVERGED, Status.OK)))
    return status.astype(jnp.int32)


def scenario_step(batch_item, state: SimState, settings: Settings, geom=None, law_terms=None
                  ) -> tuple[SimState, StepInfo]:
    """One attempt of main.c `integrate()` for one scenario (no batch axis), module docstring:
    predict -> contact stage -> vehicle rates -> corrector -> step control. A taken step is
    z <- z + dt * (rates(z1~, z2, alpha_lag) + contact terms), eq (1.52); the step control
    (Settings.step_control) may instead redo it with a smaller dt (MEDUSA: on contact above
    DT_MIN). `geom` (the contact.types.PairGeometry of this scenario's pairs) and `law_terms`
    (their contact law terms, contact.stage.batch_law_terms) may be precomputed by a batched
    caller; otherwise the contact stage computes them.
    """
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    stage = contact_stage_for(settings, state.vehicles.r.shape[0])
    vs, clk, valid = state.vehicles, state.clock, batch_item.valid

    # named scopes: the phases' names in the compiled program (benchmarks/step_fusions.py)
    with jax.named_scope("predict"):
        r_pred, F_pred = predict(state)
    with jax.named_scope("contact_law"):
        touching, pairs, c, pair_info, contact_failed = stage(batch_item, r_pred, F_pred, vs.v, vs.W, state.pairs,
                                                              settings, geom, law_terms)
        c, barriers, walls_touching, crash = with_barriers(batch_item, state, r_pred, F_pred, c, pair_info, settings)
    # a law that does not need MEDUSA's shrink-on-contact rule keeps the step at dt
    touching = (touching | walls_touching) & LAWS.resolve(settings.contact_law, where="Settings.contact_law"
                                                          ).shrink_on_contact
    with jax.named_scope("vehicle_rates"):
        rates, wheels, (seg, s, off_road) = rates_of_vehicles(batch_item, state, r_pred, F_pred, settings)
    joints = getattr(batch_item, "joints", None)  # hitches (contact/joints.py); None: compiled out
    with jax.named_scope("joints"):
        forces = c if joints is None else add_terms(c, joint_terms(joints, batch_item.vehicle, r_pred, F_pred, vs.v,
                                                                    vs.W)[0])
    # A fusion boundary: without it XLA copies the whole rate computation (tires, road) into
    # each state update and into the finiteness check below, evaluating it several times.
    rates, c, forces = jax.lax.optimization_barrier((rates, c, forces))
    with jax.named_scope("corrector"):
        new_vs = corrector(vs, rates, forces, clk.dt, valid, seg, s)
    with jax.named_scope("step_control"):
        accept, new_dt, new_hold = control.decide(clk, StepProposal(touching=touching), settings)

        status = step_status(accept, jnp.any(off_road & valid), new_vs, contact_failed)
        # both masks are read by the selects of every state leaf and by the trackers: computed
        # once, not inside each of those (core/fusion.py)
        ok = computed_once(status == Status.OK)
        take = computed_once(accept & ok)  # a failed scenario keeps its last good state
        clock = ScenarioClock(
            t=jnp.where(take, clk.t + clk.dt, clk.t),
            dt=jnp.where(ok, new_dt, clk.dt),
            hold=jnp.where(ok, new_hold, clk.hold),
            t_saved=clk.t_saved,
            status=status,
            steps=clk.steps + take.astype(jnp.int32),
            still_since=clk.still_since,  # solver/end_condition.py updates it after the step
        )
        pairs = jax.tree.map(lambda new, old: jnp.where(ok, new, old), pairs, state.pairs)
        barriers = jax.tree.map(lambda new, old: jnp.where(ok, new, old), barriers, state.barriers)
        vehicles = jax.tree.map(lambda new, old: jnp.where(take, new, old), new_vs, vs)
    info = StepInfo(accepted=take, dt=clk.dt, contact_dv=jnp.where(valid[:, None], c.dv, 0.0), pairs=pair_info,
                    crash=crash, wheels=wheels)
    return SimState(vehicles=vehicles, pairs=pairs, clock=clock, barriers=barriers), info
