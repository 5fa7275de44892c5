"""Issue 32's contact target: the offset study's step with contact against free driving, at one
batch size, in alternating rounds of one process.

    python benchmarks/contact_ratio.py --batch 256 --rounds 10
    python benchmarks/contact_ratio.py --batch 16 --rounds 2 --end-time 0.5   # a quick check

Builds the study's first B scenarios (default studies/offset.toml: crush law, 4e-4 s steps,
3 s, every outcome metric) as one chunk and compiles `study.runner.run_batch` twice, with
contact off (free driving) and on. Then `--rounds` rounds each run both, the order swapped
from round to round (free, contact; contact, free; ...), so that a drift of the machine's
speed, which on a shared 2-core guest reaches 20-30 % within minutes, hits both alike.
vehicle-steps/s = accepted steps x vehicles / wall seconds. Prints one line per round and a
JSON summary: best and median rates, and the contact/free ratio three ways: of the best runs,
of the medians, and the median of the rounds' own ratios (the steadiest under drift).
benchmarks/per_core.py times the same two programs one after the other, beside the C
program; this script is for the ratio alone.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402
from offset_layers import build_chunk  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--end-time", type=float, default=None, help="override the study's end time [s]")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    contact = study.settings if args.end_time is None else dataclasses.replace(study.settings, end_time=args.end_time)
    free = dataclasses.replace(contact, contact=False)
    batch, state = build_chunk(study, args.batch)
    tracker = study.tracker

    def run(settings):
        t0 = time.perf_counter()
        metrics, _ = run_batch(batch, state, settings, tracker, False)
        metrics = jax.device_get(metrics)
        return time.perf_counter() - t0, int(np.sum(metrics["steps"]))

    first_free, steps_free = run(free)
    first_contact, steps_contact = run(contact)
    print(json.dumps(dict(first_call_free_s=round(first_free, 2), first_call_contact_s=round(first_contact, 2))),
          flush=True)
    wall_free, wall_contact = [], []
    for k in range(args.rounds):
        for settings, out in ((free, wall_free), (contact, wall_contact))[:: 1 if k % 2 == 0 else -1]:
            out.append(run(settings)[0])
        print(json.dumps(dict(round=k, free_s=round(wall_free[-1], 3), contact_s=round(wall_contact[-1], 3))),
              flush=True)
    n = study.n_vehicles
    rate_free = n * steps_free / np.asarray(wall_free)
    rate_contact = n * steps_contact / np.asarray(wall_contact)
    print(json.dumps(dict(
        study=study.name, batch=args.batch, end_time_s=contact.end_time, dt_s=contact.dt, rounds=args.rounds,
        device=f"{jax.device_count()} x {jax.devices()[0].device_kind}", precision="float64",
        date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), load=round(os.getloadavg()[0], 2),
        free_vehicle_steps_per_s_best=float(rate_free.max()), free_vehicle_steps_per_s_median=float(np.median(rate_free)),
        contact_vehicle_steps_per_s_best=float(rate_contact.max()),
        contact_vehicle_steps_per_s_median=float(np.median(rate_contact)),
        ratio_of_best=float(rate_contact.max() / rate_free.max()),
        ratio_of_medians=float(np.median(rate_contact) / np.median(rate_free)),
        median_of_round_ratios=float(np.median(rate_contact / rate_free)))))


if __name__ == "__main__":
    main()
