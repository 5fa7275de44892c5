"""Report IV's box contact shape: contact points on the equal-volume ellipsoid, the normal
from the box with rounded edges and corners (norm(), Appendix B) and rule (1).

The contact points live on the ellipsoid that has the volume, aspect ratios and principal
directions of the vehicle box (semi-axes (6/pi)^(1/3) * axes); the contact normal is that of
the box with rounded edges and corners (R = 0.3 m); two boxes side by side with parallel
sides farther apart than their half-widths do not touch (rule (1)).
"""
from __future__ import annotations

import math

import jax.numpy as jnp

from jaxmedusa.contact.shapes.superellipsoid import ellipsoid_gauge, ellipsoid_inner_radius
from jaxmedusa.contact.types import Shape
from jaxmedusa.core.safe_math import TINY, normalize, safe_atan2, safe_sqrt
from jaxmedusa.core.small_sort import argsort_small

__all__ = ["box_normal", "BOX", "BOX_CORNER_RADIUS", "BOX_PARALLEL_DEV", "BOX_ELLIPSOID_SCALE"]

BOX_CORNER_RADIUS = 0.3  # report IV, norm(): RAD1 = RAD2 = 0.3 m
BOX_PARALLEL_DEV = 2e-4  # rule (1) "parallel": |1P2 . 2P2| >= 1 - DEV (contact.c DEV)
BOX_ELLIPSOID_SCALE = (6.0 / math.pi) ** (1.0 / 3.0)  # box half-dims -> equal-volume ellipsoid


def _box_ray_normal(a, h, R):
    """Rounded box of half-dims h (3,) with edge/corner radius R, local coordinates.

    The ray from the centre through a (3,) meets the surface at t* a. Returns the outward
    unit normal there, whether that point is on a rounded part (report IV: points B, C, D of
    Fig. 3, cylinders and spheres) and the outward normal of the flat face the ray meets first
    (choice()), with the code's planar angle psi between the ray and that face normal.
    """
    u = jnp.abs(a)
    c = jnp.maximum(h - R, 0.0)  # inner box: the rounded box is inner box (+) ball(R)
    big = 1e300
    tb = jnp.where(u > TINY, c / jnp.where(u > TINY, u, 1.0), big)  # ray leaves the inner slab i
    order = argsort_small(tb)
    us, cs, ts = u[order], c[order], tb[order]
    A_ = jnp.cumsum(us * us)
    B_ = jnp.cumsum(us * cs)
    C_ = jnp.cumsum(cs * cs)
    disc = jnp.maximum(B_ * B_ - A_ * (C_ - R * R), 0.0)
    Asafe = jnp.where(A_ > TINY, A_, 1.0)
    tk = (B_ + safe_sqrt(disc)) / Asafe  # distance to inner box = R with k axes active
    upper = jnp.concatenate([ts[1:], jnp.array([big])])
    valid = (tk >= ts * (1 - 1e-12)) & (tk <= upper * (1 + 1e-12)) & (A_ > TINY)
    k = jnp.argmax(valid)
    t = tk[k]
    e = jnp.maximum(t * u - c, 0.0)  # excess over the inner box, per axis
    sgn = jnp.where(a >= 0.0, 1.0, -1.0)
    n = normalize(sgn * e)
    rounded = jnp.sum(e > 1e-9 * R) >= 2
    i = order[0]  # face met first
    face = jnp.where(jnp.arange(3) == i, sgn[i], 0.0)  # (no scatter: core/xla_flags.py)
    psi = jnp.stack([safe_atan2(u[1], u[0]), safe_atan2(u[0], u[1]), safe_atan2(u[0], u[2])])[i]  # norm()
    return n, rounded, face, psi


def box_normal(T1, T2, r1, r2, b1, b2):
    """Contact normal n1 of report IV's norm() (Appendix B) and rule (1)."""
    R1 = jnp.minimum(BOX_CORNER_RADIUS, jnp.min(b1.h))
    R2 = jnp.minimum(BOX_CORNER_RADIUS, jnp.min(b2.h))
    nr1, rnd1, face1, psi1 = _box_ray_normal(b1.P.T @ (T1 - r1), b1.h, R1)
    _, rnd2, face2, psi2 = _box_ray_normal(b2.P.T @ (T2 - r2), b2.h, R2)
    nr1, face1, face2 = b1.P @ nr1, b1.P @ face1, b2.P @ face2
    n_ff = jnp.where(psi1 < psi2, face1, -face2)  # face to face: the face closer to the ray
    n = jnp.where(rnd1 & rnd2, nr1, jnp.where(rnd1, -face2, jnp.where(rnd2, face1, n_ff)))
    # rule (1): 1P2 parallel to 2P2 and d > (B1 + B2)/2 -> no contact
    p21, p22 = b1.P[:, 1], b2.P[:, 1]
    parallel = jnp.abs(jnp.dot(p21, p22)) >= 1.0 - BOX_PARALLEL_DEV
    d = jnp.abs(jnp.dot(r2 - r1, p21))
    excluded = parallel & (d > b1.h[1] + b2.h[1])
    return n, excluded


BOX = Shape(name="box", gauge=ellipsoid_gauge, ellipsoid_scale=BOX_ELLIPSOID_SCALE, normal=box_normal,
            inner_radius=ellipsoid_inner_radius)
