"""LLVM's full unrolling: what it costs a study's compile and what it gives its step.

    python benchmarks/llvm_unroll.py --batch 256 --end-time 3.0 --rounds 2

jaxmedusa hands LLVM `-unroll-full-max-count` (core/xla_flags.py, FULL_UNROLL_MAX): loops of
more iterations are not unrolled fully. This script compares that setting with LLVM's own
(every loop whose unrolled cost is small enough, whatever its count) and other counts.

Each row is a fresh process with the compilation cache off, on the crush-law offset study's
first B scenarios (`studies/offset.toml`), with contact (the study) and without (free
driving): the time loop is lowered, then compiled (XLA's backend compile, wall and CPU
seconds of the process apart), then run `--repeats` times (the fastest is kept). The rounds
alternate the settings, and each figure is the best of its rounds (this VM's compile times
vary by +-15 % from one process to the next). The metrics of every setting are compared with
LLVM's own: the same bits, or how many differ and by how much (relative, over values above 1e-6).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from jaxmedusa.core.xla_flags import (FULL_UNROLL_MAX, FULL_UNROLL_OPTION, SMALL_LOOP_BYTES,  # noqa: E402
                                      SMALL_LOOP_OPTION)

CHILD = r"""
import dataclasses, json, sys, time
import jax, numpy as np
import jaxmedusa
from jaxmedusa import study as S
from jaxmedusa.analysis.outcomes import summarize_batch
from jaxmedusa.solver.simulate import simulate
sys.path.insert(0, sys.argv[5])
from offset_layers import build_chunk
study = S.load_study(sys.argv[1])
study.settings = dataclasses.replace(study.settings, end_time=float(sys.argv[3]), contact=sys.argv[4] == "1")
batch, state = build_chunk(study, int(sys.argv[2]))
t0 = time.perf_counter()
lowered = simulate.lower(batch, state, study.settings, tracker=study.tracker, record=False)
t1, c1 = time.perf_counter(), time.process_time()
compiled = lowered.compile()
t2, c2 = time.perf_counter(), time.process_time()
runs = []
for _ in range(int(sys.argv[6])):
    t = time.perf_counter()
    res = jax.block_until_ready(compiled(batch, state))
    runs.append(time.perf_counter() - t)
metrics = jax.device_get(summarize_batch(batch, res.final, res.metrics, study.tracker))
np.savez(sys.argv[7], **{str(k): np.asarray(v) for k, v in metrics.items()})
print(json.dumps({"lower": t1 - t0, "compile": t2 - t1, "compile_cpu": c2 - c1, "run": min(runs),
                  "vehicle_steps": int(np.sum(metrics["steps"])) * study.n_vehicles}))
"""


def flags(count: int | None) -> str:
    """XLA_FLAGS with jaxmedusa's loop option and the full-unroll count (None: LLVM's own)."""
    entries = [f"{SMALL_LOOP_OPTION}={SMALL_LOOP_BYTES}"] + ([] if count is None else [f"{FULL_UNROLL_OPTION}={count}"])
    return "--xla_backend_extra_options=" + ",".join(entries)


def compare(base: dict, other: dict) -> str:
    """'the same bits', or how many metrics differ and their largest relative difference over
    the values above 1e-6 (SI units: smaller ones are round-off of zero, e.g. a lateral speed
    of 1e-19 m/s in free driving)."""
    differ, worst = 0, 0.0
    for k, a in base.items():
        b = other[k]
        if np.array_equal(a, b, equal_nan=True):
            continue
        differ += 1
        if a.dtype.kind == "f":
            big = np.maximum(np.abs(a), np.abs(b))
            keep = np.isfinite(big) & (big > 1e-6)
            if np.any(keep):
                worst = max(worst, float(np.max(np.abs(a - b)[keep] / big[keep])))
    return "the same bits" if differ == 0 else f"{differ} of {len(base)} differ, by up to {worst:.1e}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--counts", default=f"none,2,{FULL_UNROLL_MAX},4",
                    help="full-unroll counts to compare, 'none' for LLVM's own (the first is the reference)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    counts = [None if c == "none" else int(c) for c in args.counts.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="llvm-unroll-"))
    best: dict = {}
    for r in range(args.rounds):
        for contact in (True, False):
            for count in counts:
                out = tmp / f"m_{contact}_{count}_{r}.npz"
                env = dict(os.environ, XLA_FLAGS=flags(count), JAXMEDUSA_COMPILE_CACHE="0", JAX_PLATFORMS="cpu")
                proc = subprocess.run([sys.executable, "-c", CHILD, args.study, str(args.batch), str(args.end_time),
                                       "1" if contact else "0", str(Path(__file__).resolve().parent),
                                       str(args.repeats), str(out)], env=env, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr[-2000:])
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                key = (contact, count)
                prev = best.get(key)
                print(f"round {r + 1} contact={contact} count={count}: {row}", file=sys.stderr, flush=True)
                best[key] = dict(row) if prev is None else {k: min(prev[k], row[k]) for k in row}
                best[key]["metrics"] = dict(np.load(out))
    print(f"B = {args.batch}, {args.end_time} s, best of {args.rounds} rounds\n")
    print("| contact | -unroll-full-max-count | XLA compile [s] (CPU [s]) | run [s] | vehicle-steps/s "
          "| run against LLVM's own | metrics against LLVM's own |")
    print("|---|---|---|---|---|---|---|")
    for contact in (True, False):
        ref = best[(contact, counts[0])]
        for count in counts:
            row = best[(contact, count)]
            rate = row["vehicle_steps"] / row["run"]
            print(f"| {'crush law' if contact else 'off'} | {'LLVM' if count is None else count} | "
                  f"{row['compile']:.2f} ({row['compile_cpu']:.2f}) | {row['run']:.3f} | {rate:.3g} | "
                  f"{row['run'] / ref['run']:.3f} | "
                  f"{'-' if count == counts[0] else compare(ref['metrics'], row['metrics'])} |")


if __name__ == "__main__":
    main()
