"""Does the scenario axis as the innermost (fastest-varying) axis make a batched step faster
on the CPU? Issue 32's first candidate ("structure of arrays"), measured two ways.

    python benchmarks/batch_layout.py --batch 256 1024

1. The CALSPAN tire formula alone (physics/tire/calspan.py, `tire_forces`) on (B, 2, 4)
   arrays (wheel of a car of a scenario: the step's layout) against (2, 4, B) and against
   (B, 8) (the same memory with the two cars' wheels as one axis), in a compiled loop of 500
   evaluations: ns per wheel.
2. The whole step (solver/step.py, `scenario_step`) of the crush-law offset study's first B
   scenarios, free driving (contact off) and with contact, in a compiled loop of 200 steps:
   vmapped over the leading axis (as solver/simulate.py does) against vmapped over the last
   axis (`in_axes=-1, out_axes=-1`, the state and batch arrays stored scenario-last). Best of
   3 compiled calls, us per scenario-step, and the largest difference of the vehicle states.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # offset_layers.build_chunk


def _best(f, *args, repeats=3):
    f = jax.jit(f)
    out = jax.block_until_ready(f(*args))
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(f(*args))
        best = min(best, time.perf_counter() - t0)
    return out, best


def _last(tree):
    return jax.tree.map(lambda x: jnp.moveaxis(x, 0, -1) if x.ndim else x, tree)


def tire_case(b: int, n: int = 500) -> tuple[float, float, float]:
    from jaxmedusa.physics.tire.calspan import tire_forces, tire_params
    tp = jax.tree.map(jnp.asarray, tire_params())
    rng = np.random.default_rng(0)
    fz, a, s = (jnp.asarray(rng.uniform(lo, hi, (b, 2, 4))) for lo, hi in ((3000, 5000), (-0.1, 0.1), (-0.1, 0.1)))

    def loop(fz, a, s):
        def body(i, c):
            fx, fy = tire_forces(fz, c + a, s, tp)
            return c + 1e-9 * (fx + fy)
        return jax.lax.fori_loop(0, n, body, jnp.zeros_like(a))

    _, first = _best(loop, fz, a, s)
    _, last = _best(loop, *_last((fz, a, s)))
    _, flat = _best(loop, *(x.reshape(b, 8) for x in (fz, a, s)))
    return first / n / (8 * b) * 1e9, last / n / (8 * b) * 1e9, flat / n / (8 * b) * 1e9


def step_case(b: int, contact: bool, n: int = 200) -> tuple[float, float, float]:
    from jaxmedusa import study as S
    from jaxmedusa.solver.step import scenario_step
    from offset_layers import build_chunk
    study = S.load_study(ROOT / "studies" / "offset.toml")
    batch, state = build_chunk(study, b)
    settings = study.settings if contact else dataclasses.replace(study.settings, contact=False)

    def first(bt, s):
        return jax.lax.fori_loop(0, n, lambda i, s: jax.vmap(scenario_step, in_axes=(0, 0, None))(bt, s, settings)[0], s)

    def last(bt, s):
        step = jax.vmap(scenario_step, in_axes=(-1, -1, None), out_axes=-1)
        return jax.lax.fori_loop(0, n, lambda i, s: step(bt, s, settings)[0], s)

    o1, t1 = _best(first, batch, state)
    o2, t2 = _best(last, _last(batch), _last(state))
    back = jax.tree.map(lambda x: jnp.moveaxis(x, -1, 0) if x.ndim else x, o2.vehicles)
    diff = max(float(jnp.max(jnp.abs(x - y))) for x, y in zip(jax.tree.leaves(o1.vehicles), jax.tree.leaves(back)))
    return t1 / n / b * 1e6, t2 / n / b * 1e6, diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, nargs="+", default=[256, 1024])
    args = ap.parse_args()
    import jaxmedusa  # noqa: F401  (float64, XLA options)
    print("| case | B | scenario axis first | scenario axis last | last / first | largest state difference |")
    print("|---|---|---|---|---|---|")
    for b in args.batch:
        f, l, w = tire_case(b)
        print(f"| tire formula [ns per wheel] | {b} | {f:.2f} | {l:.2f} | {l / f:.2f} | - |")
        print(f"| tire formula on (B, 8) [ns per wheel] | {b} | {f:.2f} | {w:.2f} (B, 8) | {w / f:.2f} | - |")
    for contact in (False, True):
        for b in args.batch:
            f, l, d = step_case(b, contact)
            name = "step with contact" if contact else "step, free driving"
            print(f"| {name} [us per scenario-step] | {b} | {f:.2f} | {l:.2f} | {l / f:.2f} | {d:.1e} |")


if __name__ == "__main__":
    main()
