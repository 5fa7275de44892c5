"""The narrow phase's early exit for pairs that are apart (pair_geometry's apart_exit, which the
contact stage sets): the overlap decision and every overlapping pair's answer stay those of the
search run to convergence, and a search of a pair that is apart stops early."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.contact.shapes import cold_warm, pair_geometry
from jaxmedusa.contact.shapes.narrow_phase import APART_MARGIN, _solve_one
from jaxmedusa.contact.shapes.superellipsoid import superellipsoid_gauge
from jaxmedusa.contact.shapes.superellipsoid_derivatives import superellipsoid_derivatives

CAR = jnp.array([2.4, 0.9, 0.7])  # contact semi-axes [m]


def rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _side_by_side(gap, yaw):
    """Body 2 beside body 1 (lateral gap [m] between the flat sides at yaw 0; < 0: overlap), 0.6 m
    ahead, yawed by `yaw` [rad]: flat faces nearly parallel, the searches' slow case."""
    return jnp.array([0.6, 2 * 0.9 + gap, 0.0]), rot_z(yaw)


@functools.partial(jax.jit, static_argnums=2)
def _geometry(r2, F2, apart_exit, warm):
    return pair_geometry("superellipsoid", jnp.zeros(3), jnp.eye(3), CAR, r2, F2, CAR, warm, 0.4, 0.4,
                         broad_phase="enclosing", apart_exit=apart_exit)


def _sweep(cases, apart_exit, warm_from_previous):
    """PairGeometry of each (gap, yaw) case, cold or warm-started from the previous case's."""
    out, warm = [], cold_warm()
    for g, y in cases:
        geo = _geometry(*_side_by_side(g, y), apart_exit, warm)
        warm = geo.warm if warm_from_previous else cold_warm()
        out.append(geo)
    return out


def test_decisions_and_overlapping_answers_match_the_converged_search():
    """Gaps from 8 cm of overlap to 30 cm apart, yaws of 0-0.1 rad, cold and warm-started: the
    same touching decision everywhere, and for every overlapping pair (h <= 1: the exit never
    fires) the same iterations, so the same answer up to the rounding of two differently
    compiled programs (1e-12 m; the points are ~1 m from the origin)."""
    cases = [(g, y) for g in np.linspace(-0.08, 0.3, 20) for y in (0.0, 0.03, 0.1)]
    for warm_from_previous in (False, True):
        early = _sweep(cases, True, warm_from_previous)
        exact = _sweep(cases, False, warm_from_previous)
        for (g, y), e, x in zip(cases, early, exact):
            assert bool(e.touching) == bool(x.touching), (g, y)
            assert bool(e.phi1 <= 0) == bool(x.phi1 <= 0), (g, y)
            if bool(x.phi1 <= 0):  # overlapping: h <= 1, the exit never fires
                np.testing.assert_allclose(np.asarray(e.T1), np.asarray(x.T1), atol=1e-12)
                np.testing.assert_allclose(np.asarray(e.T2), np.asarray(x.T2), atol=1e-12)
                np.testing.assert_allclose(np.asarray(e.phi1), np.asarray(x.phi1), atol=1e-12)


def test_a_search_of_a_pair_apart_stops_early_above_the_margin():
    """A pair 20 cm apart beside each other, yawed 0.03 rad, from a cold start: with the exit the
    search's answer after 8 iterations is its answer after 3 (it stopped by then), with h above
    1 + APART_MARGIN; run to convergence it moves on between 3 and 8 iterations."""
    from jaxmedusa.contact.shapes.frames import body

    r2, F2 = _side_by_side(0.2, 0.03)
    b1, b2 = body(1.0, jnp.eye(3), CAR, "affine"), body(1.0, F2, CAR, "affine")
    c, M, w0 = b2.A @ (-r2), b2.A @ b1.B, b1.A @ r2
    g = lambda u: superellipsoid_gauge(u, 0.4, 0.4)  # noqa: E731
    dG = lambda u: superellipsoid_derivatives(u, 0.4, 0.4)  # noqa: E731

    def solve(iters, exit_on):
        return jax.jit(lambda: _solve_one(c, M, w0, jnp.zeros(3), g, iters, dG, apart_exit=exit_on))()

    y3, h3, _, _ = solve(3, True)
    y8, h8, _, _ = solve(8, True)
    np.testing.assert_array_equal(np.asarray(y8), np.asarray(y3))
    assert float(h8) > 1.0 + APART_MARGIN
    x3, _, _, _ = solve(3, False)
    x8, hx, _, _ = solve(8, False)
    assert float(jnp.max(jnp.abs(x8 - x3))) > 0.0
    assert float(hx) <= float(h8)  # the converged search's h is the minimum
