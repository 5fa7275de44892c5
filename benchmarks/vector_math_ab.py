"""core/vector_math.py against the C library's float64 atan2, sin and cos, in one process.

    python benchmarks/vector_math_ab.py --batch 256 --end-time 1.0 --rounds 8            # free driving
    python benchmarks/vector_math_ab.py --batch 256 --end-time 3.0 --rounds 6 --contact  # the offset study
    python benchmarks/vector_math_ab.py --batch 128 --end-time 3.0 --rounds 4 --contact --time-loop dispatched
    python benchmarks/vector_math_ab.py --batch 4 --end-time 0.1 --rounds 1              # a quick check

First the cost per element of each function on a [256, 4] array inside a compiled loop of
2,000 iterations (the step's slip angles have this shape at B = 256), best of 3, beside a
multiply. Then the offset study's first B scenarios (studies/offset.toml) as one chunk,
`study.runner.run_batch` compiled twice: once with the vehicle's, road's and safe_math's
atan2 and sincos swapped back to jnp.arctan2 and (jnp.sin, jnp.cos) (the code before
core/vector_math.py: the names are read when the loop is traced), once as the package has
them. `--rounds` rounds run both, the order swapped each round, so that the guest's drift
hits both alike. Prints best and median wall seconds, the median of the rounds' ratios,
vehicle-steps/s of the best run, and the largest absolute difference of each outcome metric
between the two (the same physics to rounding; after contact, to the chaos' amplification).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.core import safe_math, vector_math  # noqa: E402
from jaxmedusa.physics import road, vehicle  # noqa: E402
from jaxmedusa.study.runner import run_batch  # noqa: E402
from contact_rounds import alternate  # noqa: E402
from offset_layers import build_chunk  # noqa: E402


def libm_sincos(x):
    return jnp.sin(x), jnp.cos(x)


VARIANTS = {"C library (jnp)": (jnp.arctan2, libm_sincos), "core/vector_math": (vector_math.atan2, vector_math.sincos)}


def per_element_ns(f, shape=(256, 4), n=2000):
    """Wall ns per element of f(y, x) summed into a carry over n iterations of a compiled loop."""
    rng = np.random.default_rng(0)

    def body(i, carry):
        y, x, acc = carry
        return y * 1.0000001, x * 0.9999999 + 1e-9, acc + f(y, x)

    g = jax.jit(lambda y, x: jax.lax.fori_loop(0, n, body, (y, x, jnp.zeros_like(x)))[2])
    y, x = jnp.asarray(rng.normal(size=shape)), jnp.asarray(rng.normal(size=shape))
    g(y, x).block_until_ready()
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        g(y, x).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return best / n / np.prod(shape) * 1e9


def use(atan2, sincos):
    vehicle.atan2, vehicle.sincos, road.sincos, safe_math.sincos, safe_math.atan2 = atan2, sincos, sincos, sincos, atan2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--contact", action="store_true", help="the study with contact (default: free driving)")
    ap.add_argument("--time-loop", default="whole", choices=["whole", "dispatched"],
                    help="the loop's form (solver/time_loop.py; a cold 256-scenario sweep takes dispatched)")
    ap.add_argument("--compile-rounds", type=int, default=0,
                    help="also time the loop's compilation (lower + compile) of each variant this many times, alternating")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")

    print("| function | ns per element, [256, 4] |\n|---|---|")
    for name, f in [("jnp.arctan2", jnp.arctan2), ("vector_math.atan2", vector_math.atan2),
                    ("jnp.sin + jnp.cos", lambda y, x: jnp.sin(y) + jnp.cos(y)),
                    ("vector_math.sincos", lambda y, x: sum(vector_math.sincos(y))), ("multiply", lambda y, x: y * x)]:
        print(f"| {name} | {per_element_ns(f):.2f} |", flush=True)

    study = S.load_study(args.study)
    batch, state = build_chunk(study, args.batch)
    settings = dataclasses.replace(study.settings, end_time=args.end_time, contact=args.contact,
                                   time_loop=args.time_loop)
    runs, outs = {}, {}
    for i, (name, fns) in enumerate(VARIANTS.items()):
        use(*fns)
        # a distinct static tracker per variant, so that each is traced (and compiled) anew
        tracker = dataclasses.replace(study.tracker, episode_gap=study.tracker.episode_gap * (1 + 1e-15 * i))
        runs[name] = lambda tracker=tracker: jax.block_until_ready(run_batch(batch, state, settings, tracker, False))
        t0 = time.perf_counter()
        outs[name] = jax.device_get(runs[name]()[0])
        print(f"{name}: first call (compile and run) {time.perf_counter() - t0:.1f} s", flush=True)
    compile_times = {k: [] for k in VARIANTS}
    for r in range(args.compile_rounds):
        for i, (name, fns) in enumerate(VARIANTS.items()):
            use(*fns)
            tracker = dataclasses.replace(study.tracker, episode_gap=study.tracker.episode_gap * (1 + 1e-14 * (r + 1) + 1e-15 * i))
            t0 = time.perf_counter()
            run_batch.lower(batch, state, settings, tracker, False).compile()
            compile_times[name].append(time.perf_counter() - t0)
    use(*VARIANTS["core/vector_math"])
    times = alternate(runs, args.rounds)
    base = list(runs)[0]
    vehicle_steps = int(np.sum(outs[base]["steps"])) * study.n_vehicles
    print(f"\nB = {args.batch}, {args.end_time} s, contact {args.contact}, time loop {args.time_loop}, {args.rounds} rounds")
    print("| trigonometry | best [s] | median [s] | median ratio | vehicle-steps/s (best) |\n|---|---|---|---|---|")
    for k, v in times.items():
        v = np.array(v)
        ratio = np.median(v / np.array(times[base]))
        print(f"| {k} | {v.min():.3f} | {np.median(v):.3f} | {ratio:.3f} | {vehicle_steps / v.min():.3g} |")
    if args.compile_rounds:
        print("\n| trigonometry | trace and compile the loop, best [s] | median [s] |\n|---|---|---|")
        for k, v in compile_times.items():
            print(f"| {k} | {min(v):.2f} | {np.median(v):.2f} |")
    print("\n| metric | largest absolute difference |\n|---|---|")
    for m in outs[base]:
        a, b = np.asarray(outs["core/vector_math"][m], float), np.asarray(outs[base][m], float)
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.any() and np.any(a[ok] != b[ok]):
            print(f"| {m} | {np.max(np.abs(a[ok] - b[ok])):.2g} |")


if __name__ == "__main__":
    main()
