"""The plan-view gap of two vehicles' rectangles against hand calculations, the soft minimum, and
the wrapping of heading residuals."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.fit.clearance import plan_gap, smooth_min
from jaxmedusa.fit.problem import wrap_degrees

DIMS = jnp.array([4.0, 1.6, 1.3])  # CONTACT A1 A2 A3 of the report's model 1 [m]


def _F(theta):
    """Directors of a vehicle turned by theta about E3 (columns d1, d2, d3)."""
    c, s = math.cos(theta), math.sin(theta)
    return jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _gap(xb, yb, theta_b=0.0):
    return float(plan_gap(jnp.zeros(3), _F(0.0), DIMS, jnp.array([xb, yb, 0.0]), _F(theta_b), DIMS))


def test_gap_of_aligned_rectangles():
    # nose to tail: 6 m apart, 4 m long each -> 2 m clear (the offset example's start)
    assert math.isclose(_gap(6.0, 0.4), 2.0, abs_tol=1e-12)
    # side by side: 2 m apart laterally, 1.6 m wide -> 0.4 m clear
    assert math.isclose(_gap(1.0, 2.0), 0.4, abs_tol=1e-12)
    # overlapping by 0.3 m longitudinally and 1.2 m laterally: the smallest push-out is -0.3 m
    assert math.isclose(_gap(3.7, 0.4), -0.3, abs_tol=1e-12)


def test_gap_of_a_turned_rectangle():
    # b turned 90 deg, straight ahead: its half-length along E1 is now A2/2 = 0.8 m,
    # so the gap along E1 is 5 - 2 - 0.8 = 2.2 m
    assert math.isclose(_gap(5.0, 0.0, math.pi / 2), 2.2, abs_tol=1e-12)
    # b turned 45 deg, straight ahead: half-extent along E1 is (2 + 0.8) / sqrt(2); along b's own
    # normals the projections of a are larger, so E1 separates best: 6 - 2 - 2.8 / sqrt 2
    assert math.isclose(_gap(6.0, 0.0, math.pi / 4), 4.0 - 2.8 / math.sqrt(2.0), abs_tol=1e-12)


def test_gap_is_symmetric_and_differentiable():
    g_ab = _gap(5.0, 1.0, 0.3)
    g_ba = float(plan_gap(jnp.array([5.0, 1.0, 0.0]), _F(0.3), DIMS, jnp.zeros(3), _F(0.0), DIMS))
    assert math.isclose(g_ab, g_ba, abs_tol=1e-12)  # the gap does not depend on the order
    # d gap / d y of b for side-by-side rectangles is 1 (the lateral gap grows with y)
    dg = jax.grad(lambda y: plan_gap(jnp.zeros(3), _F(0.0), DIMS, jnp.array([1.0, y, 0.0]), _F(0.0), DIMS))(2.0)
    assert math.isclose(float(dg), 1.0, abs_tol=1e-12)


def test_smooth_min_bounds():
    x = jnp.array([0.3, 0.1, 0.5, 0.1])
    tau = 0.01
    m = float(smooth_min(x, tau))
    # -tau log(sum exp(-x/tau)) lies in [min - tau log n, min]; two equal minima give min - tau log 2
    assert 0.1 - tau * np.log(4) <= m <= 0.1
    assert math.isclose(m, 0.1 - tau * np.log(2.0), abs_tol=1e-9)  # the others add < e^-20


def test_heading_differences_wrap():
    d = jnp.array([0.2, 359.8, -359.8, 190.0, 45.0])
    # 359.8 deg apart is -0.2 deg apart; 190 is -170; a difference inside (-180, 180] is kept
    np.testing.assert_allclose(np.asarray(wrap_degrees(d)), [0.2, -0.2, 0.2, -170.0, 45.0], atol=1e-12)
