"""The observation model: log p(data | theta) from the weighted residuals.

    log_likelihood(r, sigma, "normal")            # r (m,) = (model - observed) / sigma
    log_likelihood(r, sigma, "student_t", nu=4)   # heavy tails: an outlying mark costs less

Each observed quantity is independent with its file's standard deviation sigma:
normal: observed = model + sigma e, e ~ N(0, 1); Student-t: e ~ t(nu) (scale sigma, so sigma is
the scale rather than the standard deviation; for nu > 2 the sd is sigma sqrt(nu / (nu - 2))).
The 1/sigma of each density is kept (-sum log sigma) so log_density is the true log density
(only matters for comparing files, not for sampling). A failed run's residuals are
fit.problem.FAILED_RESIDUAL: a log likelihood of about -5e11 m, finite, which NUTS rejects.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
from jax.scipy.special import gammaln

__all__ = ["log_likelihood"]


def log_likelihood(r, sigma, kind: str = "normal", nu: float = 4.0):
    """sum_i log p(r_i) - log sigma_i; r (m,) weighted residuals, sigma (m,) their scales."""
    log_sigma = jnp.sum(jnp.log(jnp.asarray(sigma)))
    if kind == "normal":
        return -0.5 * jnp.sum(r * r) - r.shape[0] * 0.5 * math.log(2 * math.pi) - log_sigma
    if kind == "student_t":
        c = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * math.log(nu * math.pi)
        return jnp.sum(c - (nu + 1) / 2 * jnp.log1p(r * r / nu)) - log_sigma
    raise ValueError(f"likelihood must be normal or student_t, got {kind!r}")
