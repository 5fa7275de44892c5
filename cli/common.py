"""What the command modules share: the console and the bad-input exit (code 2)."""
from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

from jaxmedusa.io.overlap_check import initial_overlaps

console = Console()


def fail(message: str) -> None:
    """Print `message` as an error and exit with code 2 (bad input)."""
    # escaped: messages hold file text, keys and paths with [brackets] (e.g. jaxmedusa[ray])
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)  # no wrapping: paths stay whole
    raise typer.Exit(code=2)


def fail_write(exc: OSError, where) -> None:
    """Exit 2 for a write that failed (a full disk, a folder made read-only meanwhile),
    naming the path; files written earlier stay whole (atomic writes, io/tables.py)."""
    fail(f"{getattr(exc, 'filename', None) or where}: cannot write ({getattr(exc, 'strerror', None) or exc})")


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
