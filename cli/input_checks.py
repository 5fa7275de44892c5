"""Input checks a study or fit shares with `run`, made before anything is compiled."""
from __future__ import annotations

from jaxmedusa.io.overlap_check import initial_overlaps
from jaxmedusa_cli.common import fail

__all__ = ["check_settings_and_start"]


def check_settings_and_start(settings, scenario, source) -> None:
    """Input errors a study or fit shares with `run`, before anything is compiled: an end
    time shorter than one step; vehicles overlapping at t = 0 in the base scenario (unless
    it says intended_overlap)."""
    if settings.end_time < settings.dt:
        fail(f"{source}: simulation.end_time {settings.end_time:g} s is shorter than one step "
             f"(dt = {settings.dt:g} s): nothing would be simulated")
    overlaps = [] if scenario.intended_overlap else initial_overlaps(scenario)
    if overlaps:
        fail(f"{source}: " + "; ".join(overlaps) + " (contact boxes in plan view); if this is meant, set "
             "intended_overlap = true in the scenario")
