"""One inference from a validated InferSpec: starts, warmup, draws, summary.

    result = run_inference(spec, progress=lambda phase, done, total: ...)
    result.theta (C, D, n), result.summary (ArviZ's, tables.summary_table)

Chain starts: the initial values (each unknown's `initial`, default its prior's median),
or with [infer] start = "fit" (or `fit_estimate`) `jaxmedusa fit`'s least-squares answer for
the fit's unknowns (the nuisance parameters at their initial values), each chain displaced
by 0.1 prior standard deviations (in the sampler's coordinates, seeded) so that R-hat can
see chains that do not mix.

Warmup: each chain's first inverse mass matrix is the Laplace covariance at its start (the
inverse Gauss-Newton curvature, posterior.py), which the window adaptation then replaces by
the draws' covariance (dense or diagonal: spec.dense_mass); the chains are split over the
process's devices (sampler.over_chains; JAXMEDUSA_CPU_DEVICES=2 on a 2-core CPU).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxmedusa.fit import FitProblem, solve_fit
from jaxmedusa.infer.model import InferProblem
from jaxmedusa.infer.posterior import LogPosterior
from jaxmedusa.infer.sampler import Sampler, over_chains
from jaxmedusa.infer.spec import InferSpec
from jaxmedusa.infer.tables import posterior_table, summary_table

__all__ = ["InferResult", "run_inference", "chain_starts"]


@dataclass
class InferResult:
    names: list[str]
    theta: np.ndarray  # (C, D, n) in the parameters' units
    log_density: np.ndarray  # (C, D)
    divergent: np.ndarray  # (C, D) bool
    leapfrog: np.ndarray  # (C, D) leapfrog steps (gradient evaluations) per draw
    step_size: np.ndarray  # (C,)
    gradient: str  # "forward" | "reverse"
    start: np.ndarray  # (C, n) chain starts, parameters' units
    wall_warmup: float  # [s], compilation included
    wall_draws: float  # [s]
    summary: pd.DataFrame

    @property
    def posterior(self) -> pd.DataFrame:
        return posterior_table(self.names, self.theta, self.log_density, self.divergent)


def chain_starts(post: LogPosterior, theta0, chains: int, seed: int) -> np.ndarray:
    """(C, n) starts in u: u(theta0) + 0.1 prior sd (of u, from 4000 prior draws) x N(0, 1)."""
    rng = np.random.default_rng(seed)
    sd = np.array([np.std(p.to_u(p.scipy().rvs(4000, random_state=rng))) for p in post.priors])
    return post.to_u(theta0)[None, :] + 0.1 * sd * rng.standard_normal((chains, post.n))


def run_inference(spec: InferSpec, progress: Callable | None = None, fit_estimate=None,
                  chunk: int = 25) -> InferResult:
    """Sample the posterior of `spec` (module docstring). progress(phase, done, total) is
    called with phase "fit", "warmup" or "draws" as the run moves on."""
    o = spec.options
    report = progress or (lambda *a: None)
    post = LogPosterior(spec)
    theta0 = np.asarray(spec.initial, float)
    if fit_estimate is None and o.start == "fit":
        report("fit", 0, 1)
        fit_estimate = solve_fit(FitProblem(spec.fit)).estimate
        report("fit", 1, 1)
    if fit_estimate is not None:
        k = len(spec.fit.unknowns)
        theta0[:k] = np.asarray(fit_estimate, float)[:k]
        bad = [spec.names[j] for j in range(k) if not spec.priors[j].contains(theta0[j])]
        if bad:
            raise ValueError(f"{spec.source}: the fit's answer lies outside the prior's support for {', '.join(bad)}")
    u0 = jnp.asarray(chain_starts(post, theta0, o.chains, o.seed))
    key_w, key_d = jax.random.split(jax.random.PRNGKey(o.seed))
    sampler = Sampler(post.log_density, o.chains, o.target_accept, o.max_tree_depth, chunk=min(chunk, o.draws),
                      dense=spec.dense_mass)
    report("warmup", 0, o.warmup)
    begin = time.perf_counter()
    # the first inverse mass matrix: the Laplace covariance at each start (posterior.py), so
    # that the warmup's first windows do not step through a posterior 10-100 times narrower
    # in some directions than in others with the identity (long trajectories: the cost)
    inverse_mass = over_chains(lambda u: post.initial_inverse_mass(u, spec.dense_mass), o.chains)(u0)
    states, params = sampler.warmup(key_w, u0, o.warmup, inverse_mass)
    jax.block_until_ready(states)
    wall_warmup = time.perf_counter() - begin
    report("warmup", o.warmup, o.warmup)
    parts, done, begin = [], 0, time.perf_counter()
    while done < o.draws:
        states, part = sampler.chunk(jax.random.fold_in(key_d, done), states, params)
        parts.append(jax.device_get(part))
        done += sampler.chunk_size
        report("draws", min(done, o.draws), o.draws)
    wall_draws = time.perf_counter() - begin
    u, ld, div, steps = (np.concatenate([p[i] for p in parts], axis=1)[:, :o.draws] for i in range(4))
    theta = np.asarray(jax.vmap(jax.vmap(post.to_theta))(jnp.asarray(u)))
    summary = summary_table(spec.names, theta, spec.paths, [p.describe() for p in spec.priors])
    start = np.asarray(jax.vmap(post.to_theta)(u0))
    return InferResult(names=spec.names, theta=theta, log_density=ld, divergent=div.astype(bool), leapfrog=steps,
                       step_size=np.asarray(params["step_size"]), gradient=post.gradient, start=start,
                       wall_warmup=wall_warmup, wall_draws=wall_draws, summary=summary)


def predictive_table(spec: InferSpec, theta: np.ndarray, n: int = 64, seed: int = 0) -> pd.DataFrame:
    """Posterior-predictive positions: the model's x, y of every observed vehicle at every
    observation time for n draws of theta (C, D, k) picked at random (one batched
    simulation). One row per draw, vehicle (1-based) and time, with the observed x, y and
    their sigmas (NaN where the file does not observe them)."""
    flat = theta.reshape(-1, theta.shape[-1])
    pick = np.random.default_rng(seed).choice(len(flat), size=min(n, len(flat)), replace=False)
    problem = InferProblem(spec)
    obs, _ = jax.jit(jax.vmap(problem.observe))(jnp.asarray(flat[pick]))
    r = np.asarray(obs.r)[:, 0]  # (n, T, V, 3)
    rows = []
    for o in spec.fit.observations:
        i = problem.times.index(o.time)
        q = {name: (v, s) for name, v, s in o.values}
        for d in range(len(pick)):
            rows.append({"draw": int(pick[d]), "vehicle": o.vehicle + 1, "time": o.time,
                         "x": r[d, i, o.vehicle, 0], "y": r[d, i, o.vehicle, 1],
                         "observed_x": q.get("x", (np.nan,))[0], "observed_y": q.get("y", (np.nan,))[0],
                         "sigma_x": q.get("x", (0, np.nan))[1], "sigma_y": q.get("y", (0, np.nan))[1]})
    return pd.DataFrame(rows)
