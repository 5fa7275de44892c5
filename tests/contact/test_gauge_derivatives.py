"""Closed-form gauge derivatives (contact/shapes/superellipsoid_derivatives.py) against
automatic differentiation and central differences, and the narrow-phase search that uses
them against the automatic-differentiation search it replaced."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.contact.shapes.frames import body
from jaxmedusa.contact.shapes.narrow_phase import DEFAULT_ITERS, MU0, MU_DOWN, _solve_one, cold_warm, pair_geometry
from jaxmedusa.contact.shapes.superellipsoid import ellipsoid_gauge, superellipsoid_gauge
from jaxmedusa.contact.shapes.superellipsoid_derivatives import (
    ellipsoid_derivatives,
    radial_derivatives,
    superellipsoid_derivatives,
)

EPS = [(0.4, 0.4), (0.4, 0.7), (1.0, 1.0), (0.3, 0.5)]


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("traced", [False, True])
def test_superellipsoid_closed_forms(eps, traced):
    rng = np.random.default_rng(0)
    e1, e2 = (jnp.asarray(eps[0]), jnp.asarray(eps[1])) if traced else eps
    f = lambda u: superellipsoid_gauge(u, e1, e2)  # noqa: E731
    for _ in range(10):
        y = jnp.asarray(rng.normal(size=3))
        G, g, H = superellipsoid_derivatives(y, e1, e2)
        # the same function differentiated two ways: agreement to round-off (pow via exp/log)
        np.testing.assert_allclose(G, f(y), rtol=1e-13)
        np.testing.assert_allclose(g, jax.grad(f)(y), rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(H, jax.hessian(f)(y), rtol=1e-10, atol=1e-12 * np.abs(H).max())
        # and against central differences of the gradient (h = 1e-5: truncation ~1e-10,
        # round-off ~1e-16/1e-5): independent of any autodiff rule
        fd = np.stack([(np.asarray(superellipsoid_derivatives(y.at[i].add(1e-5), e1, e2)[1])
                        - np.asarray(superellipsoid_derivatives(y.at[i].add(-1e-5), e1, e2)[1])) / 2e-5
                       for i in range(3)], 1)
        np.testing.assert_allclose(H, fd, atol=1e-7 * np.abs(H).max())
        # 1-homogeneity: grad G . y = G and hess G y = 0 (Euler)
        np.testing.assert_allclose(np.dot(g, y), G, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(H) @ np.asarray(y), 0.0, atol=1e-11 * np.abs(H).max())


def test_ellipsoid_closed_forms():
    y = jnp.array([0.3, -1.2, 0.7])
    G, g, H = ellipsoid_derivatives(y)
    r = np.linalg.norm(y)
    np.testing.assert_allclose(G, r, rtol=1e-15)
    np.testing.assert_allclose(g, y / r, rtol=1e-15)
    np.testing.assert_allclose(H, (np.eye(3) - np.outer(y, y) / r**2) / r, rtol=1e-14, atol=1e-16)


def test_radial_chain_rule():
    """h(w) = G(c + M w / G(w)): value, gradient and Hessian against autodiff of h."""
    rng = np.random.default_rng(3)
    f = lambda u: superellipsoid_gauge(u, 0.4, 0.4)  # noqa: E731
    for _ in range(5):
        c, M, w = (jnp.asarray(x) for x in (rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3)))
        h = lambda w: f(c + M @ (w / f(w)))  # noqa: E731
        hv, gr, He = radial_derivatives(lambda u: superellipsoid_derivatives(u, 0.4, 0.4), c, M, w)
        np.testing.assert_allclose(hv, h(w), rtol=1e-14)
        np.testing.assert_allclose(gr, jax.grad(h)(w), rtol=1e-11, atol=1e-13)  # round-off of pow
        np.testing.assert_allclose(He, jax.hessian(h)(w), rtol=1e-10, atol=1e-12 * np.abs(He).max())


def _problem(dx, dy, yaw):
    """The T1 search of two car-sized superellipsoids: body 2 at (dx, dy, 0) yawed by `yaw`."""
    ax = jnp.array([2.3, 0.85, 0.7])
    c_, s_ = np.cos(yaw), np.sin(yaw)
    F2 = jnp.array([[c_, -s_, 0.0], [s_, c_, 0.0], [0.0, 0.0, 1.0]])
    b1, b2 = body(1.0, jnp.eye(3), ax, "affine"), body(1.0, F2, ax, "affine")
    r2 = jnp.array([dx, dy, 0.0])
    return b2.A @ (-r2), b2.A @ b1.B, b1.A @ r2


@pytest.mark.parametrize("dx, dy, yaw", [(4.0, 0.6, 0.3), (3.0, 1.2, -0.5), (4.4, 0.0, 0.8), (1.0, 1.6, 1.2)])
def test_search_matches_the_autodiff_search(dx, dy, yaw):
    """Closed forms + early exit reach the minimum the autodiff search (the solver before the
    closed forms) reaches with 40 iterations: the same point to 1e-9 and the same h to 1e-14
    (a strict minimum: position error ~ sqrt(round-off of h) at worst)."""
    c, M, w0 = _problem(dx, dy, yaw)
    f = lambda u: superellipsoid_gauge(u, 0.4, 0.4)  # noqa: E731
    ref_w, ref_h, _, _ = _solve_one(c, M, w0, jnp.zeros(3), f, 40, None)
    w, hv, _, _ = _solve_one(c, M, w0, jnp.zeros(3), f, DEFAULT_ITERS, lambda u: superellipsoid_derivatives(u, 0.4, 0.4))
    np.testing.assert_allclose(hv, ref_h, rtol=1e-14)
    np.testing.assert_allclose(w, ref_w, atol=1e-9)


def _car_pair(x, warm, iters):
    """pair_geometry of two car-sized superellipsoids: body 1 at the origin, body 2 at (x0, x1, 0)
    yawed by x2 [rad], from the warm start `warm` with at most `iters` iterations."""
    ax = np.array([2.3, 0.85, 0.7])
    c_, s_ = np.cos(x[2]), np.sin(x[2])
    F2 = jnp.array([[c_, -s_, 0.0], [s_, c_, 0.0], [0.0, 0.0, 1.0]])
    return pair_geometry("superellipsoid", jnp.zeros(3), jnp.eye(3), ax, jnp.array([x[0], x[1], 0.0]), F2,
                         ax, warm, 0.4, 0.4, broad_phase="enclosing", iters=iters)


def test_warm_start_converges_in_two_iterations():
    """Warm-started at the answer of a nearby configuration (1 mm and 0.001 rad away, as
    from one step to the next), two iterations give the eight-iteration answer."""
    x = np.array([3.9, 0.7, 0.3])
    warm = _car_pair(x, cold_warm(), 16).warm
    x2 = x + np.array([1e-3, 1e-3, 1e-3])
    g2, g8 = _car_pair(x2, warm, 2), _car_pair(x2, warm, 8)
    # 2 Newton-like steps from 1e-3 away: error ~ (1e-3)^4 relative, i.e. round-off in phi1
    np.testing.assert_allclose(g2.phi1, g8.phi1, atol=1e-12)
    np.testing.assert_allclose(np.concatenate([g2.T1, g2.T2]), np.concatenate([g8.T1, g8.T2]), atol=1e-9)


def test_a_warm_search_stops_once_newton_predicts_convergence():
    """From the answer of a configuration 1e-4 m and 1e-4 rad away, Newton's steps shrink
    quadratically: s0 ~ 1e-4, s1 ~ K s0^2 ~ 1e-8, and the next, s1 (s1/s0)^2 ~ 1e-16, is below
    STEP_TOL = 1e-13, so each search stops after its second full step (`_solve_one`'s
    extrapolation; a search that waits to propose a step below STEP_TOL takes a third).
    The damping it reports counts them: MU0 x MU_DOWN per accepted full step. Its answer is
    the minimum a cold search of the same configuration reaches (depth to 1e-12 m, the points
    to 1e-9 m, as in test_search_matches_the_autodiff_search)."""
    x = np.array([4.2, 0.3, -0.2])
    warm = _car_pair(x, cold_warm(), 16).warm
    x2 = x + 1e-4
    warm_search, cold_search = _car_pair(x2, warm, DEFAULT_ITERS), _car_pair(x2, cold_warm(), 40)
    np.testing.assert_allclose(np.asarray(warm_search.warm[6:8]), MU0 * MU_DOWN ** 2, rtol=1e-12)
    np.testing.assert_allclose(warm_search.phi1, cold_search.phi1, atol=1e-12)
    np.testing.assert_allclose(np.concatenate([warm_search.T1, warm_search.T2]),
                               np.concatenate([cold_search.T1, cold_search.T2]), atol=1e-9)
