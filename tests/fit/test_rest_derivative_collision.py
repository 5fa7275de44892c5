"""d(rest position) / d(impact speed) through a collision (issue 27's check), forward mode as
`jaxmedusa fit` takes it, against central differences of the same simulator.

What the derivative is (docs/gradients.md): the fixed-step run is a
continuous, piecewise smooth function of the speed. Its pieces are short: the crush law's
largest overlap is the largest of the step samples, and the step that holds it changes
every time the moment of the peak crosses a step, i.e. every dt x (closing speed) / (time
to impact) = 4e-4 x 2 / 1.0 = 8e-4 m/s of vehicle 1's speed (likewise the step of first
contact). Between those kinks the derivative drifts and at each one it jumps: for the rest
position it spans -64 % to +43 % of the slope at dt = 4e-4 s (shrinking as dt, measured in
docs/gradients.md). Forward mode returns the derivative of the piece the run is on,
exactly; central differences agree with it at 1e-3 only with h well inside a piece
(h << 8e-4 m/s), and differences with h >> 8e-4 m/s measure the slope averaged over many
pieces, which is what a physical derivative means here. So the check at 1e-3 uses h = 1e-6 m/s, and asserts that x - h and
x + h lie on one piece (the one-sided differences agree); the averaged slope is compared
with its own tolerance.
"""
import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.fit import FitProblem, Observation, load_fit

FILE = Path(__file__).resolve().parents[2] / "studies" / "fit_offset_rest.toml"
X0 = np.array([22.0, 20.0])  # [m/s], the example's truth: impact at 1.0 s, rest at 4.7 s
H_PIECE = 1e-6  # [m/s], well inside a piece (8e-4 m/s)


def _values_and_forward(problem, points):
    """(rest x of vehicle 1 (n,), forward-mode d/d(v1) (n,)) at v1 = points, v2 = 20 m/s, in
    one vmapped call (one compilation)."""
    def one(v1):
        x = jnp.stack([v1, X0[1]])
        return jax.jvp(lambda x: problem.predict(x)[0][0], (x,), (jnp.array([1.0, 0.0]),))

    f, g = jax.jit(jax.vmap(one))(jnp.asarray(points))
    return np.asarray(f), np.asarray(g)


def _check_piecewise(f, g, h, x_scale):
    """f, g at (x - h, x, x + h): forward mode at x against the central difference at 1e-3
    relative (issue 27), after the one-sided differences show that no kink lies in [x-h, x+h]."""
    fd_c = (f[2] - f[0]) / (2 * h)
    fd_r, fd_l = (f[2] - f[1]) / h, (f[1] - f[0]) / h
    # right minus left difference = h f'' on a piece: |f''| <= 400 (the drift of the derivative
    # within a piece, 0.07 per 2e-4 m/s measured), 4e-4 at h = 1e-6, inside 1e-3 |g| (g >= 0.5);
    # round-off of a run of ~1e4 steps ~1e-12 x |f| / h each (|f| <= x_scale): a kink inside
    # (a jump of 0.1 to 0.5) would break this by far
    assert abs(fd_r - fd_l) <= 1e-3 * abs(g[1]) + 2 * 1e-12 * x_scale / h, (fd_l, fd_r)
    # central: truncation h^2 |f'''| / 6 ~ 0 on a piece, round-off as above: 1e-3 relative
    # (the figure) covers it
    assert g[1] == pytest.approx(fd_c, rel=1e-3), (g, fd_c)
    return fd_c


@pytest.fixture(scope="module")
def spec():
    return load_fit(FILE)


def test_derivative_of_the_collision_matches_central_differences_inside_a_piece(spec):
    """Reduced twin of the slow test below: the collision only (a fixed end at 1.4 s, before
    the wheels lock at 1.5 s), vehicle 1's x at the end."""
    settings = dataclasses.replace(spec.settings, end_condition="time", end_time=1.4)
    obs = [Observation(index=0, vehicle=0, time=1.4, values=(("x", 0.0, 1.0),), at_rest=False)]
    problem = FitProblem(dataclasses.replace(spec, settings=settings, observations=obs))
    f, g = _values_and_forward(problem, X0[0] + np.array([-1, 0, 1]) * H_PIECE)
    _check_piecewise(f, g, H_PIECE, 30.0)
    assert 0.5 < g[1] < 2.0  # a real dependence: the striking car goes on faster


@pytest.mark.slow
def test_rest_position_derivative_through_the_collision(spec):
    """(About two minutes.) Issue 27's check on the worked example: d(rest x of vehicle 1) /
    d(v1) through the collision and the locked slide to rest, forward mode vs central
    differences inside a piece at 1e-3; and the slope over many pieces (central differences
    with h = 0.1 m/s, 125 pieces) within the drift of the pieces' derivative, which at
    dt = 4e-4 s spans 0.58 to 2.31 around a slope of 1.61 (docs/gradients.md): 70 %."""
    problem = FitProblem(spec)
    pts = X0[0] + np.array([-H_PIECE, 0.0, H_PIECE, -0.1, 0.1])
    f, g = _values_and_forward(problem, pts)
    _check_piecewise(f[:3], g[:3], H_PIECE, 62.0)  # measured: 1.41192 forward, 1.4119 central
    slope = (f[4] - f[3]) / 0.2  # measured 1.6219
    assert g[1] == pytest.approx(slope, rel=0.7)  # measured 1.412 against 1.622
