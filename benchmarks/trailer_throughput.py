"""Throughput of car-trailer studies against two-car studies of the same length, side by side.

    python benchmarks/trailer_throughput.py                          # 256 + 256 scenarios, 3 s each
    python benchmarks/trailer_throughput.py --batch 4 --end-time 0.2 # a quick check that it runs

The issue's target (docs/trailers.md, "Speed"): a study of car-trailer scenarios runs at no
less than half the throughput (scenarios per second) of one of two-car scenarios of the
same length. Both studies are the car and caravan of studies/caravan.toml, one with the
caravan on its hitch, the other with a second car of the same model driving in the next lane
(4 m to the left, well clear: contact is evaluated, never found); the same steering pulse,
the speed of both drawn uniformly from 20-30 m/s per scenario, the contact law `--law`
(default crush, the smooth law of large studies; its superellipsoid shape, constant step).

Each study runs as the sweep runs a chunk (study.runner.run_chunk: scenario objects, build,
the sliced jitted run, metrics to the host): one chunk first (compile included, reported
apart), then `--repeats` chunks of `--batch` new samples of each study, alternating, timed.
Prints a Markdown table and the ratio; --json writes the raw numbers.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmedusa.study import design, run_chunk, scenarios_for, study_from_dict  # noqa: E402

CARAVAN = ROOT / "studies" / "caravan.toml"
LANE = 4.0  # [m], the second car's lateral offset


def studies(batch: int, repeats: int, end_time: float, law: str):
    """(car-trailer Study, two-car Study): the same settings, batch * (repeats + 1) samples each."""
    scenario = tomllib.loads(CARAVAN.read_text())
    scenario.pop("name", None)
    sim = {"end_time": end_time, "save_every": end_time, **({"contact": False} if law == "off" else
                                                              {"contact_law": law})}
    n = batch * (repeats + 1)

    def study(name, sc, paths):
        return study_from_dict({"name": name, "scenario": sc, "simulation": sim,
                                "sampler": {"kind": "random", "n": n, "seed": 1},
                                "parameters": {"speed": {"uniform": [20.0, 30.0], "paths": paths}},
                                "outputs": {"metrics": ["final", "handling", "articulation"]}},
                               base_dir=ROOT / "studies", source=f"<{name}>")

    car, van = scenario["vehicles"]
    two = dict(scenario, models=scenario["models"][:1],
               vehicles=[car, dict(car, y=car["y"] + LANE)])
    one = {"vehicles.1.speed": 1.0, "vehicles.1.tire_speed": 1.0}
    return (study("car_trailer", scenario, one),
            study("two_cars", two, {**one, "vehicles.2.speed": 1.0, "vehicles.2.tire_speed": 1.0}))


def chunk_seconds(study, ids, cols, k: int, batch: int) -> tuple[float, int]:
    """(wall seconds, failed scenarios) of chunk k of the design, as the sweep runs it."""
    sl = slice(k * batch, (k + 1) * batch)
    t0 = time.perf_counter()
    items = scenarios_for(study, {c: v[sl] for c, v in cols.items()}, ids[sl])
    metrics, _, _ = run_chunk(study, items, batch)
    return time.perf_counter() - t0, int(np.sum(np.asarray(metrics["status"]) != 0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=256, help="scenarios per chunk (default 256)")
    ap.add_argument("--repeats", type=int, default=2, help="timed chunks per study (default 2)")
    ap.add_argument("--end-time", type=float, default=3.0, help="simulated time per scenario [s] (default 3)")
    ap.add_argument("--law", default="crush", help="contact law (crush, physical, medusa) or off (default crush)")
    ap.add_argument("--json", type=Path, help="write the raw numbers here")
    args = ap.parse_args(argv)
    pair = studies(args.batch, args.repeats, args.end_time, args.law)
    designs = [design(s) for s in pair]
    first = [chunk_seconds(s, *d, 0, args.batch)[0] for s, d in zip(pair, designs)]
    timed, failed = [[], []], [0, 0]
    for k in range(1, args.repeats + 1):  # alternate, so that a slow spell of the machine hits both
        for i, (s, d) in enumerate(zip(pair, designs)):
            sec, bad = chunk_seconds(s, *d, k, args.batch)
            timed[i].append(sec)
            failed[i] += bad
    n = args.batch * args.repeats
    rates = [n / sum(t) for t in timed]
    rows = [dict(study=s.name, batch=args.batch, end_time=args.end_time, law=args.law, first_chunk_s=f,
                 timed_s=sum(t), scenarios_per_s=r, failed=bad)
            for s, f, t, r, bad in zip(pair, first, timed, rates, failed)]
    ratio = rates[0] / rates[1]
    print(f"backend {jax.default_backend()}, {jax.device_count()} device(s) "
          f"({jax.devices()[0].device_kind}); {args.repeats} timed chunks of {args.batch} per study")
    print("| study | first chunk [s] | timed [s] | scenarios/s | failed |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['study']} | {r['first_chunk_s']:.2f} | {r['timed_s']:.2f} | {r['scenarios_per_s']:.2f} | "
              f"{r['failed']} |")
    print(f"car-trailer / two-car throughput: {ratio:.3f} (target >= 0.5: {'met' if ratio >= 0.5 else 'not met'})")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "ratio": ratio, "backend": jax.default_backend()}, indent=2))


if __name__ == "__main__":
    main()
