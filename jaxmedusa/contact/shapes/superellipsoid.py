"""Superellipsoid (report V) and ellipsoid (report II) contact shapes: their gauge functions.

In unit coordinates y the gauge (Minkowski) function of a superellipsoid with squareness
exponents eps1 (E3 direction, 'u' in eq. 1.45) and eps2 (E1-E2 plane, 'v') is Barr's
inside-outside function F(y) = (|y1|^(2/eps2) + |y2|^(2/eps2))^(eps2/eps1) + |y3|^(2/eps1)
raised to eps1/2: G = 1 on the surface, G < 1 inside, G(t y) = t G(y). With eps1 = eps2 =
eps it is the p-norm ||y||_p, p = 2/eps (eq. 1.51); the ellipsoid's is the 2-norm.
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.contact.types import Shape
from jaxmedusa.core.safe_math import safe_pow, safe_sqrt

__all__ = ["gauge", "is_static", "superellipsoid_gauge", "ellipsoid_gauge", "superellipsoid_inner_radius",
           "ellipsoid_inner_radius", "SUPERELLIPSOID", "ELLIPSOID"]


def is_static(x):
    return isinstance(x, (int, float))


def _abspow(a, q):
    """a^q for a >= 0: integer powers by multiplication when q is a static integer (exact,
    no exp/log, derivatives finite at 0 for q >= 2), else the guarded exp(q log a)."""
    if is_static(q) and abs(q - round(q)) < 1e-12 and round(q) >= 2:
        return a ** int(round(q))
    return safe_pow(a, q)


def ellipsoid_gauge(y, eps1=None, eps2=None):
    """Gauge of the unit ball, |y| (the squareness exponents are ignored)."""
    return safe_sqrt(jnp.sum(y * y))


def superellipsoid_gauge(y, eps1=0.4, eps2=0.4):
    """Gauge function G(y) of the unit superellipsoid (1 on the surface), y (3,) unit coordinates.

    eps1, eps2 may be Python floats (static: faster, integer powers when 2/eps is an integer,
    as for MEDUSA's 0.4) or traced arrays (differentiable in eps).
    """
    a = jnp.abs(y)
    if is_static(eps1) and is_static(eps2) and eps1 == eps2:
        p = 2.0 / eps1
        return safe_pow(jnp.sum(_abspow(a, p)), 1.0 / p)  # eq. (1.51): sum |y_i|^(2/eps)
    q2 = 2.0 / eps2
    inner = _abspow(a[0], q2) + _abspow(a[1], q2)
    f = safe_pow(inner, eps2 / eps1) + _abspow(a[2], 2.0 / eps1)  # Barr's inside-outside function
    return safe_pow(f, 0.5 * eps1)


def superellipsoid_inner_radius(eps1=0.4, eps2=0.4):
    """1 where both exponents are at most 1 (the unit superellipsoid then contains the unit
    ball: with p = 2/eps >= 2, ||y||_p <= ||y||_2, and likewise for Barr's two-exponent form),
    else 0 (no bound given)."""
    return jnp.where(jnp.maximum(jnp.asarray(eps1), jnp.asarray(eps2)) <= 1.0, 1.0, 0.0)


def ellipsoid_inner_radius(eps1=None, eps2=None):
    """The unit ball itself: 1."""
    return jnp.asarray(1.0)


SUPERELLIPSOID = Shape(name="superellipsoid", gauge=superellipsoid_gauge, inner_radius=superellipsoid_inner_radius)
ELLIPSOID = Shape(name="ellipsoid", gauge=ellipsoid_gauge, inner_radius=ellipsoid_inner_radius)


def gauge(y, kind="superellipsoid", eps1=0.4, eps2=0.4):
    """Gauge of the shape family `kind`: "superellipsoid", or the 2-norm ("ellipsoid", "box")."""
    if kind == "superellipsoid":
        return superellipsoid_gauge(y, eps1, eps2)
    return ellipsoid_gauge(y)
