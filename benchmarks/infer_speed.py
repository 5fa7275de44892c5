"""Speed of `jaxmedusa infer`: log-posterior gradients per second at C chains (forward and
reverse mode), the NUTS sampler's own overhead against the simulation's, and (with --full)
the whole worked example.

    python benchmarks/infer_speed.py --chains 8 --full     # the worked example (docs/inference.md)
    python benchmarks/infer_speed.py --file studies/infer_offset_brake.toml --end-time 0.3 --chains 2  # a quick check

The default file is the worked example, studies/infer_offset_brake.toml (friction unknown);
--full runs it as the file says (4 chains, 200 warmup + 150 draws) and prints its wall time,
the chain-gradients it took and their rate; `--chains` sets the batch of (1) only.

1. gradient: jit(vmap(value_and_grad(log_density))) over C chains, forward mode (one
   jax.jacfwd pass through the while loop) and reverse mode (jax.grad through the
   checkpointed scan), timed over --repeats calls after compilation: chain-gradients per second.
2. sampler overhead: the same NUTS (infer/sampler.py, 20 draws of C chains, fixed step size
   and tree depth) on a Gaussian log density of the same dimension: the time per leapfrog
   step with no simulation, against the simulation's time per gradient of (1).
3. --full: `run_inference` on the file as it stands (warmup and draws of its [infer]).
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np


def _time(f, *args, repeats=3):
    jax.block_until_ready(f(*args))  # compile
    begin = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(f(*args))
    return (time.perf_counter() - begin) / repeats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default="studies/infer_offset_brake.toml")
    ap.add_argument("--chains", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--end-time", type=float, default=None, help="override simulation.end_time (observations "
                    "then at 'end')")
    ap.add_argument("--full", action="store_true", help="also run the whole inference")
    a = ap.parse_args()

    from jaxmedusa.infer import LogPosterior, load_infer, run_inference
    from jaxmedusa.infer.run import chain_starts
    from jaxmedusa.infer.sampler import sample
    from jaxmedusa.infer.spec import observed_at

    spec = load_infer(a.file)
    if a.end_time is not None:
        spec = observed_at(spec, a.end_time)
    print(f"{spec.name}: {len(spec.priors)} parameters, t = {spec.fit.settings.end_time:g} s, dt = "
          f"{spec.fit.settings.dt:g} s, {a.chains} chains, backend {jax.default_backend()} "
          f"({jax.devices()[0].device_kind})")
    per_grad = {}
    for mode in ("forward", "reverse"):
        try:
            post = LogPosterior(spec, gradient=mode)
        except ValueError as exc:
            print(f"{mode}: {exc}")
            continue
        u = jnp.asarray(chain_starts(post, spec.initial, a.chains, 0))
        f = jax.jit(jax.vmap(jax.value_and_grad(post.log_density)))
        begin = time.perf_counter()
        jax.block_until_ready(f(u))
        compile_s = time.perf_counter() - begin
        t = _time(f, u, repeats=a.repeats)
        per_grad[mode] = t
        print(f"gradient, {mode:7s}: {t * 1e3:9.1f} ms per call of {a.chains} chains = "
              f"{a.chains / t:8.2f} chain-gradients/s (first call {compile_s:.1f} s with compilation)")
    post_value = LogPosterior(spec, gradient="forward")
    g = jax.jit(jax.vmap(post_value._log_density))
    t_value = _time(g, jnp.asarray(chain_starts(post_value, spec.initial, a.chains, 0)), repeats=a.repeats)
    print(f"value only (forward loop, no tangents): {t_value * 1e3:.1f} ms per call of {a.chains} chains; "
          + ", ".join(f"{m} gradient / value = {t / t_value:.2f}" for m, t in per_grad.items()))

    n = len(spec.priors)
    gauss = lambda u: -0.5 * jnp.sum(u * u)  # noqa: E731
    run = jax.jit(lambda k, u0: sample(gauss, u0, k, warmup=0, draws=20, max_depth=4))
    u0 = jnp.zeros((a.chains, n))
    d = run(jax.random.PRNGKey(0), u0)
    t_nuts = _time(run, jax.random.PRNGKey(1), u0, repeats=a.repeats)
    leapfrogs = float(np.asarray(d.tree_depth).max(axis=0).sum())  # the batch waits for its longest chain
    per_step = t_nuts / leapfrogs
    best = min(per_grad.values()) if per_grad else float("nan")
    print(f"NUTS overhead: {per_step * 1e6:.1f} us per leapfrog step of {a.chains} chains (Gaussian, no "
          f"simulation) against {best * 1e3:.1f} ms per simulated gradient: the sampler is "
          f"{100 * per_step / best:.3f} % of a step")
    if a.full:
        begin = time.perf_counter()
        r = run_inference(spec)
        wall = time.perf_counter() - begin
        grads = int(r.leapfrog.sum())  # kept draws only: the warmup's are not counted by BlackJAX's state
        print(f"worked example ({spec.options.chains} chains, {spec.options.warmup} warmup + {spec.options.draws} "
              f"draws): {wall:.1f} s wall (warmup {r.wall_warmup:.1f} s with compilation, draws {r.wall_draws:.1f} s), "
              f"{grads} chain-gradients in the draws = {grads / r.wall_draws:.1f} per s, "
              f"{int(r.divergent.sum())} divergent")
        print(r.summary.to_string(index=False))


if __name__ == "__main__":
    main()
