"""Step-size dependence of the crush law's outcomes: constant dt against dt = 5e-5 s.

    python benchmarks/crush_step_size.py                       # offset (8 scenarios) + both barriers
    python benchmarks/crush_step_size.py --skip-offset --dts 5e-5 4e-4 8e-4
    python benchmarks/crush_step_size.py --json out.json

Two workloads, both with the "constant" step control (the crush law never shrinks dt):

- offset: the first `--n-offset` samples of studies/offset.toml's Sobol design that close the
  2 m gap (speed difference >= 1 m/s), 3 s each, every outcome metric (analysis/outcomes.py).
  Each dt runs the same scenarios with the same compiled program (the step size is the
  per-scenario clock's, `Settings.dt` stays the reference), so one compilation serves all.
- barrier: studies/barrier_56kmh.toml and barrier_8kmh.toml (the car 0.3 m from the wall,
  0.3 s / 0.4 s), one scenario per dt in one batch, with the crash metrics and the 10 kHz
  pulse (analysis/crash_pulse.py, `ticks_for` the largest dt), peak of the raw and the CFC 60
  longitudinal pulse.

Printed: per dt, the barrier figures and the largest relative difference from dt = 5e-5 s
of every offset outcome (over scenarios and vehicles), and the worst outcome. Contact times
(first contact, contact duration) are multiples or sums of dt, so they are reported in steps
of the coarser dt instead. Quantities whose reference is near zero (|ref| below the floor of
its kind in OFFSET_KEYS) are compared relative to that floor.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.analysis.crash_pulse import PulseTracker, pulse_table, ticks_for  # noqa: E402
from jaxmedusa.analysis.outcomes import Outcomes, summarize_batch  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.core.params import GRAVITY  # noqa: E402
from jaxmedusa.core.pytree import replace  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402
from jaxmedusa.solver.trackers import CombinedTracker  # noqa: E402

DTS = (5e-5, 1e-4, 2e-4, 2.5e-4, 3e-4, 4e-4)
# Offset outcomes compared relatively (per vehicle), with floors below which a relative
# difference means nothing (1 cm/s, 1 N, 1 mm, 0.01, 1 J, 0.1 deg ...). Positions and
# headings have no natural zero (y is measured from the road's centre line, and a struck car
# may end near it: 5 cm in the 8 samples): their floors are 0.1 m and 1 deg, and their
# absolute differences are printed too.
OFFSET_KEYS = {
    "delta_v": 0.01, "peak_contact_force": 1.0, "max_crush": 1e-3, "residual_crush": 1e-3, "restitution": 0.01,
    "absorbed_energy": 1.0, "ees": 0.01, "final_speed": 0.01, "max_heading_change": 0.1, "pdof_deg": 0.1,
    "energy_end": 1.0, "mean_decel_g": 0.01, "peak_decel_g": 0.01, "final_x": 0.1, "final_y": 0.1,
    "final_heading": 1.0,
}
ABS_KEYS = ("final_x", "final_y", "final_heading")
TIME_KEYS = ("first_contact_time", "contact_duration", "pulse_duration")
BARRIER_KEYS = ("delta_v", "max_crush", "residual_crush", "pulse_duration", "mean_decel_g", "peak_decel_g",
                "peak_pulse_g", "peak_cfc60_g", "restitution", "absorbed_energy", "ees")


@partial(jax.jit, static_argnames=("settings", "tracker"))
def _run(batch, state, settings, tracker):
    res = simulate(batch, state, settings, tracker=tracker, record=False)
    outs = res.metrics[0] if isinstance(tracker, CombinedTracker) else res.metrics
    otr = tracker.trackers[0] if isinstance(tracker, CombinedTracker) else tracker
    pulse = res.metrics[1] if isinstance(tracker, CombinedTracker) else None
    return summarize_batch(batch, res.final, outs, otr), pulse


def _with_dt(state, dts):
    return replace(state, clock=replace(state.clock, dt=jnp.asarray(dts, state.clock.dt.dtype)))


def _rel(new, ref, floor):
    return np.abs(new - ref) / np.maximum(np.abs(ref), floor)


def offset(dts, n: int) -> dict:
    study = S.load_study(ROOT / "studies" / "offset.toml")
    ids, cols = S.design(study)
    pick = np.nonzero(cols["speed_difference"] >= 1.0)[0][:n]
    items = S.scenarios_for(study, {c: v[pick] for c, v in cols.items()}, ids[pick])
    settings = dataclasses.replace(study.settings, dt=dts[0], step_control="constant")
    batch, state = build_batch([it[0] for it in items], settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in items], contact=[it[2] for it in items])
    tracker = Outcomes()
    rows = {}
    for dt in dts:
        t0 = time.perf_counter()
        out, _ = _run(batch, _with_dt(state, [dt] * len(items)), settings, tracker)
        rows[dt] = {k: np.asarray(v) for k, v in jax.device_get(out).items()}
        print(f"  offset dt={dt:g}: {time.perf_counter() - t0:.1f} s, steps {rows[dt]['steps'][0]}, "
              f"status {set(rows[dt]['status'].tolist())}", flush=True)
    return dict(samples={c: cols[c][pick].tolist() for c in cols}, rows=rows)


def barrier(dts, name: str) -> dict:
    study = S.load_study(ROOT / "studies" / f"{name}.toml")
    ids, cols = S.design(study)
    items = S.scenarios_for(study, cols, ids)
    settings = dataclasses.replace(study.settings, dt=dts[0], step_control="constant")
    sc, tire, contact = items[0][:3]
    batch, state = build_batch([sc] * len(dts), settings.dt, n_vehicles=study.n_vehicles, tire=[tire] * len(dts),
                               contact=[contact] * len(dts))
    tracker = CombinedTracker((Outcomes(), PulseTracker(window=settings.end_time, ticks_per_step=ticks_for(max(dts)))))
    out, pulse = _run(batch, _with_dt(state, dts), settings, tracker)
    out = {k: np.asarray(v) for k, v in jax.device_get(out).items()}
    res = {}
    for k, dt in enumerate(dts):
        tab = pulse_table(jax.tree.map(lambda x: np.asarray(x)[k], pulse))
        row = {key: float(out[key][k][0]) for key in BARRIER_KEYS if key in out}
        row["peak_pulse_g"] = float(np.max(np.abs(tab["a_long"]))) / GRAVITY
        row["peak_cfc60_g"] = float(np.max(np.abs(tab["a_long_cfc60"]))) / GRAVITY
        row["pulse_ticks"] = int(len(tab))
        row["status"] = int(out["status"][k])
        res[dt] = row
    return res


def _fmt(x, key):
    return f"{x:.6g}"


def report(dts, off, bars) -> dict:
    summary = {}
    for name, rows in bars.items():
        ref = rows[dts[0]]
        print(f"\n### {name} (study setup; relative difference from dt = {dts[0]:g} s in brackets)\n")
        print("| dt [s] | " + " | ".join(BARRIER_KEYS) + " |")
        print("|---" * (len(BARRIER_KEYS) + 1) + "|")
        worst = {}
        for dt in dts:
            r = rows[dt]
            cells = []
            for key in BARRIER_KEYS:
                d = _rel(r[key], ref[key], 1e-9) * 100
                cells.append(_fmt(r[key], key) + ("" if dt == dts[0] else f" ({d:.2f} %)"))
                if dt != dts[0]:
                    worst.setdefault(dt, {})[key] = float(d)
            print(f"| {dt:g} | " + " | ".join(cells) + " |")
        summary[name] = dict(rows={str(k): v for k, v in rows.items()}, rel_pct={str(k): v for k, v in worst.items()})
    if off is not None:
        rows = off["rows"]
        ref = rows[dts[0]]
        print(f"\n### offset study, {len(ref['steps'])} scenarios (worst relative difference from dt = {dts[0]:g} s "
              "over scenarios and vehicles)\n")
        print("| dt [s] | steps | worst [%] (outcome) | without peak_decel_g [%] (outcome) | "
              "delta_v [%] | restitution [%] | absorbed_energy [%] | final x, y [mm] | final heading [deg] | "
              "first contact / contact duration [steps] |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        offs = {}
        for dt in dts[1:]:
            r = rows[dt]
            rel = {k: float(np.max(_rel(r[k], ref[k], f))) * 100 for k, f in OFFSET_KEYS.items()}
            worst = max(rel, key=rel.get)
            rest = {k: v for k, v in rel.items() if k != "peak_decel_g"}
            worst2 = max(rest, key=rest.get)
            tsteps = [float(np.max(np.abs(r[k] - ref[k]))) / dt for k in TIME_KEYS[:2]]
            ab = {k: float(np.max(np.abs(r[k] - ref[k]))) for k in ABS_KEYS}
            print(f"| {dt:g} | {int(r['steps'][0])} | {rel[worst]:.3f} ({worst}) | {rest[worst2]:.3f} ({worst2}) | "
                  f"{rel['delta_v']:.3f} | {rel['restitution']:.3f} | {rel['absorbed_energy']:.3f} | "
                  f"{ab['final_x'] * 1e3:.2f}, {ab['final_y'] * 1e3:.2f} | {ab['final_heading']:.4f} | "
                  f"{tsteps[0]:.2f} / {tsteps[1]:.2f} |")
            offs[str(dt)] = dict(rel_pct=rel, abs=ab)
        keys = (*OFFSET_KEYS, *ABS_KEYS, *TIME_KEYS)
        summary["offset"] = dict(samples=off["samples"], diff=offs,
                                 rows={str(dt): {k: np.asarray(rows[dt][k]).tolist() for k in keys} for dt in dts})
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dts", type=float, nargs="+", default=DTS, help="step sizes [s]; the first is the reference")
    ap.add_argument("--n-offset", type=int, default=8, help="offset scenarios (first Sobol samples that collide)")
    ap.add_argument("--skip-offset", action="store_true")
    ap.add_argument("--skip-barrier", action="store_true")
    ap.add_argument("--json", type=Path, help="write the raw numbers here")
    a = ap.parse_args(argv)
    dts = tuple(a.dts)
    print(f"JAX {jax.__version__} on {jax.default_backend()}, float64, dts {dts}", flush=True)
    bars = {}
    if not a.skip_barrier:
        for name in ("barrier_56kmh", "barrier_8kmh"):
            t0 = time.perf_counter()
            bars[name] = barrier(dts, name)
            print(f"  {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    off = None if a.skip_offset else offset(dts, a.n_offset)
    summary = report(dts, off, bars)
    if a.json:
        a.json.write_text(json.dumps(summary, indent=1, default=float))


if __name__ == "__main__":
    main()
