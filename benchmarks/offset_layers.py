"""What each in-run layer costs the offset study, measured side by side in one process.

    python benchmarks/offset_layers.py --batch 256 --end-time 3.0 --rounds 3
    python benchmarks/offset_layers.py --batch 8 --end-time 0.3 --rounds 1 --variants all bare  # a quick check

Builds one chunk of `--batch` scenarios of a study (default studies/offset.toml: the
crush-law offset collision, two-axle cars, no zones, no trailers, 3 s) and runs it with
`study.runner.run_batch` under several outcome trackers (analysis/outcomes.Outcomes):

    all         the study's default metrics (every group: damage and rest trackers on)
    3-slots     all, with the damage tracker of all three collision slots (the code before
                the study's tracker kept the first collision alone, which is all its metrics use)
    no-damage   the damage group's tracker off (crush profiles, CDC: analysis/damage.py)
    no-rest     the rest group's tracker off (distance, skid marks, the rest clock)
    bare        both off: what a study asking for neither group runs

Each variant is compiled first (not timed); then `--rounds` rounds run every variant once,
in turn (A, B, C, A, B, C, ...), so that a change in the machine's load hits all of them
alike; the table gives each variant's best round (wall and this process's CPU time: on
a busy machine the CPU time is the steadier figure) and its ratio to `all`. Every metric the
variants share is checked to be identical (bit for bit, NaN = NaN): switching a layer off
changes nothing else. --json writes the raw rounds.
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
from jaxmedusa.analysis.damage import DamageTracker  # noqa: E402
from jaxmedusa.analysis.outcomes import Outcomes  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402

VARIANTS = {"all": dict(damage=True, rest=True), "3-slots": dict(damage=True, rest=True),
            "no-damage": dict(damage=False, rest=True), "no-rest": dict(damage=True, rest=False),
            "bare": dict(damage=False, rest=False)}


@dataclasses.dataclass(frozen=True)
class ThreeSlots(Outcomes):
    """Outcomes with the damage tracker of every collision slot (before the study's tracker
    kept the first collision only): the same metrics, three times the damage state."""

    def damage_tracker(self) -> DamageTracker:
        return DamageTracker(self.episode_gap)


def build_chunk(study: S.Study, b: int):
    """The study's first b samples as one built batch (batch, state)."""
    ids, cols = S.design(study)
    if len(ids) < b:
        raise SystemExit(f"the study has {len(ids)} samples; {b} needed")
    items = S.scenarios_for(study, {c: v[:b] for c, v in cols.items()}, ids[:b])
    return build_batch([it[0] for it in items], study.settings.dt, n_vehicles=study.n_vehicles,
                       tire=[it[1] for it in items], contact=[it[2] for it in items])


def identical(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | ((a != a) & (b != b))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=None, help="override the study's end time [s]")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false (free driving)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    if args.end_time is not None:
        study.settings = dataclasses.replace(study.settings, end_time=args.end_time)
    if args.no_contact:
        study.settings = dataclasses.replace(study.settings, contact=False)
    batch, state = build_chunk(study, args.batch)
    base = study.tracker
    trackers = {name: (ThreeSlots(**{**dataclasses.asdict(base), **VARIANTS[name]}) if name == "3-slots"
                       else dataclasses.replace(base, **VARIANTS[name])) for name in args.variants}

    def run(name):
        t0, c0 = time.perf_counter(), time.process_time()
        metrics, _ = run_batch(batch, state, study.settings, trackers[name], False)
        metrics = jax.device_get(metrics)
        return (time.perf_counter() - t0, time.process_time() - c0), metrics

    compile_s, results = {}, {}
    for name in args.variants:
        (compile_s[name], _), results[name] = run(name)
        print(json.dumps(dict(variant=name, first_call_s=round(compile_s[name], 2))), flush=True)
    rounds, cpu = {name: [] for name in args.variants}, {name: [] for name in args.variants}
    for k in range(args.rounds):
        for name in args.variants:
            (wall, c), _ = run(name)
            rounds[name].append(wall)
            cpu[name].append(c)
        print(json.dumps(dict(round=k, **{n: [round(r[-1], 3), round(cpu[n][-1], 3)] for n, r in rounds.items()})),
              flush=True)
    ref = args.variants[0]
    same = {}
    for name in args.variants[1:]:
        shared = set(results[ref]) & set(results[name])
        same[name] = sorted(k for k in shared if not identical(results[ref][k], results[name][k]))
    steps = int(np.sum(results[ref]["steps"]))
    best = {n: min(r) for n, r in rounds.items()}
    best_cpu = {n: min(r) for n, r in cpu.items()}
    dev = jax.devices()[0]
    print(f"\n{study.name}: B = {args.batch}, end_time {study.settings.end_time:g} s, dt {study.settings.dt:g} s, "
          f"{study.settings.contact_law} law, {jax.device_count()} x {dev.device_kind} ({jax.default_backend()}), "
          f"load average {os.getloadavg()[0]:.2f}, best of {args.rounds} alternating rounds\n")
    print(f"| variant | first call [s] | run [s] (best) | vs {ref} | CPU [s] (best) | vs {ref} | vehicle-steps/s | "
          f"metrics differing from {ref} |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.variants:
        diff = "-" if n == ref else (", ".join(same[n]) or "none")
        print(f"| {n} | {compile_s[n]:.1f} | {best[n]:.3f} | {best[n] / best[ref]:.3f} | {best_cpu[n]:.3f} | "
              f"{best_cpu[n] / best_cpu[ref]:.3f} | {steps * study.n_vehicles / best[n]:.3g} | {diff} |")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(batch=args.batch, end_time=study.settings.end_time,
                                                   rounds=rounds, cpu=cpu, first_call=compile_s, differing=same), indent=1))
    if any(same.values()):
        raise SystemExit("a layer switched off changed other metrics")


if __name__ == "__main__":
    main()
