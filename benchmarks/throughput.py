"""Throughput of the bare vehicle step: single-vehicle driving, no contact, flat plane.

Reports vehicle-steps/s and scenarios/s at several batch sizes, float64, on the default JAX
backend (CPU here, GPU on the device machine). Compile time is excluded (one warm-up run).

    python benchmarks/throughput.py                       # batches 1 64 1024 8192
    python benchmarks/throughput.py --batch 131072 --sim-time 0.05
    XLA_FLAGS=--xla_force_host_platform_device_count=2 python benchmarks/throughput.py --shard
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import numpy as np

import jaxmedusa
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.solver.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent


def scenarios(n: int) -> list[Scenario]:
    model = read_models(ROOT / "studies" / "medusa" / "straight" / "model.dat")[0]
    rng = np.random.default_rng(0)
    return [Scenario(f"s{i}", [model], [VehicleSpec(
        model=0, x=0.0, y=float(rng.uniform(-1, 1)), orientation=0.0, speed=float(rng.uniform(15, 25)),
        steering=DriverTable(values=(float(rng.uniform(-2, 2)),)))]) for i in range(n)]


def shard(tree):
    """Split the batch axis over all local devices (both CPU cores with the XLA flag above)."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("batch",))
    spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    return jax.tree.map(lambda x: jax.device_put(x, spec), tree)


def measure(batch_size: int, sim_time: float, use_shard: bool) -> dict:
    settings = Settings(end_time=sim_time, save_every=sim_time)
    batch, state = build_batch(scenarios(batch_size), dt=settings.dt)
    if use_shard:
        batch, state = shard(batch), shard(state)
    jax.block_until_ready(simulate(batch, state, settings, record=False))  # compile + warm up
    start = time.perf_counter()
    res = jax.block_until_ready(simulate(batch, state, settings, record=False))
    wall = time.perf_counter() - start
    steps = int(np.asarray(res.final.clock.steps).sum())
    return dict(batch=batch_size, steps=steps, wall=wall, vehicle_steps_per_s=steps / wall,
                scenarios_per_s=batch_size / wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, nargs="*", default=[1, 64, 1024, 8192])
    ap.add_argument("--sim-time", type=float, default=0.1, help="simulated time per scenario [s]")
    ap.add_argument("--shard", action="store_true", help="shard the batch over all local devices")
    args = ap.parse_args()
    dev = jax.devices()
    print(f"backend {jax.default_backend()}, {len(dev)} device(s): {dev[0].device_kind}; float64; "
          f"dt 5e-5 s; {args.sim_time} s simulated; jax {jax.__version__}, jaxmedusa {jaxmedusa.__version__}")
    print(f"{'batch':>8} {'steps/scenario':>15} {'wall [s]':>9} {'vehicle-steps/s':>16} {'scenarios/s':>12}")
    for b in args.batch:
        m = measure(b, args.sim_time, args.shard)
        print(f"{m['batch']:>8} {m['steps'] // m['batch']:>15} {m['wall']:>9.3f} {m['vehicle_steps_per_s']:>16.3e} "
              f"{m['scenarios_per_s']:>12.3g}")


if __name__ == "__main__":
    main()
