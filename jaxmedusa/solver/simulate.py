"""Batched simulation entry points.

    from jaxmedusa.build import build_batch
    from jaxmedusa.simulate import simulate
    batch, state0 = build_batch(scenarios, dt=settings.dt)
    result = simulate(batch, state0, settings)

`simulate` is jitted (settings are static). A batch has a leading axis [B] on every leaf;
per-vehicle leaves have [B, V]. Each scenario integrates with its own t and dt (MEDUSA's
step-size control) until t > end_time, and saves samples as main.c does: at t = 0 and then
whenever t - t_last_save >= 0.999999 * save_every (so sample times are the scenario's own).

Result: `samples` (Samples with leaves [B, S, ...], S = settings.n_samples, rows with
saved=False are unused), `final` (the SimState after the last step) and `metrics`.

In-run metrics: pass `tracker`, a hashable object with `init(batch_item, state_item) -> M`
and `update(M, batch_item, state_item, info: StepInfo) -> M` for ONE scenario (they are
vmapped); `update` sees every step, accepted or not, after it is taken. `record=False`
skips the samples (S = 1 dummy row) when only final states and metrics are wanted.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .build import Batch
from .integrate import predict, scenario_step, uses_contact
from .params import Settings
from .pytree import replace
from .state import STATUS_OK, SimState
from .vehicle import energy_medusa, energy_total

SAVE_TOLERANCE = 0.999999  # main.c save_data_point()


class Samples(NamedTuple):
    """Saved samples; leaves [B, S, ...] (or [S, ...] inside the loop)."""

    saved: jnp.ndarray  # [B, S] bool, True where a sample was taken
    t: jnp.ndarray  # [B, S] time [s]
    r: jnp.ndarray  # [B, S, V, 3] [m]
    F: jnp.ndarray  # [B, S, V, 3, 3] directors as columns
    v: jnp.ndarray  # [B, S, V, 3] [m/s]
    W: jnp.ndarray  # [B, S, V, 3, 3] director velocities as columns [1/s]
    energy: jnp.ndarray  # [B, S, V] total energy (1.33) in full [J]
    energy_medusa: jnp.ndarray  # [B, S, V] vehicle.c energy(): without m v.v/2 [J]


class SimResult(NamedTuple):
    samples: Samples
    final: SimState
    metrics: object  # the tracker's pytree with leaves [B, ...], or None


def _needs_step(state: SimState, settings: Settings):
    c = state.clock
    return (c.t <= settings.end_time) & (c.status == STATUS_OK) & (c.t - c.t_saved < SAVE_TOLERANCE * settings.save_every)


def _step_batch(batch: Batch, carry, active, settings: Settings, tracker):
    state, metrics = carry
    if uses_contact(settings, state.vehicles.r.shape[1]):
        from .contact_step import batch_geometry  # noqa: PLC0415

        r_pred, F_pred = jax.vmap(predict)(state)
        geom = batch_geometry(batch, r_pred, F_pred, state.pairs.warm, settings)
        new, info = jax.vmap(scenario_step, in_axes=(0, 0, None, 0))(batch, state, settings, geom)
    else:
        new, info = jax.vmap(scenario_step, in_axes=(0, 0, None))(batch, state, settings)

    def pick(n, o):
        return jnp.where(active.reshape(active.shape + (1,) * (n.ndim - 1)), n, o)

    state = jax.tree.map(pick, new, state)
    if tracker is not None:
        updated = jax.vmap(tracker.update)(metrics, batch, state, info)
        metrics = jax.tree.map(pick, updated, metrics)
    return state, metrics


def _run_until(batch, carry, settings, tracker, condition):
    def cond(c):
        return jnp.any(condition(c[0]))

    def body(c):
        return _step_batch(batch, c, condition(c[0]), settings, tracker)

    return jax.lax.while_loop(cond, body, carry)


def _sample(batch: Batch, state: SimState, take) -> Samples:
    vs = state.vehicles
    e = jax.vmap(jax.vmap(energy_total))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    em = jax.vmap(jax.vmap(energy_medusa))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    return Samples(saved=take, t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W, energy=e, energy_medusa=em)


def _mark_saved(state: SimState, take) -> SimState:
    c = state.clock
    return replace(state, clock=replace(c, t_saved=jnp.where(take, c.t, c.t_saved)))


def _advance(batch: Batch, carry, settings: Settings, n_slots: int, tracker=None, record: bool = True):
    """Run n_slots save slots: step each scenario to its next save time, then save."""

    def slot(c, _):
        c = _run_until(batch, c, settings, tracker, lambda s: _needs_step(s, settings))
        st, metrics = c
        take = (st.clock.t <= settings.end_time) & (st.clock.status == STATUS_OK)
        st = _mark_saved(st, take)
        return (st, metrics), (_sample(batch, st, take) if record else None)

    carry, samples = jax.lax.scan(slot, carry, None, length=n_slots)
    if record:
        samples = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), samples)  # [B, S, ...]
    return carry, samples


def init_metrics(batch: Batch, state: SimState, tracker):
    """The tracker's initial metrics for a batch (None without a tracker)."""
    return None if tracker is None else jax.vmap(tracker.init)(batch, state)


@partial(jax.jit, static_argnames=("settings", "n_slots", "tracker", "record"))
def advance(batch: Batch, state: SimState, metrics, settings: Settings, n_slots: int, tracker=None, record=True):
    """Advance a batch by `n_slots` save slots: ((state, metrics), Samples [B, n_slots, ...])."""
    return _advance(batch, (state, metrics), settings, n_slots, tracker, record)


def _finish(batch, carry, settings, tracker):
    def running(st):
        return (st.clock.t <= settings.end_time) & (st.clock.status == STATUS_OK)

    return _run_until(batch, carry, settings, tracker, running)


@partial(jax.jit, static_argnames=("settings", "tracker"))
def finish(batch: Batch, state: SimState, metrics, settings: Settings, tracker=None):
    """Take the remaining steps of every scenario until t > end_time (main.c's `while (t <= t2)`)."""
    return _finish(batch, (state, metrics), settings, tracker)


@partial(jax.jit, static_argnames=("settings", "tracker", "record"))
def simulate(batch: Batch, state: SimState, settings: Settings, tracker=None, record: bool = True) -> SimResult:
    """Simulate a batch from `state` (t = 0) to settings.end_time. See the module docstring."""
    carry = (state, init_metrics(batch, state, tracker))
    n_slots = settings.n_samples if record else 1
    carry, samples = _advance(batch, carry, settings, n_slots, tracker, record)
    state, metrics = _finish(batch, carry, settings, tracker)
    return SimResult(samples=samples, final=state, metrics=metrics)


@partial(jax.jit, static_argnames=("settings", "n_steps"))
def simulate_fixed(batch: Batch, state: SimState, settings: Settings, n_steps: int | None = None) -> SimState:
    """Fixed-step path for reverse-mode derivatives (DESIGN.md, "Numerics"): `n_steps` steps of
    settings.dt (default end_time / dt) under a checkpointed `lax.scan`, with no step-size
    control (every step is accepted, contact terms included) and scenarios that reached
    end_time or failed masked. Returns the final SimState. Unlike `simulate` (MEDUSA's
    adaptive `while_loop`), `jax.grad` passes through it."""
    fixed = dataclasses.replace(settings, dt_min=float("inf"))  # dt < dt_min: never redo a step
    n = n_steps if n_steps is not None else int(round(settings.end_time / settings.dt))

    @jax.checkpoint
    def step(st, _):
        active = (st.clock.t < settings.end_time - 0.5 * settings.dt) & (st.clock.status == STATUS_OK)
        st, _ = _step_batch(batch, (st, None), active, fixed, None)
        return st, None

    final, _ = jax.lax.scan(step, state, None, length=n)
    return final
