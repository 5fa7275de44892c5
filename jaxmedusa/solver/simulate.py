"""The one time loop: every scenario of a batch steps with its own t and dt.

    from jaxmedusa.build import build_batch
    from jaxmedusa.solver import simulate
    batch, state0 = build_batch(scenarios, dt=settings.dt)
    result = simulate(batch, state0, settings)

`simulate` is jitted (settings are static). A batch has a leading axis [B] on every leaf;
per-vehicle leaves have [B, V]. Each scenario integrates with its own t and dt under the
step control `settings.step_control` (solver/step_control.py) until the control says it is
done (MEDUSA's rule: t > end_time; with `end_condition = "rest"` also once every vehicle is
at rest, solver/end_condition.py, whose clocks are brought up to date after every attempt:
such a run's last sample is its state at the time it stopped, off the grid). Samples lie on the exact grid t = k * save_every and
at end_time: each is the state interpolated between the two accepted steps around its
time (solver/save_grid.py), so saving never changes a step (main.c instead saves the first
step with t - t_last_save >= 0.999999 * save_every, whose times drift after a contact).

Result: `samples` (Samples with leaves [B, S, ...], S = settings.n_samples, rows with
saved=False are unused; per wheel the tires' contact points and skid flags too), `final` (the SimState after the last step) and `metrics`.

In-run metrics: pass `tracker` (solver/trackers.py: `init` and `update` for ONE scenario,
vmapped here); `update` sees every step, accepted or not, after it is taken. `record=False`
skips the samples (S = 1 dummy row) when only final states and metrics are wanted.

Derivatives: `adjoint="forward"` (default) runs each loop as a `lax.while_loop` (forward
mode: jax.jvp, jax.jacfwd); `adjoint="checkpointed"` runs the SAME step under a bounded,
checkpointed loop (a `lax.scan` of `max_steps` steps with a rematerialised body; steps after
a scenario is done are masked no-ops), through which `jax.grad` passes, trackers included.
`max_steps` bounds each loop: the whole run with record=False, each save interval with
record=True; with the "constant" step control it defaults to the steps needed.

`advance` runs a given number of save slots and carries, besides the state and metrics,
the state before the last accepted step (save_grid.Prev) from one call to the next.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxmedusa.contact.stage import batch_geometry, batch_law_terms, uses_contact
from jaxmedusa.core import executable_cache
from jaxmedusa.core.params import Batch, Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.state import SimState
from jaxmedusa.core.status import Status, is_failure
from jaxmedusa.physics.vehicle import energy_medusa, energy_total
from jaxmedusa.solver import end_condition, save_grid, time_loop
from jaxmedusa.solver.step import predict, rates_of_vehicles, scenario_step
from jaxmedusa.solver.step_control import STEP_CONTROLS
from jaxmedusa.solver.trackers import masked, reads_rest_clock, update_batch

__all__ = ["simulate", "simulate_fixed", "advance", "cached_advance", "finish", "init_metrics", "cached_init_metrics",
           "Samples", "SimResult", "ADJOINTS"]

ADJOINTS = ("forward", "checkpointed")


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
    # per wheel (W: front-left, front-right, rear-left, rear-right, further axles), from the
    # vehicle rates at the sample (physics/vehicle.py WheelInfo; analysis/skids.py):
    wheel_point: jnp.ndarray | None = None  # [B, S, V, W, 3] tire contact points on the road [m]
    wheel_skid: jnp.ndarray | None = None  # [B, S, V, W] bool, EDC's skid flag (WheelInfo.sliding)


class SimResult(NamedTuple):
    samples: Samples
    final: SimState
    metrics: object  # the tracker's pytree with leaves [B, ...], or None


def _running(state: SimState, settings: Settings):
    """[B] bool: the scenario is healthy and its step control has steps left to take."""
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    return control.running(state.clock, settings) & (state.clock.status == Status.OK)


def _step_batch(batch: Batch, carry, active, settings: Settings, tracker):
    """One step of every scenario where `active` [B] (None: all of them), then the tracker
    update."""
    state, metrics = carry
    if uses_contact(settings, state.vehicles.r.shape[1]):
        with jax.named_scope("contact_geometry"):  # (the phases' names: benchmarks/step_fusions.py)
            r_pred, F_pred = jax.vmap(predict)(state)
            geom = batch_geometry(batch, r_pred, F_pred, state.pairs.warm, settings)
        with jax.named_scope("contact_law"):
            terms = batch_law_terms(batch, geom, state.pairs, r_pred, F_pred, state.vehicles.v, state.vehicles.W,
                                    settings)
        new, info = jax.vmap(scenario_step, in_axes=(0, 0, None, 0, 0))(batch, state, settings, geom, terms)
    else:
        new, info = jax.vmap(scenario_step, in_axes=(0, 0, None))(batch, state, settings)

    with jax.named_scope("masking"):
        old, state = state, masked(new, state, active)
        state = _end_condition(batch, old, state, settings, reads_rest_clock(tracker))
    if tracker is not None:
        with jax.named_scope("trackers"):
            metrics = update_batch(tracker, metrics, batch, state, info, active)
    return state, metrics


def _end_condition(batch: Batch, before: SimState, after: SimState, settings: Settings,
                   rest_clock: bool = True) -> SimState:
    """The clocks after an attempt: each vehicle's still_since, and NOT_AT_REST where a run
    ending at rest met end_time first (solver/end_condition.py). still_since is kept only
    where something reads it (static): an end at rest, or `rest_clock` (a tracker that
    reads it, solver.trackers.reads_rest_clock); otherwise it stays as it was (-1)."""
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    if rest_clock or end_condition.END_CONDITIONS.resolve(settings.end_condition,
                                                           where="Settings.end_condition").stops_at_rest:
        after = jax.vmap(end_condition.update_clock, in_axes=(0, 0, 0, None))(batch, before, after, settings)
    clock = end_condition.flag_limit(after.clock, settings, control.running(after.clock, settings))
    return replace(after, clock=clock)


def _loop(batch, carry, settings, tracker, condition, adjoint: str, max_steps: int | None):
    """Step every scenario while condition(state) [B] holds for any: a while_loop (forward
    mode), or `max_steps` checkpointed scan steps (reverse mode too). Same step either way.
    carry: (state, metrics, prev), prev a save_grid.Prev kept up to date, or None."""

    # A while loop over one scenario runs its body only while that scenario is active: no
    # masking then (a select over every metric, e.g. the crash pulse's record, each step)
    always = adjoint == "forward" and batch.valid.shape[0] == 1

    def body(c):
        state, metrics = _step_batch(batch, c[:2], None if always else condition(c[0]), settings, tracker)
        return state, metrics, (None if c[2] is None else save_grid.after_step(c[2], c[0], state))

    if adjoint == "forward":  # compiled whole, or dispatched (settings.time_loop, solver/time_loop.py)
        return time_loop.while_loop(lambda c: jnp.any(condition(c[0])), body, carry, settings.time_loop)

    @jax.checkpoint  # rematerialise each step in the backward pass: memory per step is the carry only
    def scan_body(c, _):
        return body(c), None

    return jax.lax.scan(scan_body, carry, None, length=max_steps)[0]


def _sample(batch: Batch, state: SimState, take, settings: Settings) -> Samples:
    vs = state.vehicles
    e = jax.vmap(jax.vmap(energy_total))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    em = jax.vmap(jax.vmap(energy_medusa))(batch.vehicle, vs.r, vs.F, vs.v, vs.W)
    # the tires at the sample: the step's own vehicle rates at the sampled state and the driver
    # inputs of its time (the contact point and the skid flag of the very WheelInfo a step sees)
    _, wheels, _ = jax.vmap(rates_of_vehicles, in_axes=(0, 0, 0, 0, None))(batch, state, vs.r, vs.F, settings)
    skid = getattr(wheels, "sliding", None)
    return Samples(saved=take, t=state.clock.t, r=vs.r, F=vs.F, v=vs.v, W=vs.W, energy=e, energy_medusa=em,
                   wheel_point=wheels.point, wheel_skid=jnp.zeros(wheels.fz.shape, bool) if skid is None else skid)


def _mark_saved(state: SimState, take, target) -> SimState:
    c = state.clock
    return replace(state, clock=replace(c, t_saved=jnp.where(take, target, c.t_saved)))


def _check(settings: Settings, adjoint: str, max_steps, per_slot: bool):
    """The loop bound of a checkpointed run (None for forward mode); errors before tracing."""
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    if adjoint not in ADJOINTS:
        raise ValueError(f"adjoint must be one of {', '.join(ADJOINTS)}, got {adjoint!r}")
    if adjoint == "forward":
        return None
    if max_steps is not None:
        return int(max_steps)
    if control.name != "constant":
        raise ValueError(f"adjoint='checkpointed' with step control {control.name!r} needs max_steps "
                         "(the adaptive step count is not known in advance)")
    span = settings.save_every if per_slot else settings.end_time
    return int(round(span / settings.dt)) + (1 if per_slot else 0)


def _advance(batch: Batch, carry, settings: Settings, n_slots: int, tracker=None, record: bool = True,
             adjoint: str = "forward", max_steps=None, finish_last: bool = False):
    """Run n_slots save slots on carry (state, metrics, prev): step each scenario until its
    clock reaches its next save time (save_grid.next_save_time), then save the state
    interpolated to that time (prev None: record=False, nothing to interpolate).
    finish_last (static, forward mode): the last slot instead takes every remaining step
    and saves nothing, so a whole run compiles the step body once."""
    bound = _check(settings, adjoint, max_steps, per_slot=True)

    def slot(c, k):
        last = finish_last & (k == n_slots - 1)
        target = save_grid.next_save_time(c[0].clock.t_saved, settings)
        if record or adjoint == "forward":  # (a record=False slot takes no step: skip its scan)
            c = _loop(batch, c, settings, tracker,
                      lambda s: _running(s, settings) & (last | (s.clock.t < target)), adjoint, bound)
        st, metrics, prev = c
        ran = ~is_failure(st.clock.status)  # OK, or NOT_AT_REST: a run's own end, not a failure
        take = save_grid.reached(st, target, settings) & ran & ~last
        # a run that stopped at rest before this save time: its last sample is its state at its rest
        rested = end_condition.at_rest(st.clock, settings) & ~take & (st.clock.t > st.clock.t_saved) & ~last
        target = jnp.where(rested, st.clock.t, target)
        take = take | rested
        sample = _sample(batch, save_grid.interpolate(st, prev, target, batch.valid), take, settings) if record else None
        return (_mark_saved(st, take, target), metrics, prev), sample

    carry, samples = jax.lax.scan(slot, carry, jnp.arange(n_slots))
    if record:
        samples = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), samples)  # [B, S, ...]
    return carry, samples


def init_metrics(batch: Batch, state: SimState, tracker):
    """The tracker's initial metrics for a batch (None without a tracker), with strong types:
    a weakly typed leaf (jnp.full(..., 0.0)) comes back strong from `advance`, and the
    second call would then trace and compile the whole step body again."""
    if tracker is None:
        return None
    metrics = jax.vmap(tracker.init)(batch, state)
    return jax.tree.map(lambda x: jax.lax.convert_element_type(x, jnp.asarray(x).dtype), metrics)


@partial(jax.jit, static_argnames=("tracker",))
def _init_metrics_jit(batch: Batch, state: SimState, tracker):
    return init_metrics(batch, state, tracker)


# init_metrics as one compiled program, served from disk like `advance` when the executable
# cache is on: called eagerly, a tracker's init is ~30 small operations (0.4 s a process)
cached_init_metrics = executable_cache.cached(_init_metrics_jit, ("tracker",))

ADVANCE_STATIC = ("settings", "n_slots", "tracker", "record", "adjoint", "max_steps")


@partial(jax.jit, static_argnames=ADVANCE_STATIC)
def advance(batch: Batch, state: SimState, metrics, settings: Settings, n_slots: int, tracker=None, record=True,
            adjoint: str = "forward", max_steps: int | None = None, prev=None):
    """Advance a batch by `n_slots` save slots: ((state, metrics, prev), Samples [B, n_slots, ...]).
    `prev` (save_grid.Prev) is what the previous call returned; None on the first call (and
    always None with record=False)."""
    if record and prev is None:
        prev = save_grid.prev_of(state)
    return _advance(batch, (state, metrics, prev if record else None), settings, n_slots, tracker, record, adjoint,
                    max_steps)


# `advance` served from compiled programs on disk when core/executable_cache.py is enabled (the CLI): a
# second process skips tracing and lowering; the plain `advance` otherwise.
cached_advance = executable_cache.cached(advance, ADVANCE_STATIC)


def _finish(batch, carry, settings, tracker, adjoint="forward", max_steps=None, per_slot=True):
    bound = _check(settings, adjoint, max_steps, per_slot=per_slot)
    return _loop(batch, (*carry[:2], None), settings, tracker, lambda s: _running(s, settings), adjoint, bound)[:2]


@partial(jax.jit, static_argnames=("settings", "tracker", "adjoint", "max_steps"))
def finish(batch: Batch, state: SimState, metrics, settings: Settings, tracker=None, adjoint: str = "forward",
           max_steps: int | None = None):
    """Take the remaining steps of every scenario until its step control says it is done
    (MEDUSA: t > end_time, main.c's `while (t <= t2)`). The checkpointed loop's default bound
    (constant steps) is the whole run's steps, end_time / dt: the state may be at t = 0."""
    return _finish(batch, (state, metrics), settings, tracker, adjoint, max_steps, per_slot=False)


@partial(jax.jit, static_argnames=("settings", "tracker", "record", "adjoint", "max_steps"))
def simulate(batch: Batch, state: SimState, settings: Settings, tracker=None, record: bool = True,
             adjoint: str = "forward", max_steps: int | None = None) -> SimResult:
    """Simulate a batch from `state` (t = 0) to settings.end_time. See the module docstring."""
    carry = (state, init_metrics(batch, state, tracker), save_grid.prev_of(state) if record else None)
    n_slots = settings.n_samples if record else 1
    if adjoint == "forward":  # one loop body: the finishing steps run in one more (unsaved) slot
        (state, metrics, _), samples = _advance(batch, carry, settings, n_slots + 1, tracker, record, adjoint,
                                                max_steps, finish_last=True)
        if record:
            samples = jax.tree.map(lambda x: x[:, :n_slots], samples)
        return SimResult(samples=samples, final=state, metrics=metrics)
    carry, samples = _advance(batch, carry, settings, n_slots, tracker, record, adjoint, max_steps)
    state, metrics = _finish(batch, carry, settings, tracker, adjoint, max_steps, per_slot=record)
    return SimResult(samples=samples, final=state, metrics=metrics)


def simulate_fixed(batch: Batch, state: SimState, settings: Settings, n_steps: int | None = None) -> SimState:
    """Fixed steps for reverse-mode derivatives: `simulate` with the "constant" step control,
    no samples and the checkpointed loop of `n_steps` steps (default round(end_time / dt)).
    Every step is taken, contact terms included; scenarios that reached end_time or failed
    are masked. Returns the final SimState; `jax.grad` passes through it."""
    fixed = dataclasses.replace(settings, step_control="constant")
    n = n_steps if n_steps is not None else int(round(settings.end_time / settings.dt))
    return simulate(batch, state, fixed, record=False, adjoint="checkpointed", max_steps=n).final
