"""The NUTS chains of `jaxmedusa infer` on one CPU device against split over two.

    python benchmarks/infer_chains.py --chains 4 --warmup 10 --draws 10   # the worked example
    python benchmarks/infer_chains.py --end-time 0.3 --draws 5     # a quick check

XLA's CPU backend runs a compiled loop on one thread. The sampler (infer/sampler.py,
over_chains) vmaps the chains, so on one device every leapfrog step simulates all C chains
together and a draw lasts as long as the chain with the longest trajectory. With
JAXMEDUSA_CPU_DEVICES=2 (core/xla_flags.py) the process has two CPU devices and the chains
are split over them (jax.shard_map): each core runs C/2 chains and waits only for the
longest of its own. This script runs the same short inference (a few warmup steps, then
--draws draws in chunks) in two child processes, one per device count, one after the other,
and prints for each the wall and CPU time of the second chunk of --draws draws (the first
compiles), the leapfrog
steps (gradients) per draw, and the largest difference between their draws (the same keys:
equal to round-off unless a trajectory flips).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def child(a) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxmedusa.infer import LogPosterior, load_infer
    from jaxmedusa.infer.run import chain_starts
    from jaxmedusa.infer.sampler import Sampler, over_chains
    from jaxmedusa.infer.spec import observed_at

    spec = load_infer(a.file)
    if a.end_time is not None:
        spec = observed_at(spec, a.end_time)
    o = spec.options
    post = LogPosterior(spec)
    u0 = jnp.asarray(chain_starts(post, spec.initial, a.chains, o.seed))
    s = Sampler(post.log_density, a.chains, o.target_accept, o.max_tree_depth, chunk=a.draws, dense=spec.dense_mass)
    inverse_mass = over_chains(lambda u: post.initial_inverse_mass(u, spec.dense_mass), a.chains)(u0)  # as run.py
    states, params = s.warmup(jax.random.PRNGKey(0), u0, a.warmup, inverse_mass)
    states, _ = s.chunk(jax.random.PRNGKey(1), states, params)  # compiles the chunk
    jax.block_until_ready(states)
    wall, cpu = time.perf_counter(), time.process_time()
    states, part = s.chunk(jax.random.PRNGKey(2), states, params)
    jax.block_until_ready(states)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = np.asarray(part[3])
    return {"devices": len(s.devices), "wall_s": wall, "cpu_s": cpu, "draws": a.draws,
            "steps_mean": float(steps.mean()), "steps_max_per_draw": float(steps.max(axis=0).mean()),
            "position": np.asarray(part[0]).tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default="studies/infer_offset_brake.toml")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--end-time", type=float, default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a)))
        return
    import numpy as np
    results = []
    for n in (1, 2):
        env = {**os.environ, "JAXMEDUSA_CPU_DEVICES": str(n)}
        out = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], env=env, check=True,
                             capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        results.append(r)
        print(f"{r['devices']} device(s): draws {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU for {r['draws']} "
              f"draws of {a.chains} chains ({r['wall_s'] / r['draws']:.2f} s per draw); leapfrog steps per draw "
              f"{r['steps_mean']:.1f} a chain, {r['steps_max_per_draw']:.1f} the longest chain", flush=True)
    diff = np.abs(np.asarray(results[0]["position"]) - np.asarray(results[1]["position"])).max()
    print(f"speed-up {results[0]['wall_s'] / results[1]['wall_s']:.2f}; largest difference between the draws "
          f"{diff:.2e}")


if __name__ == "__main__":
    main()
