"""Cost of the road model per step: road_frame on the spline road vs the flat plane.

    python benchmarks/road_cost.py [--vehicles 8192] [--steps 200] [--repeats 5]

1. road_frame alone: one call per vehicle and step, vmapped over the vehicles and scanned
   over time (as the integrator calls it: warm-started from the previous (seg, s)), the
   vehicles driving along the §3.6 banked road (extended, studies/medusa/banked/road.dat)
   at 12-30 m/s with lateral offsets, so that segment changes happen during the run.
2. The whole integrator step (solver.step.scenario_step, no contact) of single-vehicle
   scenarios (the §3.6 car, vmapped over scenarios) on that road and on the flat plane.
float64 on the default JAX backend (CPU here). Prints Markdown table rows (best of
`repeats`, compile time separately).
"""
from __future__ import annotations

import argparse
import platform
from pathlib import Path
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.core.scenario import RoadSpec
from jaxmedusa.physics import road as road_mod

BANKED = ((0, 0, 0, 5), (30, 0, 0, 2.5), (60, 0, 0, -4), (90, 0, 0, 0), (200, 0, 0, 0), (400, 0, 0, 0), (800, 0, 0, 0))
DT = 5e-3  # [s] per scanned step: large, so that the vehicles cross nodes during the run


def make_run(road, n_steps):
    def one(r0, v, seg, s):
        def step(carry, i):
            seg, s, acc = carry
            r = r0 + (i * DT) * v
            f, seg, s, off = road_mod.road_frame(road, r, seg, s)
            acc = acc + f.point + f.e3 + off  # keep every output alive
            return (seg, s, acc), None

        (seg, s, acc), _ = jax.lax.scan(step, (seg, s, jnp.zeros(3)), jnp.arange(n_steps))
        return acc

    return jax.jit(jax.vmap(one))


def bench(road, n_vehicles, n_steps, repeats):
    rng = np.random.default_rng(0)
    r0 = np.stack([rng.uniform(1.0, 80.0, n_vehicles), rng.uniform(-3.0, 3.0, n_vehicles),
                   rng.uniform(0.3, 0.6, n_vehicles)], axis=1)
    v = np.stack([rng.uniform(12.0, 30.0, n_vehicles), np.zeros(n_vehicles), np.zeros(n_vehicles)], axis=1)
    r0, v = jnp.asarray(r0), jnp.asarray(v)
    if road is None:
        seg = jnp.zeros(n_vehicles, jnp.int32)
        s = jnp.zeros(n_vehicles)
    else:
        seg, s = jax.vmap(road_mod.initial_tracking, in_axes=(None, 0))(road, r0)
    run = make_run(road, n_steps)
    t0 = time.perf_counter()
    jax.block_until_ready(run(r0, v, seg, s))
    compile_s = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(r0, v, seg, s))
        best = min(best, time.perf_counter() - t0)
    return best / n_steps, compile_s


def bench_step(road_spec, n_scenarios, n_steps, repeats):
    """us per scanned step of jax.vmap(scenario_step) over n_scenarios copies of the §3.6 car."""
    from jaxmedusa.build import build_batch
    from jaxmedusa.core.params import Settings
    from jaxmedusa.io.scenario_toml import load_scenario
    from jaxmedusa.solver.step import scenario_step
    import dataclasses

    sc, _ = load_scenario(Path(__file__).resolve().parents[1] / "studies" / "medusa" / "banked")
    sc = dataclasses.replace(sc, road=road_spec)
    settings = Settings(contact=False)
    batch, state = build_batch([sc], dt=settings.dt)
    grow = lambda x: jnp.broadcast_to(x, (n_scenarios,) + x.shape[1:])  # noqa: E731
    batch, state = jax.tree.map(grow, batch), jax.tree.map(grow, state)

    @jax.jit
    def run(batch, state):
        def step(st, _):
            new = jax.vmap(scenario_step, in_axes=(0, 0, None))(batch, st, settings)[0]
            return jax.tree.map(lambda n, o: n.astype(o.dtype), new, st), None

        return jax.lax.scan(step, state, None, length=n_steps)[0]

    t0 = time.perf_counter()
    jax.block_until_ready(run(batch, state))
    compile_s = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(batch, state))
        best = min(best, time.perf_counter() - t0)
    return best / n_steps, compile_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vehicles", type=int, default=8192)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    spline = road_mod.build_road(RoadSpec(points=BANKED))
    print(f"# road_frame cost: {args.vehicles} vehicles, {args.steps} steps, float64, "
          f"backend {jax.default_backend()} ({platform.processor() or platform.machine()}), "
          f"{jax.device_count()} device(s), N_GRID={road_mod.N_GRID}, N_NEWTON={road_mod.N_NEWTON}")
    print("| road | us per step (all vehicles) | ns per vehicle-step | vehicle-steps/s | compile [s] |")
    print("|---|---|---|---|---|")
    results = {}
    for name, road in (("flat plane (road=None)", None), ("spline, 7 points (§3.6 extended)", spline)):
        per_step, comp = bench(road, args.vehicles, args.steps, args.repeats)
        results[name] = per_step
        print(f"| {name} | {per_step * 1e6:.1f} | {per_step / args.vehicles * 1e9:.1f} | "
              f"{args.vehicles / per_step:.3g} | {comp:.2f} |")
    flat, spl = results.values()
    print(f"\nroad_frame: the spline road costs {(spl - flat) / args.vehicles * 1e9:.0f} ns per vehicle-step "
          "more than the flat plane")
    print("\n| whole step (scenario_step, 1 vehicle, no contact) | us per step (all scenarios) | "
          "ns per vehicle-step | vehicle-steps/s | compile [s] |")
    print("|---|---|---|---|---|")
    steps = {}
    for name, spec in (("flat plane (road=None)", RoadSpec()), ("spline, 7 points (§3.6 extended)", RoadSpec(points=BANKED))):
        per_step, comp = bench_step(spec, args.vehicles, max(args.steps // 4, 10), args.repeats)
        steps[name] = per_step
        print(f"| {name} | {per_step * 1e6:.1f} | {per_step / args.vehicles * 1e9:.1f} | "
              f"{args.vehicles / per_step:.3g} | {comp:.2f} |")
    flat, spl = steps.values()
    print(f"\nwhole step: spline / flat = {spl / flat:.2f} ({(spl - flat) / args.vehicles * 1e9:.0f} ns per "
          "vehicle-step for the road)")


if __name__ == "__main__":
    main()
