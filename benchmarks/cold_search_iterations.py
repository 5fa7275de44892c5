"""Iterations the narrow phase's search needs from a cold start, on random pairs of car-sized superellipsoids.

    python benchmarks/cold_search_iterations.py [--pairs 300] [--seed 0] [--steps 4:0.25 2:0.25 8:0.125]

Body 1 (semi-axes 2.3, 0.85, 0.7 m, eps 0.4) sits at the origin; body 2, the same shape, at a
centre drawn 1-5 m away (in an ellipse of half-width half that, a vertical offset within 0.3 m)
and a uniform yaw. For each pair the T1 search (`narrow_phase._solve_one`, closed-form
derivatives) runs from the cold start with a cap of 1..30 iterations; a pair needs k
iterations when a cap of k gives h within 1e-13 relative of an 80-iteration search with
automatic derivatives. Prints, per step-fraction rule `T_UP:T_DOWN` (module constants of
narrow_phase, the first the code's own), the median, 95th and 99th percentiles and the count
of pairs above 8 and above 12 iterations (DEFAULT_ITERS); 99 stands for "not within 30".
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import jaxmedusa.contact.shapes.narrow_phase as NP  # noqa: E402
from jaxmedusa.contact.shapes.frames import body  # noqa: E402
from jaxmedusa.contact.shapes.superellipsoid import superellipsoid_gauge  # noqa: E402
from jaxmedusa.contact.shapes.superellipsoid_derivatives import superellipsoid_derivatives  # noqa: E402

AXES = jnp.array([2.3, 0.85, 0.7])
EPS = 0.4
MAX_CAP = 30


def problems(n: int, seed: int):
    """(c, M, w_cold) of n random T1 searches, stacked: (n, 3), (n, 3, 3), (n, 3)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        yaw, ang = rng.uniform(-np.pi, np.pi, 2)
        dist, dz = rng.uniform(1.0, 5.0), rng.uniform(-0.3, 0.3)
        c_, s_ = np.cos(yaw), np.sin(yaw)
        F2 = jnp.array([[c_, -s_, 0.0], [s_, c_, 0.0], [0.0, 0.0, 1.0]])
        b1, b2 = body(1.0, jnp.eye(3), AXES, "affine"), body(1.0, F2, AXES, "affine")
        r2 = jnp.array([dist * np.cos(ang), 0.5 * dist * np.sin(ang), dz])
        out.append((b2.A @ (-r2), b2.A @ b1.B, b1.A @ r2))
    return tuple(jnp.stack(x) for x in zip(*out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", nargs="*", default=[], help="more T_UP:T_DOWN rules to compare")
    args = ap.parse_args()
    C, M, W = problems(args.pairs, args.seed)
    gauge = lambda u: superellipsoid_gauge(u, EPS, EPS)  # noqa: E731
    derivs = lambda u: superellipsoid_derivatives(u, EPS, EPS)  # noqa: E731

    def h_after(cap, d):
        solve = lambda c, m, w: NP._solve_one(c, m, w, jnp.zeros(3), gauge, cap, d)[1]  # noqa: E731
        return np.asarray(jax.jit(jax.vmap(solve))(C, M, W))

    ref = h_after(80, None)
    print("| T_UP:T_DOWN | median | 95th percentile | 99th percentile | above 8 | above 12 |")
    print("|---|---|---|---|---|---|")
    own = (NP.T_UP, NP.T_DOWN)
    for rule in [f"{own[0]:g}:{own[1]:g}"] + args.steps:
        NP.T_UP, NP.T_DOWN = (float(x) for x in rule.split(":"))
        need = np.full(len(ref), 99)
        for cap in range(MAX_CAP, 0, -1):  # the smallest cap that converges
            ok = np.abs(h_after(cap, derivs) - ref) <= 1e-13 * np.abs(ref)
            need = np.where(ok, cap, need)
        p = np.percentile(need, [50, 95, 99])
        print(f"| {rule} | {p[0]:g} | {p[1]:g} | {p[2]:.0f} | {(need > 8).sum()} | {(need > 12).sum()} |")
    NP.T_UP, NP.T_DOWN = own


if __name__ == "__main__":
    main()
