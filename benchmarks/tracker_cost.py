"""What the in-run trackers cost a one-scenario run, compiled (no compile time in the figures).

    python benchmarks/tracker_cost.py [--end-time 3] [--reps 3] [--pulse-window 0.25]

Simulates the report's offset example (studies/medusa/default.toml: MEDUSA law, 3 s, one
scenario) with `simulate` and each tracker `jaxmedusa run` uses: none, the step counts, the
contact events, the crash pulse, and all three (what `jaxmedusa run` carries). Each line:
the best of `--reps` compiled calls, wall and CPU seconds of this process (CPU above wall
means XLA ran the loop body's operations on two threads), and vehicle-steps/s.

Before 2026-11-24 (the time loop compiled whole) the pulse cost more than its arithmetic (2.5 s against 0.9 s without
trackers): XLA's CPU runtime dispatched the loop body's operations one by one, on its thread
pool as soon as one buffer exceeded 512 bytes (the pulse record: 2501 ticks x V x 3
float64), and `--pulse-window 0.0005` (6 ticks, 288 bytes) showed it. Now that XLA compiles
the time loop whole (jaxmedusa/core/xla_flags.py) every tracker costs a few per cent;
`JAXMEDUSA_XLA_FLAGS=0 python benchmarks/tracker_cost.py` shows the old behaviour.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import jax

from jaxmedusa.analysis.crash_pulse import PulseTracker, ticks_for
from jaxmedusa.analysis.events import ContactEventTracker
from jaxmedusa.analysis.step_counts import StepCounts
from jaxmedusa.build import build_batch
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.run import make_settings
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.trackers import CombinedTracker

ROOT = Path(__file__).resolve().parents[1]


def trackers(dt: float, window: float) -> dict:
    pulse = PulseTracker(window=window, ticks_per_step=ticks_for(dt))
    return {"none": None, "counts": CombinedTracker((StepCounts(),)),
            "events": CombinedTracker((ContactEventTracker(),)), "pulse": CombinedTracker((pulse,)),
            "all": CombinedTracker((StepCounts(), ContactEventTracker(), pulse))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default=str(ROOT / "studies" / "medusa" / "default.toml"))
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pulse-window", type=float, default=0.25)
    args = ap.parse_args(argv)
    scenario, config = load_scenario(args.scenario)
    settings = make_settings(config, end_time=args.end_time)
    batch, state = build_batch([scenario], dt=settings.dt)
    for name, tracker in trackers(settings.dt, args.pulse_window).items():
        jax.block_until_ready(simulate(batch, state, settings, tracker))  # compile
        best = None
        for _ in range(args.reps):
            w0, c0 = time.perf_counter(), time.process_time()
            out = jax.block_until_ready(simulate(batch, state, settings, tracker))
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            best = min(best or (wall, cpu), (wall, cpu))
        steps = int(out.final.clock.steps[0])  # accepted steps
        print(json.dumps(dict(tracker=name, wall_s=round(best[0], 3), cpu_s=round(best[1], 3), steps=steps,
                              vehicle_steps_per_s=round(steps * len(scenario.vehicles) / best[0]),
                              end_time=args.end_time, load=round(os.getloadavg()[0], 2))), flush=True)


if __name__ == "__main__":
    main()
