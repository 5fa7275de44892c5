"""The crush law against staged tests and CRASH3: restitution by closing speed, vertical delta-V
of collinear impacts, and the CRASH3 energy and speed of rigid-barrier tests.

    python benchmarks/crush_restitution.py                 # both tables (two compilations)
    python benchmarks/crush_restitution.py --dt 1e-4 --json out.json

Rear-end: two default cars (Appendix C model 1, the offset example's model), central and
collinear, the struck car at 10 m/s, the striking car `closing` faster, started 1 cm apart,
free rolling, constant steps; one batch. Printed per closing speed: restitution (outcomes'
definition), |dv_z| / |dv_x| of the striking and the struck car, residual crush of both.

Barrier: the car 1 cm from a full-width rigid wall at 8, 32, 56 and 64 km/h (one batch);
printed: maximum and residual crush, pulse duration, mean deceleration, restitution, the
absorbed energy, the CRASH3 energy of a uniform profile of the residual crush over the
contact width with the law's front A, B (analysis/crash3.py) and the CRASH3 barrier speed
sqrt(2 E / m) against the impact speed.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxmedusa  # noqa: E402,F401
from jaxmedusa.analysis.crash3 import barrier_equivalent_speed, crash3_energy  # noqa: E402
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.core.params import Settings  # noqa: E402
from jaxmedusa.core.scenario import RoadSpec, VehicleSpec  # noqa: E402
from jaxmedusa.io.scenario_toml import load_scenario  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402

CLOSING_KMH = (5.0, 8.0, 10.0, 13.0, 20.0, 30.0, 40.0)
BARRIER_KMH = (8.0, 32.0, 56.0, 64.0)
MASS, WIDTH = 1573.0, 1.6  # [kg], [m]: model 1 and its contact width


def rear_end(dt: float, closing=CLOSING_KMH, end_time=0.25) -> list[dict]:
    """Metrics per closing speed [km/h] of central collinear rear-end impacts (one batch)."""
    cases = []
    for kmh in closing:
        sc, _ = load_scenario(ROOT / "studies" / "medusa" / "offset")
        sc.road = RoadSpec(points=None)
        sc.vehicles[0] = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=10.0 + kmh / 3.6)
        sc.vehicles[1] = VehicleSpec(model=0, x=4.01, y=0.0, orientation=0.0, speed=10.0)
        cases.append(sc)
    st = Settings(end_time=end_time, dt=dt, contact_law="crush", save_every=end_time, step_control="constant")
    batch, s0 = build_batch(cases, dt=dt)
    res = simulate(batch, s0, st, tracker=Outcomes(), record=False)
    out = {k: np.asarray(v) for k, v in outcome_arrays(batch, res.final, res.metrics, Outcomes()).items()}
    rows = []
    for i, kmh in enumerate(closing):
        dv = out["delta_v_vec"][i]
        rows.append(dict(closing_kmh=kmh, restitution=float(out["restitution"][i, 0]),
                         vertical_ratio_striking=float(abs(dv[0, 2]) / abs(dv[0, 0])),
                         vertical_ratio_struck=float(abs(dv[1, 2]) / abs(dv[1, 0])),
                         residual_striking=float(out["residual_crush"][i, 0]),
                         residual_struck=float(out["residual_crush"][i, 1]),
                         episodes=int(out["contact_episodes"][i, 0])))
    return rows


def barrier(dt: float, speeds=BARRIER_KMH, end_time=0.25, a=None, b=None) -> list[dict]:
    """Crash metrics and CRASH3 figures of the full-width barrier at `speeds` [km/h]."""
    cases = []
    for kmh in speeds:
        sc, cfg = load_scenario(ROOT / "studies" / "medusa" / "barrier")
        sc.vehicles[0] = VehicleSpec(model=0, x=0.29, y=0.0, orientation=0.0, speed=kmh / 3.6)
        cases.append(sc)
    model = cases[0].models[0]
    a = model.crush_a_front if a is None else a
    b = model.crush_b_front if b is None else b
    st = Settings(**{**cfg, "end_time": end_time, "dt": dt, "save_every": end_time, "step_control": "constant"})
    batch, s0 = build_batch(cases, dt=dt)
    res = simulate(batch, s0, st, tracker=Outcomes(), record=False)
    out = {k: np.asarray(v) for k, v in outcome_arrays(batch, res.final, res.metrics, Outcomes()).items()}
    rows = []
    for i, kmh in enumerate(speeds):
        c = float(out["residual_crush"][i, 0])
        e3 = float(crash3_energy(np.full(6, c), WIDTH, a, b))
        v3 = float(barrier_equivalent_speed(e3, MASS))
        rows.append(dict(kmh=kmh, max_crush=float(out["max_crush"][i, 0]), residual=c,
                         pulse=float(out["pulse_duration"][i, 0]), mean_g=float(out["mean_decel_g"][i, 0]),
                         restitution=float(out["restitution"][i, 0]), absorbed=float(out["absorbed_energy"][i, 0]),
                         crash3_energy=e3, crash3_speed_kmh=v3 * 3.6,
                         energy_error=e3 / float(out["absorbed_energy"][i, 0]) - 1.0,
                         speed_error=v3 * 3.6 / kmh - 1.0,
                         vertical_ratio=float(abs(out["delta_v_vec"][i, 0, 2]) / abs(out["delta_v_vec"][i, 0, 0]))))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dt", type=float, default=1e-4, help="constant step [s]")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows_r = rear_end(args.dt)
    print("closing km/h | restitution | |dvz/dvx| striking | struck | residual striking / struck [m]")
    for r in rows_r:
        print(f"{r['closing_kmh']:5.1f} | {r['restitution']:.3f} | {r['vertical_ratio_striking']:.4f} | "
              f"{r['vertical_ratio_struck']:.4f} | {r['residual_striking']:.4f} / {r['residual_struck']:.4f}")
    rows_b = barrier(args.dt)
    print("barrier km/h | max crush | residual | pulse [s] | mean g | e | absorbed [kJ] | CRASH3 E [kJ] | "
          "E err | CRASH3 km/h | v err | |dvz/dvx|")
    for r in rows_b:
        print(f"{r['kmh']:5.1f} | {r['max_crush']:.4f} | {r['residual']:.4f} | {r['pulse']:.4f} | {r['mean_g']:.2f} | "
              f"{r['restitution']:.3f} | {r['absorbed'] / 1e3:.2f} | {r['crash3_energy'] / 1e3:.2f} | "
              f"{r['energy_error']:+.3%} | {r['crash3_speed_kmh']:.2f} | {r['speed_error']:+.3%} | "
              f"{r['vertical_ratio']:.4f}")
    if args.json:
        args.json.write_text(json.dumps({"rear_end": rows_r, "barrier": rows_b}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
