"""Outcome metrics per scenario and vehicle, computed inside the jitted run.

    from jaxmedusa.outcomes import Outcomes, outcome_arrays
    tracker = Outcomes()
    result = simulate(batch, state0, settings, tracker=tracker, record=False)
    metrics = outcome_arrays(batch, result.final, result.metrics, tracker)  # dict of [B, V] arrays

`Outcomes` is a hashable tracker (solver/trackers.py): `init` and `update` run per scenario
(vmapped) after every step; `summarize` turns the accumulated state and the final state
into the metrics below. Everything is branch-free and NaN-free, values and gradients
(forward mode; the run's while loop has no reverse mode).

Per vehicle (arrays [V]; vehicles are 0-based here, 1-based in output columns):

contact (on accepted steps, from the pairs the vehicle belongs to and its barrier contacts;
force and penetration from the pairs only)
    first_contact_time [s]   end time of the first accepted step in contact (-1: none)
    last_contact_time [s]    end time of the last accepted step in contact (-1: none)
    contact_duration [s]     sum of dt over accepted steps in contact
    contact_episodes [-]     number of collisions: contact after more than episode_gap
                             (10 ms) without contact (the MEDUSA law switches on and off
                             from step to step within one collision: hundreds of times
                             in a 20 ms rear-end impact)
    peak_contact_force [N]   largest normal contact force (law-specific, PairInfo.force)
    max_penetration [m]      largest -phi1 over touching pairs (0: none)
delta-V (EDSMAC: dV = sum of a dt over the collision phase, a = contact acceleration of the CM)
    delta_v [m/s]            |delta_v_vec|
    delta_v_vec (3,) [m/s]   world frame E1, E2, E3
    delta_v_body (3,) [m/s]  vehicle frame (forward d1, left d2, up d3), accumulated per step
                             with the directors of that step, as EDSMAC's SAVEMAX does
    pdof_deg [deg]           principal direction of force: the direction the force comes
                             from, clockwise from the vehicle's front seen from above
                             (0 = frontal, 90 = right side, 180 = rear), from delta_v_body
    pdof_clock [-]           pdof_deg as a clock hour 1..12 (12 = frontal, 6 = rear);
                             0 when delta_v_body is 0 (no contact)
final state
    final_x, final_y, final_z [m], final_vx, final_vy, final_vz [m/s],
    final_speed [m/s] (sqrt(vx^2 + vy^2), as main.c), final_heading [deg] (atan2(d12, d11)),
    final_yaw_rate [deg/s] (d(heading)/dt = (F00 W10 - F10 W00) / (F00^2 + F10^2))
handling
    max_heading_change [deg] largest |heading - initial heading| (heading unwrapped step by step)
    spin_out [bool]          max_heading_change > spin_threshold_deg (90)
    max_lateral_excursion [m] largest |lateral offset - initial lateral offset|, the lateral
                             offset being y on the flat plane (a straight road along E1) or the
                             signed horizontal distance from the road's centre line (spline)
    lane_departure [bool]    max_lateral_excursion > lane_width / 2 (MEDUSA common.h LANEWIDTH 3.0 m)
energy
    energy_start, energy_end [J]  vehicle.energy_total at t = 0 and at the end
crash (docs/crash-law.md; contact = a pair or barrier contact that carries force, StepInfo.crash)
    max_crush [m]            largest dynamic crush (the medusa and physical laws: the overlap)
    residual_crush [m]       permanent crush its last force-carrying contact left (the law's
                             residual on that step; crush law; 0 for the other laws)
    pulse_duration [s]       sum of dt over accepted steps in contact
    mean_decel_g [g]         delta_v / pulse_duration / 9.81
    peak_decel_g [g]         largest |contact acceleration of the CM| on one step (unfiltered;
                             analysis/crash_pulse.py gives the CFC 60 filtered pulse of a run)
    restitution [-]          -(v_i - v_p)_end . u / |(v_i - v_p)_start|, u the unit closing
                             velocity at the first contact, p the partner of that contact
                             (a barrier: v_p = 0), start = just before the first contact,
                             end = after the last
    absorbed_energy [J]      work done on the vehicle's structure (crush law; 0 otherwise):
                             the integral of force over its crush by the trapezoid rule, the
                             force of the step and of the step before (CrashInfo.load) over
                             the step's crush increment (power dt / force)
    ees [m/s]                energy-equivalent speed sqrt(2 absorbed_energy / mass)
damage of the first collision (analysis/damage.py, which also keeps the later ones)
    c1 .. c6 [m]             residual crush profile across the damage width (NASS/CRASH3)
    damage_width [m]         the damage width L; damage_offset [m] its centre from the
                             vehicle's centre line (+ left on front/back, + forward on sides)
    crash3_energy [J]        CRASH3 energy of the profile with the face's A, B (analysis/crash3.py)
    collision_delta_v [m/s]  |delta-V| of the collision; collision_pdof_clock its clock hour
    cdc (5,) int             SAE J224 CDC codes (tables write the string, e.g. "12FDEW2")
articulated vehicles (contact/articulation.py, docs/trailers.md)
    max_articulation [deg]   largest |yaw - tow vehicle's yaw| of a towed vehicle (0 for others)
    jackknife                max_articulation > JACKKNIFE_DEG (60 deg)
    sway_decay [1/s]         decay rate of the articulation oscillation after sway_start (2.5 s):
                             minus the slope of log |peak| over time (analysis/sway.py, peaks
                             of |articulation| sampled every 0.02 s); positive: the sway dies
                             out; 0 (null in tables) with fewer than 3 peaks or not towed
    sway_peaks [-]           the peaks that rate was fitted to
rest (analysis/rest.py: definitions there)
    rest_x, rest_y [m], rest_heading [deg], rest_time [s], distance [m], skid_length [m]
Per scenario (arrays [B]): status (core.status.Status), end_time [s], steps [-] (accepted
steps), and the counts of analysis/step_counts.py: rejected_steps, contact_steps (accepted
steps with some pair or barrier in contact), contact_runs (runs of consecutive accepted steps
in contact, the original program's "episodes"), episodes (collisions of any pair or barrier,
the episode_gap rule of contact_episodes) [-].
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.articulation import JACKKNIFE_DEG, articulation
from jaxmedusa.analysis.damage import DamageState, DamageTracker, first_collision_metrics, with_batch_rows, with_rows
from jaxmedusa.analysis.rest import REST_METRICS, RestState, RestTracker
from jaxmedusa.analysis.sway import SWAY_START, SwayPeaks, peaks_init, peaks_rate, peaks_update
from jaxmedusa.analysis.step_counts import EPISODE_GAP, Counts, StepCounts
from jaxmedusa.contact.crash import NO_PARTNER
from jaxmedusa.core.params import GRAVITY
from jaxmedusa.core.safe_math import TINY, heading, safe_norm, safe_sqrt
from jaxmedusa.core.state import pair_indices
from jaxmedusa.physics import road as road_mod
from jaxmedusa.physics.vehicle import energy_total
from jaxmedusa.solver.trackers import batch_map, masked

__all__ = ["Outcomes", "OutcomeState", "outcome_arrays", "VEHICLE_METRICS", "SCENARIO_METRICS",
           "LANE_WIDTH", "summarize_batch", "yaw_rate_of", "clock_hour"]

LANE_WIDTH = 3.0  # [m], MEDUSA common.h LANEWIDTH
_RAD = 180.0 / math.pi

# Metric name -> trailing shape per vehicle (() scalar or (3,) vector), in output order.
VEHICLE_METRICS = {
    "first_contact_time": (), "last_contact_time": (), "contact_duration": (), "contact_episodes": (),
    "peak_contact_force": (), "max_penetration": (),
    "delta_v": (), "delta_v_vec": (3,), "delta_v_body": (3,), "pdof_deg": (), "pdof_clock": (),
    "final_x": (), "final_y": (), "final_z": (), "final_vx": (), "final_vy": (), "final_vz": (),
    "final_speed": (), "final_heading": (), "final_yaw_rate": (),
    "max_heading_change": (), "spin_out": (), "max_lateral_excursion": (), "lane_departure": (),
    "energy_start": (), "energy_end": (),
    "max_crush": (), "residual_crush": (), "pulse_duration": (), "mean_decel_g": (), "peak_decel_g": (),
    "restitution": (), "absorbed_energy": (), "ees": (),
    "c1": (), "c2": (), "c3": (), "c4": (), "c5": (), "c6": (), "damage_width": (), "damage_offset": (),
    "crash3_energy": (), "collision_delta_v": (), "collision_pdof_clock": (), "cdc": (5,),
    "max_articulation": (), "jackknife": (), "sway_decay": (), "sway_peaks": (),
    **REST_METRICS,
}
SCENARIO_METRICS = ("status", "end_time", "steps", "rejected_steps", "contact_steps", "contact_runs", "episodes")


class OutcomeState(NamedTuple):
    """Per-scenario accumulators (leaves [V] or [V, 3]; [B, ...] once batched)."""

    first_contact: jnp.ndarray  # [s], -1 before any contact
    last_contact: jnp.ndarray  # [s], -1 before any contact
    duration: jnp.ndarray  # [s]
    episodes: jnp.ndarray  # int32
    touching: jnp.ndarray  # bool, in contact on the last accepted step
    peak_force: jnp.ndarray  # [N]
    penetration: jnp.ndarray  # [m] >= 0
    dv_world: jnp.ndarray  # (V, 3) [m/s]
    dv_body: jnp.ndarray  # (V, 3) [m/s]
    heading: jnp.ndarray  # [rad], last heading seen
    turned: jnp.ndarray  # [rad], unwrapped heading - initial heading
    max_turn: jnp.ndarray  # [rad] >= 0
    lateral0: jnp.ndarray  # [m], initial lateral offset
    max_lateral: jnp.ndarray  # [m] >= 0
    energy0: jnp.ndarray  # [J]
    # crash (contact.crash.CrashInfo)
    crush: jnp.ndarray  # [m] largest dynamic crush
    residual: jnp.ndarray  # [m] permanent crush after the last accepted step in contact
    pulse: jnp.ndarray  # [s] time in force-carrying contact
    peak_decel: jnp.ndarray  # [m/s^2]
    absorbed: jnp.ndarray  # [J]
    load: jnp.ndarray  # [N] CrashInfo.load of the last accepted step (the trapezoid's other end)
    v_start: jnp.ndarray  # (V, 3) [m/s] just before the first contact
    v_end: jnp.ndarray  # (V, 3) [m/s] after the last contact step
    partner: jnp.ndarray  # int32 partner of the first contact (BARRIER, NO_PARTNER or a vehicle)
    counts: Counts  # per scenario: step and contact counts (analysis/step_counts.py)
    damage: DamageState | None  # per collision: crush profiles, normals, delta-V (analysis/damage.py); None: off
    rest: RestState | None  # rest, distance and skid marks (analysis/rest.py); None: off
    articulation: jnp.ndarray | float = 0.0  # [rad] >= 0, largest |articulation| (contact/articulation.py)
    sway: SwayPeaks | None = None  # the sway decay rate's peaks (analysis/sway.py); None: no hitch in the batch


# ----------------------------------------------------------------------------- helpers


def yaw_rate_of(F, W):
    """d(heading)/dt [rad/s] = (F00 W10 - F10 W00) / (F00^2 + F10^2); 0 if d1 is vertical."""
    den = F[0, 0] ** 2 + F[1, 0] ** 2
    ok = den > TINY
    return jnp.where(ok, (F[0, 0] * W[1, 0] - F[1, 0] * W[0, 0]) / jnp.where(ok, den, 1.0), 0.0)


def _wrap(a):
    """Angle [rad] wrapped into [-pi, pi)."""
    return jnp.mod(a + jnp.pi, 2.0 * jnp.pi) - jnp.pi


def _unit_columns(F):
    """Directors (columns of F) normalised to unit length, (3, 3)."""
    n = safe_norm(F, axis=0)
    return F / jnp.where(n > 0.0, n, 1.0)


def clock_hour(angle_deg):
    """Clock hour 1..12 of a direction angle [deg] clockwise from the front (0 -> 12)."""
    h = jnp.mod(jnp.round(angle_deg / 30.0), 12.0)
    return jnp.where(h == 0.0, 12.0, h)


def _pdof(dv_body):
    """Principal direction of force [deg] in [0, 360) and its clock hour (0 if no force).

    The force comes from the direction of -delta_V. With forward f = dv.d1 and left
    l = dv.d2, that direction, clockwise from the front, is atan2(l, -f)."""
    f, l = dv_body[..., 0], dv_body[..., 1]
    ok = f * f + l * l > TINY
    ang = jnp.arctan2(jnp.where(ok, l, 0.0), jnp.where(ok, -f, 1.0)) * _RAD
    ang = jnp.mod(ang, 360.0)
    ang = jnp.where(ok & (ang < 360.0), ang, 0.0)  # mod(-1e-15, 360) rounds to 360
    return ang, jnp.where(ok, clock_hour(ang), 0.0)


def _lateral(road, r, seg, s):
    """Lateral offset [m]: y on the flat plane, else the signed horizontal distance of r
    from the road curve at the tracking point (positive to the left of the road direction)."""
    if road is None:
        return r[1]
    pos, d1 = road_mod.curve(road, seg, s)
    t = jnp.stack([jnp.abs(d1[0]), d1[1]])  # road.c takes |dx/ds|
    n = safe_norm(t)
    t = jnp.where(n > 0.0, t / jnp.where(n > 0.0, n, 1.0), jnp.array([1.0, 0.0]))
    return t[0] * (r[1] - pos[1]) - t[1] * (r[0] - pos[0])


def _pair_incidence(n_vehicles: int) -> np.ndarray:
    """(P, V) bool: pair p involves vehicle v (pairs in state.pair_indices order)."""
    a, b = pair_indices(n_vehicles)
    inc = np.zeros((len(a), n_vehicles), bool)
    inc[np.arange(len(a)), a] = True
    inc[np.arange(len(a)), b] = True
    return inc


def _energies(batch_item, vs):
    return jax.vmap(energy_total)(batch_item.vehicle, vs.r, vs.F, vs.v, vs.W)


def _laterals(batch_item, vs):
    return jax.vmap(_lateral, in_axes=(None, 0, 0, 0))(batch_item.road, vs.r, vs.road_seg, vs.road_s)


# ----------------------------------------------------------------------------- tracker


@dataclass(frozen=True)
class Outcomes:
    """Outcome tracker for `simulate(..., tracker=Outcomes())` (hashable, static).

    lane_width [m]: a lane departure is a lateral excursion above lane_width / 2.
    spin_threshold_deg [deg]: a spin-out is a heading change above it.
    sway_start [s]: the sway decay rate fits the articulation's peaks after this time.
    episode_gap [s]: contact that resumes within this time of the last contact continues
    the same episode.
    damage, rest: whether the damage group's tracker (analysis/damage.py) and the rest
    group's (analysis/rest.py: distance, skid marks, and the solver's rest clock,
    `reads_rest_clock`) run. Off, their state is None, they cost nothing in the loop and
    their metrics are absent from `summarize` (a study turns off the groups it does not
    ask for: study.spec.Study.tracker); every other metric is unchanged, bit for bit.
    """

    lane_width: float = LANE_WIDTH
    spin_threshold_deg: float = 90.0
    episode_gap: float = EPISODE_GAP
    sway_start: float = SWAY_START
    damage: bool = True
    rest: bool = True

    def damage_tracker(self) -> DamageTracker:
        """The damage group's in-run tracker: the first collision only (its metrics are all
        of the first collision), a third of the state of all collision slots."""
        return DamageTracker(self.episode_gap, first_only=True)

    @property
    def reads_rest_clock(self) -> bool:
        """Whether the metrics read ScenarioClock.still_since (solver/trackers.py)."""
        return self.rest

    def init(self, batch_item, state) -> OutcomeState:
        """Accumulators for one scenario at t = 0."""
        vs = state.vehicles
        n = vs.r.shape[0]
        z = jnp.zeros((n,), vs.r.dtype)
        return OutcomeState(
            first_contact=z - 1.0, last_contact=z - 1.0, duration=z, episodes=jnp.zeros((n,), jnp.int32),
            touching=jnp.zeros((n,), bool), peak_force=z, penetration=z,
            dv_world=jnp.zeros((n, 3), vs.r.dtype), dv_body=jnp.zeros((n, 3), vs.r.dtype),
            heading=heading(vs.F), turned=z, max_turn=z,
            lateral0=_laterals(batch_item, vs), max_lateral=z, energy0=_energies(batch_item, vs),
            crush=z, residual=z, pulse=z, peak_decel=z, absorbed=z, load=z, v_start=jnp.zeros((n, 3), vs.r.dtype),
            v_end=jnp.zeros((n, 3), vs.r.dtype), partner=jnp.full((n,), NO_PARTNER, jnp.int32),
            counts=StepCounts(self.episode_gap).init(batch_item, state),
            damage=self.damage_tracker().init(batch_item, state) if self.damage else None,
            articulation=jnp.abs(articulation(getattr(batch_item, "joints", None), vs.F)),
            sway=None if getattr(batch_item, "joints", None) is None else
            peaks_init(state.clock.t, articulation(batch_item.joints, vs.F)),
            rest=RestTracker().init(batch_item, state) if self.rest else None,
        )

    def update(self, m: OutcomeState, batch_item, state, info) -> OutcomeState:
        """Fold one step (state after the step, StepInfo of the step) into the accumulators."""
        new, rows = self._update(m, batch_item, state, info)
        return new if rows is None else new._replace(damage=with_rows(new.damage, rows, batch_item.vehicle))

    def update_batch(self, m: OutcomeState, batch, state, info, active) -> OutcomeState:
        """`update` of a batch (solver.trackers.update_batch), the damage rows written in place."""
        new, rows = batch_map(self._update)(m, batch, state, info)
        new = masked(new, m, active)  # (the rows are m's: the select drops out)
        return new if rows is None else new._replace(damage=with_batch_rows(new.damage, rows, batch.vehicle, active))

    def _update(self, m: OutcomeState, batch_item, state, info):
        """`update` with the damage rows as they were: (OutcomeState, RowWrite or None)."""
        vs = state.vehicles
        n = vs.r.shape[0]
        acc = info.accepted
        t = state.clock.t
        dt = jnp.where(acc, info.dt, 0.0)
        valid = batch_item.valid

        # contact, per vehicle from its pairs
        if n >= 2:
            inc = jnp.asarray(_pair_incidence(n))  # (P, V)
            pt = info.pairs.touching[:, None] & inc
            touch = jnp.any(pt, axis=0) & acc & valid
            force = jnp.max(jnp.where(pt, info.pairs.force[:, None], 0.0), axis=0)
            depth = jnp.max(jnp.where(pt, jnp.maximum(-info.pairs.phi1[:, None], 0.0), 0.0), axis=0)
        else:
            touch = jnp.zeros((n,), bool)
            force = depth = jnp.zeros((n,), vs.r.dtype)
        if info.crash is not None:  # barrier contacts count as contact too
            touch = touch | (info.crash.touching & acc & valid)
        new_touch = jnp.where(acc, touch, m.touching)
        first = jnp.where(touch & (m.first_contact < 0.0), t, m.first_contact)
        last = jnp.where(touch, t, m.last_contact)
        # a new episode: contact after more than episode_gap without any (the MEDUSA law
        # switches contact on and off from one step to the next within one collision)
        resumed = (m.last_contact >= 0.0) & (t - m.last_contact <= self.episode_gap)
        episodes = m.episodes + (touch & ~m.touching & ~resumed).astype(jnp.int32)
        duration = m.duration + jnp.where(touch, dt, 0.0)
        peak = jnp.maximum(m.peak_force, jnp.where(touch, force, 0.0))
        pen = jnp.maximum(m.penetration, jnp.where(touch, depth, 0.0))

        # delta-V: integral of the contact acceleration over accepted steps
        dv = info.contact_dv * dt  # (V, 3)
        dirs = jax.vmap(_unit_columns)(vs.F)  # (V, 3, 3), columns d1, d2, d3
        dv_body = m.dv_body + jnp.einsum("vj,vji->vi", dv, dirs)

        art = articulation(getattr(batch_item, "joints", None), vs.F)  # (V,) [rad]

        # heading (unwrapped) and lateral excursion
        h = heading(vs.F)
        turned = m.turned + _wrap(h - m.heading)
        lat = jnp.abs(_laterals(batch_item, vs) - m.lateral0)
        damage, rows = (self.damage_tracker().update_deferred(m.damage, batch_item, state, info) if self.damage
                        else (None, None))
        return OutcomeState(
            **_crash_update(m, info, vs, acc & valid, dt),
            first_contact=first, last_contact=last, duration=duration, episodes=episodes, touching=new_touch,
            peak_force=peak, penetration=pen, dv_world=m.dv_world + dv, dv_body=dv_body,
            heading=h, turned=turned, max_turn=jnp.maximum(m.max_turn, jnp.abs(turned)),
            lateral0=m.lateral0, max_lateral=jnp.maximum(m.max_lateral, lat), energy0=m.energy0,
            counts=StepCounts(self.episode_gap).update(m.counts, batch_item, state, info),
            damage=damage,
            articulation=jnp.maximum(m.articulation, jnp.abs(art)),
            sway=None if m.sway is None else peaks_update(m.sway, t, art, self.sway_start, acc),
            rest=RestTracker().update(m.rest, batch_item, state, info) if self.rest else None,
        ), rows

    def summarize(self, m: OutcomeState, batch_item, state) -> dict:
        """Metrics of one scenario (module docstring) from its accumulators and final state."""
        vs = state.vehicles
        ang, hour = _pdof(m.dv_body)
        speed = safe_norm(vs.v[:, :2], axis=-1)
        max_turn = m.max_turn * _RAD
        out = {
            "first_contact_time": m.first_contact, "last_contact_time": m.last_contact,
            "contact_duration": m.duration, "contact_episodes": m.episodes,
            "peak_contact_force": m.peak_force, "max_penetration": m.penetration,
            "delta_v": safe_norm(m.dv_world, axis=-1), "delta_v_vec": m.dv_world, "delta_v_body": m.dv_body,
            "pdof_deg": ang, "pdof_clock": hour.astype(jnp.int32),
            "final_x": vs.r[:, 0], "final_y": vs.r[:, 1], "final_z": vs.r[:, 2],
            "final_vx": vs.v[:, 0], "final_vy": vs.v[:, 1], "final_vz": vs.v[:, 2], "final_speed": speed,
            "final_heading": heading(vs.F) * _RAD,
            "final_yaw_rate": jax.vmap(yaw_rate_of)(vs.F, vs.W) * _RAD,
            "max_heading_change": max_turn, "spin_out": max_turn > self.spin_threshold_deg,
            "max_lateral_excursion": m.max_lateral, "lane_departure": m.max_lateral > 0.5 * self.lane_width,
            "energy_start": m.energy0, "energy_end": _energies(batch_item, vs),
            "status": state.clock.status, "end_time": state.clock.t, "steps": state.clock.steps,
            "rejected_steps": m.counts.rejected_steps, "contact_steps": m.counts.contact_steps,
            "contact_runs": m.counts.contact_runs, "episodes": m.counts.episodes,
            **_crash_metrics(m, batch_item),
            **(first_collision_metrics(m.damage, batch_item.vehicle) if self.damage else {}),
            "max_articulation": m.articulation * _RAD, "jackknife": m.articulation * _RAD > JACKKNIFE_DEG,
            **_sway_metrics(m.sway, vs.r.shape[0], vs.r.dtype),
            **(RestTracker().summarize(m.rest, batch_item, state) if self.rest else {}),
        }
        return out


def _sway_metrics(sway: SwayPeaks | None, n: int, dtype) -> dict:
    """sway_decay [1/s] and sway_peaks [-] (V,) (analysis/sway.py); zeros without a hitch."""
    decay, peaks = (jnp.zeros((n,), dtype),) * 2 if sway is None else peaks_rate(sway)
    return {"sway_decay": decay, "sway_peaks": peaks.astype(jnp.int32)}


def _crash_update(m: OutcomeState, info, vs, ok, dt) -> dict:
    """The crash accumulators after one step (ok [V]: accepted and valid; dt 0 if rejected)."""
    cr = info.crash
    if cr is None:  # a step without crash records (hand-made StepInfo): nothing changes
        return dict(crush=m.crush, residual=m.residual, pulse=m.pulse, peak_decel=m.peak_decel,
                    absorbed=m.absorbed, load=m.load, v_start=m.v_start, v_end=m.v_end, partner=m.partner)
    hit = cr.touching & ok
    begin = hit & (m.partner == NO_PARTNER)
    pos = cr.load > 0.0
    return dict(
        crush=jnp.maximum(m.crush, jnp.where(ok, cr.crush, 0.0)),
        residual=jnp.where(hit, cr.residual, m.residual),  # permanent: it can change only in contact
        pulse=m.pulse + jnp.where(hit, dt, 0.0),
        peak_decel=jnp.maximum(m.peak_decel, jnp.where(hit, safe_norm(info.contact_dv, axis=-1), 0.0)),
        # power dt = f_n dx_n is the right end of the integral of f over the crush; the trapezoid
        # 0.5 (f_n-1 + f_n) dx_n removes its O(dt) error (+0.18 % per 1e-4 s of dt at 56 km/h)
        absorbed=m.absorbed + jnp.where(ok, 0.5 * dt * (cr.power + m.load * cr.power / jnp.where(pos, cr.load, 1.0)
                                                       * pos), 0.0),
        load=jnp.where(ok, cr.load, m.load),
        v_start=jnp.where(begin[:, None], vs.v - info.contact_dv * dt, m.v_start),  # the velocity before the step
        v_end=jnp.where(hit[:, None], vs.v, m.v_end),
        partner=jnp.where(begin, cr.partner, m.partner),
    )


def _crash_metrics(m: OutcomeState, batch_item) -> dict:
    """The crash group of one scenario's metrics (module docstring)."""
    dv = safe_norm(m.dv_world, axis=-1)
    ok = m.pulse > 0.0
    mean = jnp.where(ok, dv / jnp.where(ok, m.pulse, 1.0), 0.0)
    other = m.partner >= 0
    idx = jnp.where(other, m.partner, 0)
    rel0 = m.v_start - jnp.where(other[:, None], m.v_start[idx], 0.0)  # a barrier is at rest
    rel1 = m.v_end - jnp.where(other[:, None], m.v_end[idx], 0.0)
    speed0 = safe_norm(rel0, axis=-1)
    hit = (m.partner != NO_PARTNER) & (speed0 > 0.0)
    s0 = jnp.where(hit, speed0, 1.0)
    e = -jnp.sum(rel1 * rel0, axis=-1) / (s0 * s0)
    ees = safe_sqrt(2.0 * jnp.maximum(m.absorbed, 0.0) / batch_item.vehicle.mass)
    return {"max_crush": m.crush, "residual_crush": m.residual, "pulse_duration": m.pulse,
            "mean_decel_g": mean / GRAVITY, "peak_decel_g": m.peak_decel / GRAVITY,
            "restitution": jnp.where(hit, e, 0.0), "absorbed_energy": m.absorbed, "ees": ees}


def outcome_arrays(batch, final, metrics: OutcomeState, tracker: Outcomes) -> dict:
    """Metrics of a batch: {name: array [B, V, ...] (VEHICLE_METRICS) or [B] (SCENARIO_METRICS)}.
    Traceable (call it inside a jitted function) and jitted when called outside one."""
    return _outcome_arrays(batch, final, metrics, tracker)


def summarize_batch(batch, final, metrics: OutcomeState, tracker: Outcomes) -> dict:
    """`outcome_arrays` without the jit wrapper, for use inside a traced function."""
    return jax.vmap(tracker.summarize)(metrics, batch, final)


_outcome_arrays = partial(jax.jit, static_argnames=("tracker",))(summarize_batch)
