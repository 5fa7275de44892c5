"""Both CPU cores for one study chunk: one device against the batch split over two, side by side.

    python benchmarks/two_cores.py --batch 256 --end-time 3.0 --rounds 3
    python benchmarks/two_cores.py --batch 4 --end-time 0.2 --rounds 1   # a quick check

XLA's CPU backend runs the compiled time loop on one thread, so one process uses one core.
With `--xla_force_host_platform_device_count=2` (set here before JAX starts) the process has
two CPU devices, and a chunk can run half on each. Three ways to run the same chunk of the
study (default studies/offset.toml), each compiled first and then timed in alternating
rounds (`--rounds`), in one process:

    one        the whole chunk on device 0 (what a process with one device runs)
    halves     its two halves one after the other on device 0 (the program of half a chunk)
    gspmd      the batch axis sharded over both devices (NamedSharding): XLA partitions the
               loop; the batch-wide parts of a step (the loop's exit test, the contact
               stage's compaction of near pairs) become cross-device communication every step
    shard_map  each device runs the whole loop on its half of the batch (jax.shard_map):
               no communication until the end

shard_map's metrics must be those of `halves` bit for bit (each device runs the program of
half a chunk); against `one` they differ in the last bits (XLA's CPU code for B and B/2
scenarios rounds differently, and a collision amplifies it): the table gives the largest
relative difference of each way from `one` and from `halves`. Prints a table with the best
round of each and the speed-up over `one`.
"""
from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.analysis.outcomes import summarize_batch  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402
from offset_layers import build_chunk  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", nargs="+", default=["one", "halves", "gspmd", "shard_map"], choices=["one", "halves", "gspmd", "shard_map"])
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    devs = jax.devices()
    if len(devs) < 2:
        raise SystemExit(f"{len(devs)} device(s): XLA_FLAGS was read before this script set it")
    study = S.load_study(args.study)
    if args.end_time is not None:
        study.settings = dataclasses.replace(study.settings, end_time=args.end_time)
    settings, tracker = study.settings, study.tracker
    batch, state = build_chunk(study, args.batch)
    mesh = Mesh(np.array(devs[:2]), ("batch",))
    split = NamedSharding(mesh, PartitionSpec("batch"))

    @partial(jax.shard_map, mesh=mesh, in_specs=PartitionSpec("batch"), out_specs=PartitionSpec("batch"),
             check_vma=False)  # each device its own loop: nothing is shared but the outputs
    def halves(b, s):
        res = simulate(b, s, settings, tracker=tracker, record=False)
        return summarize_batch(b, res.final, res.metrics, tracker)

    halves_jit = jax.jit(halves)
    inputs = {"one": jax.device_put((batch, state), devs[0]), "gspmd": jax.device_put((batch, state), split),
              "shard_map": jax.device_put((batch, state), split)}

    half = args.batch // 2
    parts = [jax.device_put(jax.tree.map(lambda x: x[k * half:(k + 1) * half], (batch, state)), devs[0])
             for k in range(2)]

    def run(way):
        t0 = time.perf_counter()
        if way == "shard_map":
            metrics = jax.device_get(halves_jit(*inputs[way]))
        elif way == "halves":
            got = [jax.device_get(run_batch(*p, settings, tracker, False)[0]) for p in parts]
            metrics = {k: np.concatenate([g[k] for g in got]) for k in got[0]}
        else:
            metrics = jax.device_get(run_batch(*inputs[way], settings, tracker, False)[0])
        return time.perf_counter() - t0, metrics

    first, results = {}, {}
    for way in args.ways:
        first[way], results[way] = run(way)
        print(json.dumps(dict(way=way, first_call_s=round(first[way], 2))), flush=True)
    rounds = {w: [] for w in args.ways}
    for k in range(args.rounds):
        for way in args.ways:
            rounds[way].append(run(way)[0])
        print(json.dumps(dict(round=k, **{w: round(r[-1], 3) for w, r in rounds.items()})), flush=True)
    def largest(a, b) -> float:
        """Largest relative difference over every float metric (0: identical)."""
        worst = 0.0
        for k in a:
            x, y = np.asarray(a[k], float), np.asarray(b[k], float)
            both = np.isfinite(x) & np.isfinite(y)
            d = np.abs(x - y)[both] / np.maximum(np.maximum(np.abs(x), np.abs(y))[both], 1e-300)
            worst = max(worst, float(d.max(initial=0.0)))
        return worst

    refs = [w for w in ("one", "halves") if w in results]
    differ = {(w, r): largest(results[r], results[w]) for w in args.ways for r in refs if r != w}
    best = {w: min(r) for w, r in rounds.items()}
    ref = args.ways[0]
    print(f"\n{study.name}: B = {args.batch}, end_time {settings.end_time:g} s, {settings.contact_law} law, "
          f"load average {os.getloadavg()[0]:.2f}, best of {args.rounds} alternating rounds\n")
    print(f"| way | first call [s] | run [s] | speed-up over {ref} | "
          + " | ".join(f"largest relative difference from {r}" for r in refs) + " |")
    print("|---|---|---|---|" + "---|" * len(refs))
    for w in args.ways:
        cells = ["-" if (w, r) not in differ else f"{differ[w, r]:.2e}" for r in refs]
        print(f"| {w} | {first[w]:.1f} | {best[w]:.3f} | {best[ref] / best[w]:.2f} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(batch=args.batch, rounds=rounds, first=first,
                                                   differing={f"{w} vs {r}": v for (w, r), v in differ.items()}),
                                              indent=1))


if __name__ == "__main__":
    main()
