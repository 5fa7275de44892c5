"""The offset study's chunk with module constants changed, against the code as it is, in one process.

    python benchmarks/ab_constants.py jaxmedusa.contact.broad_phase:CAPACITY_DIVISOR=32 --rounds 8
    python benchmarks/ab_constants.py jaxmedusa.contact.broad_phase:MIN_CAPACITY=4 --batch 16 --end-time 0.3 --rounds 2

Each VARIANT is `module:NAME=value` (several joined by `,` change together); the value is a
Python literal of the constant's type. Builds the study's first B scenarios (default
studies/offset.toml) as one chunk and compiles `study.runner.run_batch` once as the code is
("base") and once per variant, each with its constants set while it is traced (JAX's caches
cleared in between, so that every variant is traced anew; the constants are restored after).
Then `--rounds` rounds run every compiled program once, the order reversed from round to
round, so that the machine's drift (20-30 % within minutes on a shared 2-core guest) hits
all alike: the steadiest comparison for a change below ~10 %, which fresh processes
(benchmarks/ab_commits.py) cannot resolve there. Reports per program the median and best
wall time, the median of the rounds' ratios to base, and whether its metrics are base's to
the bit (or their largest relative difference). Only constants read while tracing count
(a constant read inside a function as a default argument, or copied at import into another
module, is not changed by this).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402
from ab_commits import metrics_difference  # noqa: E402
from offset_layers import build_chunk  # noqa: E402


def parse_variant(text: str) -> list[tuple[object, str, object]]:
    """'mod:NAME=value,mod2:NAME2=value2' -> [(module, name, value)], the value cast to the
    constant's own type."""
    out = []
    for part in text.split(","):
        target, _, literal = part.partition("=")
        mod_name, _, name = target.partition(":")
        if not (mod_name and name and literal):
            raise SystemExit(f"variant {part!r}: expected module:NAME=value")
        mod = importlib.import_module(mod_name)
        if not hasattr(mod, name):
            raise SystemExit(f"variant {part!r}: {mod_name} has no {name}")
        old = getattr(mod, name)
        out.append((mod, name, type(old)(ast.literal_eval(literal))))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--end-time", type=float, default=None, help="override the study's end time [s]")
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false (free driving)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    settings = study.settings
    if args.end_time is not None:
        settings = dataclasses.replace(settings, end_time=args.end_time)
    if args.no_contact:
        settings = dataclasses.replace(settings, contact=False)
    batch, state = build_chunk(study, args.batch)
    variants = {"base": []} | {v: parse_variant(v) for v in args.variants}

    programs, first_call = {}, {}
    for name, changes in variants.items():
        saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in changes]
        try:
            for mod, attr, value in changes:
                setattr(mod, attr, value)
            jax.clear_caches()
            t0 = time.perf_counter()
            programs[name] = run_batch.lower(batch, state, settings, study.tracker, False).compile()
            first_call[name] = time.perf_counter() - t0
        finally:
            for mod, attr, value in saved:
                setattr(mod, attr, value)
        print(json.dumps({"program": name, "compile_s": round(first_call[name], 2)}), flush=True)

    times = {name: [] for name in programs}
    metrics = {}
    names = list(programs)
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            t0 = time.perf_counter()
            m, _ = programs[name](batch, state)
            m = jax.device_get(m)
            times[name].append(time.perf_counter() - t0)
            metrics.setdefault(name, m)
        print(json.dumps({"round": r, **{k: round(v[-1], 3) for k, v in times.items()}}), flush=True)

    base = np.asarray(times["base"])
    print(f"\n{study.name}: B = {args.batch}, end_time {settings.end_time:g} s, contact {settings.contact}, "
          f"{args.rounds} alternating rounds, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| program | compile [s] | run, median [s] | best [s] | median of the rounds' ratios | metrics |")
    print("|---|---|---|---|---|---|")
    for name in names:
        t = np.asarray(times[name])
        same = "-" if name == "base" else metrics_difference(metrics["base"], metrics[name])
        print(f"| {name} | {first_call[name]:.1f} | {np.median(t):.3f} | {t.min():.3f} | "
              f"{np.median(t / base):.3f} | {same} |")


if __name__ == "__main__":
    main()
