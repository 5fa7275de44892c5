"""Throughput of a study sweep (default: studies/offset.toml) at several chunk sizes.

    python benchmarks/study_throughput.py --batch 16 64 256 --end-time 0.5
    python benchmarks/study_throughput.py --batch 4096 --end-time 3.0   # the GPU target case

For each chunk size B: builds B perturbed scenarios of the study, compiles and runs one
chunk (the first call, compile included), then times `--repeats` further chunks of B new
samples, split into: sampling + scenario objects, array building, the jitted run (until the
device is done), and the Parquet table. Reports scenarios/s and vehicle-steps/s (accepted
steps x vehicles per second) for the timed chunks, plus rejected steps (step-size control
around contact). Prints a Markdown table; --json writes the raw numbers.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.io import tables as io_mod  # noqa: E402
from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.study.runner import device_sharding, run_batch  # noqa: E402


def measure(study: S.Study, b: int, repeats: int, metrics_path: str | None = None) -> dict:
    n_dev = jax.local_device_count()
    sharding, n_dev = device_sharding()
    ids, cols = S.design(study)
    need = b * (repeats + 1)
    if len(ids) < need:
        raise SystemExit(f"the study has {len(ids)} samples; {need} needed for B={b} and {repeats} repeats")
    rec = study.outputs.trajectories

    def chunk(k):
        t0 = time.perf_counter()
        sl = slice(k * b, (k + 1) * b)
        items = S.scenarios_for(study, {c: v[sl] for c, v in cols.items()}, ids[sl])
        t1 = time.perf_counter()
        batch, state = build_batch([it[0] for it in items], study.settings.dt, n_vehicles=study.n_vehicles,
                                   tire=[it[1] for it in items], contact=[it[2] for it in items])
        if sharding is not None:
            batch, state = jax.device_put((batch, state), sharding)
        jax.block_until_ready((batch, state))
        t2 = time.perf_counter()
        metrics, _ = run_batch(batch, state, study.settings, study.tracker, rec)
        metrics = jax.device_get(metrics)
        t3 = time.perf_counter()
        table = io_mod.scenarios_table(ids[sl], {c: v[sl] for c, v in cols.items()}, metrics,
                                       study.n_vehicles, study.outputs.metrics)
        t4 = time.perf_counter()
        return dict(scenarios=t1 - t0, build=t2 - t1, run=t3 - t2, table=t4 - t3, rows=table.num_rows,
                    steps=int(np.sum(metrics["steps"])), status=np.asarray(metrics["status"]), metrics=metrics)

    first = chunk(0)
    timed = [chunk(k) for k in range(1, repeats + 1)]
    if metrics_path:  # the last timed chunk's outcome metrics, to compare programs (benchmarks/gpu_graphs.py)
        np.savez(metrics_path, **{k: np.asarray(v) for k, v in timed[-1]["metrics"].items()})
    tot = {k: sum(t[k] for t in timed) for k in ("scenarios", "build", "run", "table")}
    wall = sum(tot.values())
    steps = sum(t["steps"] for t in timed)
    n = b * repeats
    return dict(
        batch=b, devices=n_dev, backend=jax.default_backend(), end_time=study.settings.end_time,
        first_call_s=first["run"], wall_s=wall, **{f"{k}_s": v for k, v in tot.items()},
        scenarios_per_s=n / wall, scenarios_per_s_run_only=n / tot["run"],
        vehicle_steps_per_s=steps * study.n_vehicles / wall, mean_steps=steps / n,
        failed=int(sum(np.sum(t["status"] != 0) for t in timed)),
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--end-time", type=float, default=None, help="override the study's end time [s]")
    ap.add_argument("--repeats", type=int, default=1, help="timed chunks per batch size (after the first)")
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false")
    ap.add_argument("--n", type=int, default=None, help="override the study's sample count (large batches need more)")
    ap.add_argument("--json", default=None, help="write the raw numbers here")
    ap.add_argument("--metrics", default=None,
                    help="save the last timed chunk's outcome metrics here (.npz; {batch} is replaced by B)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")

    study = S.load_study(args.study)
    changes = {}
    if args.end_time is not None:
        changes["end_time"] = args.end_time
    if args.no_contact:
        changes["contact"] = False
    if changes:
        study.settings = dataclasses.replace(study.settings, **changes)
    if args.n is not None:
        study.sampler = dataclasses.replace(study.sampler, n=args.n)
    rows = []
    for b in args.batch:
        r = measure(study, b, args.repeats, args.metrics.replace("{batch}", str(b)) if args.metrics else None)
        rows.append(r)
        print(json.dumps(r), flush=True)
    dev = jax.devices()[0]
    print(f"\n{study.name}: end_time {study.settings.end_time:g} s, dt {study.settings.dt:g} s, "
          f"contact {study.settings.contact} ({study.settings.contact_law}), float64, "
          f"{jax.device_count()} x {dev.device_kind} ({jax.default_backend()})\n")
    print("| B | first call (compile+run) [s] | timed chunks wall [s] | run [s] | build [s] | scenarios/s | "
          "vehicle-steps/s | mean steps | failed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['batch']} | {r['first_call_s']:.1f} | {r['wall_s']:.2f} | {r['run_s']:.2f} | {r['build_s']:.3f} | "
              f"{r['scenarios_per_s']:.2f} | {r['vehicle_steps_per_s']:.3g} | {r['mean_steps']:.0f} | {r['failed']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
