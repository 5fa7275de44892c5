"""Batched simulation entry points.

    from jaxmedusa.build import build_batch
    from jaxmedusa.simulate import simulate
    batch, state0 = build_batch(scenarios, dt=settings.dt)
    result = simulate(batch, state0, settings)

`simulate` is jitted (settings are static). A batch has a leading axis [B] on every leaf;
per-vehicle leaves have [B, V]. Each scenario integrates with its own t and dt (MEDUSA's
step-size control) until t > end_time. Samples lie on the exact grid t_k = k * save_every
and the last one at end_time (also when end_time is not on the grid): the state at t_k is
interpolated linearly between the accepted steps on either side of t_k, so the step
sequence is MEDUSA's own (main.c instead saves the state at the first step with
t - t_last_save >= 0.999999 * save_every, whose times drift off the grid once contact
shrinks the step, and never at end_time itself).

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


GRID_SNAP = 1e-6  # a grid time within 1e-6 save intervals of end_time is end_time (float round-off)


class _Prev(NamedTuple):
    """The state before the last accepted step (leaves [B, ...]), for interpolating samples."""

    t: jnp.ndarray  # [B] [s]
    r: jnp.ndarray  # [B, V, 3]
    F: jnp.ndarray  # [B, V, 3, 3]
    v: jnp.ndarray  # [B, V, 3]
    W: jnp.ndarray  # [B, V, 3, 3]


def _prev_of(state: SimState) -> _Prev:
    vs = state.vehicles
    return _Prev(t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W)


def _next_save_time(t_saved, settings: Settings):
    """The save time after `t_saved` (t_saved < 0 before the first sample): k * save_every,
    k recovered from t_saved by rounding (no accumulated round-off), capped at end_time."""
    k = jnp.where(t_saved < 0.0, 0.0, jnp.round(t_saved / settings.save_every) + 1.0)
    grid = k * settings.save_every
    return jnp.where(grid >= settings.end_time - GRID_SNAP * settings.save_every, settings.end_time, grid)


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


def _run_to(batch, carry, prev: _Prev, target, settings, tracker):
    """Step every running scenario until t >= target [B], keeping the state before its last
    accepted step in `prev`. Returns (carry, prev)."""

    def active(st):
        return (st.clock.t < target) & (st.clock.status == STATUS_OK)

    def body(c):
        carry, prev = c
        act = active(carry[0])
        before = _prev_of(carry[0])
        carry = _step_batch(batch, carry, act, settings, tracker)
        moved = act & (carry[0].clock.t > before.t)  # accepted steps only

        def pick(n, o):
            return jnp.where(moved.reshape(moved.shape + (1,) * (n.ndim - 1)), n, o)

        return carry, jax.tree.map(pick, before, prev)

    return jax.lax.while_loop(lambda c: jnp.any(active(c[0][0])), body, (carry, prev))


def _interpolate(state: SimState, prev: _Prev, target) -> SimState:
    """The state at `target` [B], linear between prev (t0 <= target) and state (t1 >= target)."""
    t0, t1 = prev.t, state.clock.t
    span = t1 - t0
    w = jnp.clip((target - t0) / jnp.where(span > 0.0, span, 1.0), 0.0, 1.0)  # no 0/0 when t1 == t0

    def lerp(a, b):
        ww = w.reshape(w.shape + (1,) * (a.ndim - 1))
        return a + ww * (b - a)

    vs = state.vehicles
    vs = replace(vs, r=lerp(prev.r, vs.r), F=lerp(prev.F, vs.F), v=lerp(prev.v, vs.v), W=lerp(prev.W, vs.W))
    return replace(state, vehicles=vs, clock=replace(state.clock, t=target))


def _sample(batch: Batch, state: SimState, take) -> Samples:
    vs = state.vehicles
    e = jax.vmap(jax.vmap(energy_total))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    em = jax.vmap(jax.vmap(energy_medusa))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    return Samples(saved=take, t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W, energy=e, energy_medusa=em)


def _advance(batch: Batch, carry, settings: Settings, n_slots: int, tracker=None, record: bool = True):
    """Run n_slots save slots: step each scenario past its next save time (module docstring),
    then save the state interpolated to that time."""

    def slot(c, _):
        (st, metrics), prev = c
        target = _next_save_time(st.clock.t_saved, settings)
        (st, metrics), prev = _run_to(batch, (st, metrics), prev, target, settings, tracker)
        take = (target > st.clock.t_saved) & (st.clock.t >= target) & (st.clock.status == STATUS_OK)
        at = _interpolate(st, prev, target)
        st = replace(st, clock=replace(st.clock, t_saved=jnp.where(take, target, st.clock.t_saved)))
        return ((st, metrics), prev), (_sample(batch, at, take) if record else None)

    (carry, _), samples = jax.lax.scan(slot, (carry, _prev_of(carry[0])), None, length=n_slots)
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
