"""Compacted evaluation of near pairs (contact/broad_phase.py) against a dense evaluation
computed independently with numpy, the number of evaluations it makes, and its gradient."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.contact.broad_phase import boxes_overlap, compacted_map, default_capacity
from jaxmedusa.contact.shapes import cold_warm, pair_geometry


def _fn(x):
    """A per-item function with two outputs of different shapes."""
    return {"a": jnp.sin(x[0]) * x[1], "b": jnp.stack([x[0] ** 2, x[1] + 1.0])}


def _dense(near, x, default):
    """The same map evaluated by numpy on every item, then selected."""
    a = np.where(near, np.sin(x[:, 0]) * x[:, 1], default["a"])
    b = np.where(near[:, None], np.stack([x[:, 0] ** 2, x[:, 1] + 1.0], 1), default["b"])
    return a, b


@pytest.mark.parametrize("n_near", [0, 1, 5, 8, 9, 30, 64])
@pytest.mark.parametrize("capacity", [8, 64])
def test_matches_dense_evaluation_for_any_count(n_near, capacity):
    """0 near, fewer than a buffer, exactly one, one more than a buffer (a second round),
    most, all: each near item gets fn, each other item its default."""
    rng = np.random.default_rng(n_near)
    n = 64
    near = np.zeros(n, bool)
    near[rng.choice(n, n_near, replace=False)] = True
    x = rng.normal(size=(n, 2))
    default = {"a": rng.normal(size=n), "b": rng.normal(size=(n, 2))}
    out = jax.jit(lambda nr, x, d: compacted_map(_fn, nr, x, d, capacity))(near, x, default)
    a, b = _dense(near, x, default)
    # the same float64 operations item by item: equal to round-off of sin (a few ulp)
    np.testing.assert_allclose(out["a"], a, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out["b"], b, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("n_near, evaluated", [(0, 0), (3, 8), (8, 8), (9, 16), (20, 24)])
def test_cost_scales_with_near_items(n_near, evaluated):
    """fn runs on ceil(count / capacity) buffers of 8, not on all 64 items (counted by a
    callback that fires once per evaluated item)."""
    calls = []

    def fn(x):
        jax.debug.callback(lambda v: calls.append(1), x)
        return x * 2.0

    n = 64
    near = np.zeros(n, bool)
    near[np.arange(n_near) * 3 % n] = True
    x = np.arange(n, dtype=float)
    out = jax.jit(lambda nr, x: compacted_map(fn, nr, x, -x, 8))(near, x)
    jax.block_until_ready(out)
    np.testing.assert_array_equal(out, np.where(near, 2 * x, -x))
    assert len(calls) == evaluated


def test_reverse_mode_gradient():
    """d/dx of sum(out): cos(x0) x1 and sin(x0) (+ 2 x0, 1) on near items, 0 elsewhere
    (default does not depend on x), through the rounds' fori_loop and conds."""
    rng = np.random.default_rng(1)
    n = 20
    near = rng.random(n) < 0.5
    x = jnp.asarray(rng.normal(size=(n, 2)))
    default = {"a": jnp.zeros(n), "b": jnp.zeros((n, 2))}

    def total(x):
        out = compacted_map(_fn, near, x, default, 4)
        return jnp.sum(out["a"]) + jnp.sum(out["b"])

    g = np.asarray(jax.grad(total)(x))
    x = np.asarray(x)
    expect = np.stack([np.cos(x[:, 0]) * x[:, 1] + 2 * x[:, 0], np.sin(x[:, 0]) + 1.0], 1) * near[:, None]
    np.testing.assert_allclose(g, expect, rtol=1e-13, atol=1e-15)  # exact derivatives, round-off only


def test_default_capacity_bounds():
    """At least one item, never more than there are, at least 8, 1/16 of a large batch."""
    assert default_capacity(1) == 1
    assert default_capacity(5) == 5
    assert default_capacity(64) == 8
    assert default_capacity(4096) == 256


def _rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_boxes_overlap_hand_cases():
    """Boxes of half-dimensions (2.5, 0.9, 0.7), separation distances by hand (2-D: z agrees)."""
    a = np.diag([2.5, 0.9, 0.7])
    f = jax.jit(boxes_overlap)
    z = np.zeros(3)
    assert bool(f(z, a, np.array([4.9, 0.0, 0.0]), a))
    assert not bool(f(z, a, np.array([5.1, 0.0, 0.0]), a))  # 2 cars nose to tail, 0.1 m gap
    assert not bool(f(z, a, np.array([0.0, 1.9, 0.0]), a))  # side by side, 0.1 m gap
    assert not bool(f(z, a, np.array([4.0, 1.9, 0.0]), a))  # offset: the spheres overlap, the boxes do not
    r90 = _rot_z(np.pi / 2) @ a  # yawed 90 degrees: half-widths (0.9, 2.5) -> nose into the side at 3.4 m
    assert bool(f(z, a, np.array([3.39, 2.0, 0.0]), r90))
    assert not bool(f(z, a, np.array([3.41, 2.0, 0.0]), r90))
    # yawed 45 degrees on the diagonal: separated along its own short axis once
    # |d . v| > 0.9 + (2.5 + 0.9) / sqrt(2), v = (-1, 1) / sqrt(2), d = (x, 0)
    r45 = _rot_z(np.pi / 4) @ a
    edge = (0.9 + (2.5 + 0.9) / np.sqrt(2)) * np.sqrt(2)
    assert bool(f(z, a, np.array([edge - 0.01, 0.0, 0.0]), r45))
    assert not bool(f(z, a, np.array([edge + 0.01, 0.0, 0.0]), r45))


def test_boxes_overlap_agrees_with_linear_programming():
    """Random sheared, rotated boxes in 3-D, all pairs in one call as the stage makes it: overlap
    exactly when some y1, y2 in [-1, 1]^3 give r1 + B1 y1 = r2 + B2 y2, a feasibility problem
    that scipy's linprog decides independently of the separating axes (slack 0; pairs whose
    LP answer is within 1e-6 of the boundary, found by shrinking and growing the boxes by
    1e-6, are left out as undecided)."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(11)
    n = 300
    r1 = rng.normal(size=(n, 3))
    r2 = r1 + rng.normal(size=(n, 3)) * 2.0
    B1 = rng.normal(size=(n, 3, 3))
    B2 = rng.normal(size=(n, 3, 3))
    got = np.asarray(jax.jit(lambda a, b, c, d: boxes_overlap(a, b, c, d, slack=0.0))(r1, B1, r2, B2))

    def feasible(i, scale):
        A_eq = np.hstack([B1[i] * scale, -B2[i] * scale])
        res = linprog(np.zeros(6), A_eq=A_eq, b_eq=r2[i] - r1[i], bounds=[(-1.0, 1.0)] * 6, method="highs")
        return res.status == 0

    decided = 0
    for i in range(n):
        small, large = feasible(i, 1.0 - 1e-6), feasible(i, 1.0 + 1e-6)
        if small == large:
            decided += 1
            assert got[i] == small, i
    assert decided >= 290 and 0.2 < got.mean() < 0.8  # both answers are exercised


def test_boxes_enclose_touching_superellipsoids():
    """Random yawed pairs that the narrow phase says touch (overlapping gauge surfaces) are
    never rejected by the box test: the box test only removes pairs that cannot touch."""
    rng = np.random.default_rng(5)
    ax = np.array([2.5, 0.9, 0.7])
    geo = jax.jit(lambda R2, r2: pair_geometry("superellipsoid", jnp.zeros(3), jnp.eye(3), ax, r2, R2, ax,
                                               cold_warm(), broad_phase="enclosing", iters=16).touching)
    box = jax.jit(boxes_overlap)
    touching = 0
    for _ in range(40):
        R2 = _rot_z(rng.uniform(-np.pi, np.pi))
        ang = rng.uniform(0, 2 * np.pi)
        r2 = rng.uniform(1.0, 5.5) * np.array([np.cos(ang), np.sin(ang), 0.0])
        t = bool(geo(R2, r2))
        touching += t
        assert not t or bool(box(np.zeros(3), np.diag(ax), r2, R2 @ np.diag(ax)))
    assert touching >= 5  # the test saw real contacts
