"""The dense inverse mass matrix (infer/sampler.py, [infer] mass_matrix = "dense") on a
correlated Gaussian whose moments are known in closed form.

Target: theta ~ N(m, S), m = (1, -1), sds (2, 0.5), correlation 0.95: a ridge like the
worked example's speed-friction one (correlation 0.87, docs/inference.md). With a dense
matrix the window adaptation estimates S itself, so the sampler sees an isotropic Gaussian.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.infer.sampler import sample
from jaxmedusa.infer.tables import summary_table

MEAN = np.array([1.0, -1.0])
SD = np.array([2.0, 0.5])
RHO = 0.95
COV = np.array([[SD[0] ** 2, RHO * SD[0] * SD[1]], [RHO * SD[0] * SD[1], SD[1] ** 2]])
PRECISION = np.linalg.inv(COV)


def _log_density(u):
    d = u - MEAN
    return -0.5 * d @ jnp.asarray(PRECISION) @ d


def _run(dense: bool):
    f = jax.jit(lambda k, u0: sample(_log_density, u0, k, 300, 1000, dense=dense))
    return f(jax.random.PRNGKey(5), jnp.zeros((4, 2)))


def test_dense_mass_matrix_recovers_a_correlated_gaussian():
    d = _run(dense=True)
    assert int(np.asarray(d.divergent).sum()) == 0
    s = summary_table(["a", "b"], np.asarray(d.position))
    ess = s["ess_bulk"].to_numpy()
    assert np.all(s["r_hat"] < 1.01), s
    # Monte Carlo errors: of the mean sd / sqrt(ESS), of the sd sd / sqrt(2 ESS) (Gaussian);
    # 4 of them bound a chance failure at ~6e-5 per quantity
    assert np.all(np.abs(s["mean"].to_numpy() - MEAN) < 4 * SD / np.sqrt(ess)), s
    assert np.all(np.abs(s["sd"].to_numpy() - SD) < 4 * SD / np.sqrt(2 * ess)), s
    draws = np.asarray(d.position).reshape(-1, 2)
    # the correlation's sampling sd (1 - rho^2) / sqrt(N) = 0.0975 / sqrt(ESS) ~ 0.005 at ESS 400
    assert abs(np.corrcoef(draws.T)[0, 1] - RHO) < 4 * (1 - RHO**2) / np.sqrt(ess.min()), np.corrcoef(draws.T)

    # the adapted inverse mass matrix approximates S: whitened by S, S^-1/2 M S^-1/2 has both
    # eigenvalues within [1/3, 3] in every chain. It is estimated from the last slow window
    # (100 of the 300 warmup draws, autocorrelated: ~50 effective; Stan's shrinkage 100/105
    # towards 1e-3 I), so each variance carries a relative error of about sqrt(2 / 50) = 0.2:
    # log 3 = 1.1 is about 5 such errors (seed 5 gives 0.51 to 1.34). A diagonal matrix could
    # not do this: with S's own variances on the diagonal, the whitened eigenvalues are
    # 1 -+ rho, i.e. 0.05 and 1.95.
    imm = np.asarray(d.inverse_mass_matrix)
    assert imm.shape == (4, 2, 2)
    L = np.linalg.cholesky(COV)
    Li = np.linalg.inv(L)
    for m in imm:
        ev = np.linalg.eigvalsh(Li @ m @ Li.T)
        assert np.all((1 / 3 < ev) & (ev < 3.0)), (ev, m)
        # its correlation: sampling sd (1 - rho^2) / sqrt(N_eff) ~ 0.014 at N_eff ~ 50 of 100 draws
        assert abs(m[0, 1] / np.sqrt(m[0, 0] * m[1, 1]) - RHO) < 0.05, m

    # and it pays: fewer leapfrog steps (gradients) per draw than the diagonal matrix, whose
    # step must suit the ridge's narrow direction (sd 0.5 sqrt(1 - rho^2) = 0.16 in b's
    # units against 2 along it: about 2 / 0.16 ~ 13 steps to cross it)
    steps_dense = float(np.asarray(d.tree_depth).mean())
    steps_diag = float(np.asarray(_run(dense=False).tree_depth).mean())
    assert steps_dense < 0.6 * steps_diag, (steps_dense, steps_diag)


def test_initial_inverse_mass_is_the_laplace_covariance():
    """The warmup's first inverse mass matrix (posterior.py, initial_inverse_mass) on the free
    rolling car of the calibration problem (infer/calibration.py: speed ~ normal(21, 1) m/s,
    x observed after T = 0.02 s with sigma = 0.02 m): x ~ x0 + v T, so the curvature of
    -log p is (T / sigma)^2 + 1 / 1^2 = 2 (m/s)^-2 by hand, and the inverse mass 1/2. The
    tolerance 2 %: the car's deceleration by rolling resistance and the sampled position's
    dependence on the speed through the tires bend x(v) by far less than that."""
    from helpers import EXAMPLES
    from jaxmedusa.infer import LogPosterior, infer_from_dict
    from jaxmedusa.infer.calibration import CALIBRATION_PROBLEMS

    post = LogPosterior(infer_from_dict(CALIBRATION_PROBLEMS["free"], base_dir=EXAMPLES.parent))
    u = jnp.asarray(post.to_u([21.0]))
    c = np.asarray(post.curvature(u))
    assert c.shape == (1, 1) and abs(c[0, 0] - 2.0) < 0.04, c
    # and it is the Hessian of the log density: central differences of its gradient (step
    # 1e-3 m/s; the model is linear to far better than the 1 % tolerance here)
    g = jax.grad(post.log_density)
    fd = -(g(u + 1e-3) - g(u - 1e-3)) / 2e-3
    assert abs(c[0, 0] - float(fd[0])) < 0.01 * c[0, 0], (c, fd)
    assert abs(float(post.initial_inverse_mass(u, dense=False)[0]) - 1 / c[0, 0]) < 1e-12
