"""Weighted least squares over many starts at once: optimistix Levenberg-Marquardt, vmapped.

    from jaxmedusa.fit import FitProblem, load_fit, solve_fit
    result = solve_fit(FitProblem(load_fit("studies/fit_offset.toml")))
    result.estimate, result.std_error          # (n,) in the unknowns' units

Every start solves min_z sum_i r_i(x(z))^2 (r: problem.FitProblem.residuals, weighted by
1/sigma; x(z): the bounds' smooth map) with optx.LevenbergMarquardt, all starts in one
jax.vmap and one compilation. The Jacobian is forward mode: the residual function carries a
custom JVP that runs the simulation once with n tangents (jax.jacfwd, one while loop for the
values and the whole Jacobian), so optimistix's linearisation (options jac="fwd") only
multiplies by the stored matrix. MEDUSA's adaptive while loop supports forward mode only.

The answer is the start with the lowest cost. Its covariance is the Gauss-Newton one,
(J^T W J)^-1 with J = dr/dx at the solution (r already carries W^(1/2) = 1/sigma), from the
Jacobian the solver holds at its last accepted point, mapped from z to x by the chain rule;
std_error is the square root of its diagonal. The cost reported is chi^2 = sum r^2 (the
expected value at the true unknowns is about m - n for m residuals).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from scipy.stats import qmc

from jaxmedusa.fit.problem import FitProblem

__all__ = ["FitResult", "draw_starts", "solve_fit", "with_forward_jacobian"]


@dataclass
class FitResult:
    """Every start's outcome and the best one's estimate and uncertainty (module docstring)."""

    initial: np.ndarray  # (S, n) each start's x
    final: np.ndarray  # (S, n) each start's solution
    cost: np.ndarray  # (S,) chi^2 at the solution
    steps: np.ndarray  # (S,) Levenberg-Marquardt steps taken
    converged: np.ndarray  # (S,) bool: optimistix reported success (tolerances met)
    best: int  # index of the start with the lowest cost
    estimate: np.ndarray  # (n,)
    std_error: np.ndarray  # (n,) sqrt(diag(covariance))
    covariance: np.ndarray  # (n, n) (J^T W J)^-1 at the estimate
    jacobian: np.ndarray  # (m, n) d(residual)/dx at the estimate
    residuals: np.ndarray  # (m,) (model - observed) / sigma at the estimate
    wall_time: float = 0.0  # [s], compilation included


def draw_starts(problem: FitProblem, n: int, seed: int = 0) -> np.ndarray:
    """(n, k) starting points: row 0 the initial values, the others a Latin hypercube
    (scipy.stats.qmc, seeded) within each unknown's bounds, or initial +- spread without."""
    x0 = problem.initial[None, :]
    if n == 1:
        return x0.copy()
    u = qmc.LatinHypercube(d=problem.n_unknowns, seed=seed).random(n - 1)
    lo = np.where(problem.bounded, problem.lower, problem.initial - problem.spread)
    hi = np.where(problem.bounded, problem.upper, problem.initial + problem.spread)
    return np.concatenate([x0, lo + (hi - lo) * u])


def with_forward_jacobian(f, on_eval=None):
    """f (n,) -> (m,) with a custom JVP: the values and the whole Jacobian in one forward-mode
    pass (jax.jacfwd), the tangent as J @ dz. Linearising it (optimistix) keeps J as a constant,
    so the simulation is neither re-run per tangent nor partially evaluated. `on_eval(cost, z)`,
    if given, is called on the host after each evaluation (jax.debug.callback; under vmap once
    per start) with the evaluated point, for a progress display and the best point so far."""

    @jax.custom_jvp
    def g(z):
        return f(z)

    @g.defjvp
    def g_jvp(primals, tangents):
        (z,), (dz,) = primals, tangents
        J, r = jax.jacfwd(lambda y: (lambda out: (out, out))(f(y)), has_aux=True)(z)
        if on_eval is not None:
            jax.debug.callback(on_eval, jnp.sum(r**2), z)
        return r, J @ dz

    return g


def _covariance(J: np.ndarray) -> np.ndarray:
    """(J^T J)^-1; infinite where J^T J is singular (an unknown the observations do not
    determine shows as an infinite std_error rather than a made-up one)."""
    JtJ = J.T @ J
    if not np.all(np.isfinite(JtJ)) or np.linalg.cond(JtJ) > 1e14:  # beyond float64's ~1e-16 resolution
        return np.full_like(JtJ, np.inf)
    return np.linalg.inv(JtJ)


def _solver_fn(problem: FitProblem, rtol: float, atol: float, max_steps: int, on_eval=None):
    fn = with_forward_jacobian(problem.residuals_z, on_eval)
    solver = optx.LevenbergMarquardt(rtol=rtol, atol=atol)

    def one(z0):
        sol = optx.least_squares(lambda z, _: fn(z), solver, z0, max_steps=max_steps, throw=False,
                                 options={"jac": "fwd"})
        info = sol.state.f_info  # residuals and Jacobian at the last accepted point (= sol.value)
        return (sol.value, info.residual, info.jac.as_matrix(), sol.stats["num_steps"],
                sol.result == optx.RESULTS.successful)

    return jax.jit(jax.vmap(one))


def solve_fit(problem: FitProblem, starts: np.ndarray | None = None, on_eval=None) -> FitResult:
    """Solve from every start (default: draw_starts with the fit file's [fit] options) in one
    vmapped, jitted call; return the FitResult. `on_eval(cost, z)` is called on the host after
    every evaluation of every start (about starts x (steps + 1) calls)."""
    opt = problem.spec.options
    if starts is None:
        starts = draw_starts(problem, opt.starts, opt.seed)
    z0 = jnp.asarray(np.stack([problem.to_z(x) for x in starts]))
    begin = time.perf_counter()
    run = _solver_fn(problem, opt.rtol, opt.atol, opt.max_iterations, on_eval)
    z, r, Jz, steps, ok = jax.device_get(run(z0))
    wall = time.perf_counter() - begin
    x = np.asarray(jax.vmap(problem.to_x)(jnp.asarray(z)))
    cost = np.sum(np.asarray(r) ** 2, axis=1)
    best = int(np.nanargmin(np.where(np.isfinite(cost), cost, np.inf)))
    dxdz = np.asarray(jax.jacfwd(problem.to_x)(jnp.asarray(z[best])))  # diagonal (n, n)
    J = np.asarray(Jz[best]) @ np.linalg.inv(dxdz)  # dr/dx = dr/dz (dx/dz)^-1
    cov = _covariance(J)
    return FitResult(initial=np.asarray(starts), final=x, cost=cost, steps=np.asarray(steps),
                     converged=np.asarray(ok), best=best, estimate=x[best], std_error=np.sqrt(np.diag(cov)),
                     covariance=cov, jacobian=J, residuals=np.asarray(r[best]), wall_time=wall)
