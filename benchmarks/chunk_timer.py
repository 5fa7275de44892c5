"""Time one chunk of a study with whichever jaxmedusa is on PYTHONPATH (benchmarks/ab_commits.py).

    PYTHONPATH=TREE python benchmarks/chunk_timer.py STUDY --batch 256 --end-time 3 --repeats 2

Builds the study's first B samples, runs `study.runner.run_batch` once to compile, then
`--repeats` more times, and prints one JSON line: each timed run's wall and CPU seconds of
this process (on a busy machine the CPU time is the steadier figure), the first call's
wall, and the accepted steps. Uses only names that jaxmedusa's study API has had since
before the damage and vehicle layers (load_study, design, scenarios_for, build_batch,
run_batch), so that it runs against earlier commits too; it adds nothing to sys.path.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
import warnings

import jax
import numpy as np

from jaxmedusa import study as S
from jaxmedusa.build import build_batch
from jaxmedusa.study.runner import run_batch


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=None)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false (free driving)")
    ap.add_argument("--metrics", default=None, help="write the chunk's metrics here (.npz), to compare trees' bits")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    if args.end_time is not None:
        study.settings = dataclasses.replace(study.settings, end_time=args.end_time)
    if args.no_contact:
        study.settings = dataclasses.replace(study.settings, contact=False)
    ids, cols = S.design(study)
    b = args.batch
    items = S.scenarios_for(study, {c: v[:b] for c, v in cols.items()}, ids[:b])
    batch, state = build_batch([it[0] for it in items], study.settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in items], contact=[it[2] for it in items])

    def run():
        t0, c0 = time.perf_counter(), time.process_time()
        metrics = jax.device_get(run_batch(batch, state, study.settings, study.tracker, False)[0])
        return time.perf_counter() - t0, time.process_time() - c0, metrics

    first, _, metrics = run()
    timed = [run()[:2] for _ in range(args.repeats)]
    if args.metrics:
        np.savez(args.metrics, **{k: np.asarray(v) for k, v in metrics.items()})
    print(json.dumps(dict(batch=b, first_call_s=first, wall_s=[w for w, _ in timed], cpu_s=[c for _, c in timed],
                          steps=int(np.sum(metrics["steps"])), n_vehicles=study.n_vehicles)))


if __name__ == "__main__":
    main()
