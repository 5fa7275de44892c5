"""Final states of the report's examples, to compare two versions of the code bit for bit.

    python benchmarks/final_state.py out.npz                  # run with this checkout's code
    python benchmarks/final_state.py --compare before.npz after.npz

Runs `jaxmedusa run` on studies/medusa/default.toml (the offset example on the
superellipsoid shape, -t 1.2, contact), evade (-t 1.0, steering
table) and banked (-t 0.5, spline road) without writing tables, and stores the final
r, F, v, W, lagged slip angles, t, step count and the saved positions of every sample.
To measure another version, put its `jaxmedusa` first on PYTHONPATH.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# (name, path under studies/medusa, end time [s]). The offset example through default.toml,
# which names the superellipsoid shape: the folder alone runs the MEDUSA law's default shape
# (medusa_search) since 2026-11-24, and versions before that ran the superellipsoid.
CASES = (("offset", "default.toml", 1.2), ("evade", "evade", 1.0), ("banked", "banked", 0.5))


def record(out: str) -> None:
    from jaxmedusa.run import run_scenario  # noqa: PLC0415  (whichever jaxmedusa PYTHONPATH gives)

    res = {}
    for name, path, t in CASES:
        r = run_scenario(ROOT / "studies" / "medusa" / path, end_time=t, out_root=None)
        fin = jax.device_get(r.result.final)
        vs = fin.vehicles
        for k, v in (("r", vs.r), ("F", vs.F), ("v", vs.v), ("W", vs.W), ("alpha_lag", vs.alpha_lag),
                     ("t", fin.clock.t), ("steps", fin.clock.steps), ("samples_r", r.result.samples.r)):
            res[f"{name}_{k}"] = np.asarray(v)
        print(name, int(fin.clock.steps[0]), "steps, t =", float(fin.clock.t[0]))
    np.savez(out, **res)


def compare(a: str, b: str) -> bool:
    x, y = np.load(a), np.load(b)
    same = True
    for k in x.files:
        eq = np.array_equal(x[k], y[k])
        same &= eq
        print(f"{k:18s} {'identical' if eq else f'max |diff| {np.max(np.abs(x[k] - y[k])):.3g}'}")
    return same


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        raise SystemExit(0 if compare(*args.compare) else 1)
    record(args.out)
