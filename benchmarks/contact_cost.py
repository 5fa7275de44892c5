"""Cost of `contact.pair_geometry` vmapped over many pairs, and the affine-vs-principal
frame difference under realistic strain.

    python benchmarks/contact_cost.py [--pairs 8192] [--repeat 5]
    python benchmarks/contact_cost.py --buffer 16        # the packed buffer's searches, warm

Prints one line per (kind, iters): compile time and best wall time per call and per pair.
Pairs are realistic: random yaw, moved along a random direction to just touching, then
pushed 0..0.3 m together (plus far-apart pairs), cold start except where noted.

--buffer N instead times what one round of the study's packed buffer runs: N superellipsoid
pairs side by side (the second car 4.6 m ahead, 0-0.5 m aside, yawed by ~0.1 rad: overlapping
flat faces), warm-started from the previous call's answer, 2000 calls in a loop compiled
whole, at iters = 0 (the per-pair setup and normals alone), 1 and 8 (DEFAULT_ITERS).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import jax
import jax.numpy as jnp

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.contact.shapes import cold_warm, gauge, pair_geometry

AX1 = np.array([2.5, 0.9, 0.7])
AX2 = np.array([2.3, 0.85, 0.7])


def rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def touching_pairs(n, seed=0):
    """n random-yaw pairs pushed 0..0.3 m past first touch (found by bisection with the solver)."""
    rng = np.random.default_rng(seed)
    R1 = np.stack([rot_z(t) for t in rng.uniform(-np.pi, np.pi, n)])
    R2 = np.stack([rot_z(t) for t in rng.uniform(-np.pi, np.pi, n)])
    ang = rng.uniform(0, 2 * np.pi, n)
    u = np.stack([np.cos(ang), np.sin(ang), np.zeros(n)], -1)
    f = jax.jit(jax.vmap(lambda R1, R2, r2: pair_geometry(
        "superellipsoid", jnp.zeros(3), R1, AX1, r2, R2, AX2, cold_warm(), iters=16).phi1))
    lo, hi = np.full(n, 0.5), np.full(n, 8.0)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        pen = np.asarray(f(R1, R2, mid[:, None] * u)) <= 0
        lo, hi = np.where(pen, mid, lo), np.where(pen, hi, mid)
    d = hi - rng.uniform(0.0, 0.3, n)
    return jnp.asarray(R1), jnp.asarray(R2), jnp.asarray(d[:, None] * u)


def bench(kind, iters, R1, R2, r2, W, repeat):
    f = jax.jit(jax.vmap(lambda R1, R2, r2, w: pair_geometry(
        kind, jnp.zeros(3), R1, AX1, r2, R2, AX2, w, iters=iters)))
    t0 = time.perf_counter()
    jax.block_until_ready(f(R1, R2, r2, W))
    tc = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(f(R1, R2, r2, W))
        best = min(best, time.perf_counter() - t0)
    return tc, best


def frame_difference(strains=(1e-4, 1e-3), n=256, seed=1):
    """Max |phi1|, |n1|, |T1| differences between frame='affine' and frame='principal'
    for F = R (I + strain * S), S a random symmetric unit-norm matrix."""
    rng = np.random.default_rng(seed)
    R1, R2, r2 = touching_pairs(n, seed)
    out = []
    for eps in strains:
        def strained(R):
            S = rng.normal(size=(len(R), 3, 3))
            S = 0.5 * (S + np.swapaxes(S, 1, 2))
            S /= np.linalg.norm(S, axis=(1, 2), keepdims=True)
            return jnp.asarray(np.asarray(R) @ (np.eye(3) + eps * S))
        F1, F2 = strained(R1), strained(R2)
        res = {}
        for frame in ("affine", "principal"):
            g = jax.jit(jax.vmap(lambda F1, F2, r2: pair_geometry(
                "superellipsoid", jnp.zeros(3), F1, AX1, r2, F2, AX2, cold_warm(), iters=16,
                frame=frame)))(F1, F2, r2)
            res[frame] = g
        a, p = res["affine"], res["principal"]
        # shape difference: gauge of affine-surface points in the principal frame
        out.append((eps,
                    float(jnp.max(jnp.abs(a.phi1 - p.phi1))),
                    float(jnp.max(jnp.linalg.norm(a.n1 - p.n1, axis=-1))),
                    float(jnp.max(jnp.linalg.norm(a.T1 - p.T1, axis=-1)))))
    return out


def buffer_cost(lanes: int, calls: int = 2000, repeat: int = 3, seed: int = 0) -> None:
    """The --buffer case (module docstring): best wall time per call and per pair, by iters."""
    rng = np.random.default_rng(seed)
    axes = jnp.tile(jnp.asarray(AX1), (lanes, 1))
    r1, F1 = jnp.zeros((lanes, 3)), jnp.tile(jnp.eye(3), (lanes, 1, 1))
    r2 = jnp.asarray(np.c_[4.6 + 0.1 * rng.standard_normal(lanes), 0.5 * rng.standard_normal(lanes),
                           0.02 * rng.standard_normal(lanes)])
    F2 = jnp.asarray(np.stack([rot_z(t) for t in 0.1 * rng.standard_normal(lanes)]))
    print(f"backend {jax.default_backend()}, float64, {lanes} pairs a call, {calls} calls, warm-started")
    for iters in (0, 1, 8):
        def body(i, carry, iters=iters):
            warm, total = carry
            g = jax.vmap(lambda a, b, c, d, e, f, w: pair_geometry("superellipsoid", a, b, c, d, e, f, w, 0.4, 0.4,
                                                                   iters=iters))(
                r1, F1, axes, r2 + 1e-9 * i, F2, axes, warm)  # each call's problem moved a little
            return g.warm, total + jnp.sum(g.phi1)
        f = jax.jit(lambda w, body=body: jax.lax.fori_loop(0, calls, body, (w, 0.0)))
        jax.block_until_ready(f(jnp.zeros((lanes, 8))))
        best = np.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            jax.block_until_ready(f(jnp.zeros((lanes, 8))))
            best = min(best, time.perf_counter() - t0)
        print(f"iters={iters}  {1e6 * best / calls:7.2f} us a call  {1e6 * best / calls / lanes:6.3f} us a pair")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--buffer", type=int, default=None, help="time the packed buffer's round of N pairs instead")
    args = ap.parse_args()
    if args.buffer:
        return buffer_cost(args.buffer)
    n = args.pairs
    print(f"backend {jax.default_backend()}, device {jax.devices()[0].device_kind}, float64, {n} pairs")
    R1, R2, r2 = touching_pairs(256)
    reps = -(-n // 256)
    R1, R2, r2 = (jnp.tile(x, (reps,) + (1,) * (x.ndim - 1))[:n] for x in (R1, R2, r2))
    W = jnp.zeros((n, 8))
    for kind in ("superellipsoid", "ellipsoid", "box"):
        for iters in (2, 4, 8):
            tc, best = bench(kind, iters, R1, R2, r2, W, args.repeat)
            print(f"{kind:15s} iters={iters:2d}  compile {tc:6.2f} s  call {best*1e3:8.2f} ms  "
                  f"{best / n * 1e6:6.2f} us/pair")
    print("frame difference affine vs principal (superellipsoid, 256 touching pairs):")
    for eps, dphi, dn, dT in frame_difference():
        print(f"  strain {eps:.0e}: max |dphi1| {dphi:.2e} m, max |dn1| {dn:.2e}, max |dT1| {dT:.2e} m")


if __name__ == "__main__":
    main()
