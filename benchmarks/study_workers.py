"""A study run with one chunk at a time against chunks side by side on every core
(jaxmedusa/study/workers.py), as a user runs it: compile included, side by side in one run.

    python benchmarks/study_workers.py --n 256 --end-time 3.0 --rounds 2
    python benchmarks/study_workers.py --n 256 --end-time 3.0 --rounds 2 --no-contact
    python benchmarks/study_workers.py --n 2048 --end-time 3.0 --rounds 1 --no-contact --precision float32
    python benchmarks/study_workers.py --n 8 --end-time 0.2 --rounds 1      # a quick check

Each configuration runs `run_study` (what `jaxmedusa sweep` runs) on the first --n samples
of the study (default studies/offset.toml, the crush-law offset collision at constant 4e-4 s
steps) in a fresh process with an empty compilation cache, configurations alternating
round by round:

    serial    JAXMEDUSA_WORKERS=1: one chunk at a time, the chunk size of before (n <= 256:
              one chunk of n)
    workers   the default: one chunk per core, the chunk size split accordingly (n = 256 on
              two cores: two chunks of 128)
    serial-split  JAXMEDUSA_WORKERS=1 with the workers' chunk size: the same chunks one at a
              time (the rows must equal `workers`' to the bit)

Reports the best wall time of run_study per configuration (compile included; the process
start and imports are not; with --warm a second run_study in the same process, the compiled
programs reused: the run alone), scenarios/s, vehicle-steps/s (n x vehicles x end_time / dt, the
constant steps of the crush law), the CPU time, and how far the rows of each configuration
lie from `serial`'s (largest relative difference over the float columns; 0 = the same bits).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import dataclasses, json, os, sys, time
from jaxmedusa.study import load_study, run_study
from jaxmedusa.study.runner import plan_sweep
from jaxmedusa.study.workers import default_workers
study_path, n, end_time, contact, batch, out, precision, warm = sys.argv[1:9]
s = load_study(study_path)
s.precision = precision
s.settings = dataclasses.replace(s.settings, end_time=float(end_time), contact=contact == "1")
s.sampler = dataclasses.replace(s.sampler, n=int(n))
batch = int(batch) or None
w = default_workers()
plan = plan_sweep(s, batch, workers=w)
if warm == "1":  # compile (and run) once, untimed: the timed run below reuses the compiled programs
    run_study(s, out=out + "-warm-up", batch=batch, progress=False)
t0, c0 = time.perf_counter(), time.process_time()
summary = run_study(s, out=out, batch=batch, progress=False)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print("RESULT " + json.dumps(dict(wall=wall, cpu=cpu, workers=w, chunk=summary.chunk_size, chunks=summary.n_chunks,
                                   dt=s.settings.dt, vehicles=s.n_vehicles, status=summary.status_counts)))
"""


def run(config: str, a, out: Path, split: int) -> dict:
    env = dict(os.environ, JAXMEDUSA_COMPILE_CACHE=str(Path(tempfile.mkdtemp(prefix="cold-cache-"))))
    batch = 0
    if config in ("serial", "serial-split"):
        env["JAXMEDUSA_WORKERS"] = "1"
        batch = split if config == "serial-split" else 0
    args = [sys.executable, "-c", CHILD, a.study, str(a.n), str(a.end_time), "0" if a.no_contact else "1", str(batch),
            str(out), a.precision, "1" if a.warm else "0"]
    p = subprocess.run(args, env=env, capture_output=True, text=True, cwd=ROOT)
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode or not line:
        raise SystemExit(f"{config} failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    return json.loads(line[0][7:])


def largest_difference(a: Path, b: Path) -> float:
    import numpy as np
    import pyarrow.parquet as pq
    ta, tb = pq.read_table(a / "scenarios.parquet").to_pandas(), pq.read_table(b / "scenarios.parquet").to_pandas()
    worst = 0.0
    for c in ta.columns:
        x, y = ta[c].to_numpy(), tb[c].to_numpy()
        if x.dtype.kind != "f":
            if not (x == y).all():
                return float("inf")
            continue
        both = np.isfinite(x) & np.isfinite(y)
        if not np.array_equal(np.isfinite(x), np.isfinite(y)):
            return float("inf")
        scale = np.maximum(np.abs(x[both]), np.abs(y[both]))
        d = np.abs(x[both] - y[both]) / np.where(scale > 0, scale, 1.0)
        worst = max(worst, float(d.max(initial=0.0)))
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-contact", action="store_true")
    ap.add_argument("--precision", default="float64", choices=["float64", "float32"],
                    help="the study's [simulation] precision (float32: checked against float64 first)")
    ap.add_argument("--warm", action="store_true",
                    help="time a second run_study in the same process (compiled programs reused): the run alone")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="study-workers-"))
    configs = ["serial", "workers", "serial-split"]
    best: dict[str, dict] = {}
    split = None
    for r in range(a.rounds):
        for config in configs:
            if config == "serial-split" and split is None:
                continue
            got = run(config, a, tmp / config, split or 0)
            if config == "workers":
                split = got["chunk"]
            print(f"round {r + 1} {config}: {json.dumps(got)}", flush=True)
            if config not in best or got["wall"] < best[config]["wall"]:
                best[config] = got
    rows = []
    base = best["serial"]["wall"]
    print(f"\n{a.n} scenarios of {Path(a.study).name}, {a.end_time} s, contact {'off' if a.no_contact else 'on'}, "
          f"{a.precision}{', warm' if a.warm else ''}, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores; best of {a.rounds} rounds\n")
    what = "run only, compiled before" if a.warm else "compile included"
    print(f"| configuration | workers | chunks x size | wall [s] ({what}) | CPU [s] | scenarios/s | "
          "vehicle-steps/s | speed-up | rows against serial (largest rel. diff.) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for config, g in best.items():
        steps = a.n * g["vehicles"] * round(a.end_time / g["dt"])
        diff = 0.0 if config == "serial" else largest_difference(tmp / "serial", tmp / config)
        rows.append(dict(config=config, **g, vehicle_steps_per_s=steps / g["wall"], diff_serial=diff))
        print(f"| {config} | {g['workers']} | {g['chunks']} x {g['chunk']} | {g['wall']:.1f} | {g['cpu']:.1f} | "
              f"{a.n / g['wall']:.2f} | {steps / g['wall']:.3g} | {base / g['wall']:.2f} | {diff:.2g} |")
    if "serial-split" in best:
        d = largest_difference(tmp / "workers", tmp / "serial-split")
        print(f"\nworkers against the same chunks one at a time (serial-split): largest relative difference {d:.2g}"
              + (" (the same bits)" if d == 0 else ""))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
