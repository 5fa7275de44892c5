"""float32 against float64: the same chunk of a study, both compiled, run side by side.

    python benchmarks/precision_throughput.py --batch 64 256 --end-time 3.0 --rounds 3
    python benchmarks/precision_throughput.py --batch 4 --end-time 0.2 --rounds 1   # a quick check

For each batch size B (the first B samples of --study, default studies/offset.toml: the
crush-law offset collision, 3 s at 4e-4 s), with contact and without (--no-contact alone,
or --both): the whole run (`study.runner.run_batch`, the outcome tracker, no samples) is
compiled ahead of time in float64 and in float32 (study/precision.py: the batch cast to
float32 and traced with x64 off), then the two executables are called in alternating
rounds (f64, f32, f64, f32, ...) on the same inputs, so that both see the same machine
load. Reported per precision: the best run time (wall and this process's CPU seconds),
vehicle-steps per second (accepted steps x vehicles / best wall time) and the float32 /
float64 speed-up of both, and the largest float32-float64 difference of final x and delta-V
over the batch (with contact the samples include collisions, which the base-scenario check
of a float32 study does not cover). Prints a Markdown table; --json writes the raw rows.
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

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.study.precision import computing_in, to_precision  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402


def chunk(study, b: int):
    ids, cols = S.design(study)
    items = S.scenarios_for(study, {c: v[:b] for c, v in cols.items()}, ids[:b])
    return build_batch([it[0] for it in items], study.settings.dt, n_vehicles=study.n_vehicles,
                       tire=[it[1] for it in items], contact=[it[2] for it in items])


def compiled(study, batch, state, precision: str):
    """(executable, its inputs, compile seconds) of the whole run in `precision`."""
    with computing_in(precision):
        args = to_precision((batch, state), precision)
        t0 = time.perf_counter()
        exe = jax.jit(run_batch, static_argnames=("settings", "tracker", "record")).lower(
            *args, settings=study.settings, tracker=study.tracker, record=False).compile()
        return exe, args, time.perf_counter() - t0


def timed(exe, args):
    t0, c0 = time.perf_counter(), time.process_time()
    metrics = jax.device_get(jax.block_until_ready(exe(*args))[0])
    return time.perf_counter() - t0, time.process_time() - c0, metrics


def measure(study, b: int, rounds: int) -> dict:
    batch, state = chunk(study, b)
    exes = {p: compiled(study, batch, state, p) for p in ("float64", "float32")}
    best = {p: [float("inf"), float("inf")] for p in exes}
    out = {}
    for _ in range(rounds):
        for p, (exe, args, _) in exes.items():
            wall, cpu, metrics = timed(exe, args)
            best[p] = [min(best[p][0], wall), min(best[p][1], cpu)]
            out[p] = metrics
    steps = {p: int(np.sum(out[p]["steps"])) for p in out}
    row = dict(batch=b, contact=study.settings.contact, end_time=study.settings.end_time, dt=study.settings.dt,
               load_average=os.getloadavg()[0])
    for p in exes:
        row[p] = dict(compile_s=exes[p][2], wall_s=best[p][0], cpu_s=best[p][1], steps=steps[p],
                      vehicle_steps_per_s=steps[p] * study.n_vehicles / best[p][0])
    row["speedup_wall"] = best["float64"][0] / best["float32"][0]
    row["speedup_cpu"] = best["float64"][1] / best["float32"][1]
    for m in ("final_x", "delta_v"):
        row[f"max_abs_diff_{m}"] = float(np.max(np.abs(np.asarray(out["float64"][m], float)
                                                       - np.asarray(out["float32"][m], float))))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--end-time", type=float, default=None, help="override the study's end time [s]")
    ap.add_argument("--rounds", type=int, default=3, help="alternating timed runs per precision")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--no-contact", action="store_true", help="simulation.contact = false only")
    group.add_argument("--both", action="store_true", help="with contact and without")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    if args.end_time is not None:
        study.settings = dataclasses.replace(study.settings, end_time=args.end_time)
    n = len(S.design(study)[0])
    if max(args.batch) > n:
        study.sampler = dataclasses.replace(study.sampler, n=max(args.batch))
    contacts = [True, False] if args.both else [not args.no_contact]
    rows = []
    for contact in contacts:
        study.settings = dataclasses.replace(study.settings, contact=contact)
        for b in args.batch:
            rows.append(measure(study, b, args.rounds))
            print(json.dumps(rows[-1]), flush=True)
    dev = jax.devices()[0]
    print(f"\n{study.name}: end_time {study.settings.end_time:g} s, dt {study.settings.dt:g} s, "
          f"{study.settings.contact_law} law, {jax.device_count()} x {dev.device_kind} ({jax.default_backend()}), "
          f"best of {args.rounds} alternating rounds\n")
    print("| contact | B | f64 run [s] (CPU) | f32 run [s] (CPU) | f64 vehicle-steps/s | f32 vehicle-steps/s | "
          "f32 speed-up wall (CPU) | max diff final x [m] / delta-V [m/s] | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, b = r["float64"], r["float32"]
        print(f"| {'on' if r['contact'] else 'off'} | {r['batch']} | {a['wall_s']:.3f} ({a['cpu_s']:.3f}) | "
              f"{b['wall_s']:.3f} ({b['cpu_s']:.3f}) | {a['vehicle_steps_per_s']:.3g} | {b['vehicle_steps_per_s']:.3g} | "
              f"{r['speedup_wall']:.2f} ({r['speedup_cpu']:.2f}) | {r['max_abs_diff_final_x']:.2g} / "
              f"{r['max_abs_diff_delta_v']:.2g} | {r['load_average']:.1f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
