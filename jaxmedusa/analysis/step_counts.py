"""Step and contact counts of one scenario, accumulated inside the jitted run (a tracker).

    from jaxmedusa.analysis.step_counts import StepCounts, counts_dict
    result = simulate(batch, state0, settings, tracker=StepCounts())
    counts = counts_dict(result.metrics)          # {name: int array [B]}

Per scenario (int32 scalars; [B] once batched), over the attempts the step control made
(solver/step_control.py; MEDUSA's rule redoes a step with dt / 1.4641 while there is contact
and dt > DT_MIN):

    accepted_steps    attempts that were taken (t advanced by dt); equals ScenarioClock.steps
    rejected_steps    attempts the step control redid with a smaller dt (an attempt that made
                      the scenario fail, e.g. a NaN, is neither: the scenario stops there)
    contact_steps     accepted steps in contact: some pair of vehicles, or a vehicle and a
                      barrier, in contact on that step (PairInfo.touching, CrashInfo.touching)
    contact_runs      runs of consecutive accepted steps in contact: what the original
                      program's trace calls an episode (an accepted step without contact
                      ends one; rejected attempts in between do not)
    episodes          collisions: contact that begins more than `episode_gap` (10 ms) after
                      the last accepted step in contact, any pair or barrier (the MEDUSA law
                      switches contact on and off from one step to the next within one impact;
                      events.ContactEventTracker counts the same per pair, outcomes.Outcomes
                      per vehicle as contact_episodes)

The tracker only reads `StepInfo` and the clock, holds integers and a time, and has
strongly typed initial leaves, so it adds no recompilation and works under both adjoints
(forward: the while loop; checkpointed: the masked scan, whose no-op steps are masked by
the loop before they reach the metrics).
"""
from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.status import Status

__all__ = ["StepCounts", "Counts", "COUNT_NAMES", "EPISODE_GAP", "counts_dict", "in_contact"]

EPISODE_GAP = 0.01  # [s], contact gaps up to this belong to one episode (here, outcomes.Outcomes and
# events.ContactEventTracker alike)

# Output names in order (the run summary and the scenarios table use them as they are).
COUNT_NAMES = ("accepted_steps", "rejected_steps", "contact_steps", "contact_runs", "episodes")


@pytree_dataclass
class Counts:
    accepted_steps: jnp.ndarray  # () int32
    rejected_steps: jnp.ndarray  # () int32
    contact_steps: jnp.ndarray  # () int32
    contact_runs: jnp.ndarray  # () int32
    episodes: jnp.ndarray  # () int32
    touching: jnp.ndarray  # () bool, in contact on the last accepted step
    last_contact: jnp.ndarray  # () [s], end time of the last accepted step in contact (-inf: none)


def in_contact(info) -> jnp.ndarray:
    """() bool: some pair, or some vehicle and a barrier, in contact on this attempt."""
    touch = jnp.any(info.pairs.touching) if info.pairs.touching.size else jnp.asarray(False)
    if info.crash is not None:  # barrier contacts (pairs are in it too, as force-carrying contact)
        touch = touch | jnp.any(info.crash.touching)
    return touch


@dataclass(frozen=True)
class StepCounts:
    """The counts tracker (module docstring); hashable and static. episode_gap [s]."""

    episode_gap: float = EPISODE_GAP

    def init(self, batch_item, state) -> Counts:
        zero = jnp.zeros((), jnp.int32)
        return Counts(accepted_steps=zero, rejected_steps=zero, contact_steps=zero, contact_runs=zero,
                      episodes=zero, touching=jnp.zeros((), bool),
                      last_contact=jnp.full((), -jnp.inf, state.clock.t.dtype))

    def update(self, m: Counts, batch_item, state, info) -> Counts:
        acc = info.accepted
        rejected = ~acc & (state.clock.status == Status.OK)
        touch = acc & in_contact(info)
        begins = touch & ~m.touching
        t = state.clock.t  # the end of the step just taken
        new_episode = begins & (t - m.last_contact > self.episode_gap)
        one = jnp.ones((), jnp.int32)
        return Counts(
            accepted_steps=m.accepted_steps + jnp.where(acc, one, 0),
            rejected_steps=m.rejected_steps + jnp.where(rejected, one, 0),
            contact_steps=m.contact_steps + jnp.where(touch, one, 0),
            contact_runs=m.contact_runs + jnp.where(begins, one, 0),
            episodes=m.episodes + jnp.where(new_episode, one, 0),
            touching=jnp.where(acc, touch, m.touching),
            last_contact=jnp.where(touch, t, m.last_contact),
        )


def counts_dict(m: Counts) -> dict:
    """{name: numpy int64 array (leading batch axis as given)} in COUNT_NAMES order."""
    return {name: np.asarray(getattr(m, name), np.int64) for name in COUNT_NAMES}
