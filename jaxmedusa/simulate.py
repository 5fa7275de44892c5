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
saved=False are unused), and `final` (the SimState after the last step).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .build import Batch
from .integrate import scenario_step
from .params import Settings
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


def _needs_step(state: SimState, settings: Settings):
    c = state.clock
    return (c.t <= settings.end_time) & (c.status == STATUS_OK) & (c.t - c.t_saved < SAVE_TOLERANCE * settings.save_every)


def _step_batch(batch: Batch, state: SimState, active, settings: Settings) -> SimState:
    new = jax.vmap(scenario_step, in_axes=(0, 0, None))(batch, state, settings)

    def pick(n, o):
        return jnp.where(active.reshape(active.shape + (1,) * (n.ndim - 1)), n, o)

    return jax.tree.map(pick, new, state)


def _run_until(batch, state, settings, condition):
    def cond(st):
        return jnp.any(condition(st))

    def body(st):
        return _step_batch(batch, st, condition(st), settings)

    return jax.lax.while_loop(cond, body, state)


def _sample(batch: Batch, state: SimState, take) -> Samples:
    vs = state.vehicles
    e = jax.vmap(jax.vmap(energy_total))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    em = jax.vmap(jax.vmap(energy_medusa))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    return Samples(saved=take, t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W, energy=e, energy_medusa=em)


def _advance(batch: Batch, state: SimState, settings: Settings, n_slots: int):
    """Run n_slots save slots: step each scenario to its next save time, then save."""

    def slot(st, _):
        st = _run_until(batch, st, settings, lambda s: _needs_step(s, settings))
        c = st.clock
        take = (c.t <= settings.end_time) & (c.status == STATUS_OK)
        st = st.__class__(st.vehicles, st.pairs, c.__class__(**{**c.__dict__, "t_saved": jnp.where(take, c.t, c.t_saved)}))
        return st, _sample(batch, st, take)

    state, samples = jax.lax.scan(slot, state, None, length=n_slots)
    samples = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), samples)  # [B, S, ...]
    return state, samples


advance = jax.jit(_advance, static_argnames=("settings", "n_slots"))
advance.__doc__ = """Advance a batch by `n_slots` save slots; returns (state, Samples [B, n_slots, ...])."""


@partial(jax.jit, static_argnames=("settings",))
def finish(batch: Batch, state: SimState, settings: Settings) -> SimState:
    """Take the remaining steps of every scenario until t > end_time (main.c's `while (t <= t2)`)."""

    def running(st):
        return (st.clock.t <= settings.end_time) & (st.clock.status == STATUS_OK)

    return _run_until(batch, state, settings, running)


@partial(jax.jit, static_argnames=("settings",))
def simulate(batch: Batch, state: SimState, settings: Settings) -> SimResult:
    """Simulate a batch from `state` (t = 0) to settings.end_time. See the module docstring."""
    state, samples = _advance(batch, state, settings, settings.n_samples)
    return SimResult(samples=samples, final=finish.__wrapped__(batch, state, settings))
