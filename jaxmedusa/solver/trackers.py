"""In-run trackers: metrics accumulated inside the jitted loop, step by step.

A tracker is a hashable (static) object with two methods for ONE scenario, which the loop
vmaps over the batch:

    init(batch_item, state) -> M                      # at t = 0
    update(M, batch_item, state, info: StepInfo) -> M # after every attempted step

`update` sees every attempt, accepted or not (`info.accepted`), after it was applied;
scenarios that are done are masked, so their metrics stop changing. A tracker may also
define the batch's step itself,

    update_batch(M, batch, state, info, active) -> M  # leaves [B, ...]; active [B] or None

which `update_batch` below then calls instead of the vmapped `update` and the mask: for
state that a few scenarios change per step, written in place (analysis.outcomes.Outcomes,
whose damage rows are [B, V, 1, 4, 32]). Trackers run inside
the one loop (solver/simulate.py), so they work under both adjoints: forward mode through
the while loop and reverse mode through the checkpointed loop. Examples:
analysis.outcomes.Outcomes (per-vehicle outcome metrics) and
analysis.events.ContactEventTracker (contact episodes per pair), EnergyBalanceTracker
(energy gained beyond the drivers' work).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.status import Status
from jaxmedusa.physics.vehicle import energy_total
from jaxmedusa.solver.step import StepInfo

__all__ = ["Tracker", "StepInfo", "CombinedTracker", "batch_map", "masked", "update_batch", "EnergyBalanceTracker",
           "EnergyBalance", "ENERGY_GAIN_MARGIN", "energy_gained", "with_energy_gain", "reads_rest_clock"]

# A run (or a sweep's scenario) whose total energy exceeds E(0) + W_drive (EnergyBalanceTracker)
# by more than this fraction of E(0) + W_drive gets status energy_gain. Chosen from what the
# laws gain in the report's examples (docs/robustness.md, "Energy gain"): the crush law
# 3e-8 (nothing but the integration's error), the MEDUSA law 36 % in the offset example
# (both shapes, 3 s: it is known to gain there), two vehicles started 1 m inside each
# other 3,078 %. 100 % flags a run that more than doubles its energy, about three times the
# MEDUSA law's gain in its own reference example.
ENERGY_GAIN_MARGIN = 1.0


@runtime_checkable
class Tracker(Protocol):
    """The interface `simulate(..., tracker=...)` expects (module docstring)."""

    def init(self, batch_item, state) -> Any: ...

    def update(self, metrics, batch_item, state, info: StepInfo) -> Any: ...


def reads_rest_clock(tracker) -> bool:
    """Whether `tracker`'s metrics read ScenarioClock.still_since (analysis/rest.py's
    rest_time), which the loop otherwise need not keep up to date under end_condition "time"
    (solver/simulate.py). A tracker says so with a `reads_rest_clock` attribute; one without
    it is taken to read it, and so is no tracker at all (the final state's clock is a result
    too); a CombinedTracker reads it when one of its parts does."""
    if tracker is None:
        return True
    if isinstance(tracker, CombinedTracker):
        return any(reads_rest_clock(t) for t in tracker.trackers if t is not None)
    return bool(getattr(tracker, "reads_rest_clock", True))


def batch_map(f, in_axes=0):
    """jax.vmap(f, in_axes) over the batch axis; for a batch of one, f on the squeezed item
    (outputs given their axis back). Why: vmap turns a write at a per-scenario index (a
    tracker's record rows, lax.dynamic_update_slice) into a batched scatter, which XLA's CPU
    backend copies whole inside the while loop (with the crash pulse's record that was ~0.8 s
    of the offset example's 2.5 s compiled run, benchmarks/RESULTS.md) and which keeps XLA
    from compiling the loop whole (core/xla_flags.py). The batch size is static."""

    def call(*args):
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        sizes = {x.shape[0] for a, ax in zip(args, axes) if ax is not None for x in jax.tree.leaves(a)}
        if sizes != {1}:
            return jax.vmap(f, in_axes=in_axes)(*args)
        item = [a if ax is None else jax.tree.map(lambda x: x[0], a) for a, ax in zip(args, axes)]
        return jax.tree.map(lambda x: x[None], f(*item))

    return call


def masked(new, old, active):
    """`new` where active [B] (None: everywhere), `old` elsewhere (pytrees with leaves [B, ...])."""
    if active is None:
        return new
    return jax.tree.map(lambda n, o: jnp.where(active.reshape(active.shape + (1,) * (n.ndim - 1)), n, o), new, old)


def update_batch(tracker, metrics, batch, state, info, active):
    """One step of `tracker` over a batch (leaves [B, ...]): its own `update_batch` where it
    has one (module docstring), else its `update` vmapped, kept only where active [B] (None:
    every scenario)."""
    own = getattr(tracker, "update_batch", None)
    if own is not None:
        return own(metrics, batch, state, info, active)
    return masked(batch_map(tracker.update)(metrics, batch, state, info), metrics, active)


@dataclass(frozen=True)
class CombinedTracker:
    """Several trackers run side by side; metrics are a tuple in the order of `trackers`.
    An entry may be None (a tracker a caller switched off): its metrics are None."""

    trackers: tuple

    def init(self, batch_item, state):
        return tuple(None if t is None else t.init(batch_item, state) for t in self.trackers)

    def update(self, metrics, batch_item, state, info: StepInfo):
        return tuple(None if t is None else t.update(m, batch_item, state, info)
                     for t, m in zip(self.trackers, metrics))

    def update_batch(self, metrics, batch, state, info, active):
        return tuple(None if t is None else update_batch(t, m, batch, state, info, active)
                     for t, m in zip(self.trackers, metrics))


class EnergyBalance(NamedTuple):
    """Metrics of EnergyBalanceTracker, per scenario (all [J])."""

    initial: Any  # () total energy at t = 0, eq (1.33) in full, summed over the vehicles
    drive_work: Any  # () work of the driven tires so far: integral of the positive tire power
    max_gain: Any  # () max over accepted steps of E - initial - drive_work (> 0: energy from nowhere)


@dataclass(frozen=True)
class EnergyBalanceTracker:
    """Energy bookkeeping of a run: E(t) <= E(0) + W_drive(t) holds for every law that does
    not create energy (gravity is in E as m g z; suspension, tires and contact dissipate).
    W_drive integrates the positive part of each tire's power f . v_q (StepInfo.wheels.power:
    positive only while a tire drives its vehicle) by the rectangle rule over accepted steps.
    `max_gain` is the largest excess E - E(0) - W_drive seen; a caller compares it with a
    margin (ENERGY_GAIN_MARGIN, `with_energy_gain`) after the run and flags the scenario."""

    reads_rest_clock = False  # solver.trackers.reads_rest_clock: it never reads still_since

    def _energy(self, batch_item, state):
        vs = state.vehicles
        e = jax.vmap(energy_total)(batch_item.vehicle, vs.r, vs.F, vs.v, vs.W)
        return jnp.sum(jnp.where(batch_item.valid, e, 0.0))

    def init(self, batch_item, state) -> EnergyBalance:
        e0 = self._energy(batch_item, state)
        return EnergyBalance(initial=e0, drive_work=jnp.zeros_like(e0), max_gain=jnp.zeros_like(e0))

    def update(self, m: EnergyBalance, batch_item, state, info: StepInfo) -> EnergyBalance:
        if info.wheels is None:  # no tires: no driver
            power = jnp.zeros_like(m.drive_work)
        else:
            power = jnp.sum(jnp.where(batch_item.valid[:, None], jnp.maximum(info.wheels.power, 0.0), 0.0))
        work = m.drive_work + jnp.where(info.accepted, info.dt * power, 0.0)
        gain = self._energy(batch_item, state) - m.initial - work
        max_gain = jnp.where(info.accepted & jnp.isfinite(gain), jnp.maximum(m.max_gain, gain), m.max_gain)
        return EnergyBalance(initial=m.initial, drive_work=work, max_gain=max_gain)


def energy_gained(balance: EnergyBalance):
    """Per scenario: whether the excess passed ENERGY_GAIN_MARGIN x (E(0) + W_drive) (numpy bool)."""
    b = jax.device_get(balance)
    return np.asarray(b.max_gain) > ENERGY_GAIN_MARGIN * (np.asarray(b.initial) + np.asarray(b.drive_work))


def with_energy_gain(status, balance: EnergyBalance):
    """Status codes with Status.ENERGY_GAIN where a scenario that ended OK gained energy."""
    status = np.asarray(jax.device_get(status))
    return np.where((status == Status.OK) & energy_gained(balance), np.int32(Status.ENERGY_GAIN), status).astype(
        status.dtype)
