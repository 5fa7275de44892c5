"""In-run trackers: metrics accumulated inside the jitted loop, step by step.

A tracker is a hashable (static) object with two methods for ONE scenario, which the loop
vmaps over the batch:

    init(batch_item, state) -> M                      # at t = 0
    update(M, batch_item, state, info: StepInfo) -> M # after every attempted step

`update` sees every attempt, accepted or not (`info.accepted`), after it was applied;
scenarios that are done are masked, so their metrics stop changing. Trackers run inside
the one loop (solver/simulate.py), so they work under both adjoints: forward mode through
the while loop and reverse mode through the checkpointed loop. Examples:
analysis.outcomes.Outcomes (per-vehicle outcome metrics) and
analysis.events.ContactEventTracker (contact episodes per pair).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from jaxmedusa.solver.step import StepInfo

__all__ = ["Tracker", "StepInfo", "CombinedTracker"]


@runtime_checkable
class Tracker(Protocol):
    """The interface `simulate(..., tracker=...)` expects (module docstring)."""

    def init(self, batch_item, state) -> Any: ...

    def update(self, metrics, batch_item, state, info: StepInfo) -> Any: ...


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
