"""The log posterior density in the sampler's unconstrained coordinates, and its gradient
by forward or reverse mode through the simulation.

    post = LogPosterior(spec)                  # spec: infer.spec.InferSpec
    post.log_density(u)                        # u (n,) unconstrained -> scalar
    theta = post.to_theta(u)                   # the parameters in their units

log p(u) = sum_j [log prior_j(theta_j) + log |dtheta_j/du_j|] + log p(data | theta), with
theta_j = prior_j.to_x(u_j) (priors.py) and the likelihood of likelihood.py.

Gradient mode (`gradient`, the file's [infer] gradient): forward mode carries n tangents
through the one while loop (jax.jacfwd), so its cost grows with n; reverse mode (jax.grad
through the checkpointed scan: a forward pass, then each step re-run with its adjoint) costs
about the same whatever n, but several times one simulation. Measured (one vehicle, 200
constant steps, 8 chains, 2-core CPU under load, 2026-11-26): forward 4.1 / 18.9 / 24.3 ms
and reverse 27.9 / 22.6 / 20.0 ms per gradient for n = 1 / 3 / 5 unknowns, so they cross
between 3 and 5. The rule: forward mode for n <= FORWARD_MAX_UNKNOWNS = 4, reverse above
(benchmarks/infer_speed.py measures both on a given file). Reverse mode needs a known step
count (constant step control); with an adaptive control the rule stays with forward mode.

In forward mode the density carries a custom VJP whose forward pass computes the value and
the whole gradient in one jax.jacfwd pass, so BlackJAX's jax.value_and_grad runs the
simulation once, forward, per leapfrog step.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.infer.likelihood import log_likelihood
from jaxmedusa.infer.model import InferProblem
from jaxmedusa.infer.spec import InferSpec
from jaxmedusa.solver.step_control import STEP_CONTROLS

__all__ = ["LogPosterior", "FORWARD_MAX_UNKNOWNS", "choose_gradient"]

FORWARD_MAX_UNKNOWNS = 4  # forward mode up to this many unknowns (module docstring; benchmarks/infer_speed.py)


def choose_gradient(spec: InferSpec) -> str:
    """"forward" or "reverse": the file's choice, or the rule of the module docstring."""
    n = len(spec.priors)
    constant = STEP_CONTROLS.resolve(spec.fit.settings.step_control, where="step_control").name == "constant"
    mode = spec.options.gradient
    if mode == "auto":
        mode = "forward" if n <= FORWARD_MAX_UNKNOWNS or not constant else "reverse"
    if mode == "reverse" and not constant:
        raise ValueError(f"{spec.source}: infer.gradient: reverse mode needs simulation.step_control = "
                         "\"constant\" (the checkpointed loop's length must be known)")
    return mode


def forward_gradient(f):
    """f: (n,) -> scalar, with a custom VJP whose forward pass is one jax.jacfwd pass (value
    and gradient together), so that reverse-mode callers never reverse the simulation."""

    @jax.custom_vjp
    def g(u):
        return f(u)

    def fwd(u):
        grad, value = jax.jacfwd(lambda y: (lambda v: (v, v))(f(y)), has_aux=True)(u)
        return value, grad

    def bwd(grad, ct):
        return (ct * grad,)

    g.defvjp(fwd, bwd)
    return g


class LogPosterior:
    """The unnormalised log posterior of an InferSpec (module docstring)."""

    def __init__(self, spec: InferSpec, gradient: str | None = None):
        self.spec = spec
        self.gradient = gradient or choose_gradient(spec)
        self.problem = InferProblem(spec, adjoint="forward" if self.gradient == "forward" else "checkpointed")
        self.priors = spec.priors
        self._sigma = np.asarray(self.problem._sigma)
        self.observed = jnp.asarray(self.problem._value)  # replaced per replication in calibration runs
        raw = self._log_density
        self.log_density = forward_gradient(raw) if self.gradient == "forward" else raw

    @property
    def n(self) -> int:
        return len(self.priors)

    def to_theta(self, u):
        return jnp.stack([p.to_x(u[j]) for j, p in enumerate(self.priors)])

    def to_u(self, theta) -> np.ndarray:
        return np.array([p.to_u(t) for p, t in zip(self.priors, np.asarray(theta, float))])

    def log_prior(self, u):
        """sum_j log prior_j(theta_j) + log |dtheta_j / du_j| (the density of u)."""
        return sum(p.log_pdf(p.to_x(u[j])) + p.log_jacobian(u[j]) for j, p in enumerate(self.priors))

    def residuals(self, theta, observed=None):
        """(model - observed) / sigma; `observed` (m,) replaces the file's values (calibration)."""
        r = self.problem.residuals(theta)
        if observed is None:
            return r
        shift = (self.problem._value - observed) / self._sigma  # r was computed against the file's values
        return jnp.where(jnp.abs(r) < 1e5, r + shift, r)  # a failed run (FAILED_RESIDUAL) stays failed

    def _log_density(self, u, observed=None):
        theta = self.to_theta(u)
        o = self.spec.options
        r = self.residuals(theta, observed)
        return self.log_prior(u) + log_likelihood(r, self._sigma, o.likelihood, o.nu)

    def curvature(self, u):
        """(n, n) the Gauss-Newton approximation of -d2 log p / du2 at u: w J^T J - d2 log prior / du2,
        J = d r / d u (m, n) by jax.jacfwd (one simulation carrying n tangents, either gradient
        mode), w the likelihood's Fisher information per weighted residual (1 for the normal,
        (nu + 1) / (nu + 3) for Student-t: Lange, Little and Taylor 1989, JASA 84, eq (8))."""
        J = jax.jacfwd(lambda v: self.residuals(self.to_theta(v)))(u)
        o = self.spec.options
        w = 1.0 if o.likelihood == "normal" else (o.nu + 1) / (o.nu + 3)
        return w * J.T @ J - jax.hessian(self.log_prior)(u)

    def initial_inverse_mass(self, u, dense: bool = True):
        """The warmup's first inverse mass matrix at u: the inverse of `curvature` (the Laplace
        approximation's covariance, its eigenvalues floored at 1e-10 of the largest; dense
        (n, n) or its diagonal (n,)), the identity where the simulation fails (non-finite)."""
        lam, vec = jnp.linalg.eigh(self.curvature(u))
        ok = jnp.all(jnp.isfinite(lam)) & (jnp.max(lam) > 0)
        lam = jnp.where(ok, lam, 1.0)
        lam = jnp.maximum(lam, 1e-10 * jnp.max(lam))
        vec = jnp.where(ok, vec, jnp.eye(self.n))
        cov = (vec / lam) @ vec.T
        return cov if dense else jnp.diag(cov)

    def with_observed(self, observed):
        """log_density(u) against other observed values (m,) (simulation-based calibration)."""
        f = lambda u: self._log_density(u, observed)  # noqa: E731
        return forward_gradient(f) if self.gradient == "forward" else f
