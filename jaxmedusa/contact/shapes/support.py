"""Support function of the superellipsoid in closed form: extents and extreme points.

Barr's gauge is a nested norm, G(y) = || (||(y1, y2)||_p2, y3) ||_p1 with p2 = 2/eps2 and
p1 = 2/eps1 (shapes/superellipsoid.py), so its dual, the support function of the unit shape,
is the nested dual norm G*(u) = || (||(u1, u2)||_q2, u3) ||_q1 with q = p / (p - 1), and the
point of the shape that attains max u.y is grad G*(u). For a body x = r + F diag(axes) y,
G(y) <= 1, the largest d.x is d.r + G*(diag(axes) F^T d). eps1 = eps2 = 1 is the ellipsoid
(q = 2). The crush law (laws/crush.py) uses it for the engaged width of a contact, the
barriers (contact/barrier.py) for the depth of a vehicle beyond a wall face.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmedusa.core.safe_math import normalize, safe_pow

__all__ = ["dual_gauge", "support", "extent", "horizontal_tangent"]


def dual_gauge(u, eps1, eps2):
    """Support function G*(u) [-] of the unit superellipsoid (module docstring), u (3,)."""
    q1 = 2.0 / (2.0 - eps1)  # p/(p-1) with p = 2/eps
    q2 = 2.0 / (2.0 - eps2)
    a = jnp.abs(u)
    inner = safe_pow(safe_pow(a[0], q2) + safe_pow(a[1], q2), 1.0 / q2)
    return safe_pow(safe_pow(inner, q1) + safe_pow(a[2], q1), 1.0 / q1)


def support(r, F, axes, d, eps1, eps2):
    """(h, T): h = the largest d.x over the body x = r + F diag(axes) y, G(y) <= 1 [m], and
    T (3,) the point attaining it. r (3,) [m], F (3, 3) directors as columns, axes (3,)
    semi-axes [m], d (3,) a world direction."""
    B = F * axes[None, :]
    g, y = jax.value_and_grad(dual_gauge)(B.T @ d, eps1, eps2)
    return jnp.dot(d, r) + g, r + B @ y


def extent(r, F, axes, t, eps1, eps2):
    """(lo, hi) [m]: the interval the body covers along the unit direction t (a symmetric shape)."""
    h = dual_gauge((F * axes[None, :]).T @ t, eps1, eps2)
    c = jnp.dot(t, r)
    return c - h, c + h


def horizontal_tangent(n):
    """The unit horizontal tangent E3 x n of a normal n (3,) (E2 when n is vertical)."""
    t = jnp.stack([-n[1], n[0], jnp.zeros_like(n[0])])
    return normalize(t, jnp.array([0.0, 1.0, 0.0]))
