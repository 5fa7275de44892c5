"""What a step of the offset study costs before, during and after the collisions, window by window.

    python benchmarks/contact_windows.py --batch 256 --edges 0 0.4 0.6 1.0 2.0 3.0
    python benchmarks/contact_windows.py --batch 256 --edges 2.0 2.25 --free   # and with contact off
    PYTHONPATH=/path/to/other/tree python benchmarks/contact_windows.py ...   # another commit's code

Builds the study's first B samples (default studies/offset.toml: crush law, 3 s at 4e-4 s) and
runs them window by window ([e0, e1], [e1, e2], ...), each window from the state the previous
one ended in. Per window: the share of scenario-steps whose pair passed the broad phase
(`candidate`: the narrow phase ran) and whose shapes overlapped (`touching`), counted by a
small tracker; and the compiled run's time per scenario-step with the study's outcome tracker
and with none (best of `--repeats`, after a compiling call). So the time of a step with the
cars apart, and what each near pair adds, can be read off: (t - t_apart) / candidate share.
--free adds the same windows with contact off (from the same states: the contact run's), so the
contact stage's share of a window is their difference.
Uses only the study API that earlier commits have (load_study, design, scenarios_for,
build_batch, simulate) and adds nothing to sys.path, so PYTHONPATH chooses the code.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa import study as S
from jaxmedusa.build import build_batch
from jaxmedusa.solver.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class NearCount:
    """Per scenario: steps whose pair passed the broad phase, steps with overlap, all steps."""

    reads_rest_clock = False

    def init(self, batch_item, state):
        z = jnp.zeros((), jnp.int32)
        return z, z, z

    def update(self, m, batch_item, state, info):
        return (m[0] + jnp.any(jnp.isfinite(info.pairs.phi1)), m[1] + jnp.any(info.pairs.touching), m[2] + 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--edges", type=float, nargs="+", default=[0.0, 0.4, 0.6, 1.0, 2.0, 3.0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--free", action="store_true", help="also time each window with contact off")
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    study = S.load_study(a.study)
    ids, cols = S.design(study)
    items = S.scenarios_for(study, {c: v[:a.batch] for c, v in cols.items()}, ids[:a.batch])
    batch, state = build_batch([it[0] for it in items], study.settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in items], contact=[it[2] for it in items])
    if a.edges[0] > 0.0:
        state = simulate(batch, state, dataclasses.replace(study.settings, end_time=a.edges[0]), record=False).final
    print(f"{study.name}: B = {a.batch}, dt {study.settings.dt:g} s, {study.settings.contact_law} law, "
          f"{jax.default_backend()}, load average {os.getloadavg()[0]:.2f}, squareness exponents "
          f"{'compiled in' if isinstance(batch.contact.eps1, float) else 'arrays'}\n")
    free = " contact off (outcome tracker) | (no tracker) |" if a.free else ""
    print("| window [s] | candidate | touching | us per scenario-step (outcome tracker) | (no tracker) |" + free)
    print("|---|---|---|---|---|" + ("---|---|" if a.free else ""))
    for t0, t1 in zip(a.edges[:-1], a.edges[1:]):
        settings = dataclasses.replace(study.settings, end_time=t1)
        near = simulate(batch, state, settings, tracker=NearCount(), record=False)
        cand, touch, steps = (np.asarray(x).sum() for x in near.metrics)
        times = []
        runs = [(settings, tracker) for tracker in (study.tracker, None)]
        if a.free:
            runs += [(dataclasses.replace(settings, contact=False), tracker) for tracker in (study.tracker, None)]
        for sets, tracker in runs:
            run = lambda: jax.block_until_ready(simulate(batch, state, sets, tracker=tracker, record=False))  # noqa: E731
            run()
            best = np.inf
            for _ in range(a.repeats):
                t = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - t)
            times.append(best / (a.batch * (t1 - t0) / settings.dt) * 1e6)
        print(f"| {t0:g}-{t1:g} | {cand / steps:.3f} | {touch / steps:.3f} | "
              + " | ".join(f"{t:.2f}" for t in times) + " |", flush=True)
        state = near.final


if __name__ == "__main__":
    main()
