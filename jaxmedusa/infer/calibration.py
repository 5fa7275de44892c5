"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari and Gelman 2018,
"Validating Bayesian inference algorithms with simulation-based calibration", arXiv:1804.06788).

    cal = calibrate(spec, replications=100, warmup=100, draws=198, thin=2)
    cal.ranks (R, n) in 0..L, cal.chi2_p (n,), cal.coverage90 (n,)

For r = 1..R: theta_r ~ prior (scipy.stats, seeded); y_r = model(theta_r) + sigma e (the
file's observation model; Student-t e if the file says so); then L = draws / thin posterior
draws of one NUTS chain given y_r; the rank of theta_r among them is the number of draws
below it. If the sampler draws from the posterior, each rank is uniform on {0, ..., L}
(Talts et al. Theorem 1), whatever the model. The test bins the ranks into `bins` equal bins
((L + 1) divisible by bins) and applies Pearson's chi-square (scipy.stats.chisquare);
coverage90 is the share of replications whose truth lies within the draws' 90 % interval,
taken between the order statistics k and L + 1 - k (k = 0.05 (L + 1), so L + 1 must be a
multiple of 20), i.e. k <= rank <= L - k: an exact sampler covers exactly 0.90 (binomial sd
sqrt(0.09 / R)); interpolated 5/95 % quantiles of L = 29 draws would cover only about 0.87.

All replications run as one vmapped batch (R simulations per leapfrog step) and one
compilation, split evenly over the process's devices (sampler.over_chains;
JAXMEDUSA_CPU_DEVICES=2 on a 2-core CPU). Thinning (every `thin`-th draw) reduces the autocorrelation that Talts et al.
show bends the rank histogram. A replication whose truth makes the simulation fail is
counted in `failed` and left out of the statistics.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jaxmedusa.infer.posterior import LogPosterior
from jaxmedusa.infer.sampler import over_chains, sample
from jaxmedusa.infer.spec import InferSpec

# The calibration problems docs/inference.md reports, as inference tables (infer_from_dict;
# scenario paths relative to the repository's studies/ folder, to pass as its base_dir), so
# that the tests and benchmarks/infer_calibration.py run the same ones.
CALIBRATION_PROBLEMS = {
    # free rolling, 0.02 s: the speed from the position (smaller NUTS steps: short warmups
    # then diverge less)
    "free": {"scenario": {"path": "medusa/straight"},
             "simulation": {"end_time": 0.02, "dt": 2e-3, "step_control": "constant"},
             "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "prior": {"normal": [21.0, 1.0]}}},
             "observations": [{"vehicle": 1, "time": "end", "x": 0.42, "sigma": {"x": 0.02}}],
             "infer": {"target_accept": 0.9}},
    # the 8 km/h barrier impact under the crush law, 0.45 s at 1 ms
    "contact": {"scenario": {"path": "medusa/barrier/scenario.toml"},
                "simulation": {"end_time": 0.45, "dt": 1e-3, "step_control": "constant", "contact_law": "crush"},
                "unknowns": {"v1_speed": {"path": "vehicles.1.speed",
                                          "prior": {"truncated_normal": [2.2, 0.3, 1.5, 3.0]}}},
                "observations": [{"vehicle": 1, "time": "end", "x": 0.26, "speed": 0.54,
                                  "sigma": {"x": 0.01, "speed": 0.05}}],
                "infer": {"target_accept": 0.9, "max_tree_depth": 6}},
    # the same car and barrier (the straight example's car, model 1 of Appendix C) with the
    # car 1 cm from the wall, so that the pulse starts at once: 0.12 s at 1 ms (120 steps, a
    # quarter of "contact") hold the whole pulse (peak crush near 0.065 s, separation near
    # 0.1 s) and 20 ms of rebound; only x is observed (sigma 1 cm). Near 1.93 m/s the rebound
    # speed peaks (0.38, 0.49, 0.37 m/s at 1.5, 1.88, 2.38 m/s; the law's restitution is
    # constant below its damage threshold and falls above it, docs/crash-law.md), as both of
    # "contact"'s observations do: observed, it would make the posterior bimodal, which short
    # chains do not cross (docs/inference.md). x at 0.12 s rises with the speed throughout,
    # with a kink there (slope 3.0 sigma per m/s below, 6.6 falling to 3.8 above), so the
    # posterior is one peak (sd 0.14-0.18 m/s against the prior's 0.3: data and prior both
    # matter). At 1 ms x differs from 0.25 ms steps by at most 5e-5 m (0.005 sigma) over the
    # prior's range (600 speeds); 2 ms steps diverge.
    "contact_small": {"scenario": {"medusa": {"folder": "medusa/straight"}, "road": {"flat": True},
                                   "barriers": [{"type": "plane", "position": [2.01, 0.0, 0.0],
                                                 "normal": [-1.0, 0.0, 0.0]}]},
                      "simulation": {"end_time": 0.12, "dt": 1e-3, "step_control": "constant",
                                     "contact_law": "crush"},
                      "unknowns": {"v1_speed": {"path": "vehicles.1.speed",
                                                "prior": {"truncated_normal": [2.2, 0.3, 1.5, 3.0]}}},
                      "observations": [{"vehicle": 1, "time": "end", "x": 0.07, "sigma": {"x": 0.01}}],
                      "infer": {"target_accept": 0.9, "max_tree_depth": 6}},
}

__all__ = ["Calibration", "calibrate", "CALIBRATION_PROBLEMS"]


@dataclass
class Calibration:
    truth: np.ndarray  # (R, n)
    ranks: np.ndarray  # (R, n) in 0..L
    n_draws: int  # L
    chi2_p: np.ndarray  # (n,) p-value of uniform ranks
    coverage90: np.ndarray  # (n,)
    divergent: int  # divergent draws over all replications
    draws_total: int  # draws (before thinning) over all replications kept
    failed: int  # replications left out (the simulation of the truth failed)
    bins: int


def calibrate(spec: InferSpec, replications: int = 100, warmup: int = 100, draws: int = 198, thin: int = 2,
              bins: int = 10, seed: int = 0) -> Calibration:
    post = LogPosterior(spec)
    rng = np.random.default_rng(seed)
    truth = np.stack([p.scipy().rvs(replications, random_state=rng) for p in post.priors], axis=1)  # (R, n)
    pred, ok = jax.jit(jax.vmap(post.problem.predict))(jnp.asarray(truth))
    sigma = post._sigma
    o = spec.options
    e = rng.standard_normal(pred.shape) if o.likelihood == "normal" else rng.standard_t(o.nu, pred.shape)
    observed = np.asarray(pred) + sigma * e
    u0 = post.to_u([p.median() for p in post.priors])

    def one(key, y):
        return sample(post.with_observed(y), jnp.asarray(u0)[None, :], key, warmup, draws, o.target_accept,
                      o.max_tree_depth, spec.dense_mass)

    keys = jax.random.split(jax.random.PRNGKey(seed), replications)
    d = over_chains(one, replications)(keys, jnp.asarray(observed))  # split over the CPU devices, if several
    theta = np.asarray(jax.vmap(jax.vmap(jax.vmap(post.to_theta)))(d.position))[:, 0, ::thin]  # (R, L, n)
    theta = theta[:, -(draws // thin):]
    keep = np.asarray(ok)
    L = theta.shape[1]
    ranks = np.sum(theta < truth[:, None, :], axis=1)  # (R, n)
    if (L + 1) % bins or (L + 1) % 20:
        raise ValueError(f"draws / thin + 1 = {L + 1} must be divisible by bins = {bins} and by 20")
    k = (L + 1) // 20
    covered = (ranks >= k) & (ranks <= L - k)
    r, c = ranks[keep], covered[keep]
    counts = np.stack([np.bincount(r[:, j] * bins // (L + 1), minlength=bins) for j in range(r.shape[1])])
    p = np.array([stats.chisquare(cnt).pvalue for cnt in counts])
    return Calibration(truth=truth, ranks=ranks, n_draws=L, chi2_p=p, coverage90=c.mean(axis=0),
                       divergent=int(np.asarray(d.divergent)[keep].sum()), draws_total=int(keep.sum()) * draws,
                       failed=int((~keep).sum()), bins=bins)
