"""What the contact stage costs apart from its packed rounds, and what the first near pair adds.

    python benchmarks/contact_rounds.py --batch 256 --start 2.0 --steps 500 --rounds 6
    python benchmarks/contact_rounds.py --batch 16 --start 0.5 --steps 50 --rounds 2 --touching 0 3   # a quick check

Two measurements of the offset study's chunk (default studies/offset.toml, the crush-law
offset collision, float64), each in one process with its programs run in alternating rounds
(the order reversed from round to round), no outcome tracker:

1. From the state at `--start` [s] (the study run there), `--steps` steps three ways: contact
   off ("free"); contact on ("contact"); and contact on with `contact.broad_phase.compacted_map`
   replaced, while tracing, by one that returns its default ("no rounds"): the broad phase,
   the packing's inputs, the far pairs' terms, the law's per-scenario sums and the corrector's
   contact terms all run, but no narrow-phase search, no law evaluation of a near pair and no
   merge back. contact minus no rounds is what the packed buffers cost (the searches, the near
   pairs' law, the passes back); no rounds minus free the contact stage's fixed cost.
2. From the state at t = 0 with the first k scenarios' vehicle 2 moved back until the contact
   shapes overlap by 5 cm (benchmarks/step_profile.py `touching_state`) and the others as
   built (apart), `--steps` steps for each k of `--touching`: one compiled program, only the
   data differ. In the default study the first two scenarios' pairs separate at their first
   search (their apart proof then skips the search), so k = 3 is the first k with a pair in
   contact every step.

Times are wall seconds of the compiled run; reported per scenario-step (1.) and per step (2.).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.contact import stage  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402
from offset_layers import build_chunk  # noqa: E402
from step_profile import touching_state  # noqa: E402


def _no_rounds(fn, near, inputs, default, **kw):
    """compacted_map with no near item: every item keeps its default."""
    return default


def alternate(runs: dict, rounds: int) -> dict:
    """{name: [wall seconds per round]}: every run once a round, the order reversed each round."""
    times = {k: [] for k in runs}
    for r in range(rounds):
        for k in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            t = time.perf_counter()
            runs[k]()
            times[k].append(time.perf_counter() - t)
    return times


def split(study, batch, state, start: float, steps: int, rounds: int):
    if start > 0:
        state = simulate(batch, state, dataclasses.replace(study.settings, end_time=start), record=False).final
    real = stage.compacted_map
    variants = {"free": (False, real), "contact": (True, real), "no rounds": (True, _no_rounds)}
    runs = {}
    for i, (name, (contact, cmap)) in enumerate(variants.items()):
        # a distinct end time (by 1e-13 relative: the same steps) makes each variant a program of its own
        end = (start + steps * study.settings.dt) * (1.0 + 1e-13 * i)
        settings = dataclasses.replace(study.settings, contact=contact, end_time=end)
        stage.compacted_map = cmap
        try:
            def run(s=settings):
                return jax.block_until_ready(simulate(batch, state, s, record=False))
            run()  # traced and compiled with this variant's compacted_map
        finally:
            stage.compacted_map = real
        runs[name] = run
    times = alternate(runs, rounds)
    free = np.array(times["free"])
    n = batch.valid.shape[0] * steps
    print(f"From t = {start:g} s, {steps} steps, B = {batch.valid.shape[0]}, {rounds} rounds:\n")
    print("| variant | best [us per scenario-step] | median | median of the rounds' ratios to free |")
    print("|---|---|---|---|")
    for k, v in times.items():
        v = np.array(v)
        print(f"| {k} | {v.min() / n * 1e6:.3f} | {np.median(v) / n * 1e6:.3f} | {np.median(v / free):.3f} |")


def near_count(study, batch, state, ks, steps: int, rounds: int):
    near = touching_state(batch, state)
    settings = dataclasses.replace(study.settings, end_time=steps * study.settings.dt)

    def mixed(k):
        r = np.array(state.vehicles.r)
        r[:k] = np.asarray(near.vehicles.r)[:k]
        return dataclasses.replace(state, vehicles=dataclasses.replace(state.vehicles, r=jnp.asarray(r)))

    runs = {k: (lambda s=mixed(k): jax.block_until_ready(simulate(batch, s, settings, record=False))) for k in ks}
    runs[ks[0]]()  # the one compile
    times = alternate(runs, rounds)
    b0 = min(times[ks[0]])
    print(f"\nFrom t = 0, the first k scenarios touching, {steps} steps, B = {batch.valid.shape[0]}, best of "
          f"{rounds}:\n")
    print(f"| k | us per step | more than k = {ks[0]} |")
    print("|---|---|---|")
    for k in ks:
        print(f"| {k} | {min(times[k]) / steps * 1e6:.1f} | {(min(times[k]) - b0) / steps * 1e6:+.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--start", type=float, default=2.0, help="state the split starts from [s]")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--touching", type=int, nargs="*", default=[0, 2, 3, 8, 64, 256],
                    help="k values of the second measurement (none: skip it)")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    study = S.load_study(a.study)
    batch, state = build_chunk(study, a.batch)
    print(f"{study.name}: {jax.default_backend()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"float64\n")
    split(study, batch, state, a.start, a.steps, a.rounds)
    ks = [k for k in a.touching if k <= a.batch]
    if ks:
        near_count(study, batch, state, ks, a.steps, a.rounds)


if __name__ == "__main__":
    main()
