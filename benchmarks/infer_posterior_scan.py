"""Where a NUTS trajectory could diverge: failed runs under the prior, and the log posterior's
gradient against its own finite differences along a line through the posterior.

    python benchmarks/infer_posterior_scan.py --at 20 0.4 0.77      # the worked example

1. failed runs: N draws from the prior (scipy.stats, the priors of the file), each simulated
   once (one vmapped batch); a run whose status is not ok gives the likelihood's finite
   failure value (fit.problem.FAILED_RESIDUAL), which a leapfrog step that lands there sees
   as an energy error of ~5e11: a divergence.
2. along each unknown in turn, M points of the line through --at (the others held), in the
   sampler's unconstrained coordinate u: the log density and its gradient (the gradient mode
   of the file), then per quarter of the line the rms of (finite difference of the log
   density - the gradient at the midpoint) against the rms gradient (a gradient that is not
   the value's slope: the step artefacts of docs/gradients.md), and the largest change of
   the gradient between neighbouring points (a kink of the log density: its curvature
   jumps, which HMC's energy error sees at any step size).

Prints a summary; --json writes it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default="studies/infer_offset_brake.toml")
    ap.add_argument("--at", type=float, nargs="+", help="the line's centre, one value per unknown (default: prior medians)")
    ap.add_argument("--half-width", type=float, nargs="+", help="the line's half width per unknown (default: a quarter of the prior's 5-95 %% range)")
    ap.add_argument("--draws", type=int, default=1024, help="prior draws for the failed-run check")
    ap.add_argument("--points", type=int, default=512, help="points per line")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import jaxmedusa  # noqa: F401  (float64)
    from jaxmedusa.fit.problem import FAILED_RESIDUAL
    from jaxmedusa.infer import load_infer
    from jaxmedusa.infer.posterior import LogPosterior

    post = LogPosterior(load_infer(Path(args.file)))
    names = post.spec.names
    out = {"file": args.file, "unknowns": names, "gradient": post.gradient}

    # 1. failed runs under the prior
    rng = np.random.default_rng(args.seed)
    theta = np.stack([p.scipy().rvs(size=args.draws, random_state=rng) for p in post.priors], axis=1)
    residuals = jax.jit(jax.vmap(post.residuals))
    begin = time.perf_counter()
    r = np.asarray(residuals(jnp.asarray(theta)))
    failed = np.any(np.abs(r) >= 0.1 * FAILED_RESIDUAL, axis=1)
    out["prior_draws"] = args.draws
    out["failed"] = int(failed.sum())
    out["failed_theta"] = theta[failed][:20].tolist()
    print(f"{args.draws} prior draws simulated in {time.perf_counter() - begin:.1f} s: {int(failed.sum())} failed runs")
    for t in theta[failed][:20]:
        print("  failed at", dict(zip(names, np.round(t, 4).tolist())))

    # 2. gradient against finite differences along each unknown
    centre = np.array(args.at if args.at else [p.median() for p in post.priors], float)
    q = [p.scipy().ppf([0.05, 0.95]) for p in post.priors]
    half = np.array(args.half_width if args.half_width else [0.25 * (b - a) for a, b in q], float)
    value_and_grad = jax.jit(jax.vmap(jax.value_and_grad(post.log_density)))
    out["lines"] = {}
    for j, name in enumerate(names):
        lo, hi = post.priors[j].support
        inside = 1e-9 * (hi - lo if np.isfinite(hi - lo) else 1.0)  # the line stays inside the open support
        xs = np.linspace(max(centre[j] - half[j], lo + inside), min(centre[j] + half[j], hi - inside), args.points)
        thetas = np.repeat(centre[None], args.points, axis=0)
        thetas[:, j] = xs
        U = np.stack([post.to_u(t) for t in thetas])
        lp, g = (np.asarray(a) for a in value_and_grad(jnp.asarray(U)))
        slope = np.diff(lp) / np.diff(U[:, j])  # finite difference in u_j
        mid = 0.5 * (g[1:, j] + g[:-1, j])  # the gradient at the interval's midpoint (to O(du^2))
        jumps = np.abs(np.diff(g[:, j]))
        rows = []
        for k in range(4):
            m = slice(k * (args.points - 1) // 4, (k + 1) * (args.points - 1) // 4)
            rows.append({"from": float(xs[m.start]), "to": float(xs[m.stop]),
                         "rms_fd_minus_grad": float(np.sqrt(np.mean((slope[m] - mid[m]) ** 2))),
                         "rms_grad": float(np.sqrt(np.mean(mid[m] ** 2))),
                         "max_grad_jump": float(jumps[m].max()), "median_grad_jump": float(np.median(jumps[m]))})
        out["lines"][name] = {"centre": centre.tolist(), "log_density_range": [float(lp.min()), float(lp.max())],
                              "quarters": rows}
        print(f"{name}: {xs[0]:.4g} .. {xs[-1]:.4g} (others at {np.round(centre, 4).tolist()}), log density "
              f"{lp.min():.2f} .. {lp.max():.2f}")
        for row in rows:
            print(f"  {row['from']:.4g} .. {row['to']:.4g}: rms (FD - gradient) {row['rms_fd_minus_grad']:.3g} of rms "
                  f"gradient {row['rms_grad']:.3g}; gradient change between neighbours: max "
                  f"{row['max_grad_jump']:.3g}, median {row['median_grad_jump']:.3g}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
