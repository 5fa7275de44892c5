"""NUTS (infer/sampler.py) with the prior and likelihood of infer/ on a linear-Gaussian
problem: the posterior mean and sd equal the closed form within Monte Carlo error.

theta (2,) with priors normal(1, 2) and normal(-1, 0.5) (priors.Prior), observations
y = A theta + sigma e of a 4 x 2 design A (likelihood.log_likelihood, normal). The posterior
is Gaussian with precision P = S0^-1 + A^T A / sigma^2 and mean P^-1 (S0^-1 m0 + A^T y / sigma^2)
(conjugate normal; Gelman et al., Bayesian Data Analysis 3rd ed., section 14.2).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.infer.likelihood import log_likelihood
from jaxmedusa.infer.priors import Prior
from jaxmedusa.infer.sampler import sample
from jaxmedusa.infer.tables import summary_table

A = np.array([[1.0, 0.5], [0.2, 1.0], [1.0, -1.0], [0.3, 0.3]])
SIGMA = 0.8
PRIORS = [Prior("normal", (1.0, 2.0)), Prior("normal", (-1.0, 0.5))]
Y = np.array([1.3, -0.2, 2.9, 0.1])


def test_posterior_matches_the_closed_form():
    m0 = np.array([p.params[0] for p in PRIORS])
    S0inv = np.diag([1 / p.params[1] ** 2 for p in PRIORS])
    P = S0inv + A.T @ A / SIGMA**2
    cov = np.linalg.inv(P)
    mean = cov @ (S0inv @ m0 + A.T @ Y / SIGMA**2)
    sd = np.sqrt(np.diag(cov))

    def log_density(u):
        prior = sum(p.log_pdf(p.to_x(u[j])) + p.log_jacobian(u[j]) for j, p in enumerate(PRIORS))
        r = (jnp.asarray(A) @ u - Y) / SIGMA
        return prior + log_likelihood(r, np.full(4, SIGMA))

    d = jax.jit(lambda k, u0: sample(log_density, u0, k, 300, 1000))(jax.random.PRNGKey(3), jnp.zeros((4, 2)))
    theta = np.asarray(d.position)
    s = summary_table(["a", "b"], theta)
    assert int(np.asarray(d.divergent).sum()) == 0
    assert np.all(s["r_hat"] < 1.01)
    ess = s["ess_bulk"].to_numpy()
    # Monte Carlo standard error of the mean sd / sqrt(ESS); of the sd about sd / sqrt(2 ESS)
    # (Gaussian draws): 4 such errors bound a chance failure at ~6e-5 per quantity
    assert np.all(np.abs(s["mean"].to_numpy() - mean) < 4 * sd / np.sqrt(ess)), (s, mean)
    assert np.all(np.abs(s["sd"].to_numpy() - sd) < 4 * sd / np.sqrt(2 * ess)), (s, sd)
    # the 5 and 95 % quantiles of the Gaussian, mean -+ 1.645 sd (quantile MC error ~ 1.5x the mean's)
    assert np.all(np.abs(s["q95"].to_numpy() - (mean + 1.6449 * sd)) < 6 * sd / np.sqrt(ess))
