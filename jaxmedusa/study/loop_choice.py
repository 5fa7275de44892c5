"""Which form of the time loop a study's chunks compile (solver/time_loop.py): "whole" or "dispatched".

`[simulation] time_loop` of a study file: "auto" (the default), "whole" or "dispatched".
"auto" takes "dispatched" where the compile it saves outweighs the slower steps: on a CPU,
with the contact stage compiled in (it is most of a loop's compile: about 85 % of the
crush-law study's), and a study whose contact steps, n scenarios x end_time / dt steps x
vehicle pairs, number at most DISPATCHED_MAX_PAIR_STEPS. Everything else takes "whole".

The bound, measured on the crush-law offset study (studies/offset.toml, 3 s at 4e-4 s, one
pair) with cold caches on a 2-core Intel Xeon guest, 2026-12-03 (benchmarks/RESULTS.md,
"The time loop dispatched for small cold studies"): the loop's XLA compile took 12-14 s
dispatched against 31-33 s whole, about 19 s less, and the chunks' steps on the two cores
about 1e-6 s longer per pair-step. A cold `jaxmedusa sweep` of 256 scenarios (1.9e6
pair-steps) took 30-32 s against 49-51 s, of 1024 (7.7e6) 50 s against 63 s. The two would
meet near 2e7 pair-steps; the bound is half that, so that "auto" gains wherever it takes
"dispatched" on a 2-core CPU (with more cores the steps' extra time is shared by more chunks
while the compile stays on one, which moves the balance further up). Both the compile and the
steps scale with the CPU's speed, so the balance point moves little from one CPU to another.
A warm study (the compiled program on disk) does not compile, and there the dispatched
chunks are simply slower: a 256-scenario sweep 12-13 s against 11 s.

The choice depends on the study only (its design size, settings and vehicles) and the
backend, never on what the caches hold: a study gives the same rows however often it runs.
The two forms round differently in the last bits (solver/time_loop.py); the tables'
metadata name the form ("jaxmedusa.time_loop").
"""
from __future__ import annotations

from jaxmedusa.contact.stage import own_search, uses_contact
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.time_loop import TIME_LOOPS

__all__ = ["CHOICES", "DISPATCHED_MAX_PAIR_STEPS", "time_loop_for"]

CHOICES = ("auto", *TIME_LOOPS)
DISPATCHED_MAX_PAIR_STEPS = 1e7  # [scenario-pair-steps] of a whole study (module docstring)


def time_loop_for(choice: str, settings: Settings, n_scenarios: int, n_vehicles: int, backend: str) -> str:
    """The form of the time loop for a study of `n_scenarios` (module docstring): `choice`
    itself unless it is "auto"."""
    if choice != "auto":
        return choice
    # (a shape with its own search keeps the thunk runtime anyway: its loops hold scatters)
    if backend != "cpu" or not uses_contact(settings, n_vehicles) or own_search(settings):
        return "whole"
    pairs = n_vehicles * (n_vehicles - 1) // 2
    steps = max(1.0, settings.end_time / settings.dt)
    return "dispatched" if n_scenarios * steps * pairs <= DISPATCHED_MAX_PAIR_STEPS else "whole"
