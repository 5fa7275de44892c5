"""Per core, in one run: the 1999 C program against jaxmedusa's batched step, with and without
contact, per batch size, and the fraction of one core's float64 peak the step reaches.

    python benchmarks/per_core.py --batch 1 16 64 256 --end-time 3.0
    python benchmarks/per_core.py --batch 4 --end-time 0.2 --c-runs 1 --repeats 1   # a quick check

Everything runs on CPU 0 (`taskset -c 0` for the C program; this process pins itself with
os.sched_setaffinity before JAX starts), one after the other:

  1. the C program (benchmarks/medusa_c, medusa_c_baseline.py), `--c-runs` runs each, the
     median: free driving (the offset example with vehicle 2 moved 10 m to the side,
     FREE_Y, so the cars never meet) and the offset example itself (MEDUSA's contact law
     and search, its time step 5e-5 s), its .asc output included;
  2. jaxmedusa, per --batch B: the first B scenarios of the crush-law offset study
     (studies/offset.toml, 4e-4 s steps, every metric group), one chunk compiled, then
     `--repeats` runs of it timed (best): contact off (free driving), then on.

vehicle-steps/s = accepted steps x vehicles / wall seconds. The fraction of the float64 peak:
XLA's cost analysis of one batched step (`solver.simulate._step_batch` with the study's
trackers, jitted alone: benchmarks/step_profile.py) in flops, times the steps, over the wall
time and one core's peak (--flops-per-cycle x the clock of /proc/cpuinfo). For contact the
step is costed with every pair overlapping (step_profile.touching_state), i.e. the narrow
phase and the law run for every pair, while in the study they run for about a fifth of
the scenario-steps (benchmarks/RESULTS.md): an upper bound of the work done, so the contact
fraction is an upper bound too.

Prints a Markdown table; --json writes the raw rows.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

FREE_Y = 10.0  # [m] vehicle 2's lateral position in the free-driving run (the example: 0.4)


def free_platoon() -> str:
    """The offset example's platoon.dat with vehicle 2 at Y = FREE_Y: the cars never meet."""
    import medusa_c_baseline as mc

    lines = (mc.OFFSET / "platoon.dat").read_text().splitlines()
    ys = [i for i, ln in enumerate(lines) if ln.strip().startswith("Y ")]
    lines[ys[1]] = f"  Y {FREE_Y}                  % moved aside: free driving (benchmarks/per_core.py)"
    return "\n".join(lines) + "\n"


def time_c(end_time: float, runs: int) -> list[dict]:
    import medusa_c_baseline as mc

    rows = []
    for case, platoon in (("C program, free driving", free_platoon()), ("C program, offset collision", None)):
        r = mc.time_c_offset(cores=1, runs=runs, end_time=end_time, platoon=platoon)
        rows.append(dict(case=case, batch=1, wall_s=r["wall_median"], vehicle_steps_per_s=r["vehicle_steps_per_s"],
                         steps=r["accepted_steps"], dt_s=None, load=r["load_before"]))
    return rows


def time_jaxmedusa(batches, end_time: float, repeats: int, flops_per_cycle: float) -> list[dict]:
    import jax

    from jaxmedusa import study as S
    from jaxmedusa.solver.simulate import _step_batch, init_metrics
    from jaxmedusa.study.runner import run_batch
    from offset_layers import build_chunk
    from step_profile import clock_ghz, cost, touching_state

    peak = flops_per_cycle * clock_ghz() * 1e9
    study = S.load_study(str(ROOT / "studies" / "offset.toml"))
    rows = []
    for b in batches:
        for contact in (False, True):
            settings = dataclasses.replace(study.settings, end_time=end_time, contact=contact)
            st = dataclasses.replace(study, settings=settings)
            batch, state = build_chunk(st, b)
            t0 = time.perf_counter()
            metrics = jax.device_get(run_batch(batch, state, settings, st.tracker, False)[0])
            first = time.perf_counter() - t0
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                jax.block_until_ready(run_batch(batch, state, settings, st.tracker, False))
                best = min(best, time.perf_counter() - t0)
            steps = int(metrics["steps"].sum())  # accepted steps, all scenarios
            costed = touching_state(batch, state) if contact else state
            d = dict(batch=batch, state=costed, metrics=init_metrics(batch, costed, st.tracker))
            flops, _ = cost(lambda d: _step_batch(d["batch"], (d["state"], d["metrics"]),
                                                  d["state"].clock.t < settings.end_time, settings, st.tracker), d)
            rows.append(dict(case=f"jaxmedusa, {'contact (crush law)' if contact else 'free driving'}", batch=b,
                             first_call_s=first, wall_s=best, vehicle_steps_per_s=steps * study.n_vehicles / best,
                             steps=steps, flops_per_step=flops,
                             peak_fraction=flops * (steps / b) / best / peak, load=os.getloadavg()[0]))
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 16, 64, 256])
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per jaxmedusa chunk (best)")
    ap.add_argument("--c-runs", type=int, default=3, help="runs of each C case (median)")
    ap.add_argument("--flops-per-cycle", type=float, default=16.0, help="float64 peak per cycle and core")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity") and 0 in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {0})  # before JAX starts its thread pools
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    rows = time_c(a.end_time, a.c_runs)
    for r in rows:
        print(json.dumps(r), flush=True)
    rows += time_jaxmedusa(a.batch, a.end_time, a.repeats, a.flops_per_cycle)
    c_free = rows[0]["vehicle_steps_per_s"]
    print(f"\nCPU 0 only, {a.end_time:g} s simulated, float64, {time.strftime('%Y-%m-%d %H:%M')}; "
          f"jaxmedusa: best of {a.repeats} compiled runs; C: median of {a.c_runs}\n")
    print("| case | B | wall [s] | vehicle-steps/s | x the C's free driving | flops per step | "
          "fraction of one core's float64 peak | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        fl = f"{r['flops_per_step']:.3g}" if "flops_per_step" in r else "-"
        pk = f"{100 * r['peak_fraction']:.1f} %" if "peak_fraction" in r else "-"
        print(f"| {r['case']} | {r['batch']} | {r['wall_s']:.3f} | {r['vehicle_steps_per_s']:.3g} | "
              f"{r['vehicle_steps_per_s'] / c_free:.2f} | {fl} | {pk} | {r['load']:.1f} |")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
