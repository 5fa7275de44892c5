"""Friction as a field of the road: the friction zones of a scenario, evaluated at each tire's
contact point (physics.vehicle.WheelInfo.point), so that tires never know where they are.

A zone (TOML `[[road.zones]]`, core.scenario.ZoneSpec) is a polygon on the road's plan view
(x, y) [m] with a peak and a sliding friction coefficient. Outside every zone a tire has its
own friction (its model's mu0 or mu_p / mu_s); inside one, the zone's. Zones later in the
list lie on top of earlier ones where they overlap. EDC's terrain boundary (the EDC
simulation manual, "Assign the coefficient of friction": a straight line with a zone on each
side) is the special case of two half-plane polygons.

Sharp boundary (width 0): the weight of a zone is exactly 1 inside and 0 outside (crossing-
number test), a step, as EDC assigns it. Smoothed (width w > 0): the weight is the C^1
smoothstep of the signed distance d to the polygon's edges (> 0 inside) over the band
|d| < w/2, so the friction and its derivatives stay finite across the boundary and the
friction is the mean of the two sides on the boundary itself.

Written out here because no JAX library offers a differentiable point-in-polygon
(shapely and matplotlib.path work on numpy values, not traced ones).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmedusa.core.params import ZoneParams
from jaxmedusa.core.safe_math import safe_hypot

__all__ = ["zone_weights", "road_friction"]


def _signed_distance_and_inside(corners, p):
    """(signed distance [m] of the point p (2,) to the polygon corners (NP, 2), > 0 inside;
    inside (bool) by the crossing number). Padding corners repeat the last one: their
    zero-length edges change neither the distance nor the crossings."""
    a = corners
    b = jnp.roll(corners, -1, axis=0)  # edge k runs from corner k to corner k+1 (closing the polygon)
    ab = b - a
    ab2 = jnp.sum(ab * ab, axis=1)
    u = jnp.clip(jnp.sum((p - a) * ab, axis=1) / jnp.where(ab2 > 0.0, ab2, 1.0), 0.0, 1.0)
    q = a + u[:, None] * ab - p
    dists = safe_hypot(q[:, 0], q[:, 1])
    near = jnp.argmin(dists)
    dist = dists[near]
    straddles = (a[:, 1] > p[1]) != (b[:, 1] > p[1])
    dy = jnp.where(straddles, ab[:, 1], 1.0)
    x_cross = a[:, 0] + (p[1] - a[:, 1]) * ab[:, 0] / dy
    inside = (jnp.sum(straddles & (p[0] < x_cross)) % 2) == 1
    # Beside the nearest edge (projection within it) the signed distance is the perpendicular
    # one, smooth through 0 on the edge (the inside lies to the left of a counter-clockwise
    # polygon: orientation from the shoelace area); beyond a corner, +-|q| by the crossing test.
    orientation = jnp.sign(jnp.sum(a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]))
    e, w = ab[near], p - a[near]
    length = jnp.sqrt(jnp.where(ab2[near] > 0.0, ab2[near], 1.0))
    perpendicular = orientation * (e[0] * w[1] - e[1] * w[0]) / length
    beside = (u[near] > 0.0) & (u[near] < 1.0)
    return jnp.where(beside, perpendicular, jnp.where(inside, dist, -dist)), inside


def _smoothstep(x):
    """0 for x <= 0, 1 for x >= 1, 3 x^2 - 2 x^3 between (C^1)."""
    x = jnp.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def zone_weights(zones: ZoneParams, points):
    """(NZ, W) weight of each zone at each contact point (points (W, 2) [m]): 1 inside, 0
    outside (padding zones 0), the smoothstep across a band of the zone's width."""
    def one_zone(corners, width, valid):
        d, inside = jax.vmap(_signed_distance_and_inside, in_axes=(None, 0))(corners, points)
        smooth = width > 0.0
        w = jnp.where(smooth, _smoothstep(d / jnp.where(smooth, width, 1.0) + 0.5), inside.astype(d.dtype))
        return jnp.where(valid, w, 0.0)

    return jax.vmap(one_zone)(zones.corners, zones.width, zones.valid)


def road_friction(zones: ZoneParams, points, own):
    """(mu_peak, mu_slide) (W,) under each contact point: the tire's own `own` = (mu_peak,
    mu_slide) outside every zone, a zone's inside it, later zones over earlier ones."""
    weights = zone_weights(zones, points)
    mu_p, mu_s = own
    for k in range(weights.shape[0]):  # NZ is static and small: later zones cover earlier ones
        w = weights[k]  # (1 - w) a + w b: exactly b inside a zone, exactly a outside
        mu_p = (1.0 - w) * mu_p + w * zones.mu_peak[k]
        mu_s = (1.0 - w) * mu_s + w * zones.mu_slide[k]
    return mu_p, mu_s
