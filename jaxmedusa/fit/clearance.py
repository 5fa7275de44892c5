"""Smooth clearance between vehicles, for design by gradients (examples/avoid_by_steering.py).

`plan_gap` is the separating-axis gap of two vehicles' plan-view rectangles (CONTACT A1 x
A2, turned with director d1): over the four edge normals n of both rectangles,

    gap = max_n ( |(r_b - r_a) . n| - h_a(n) - h_b(n) ),   h(n) = A1/2 |d1 . n| + A2/2 |d2 . n|,

positive when a line separates them (a lower bound of their distance), negative when they
overlap (minus the smallest push-out depth along those normals). The simulator's contact
shape (a superellipsoid inside the same box) cannot touch while gap > 0. `smooth_min`
is the log-sum-exp soft minimum, for the least gap over a run's samples.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.special import logsumexp

from jaxmedusa.core.safe_math import normalize

__all__ = ["plan_gap", "smooth_min"]


def _axes(F):
    """Unit plan-view directions (2,) of directors d1 and d2 (columns of F (3, 3))."""
    return normalize(F[:2, 0]), normalize(F[:2, 1])


def plan_gap(r_a, F_a, dims_a, r_b, F_b, dims_b):
    """Separating-axis gap [m] of two plan-view rectangles (module docstring). r (3,) centre of
    mass, F (3, 3) directors as columns, dims (>= 2,) CONTACT A1 (length) and A2 (width) [m]."""
    a1, a2 = _axes(F_a)
    b1, b2 = _axes(F_b)
    d = r_b[:2] - r_a[:2]
    normals = jnp.stack([a1, a2, b1, b2])  # (4, 2)

    def half(n, u1, u2, dims):
        return 0.5 * dims[0] * jnp.abs(u1 @ n) + 0.5 * dims[1] * jnp.abs(u2 @ n)

    seps = jnp.stack([jnp.abs(d @ n) - half(n, a1, a2, dims_a) - half(n, b1, b2, dims_b) for n in normals])
    # Take the largest by its index, not with jnp.max: max's derivative divides by the count of
    # entries equal to the max, and under jit XLA may recompute the entries with other
    # rounding (fused multiply-adds), so none compares equal and the tangent is 0/0 = NaN.
    return seps[jnp.argmax(seps)]


def smooth_min(x, tau: float):
    """Soft minimum -tau log(sum exp(-x / tau)) of x (...,) along its last axis: below min(x)
    by at most tau log(len(x)), smooth in x."""
    return -tau * logsumexp(-x / tau, axis=-1)
