"""Rigid barriers: fixed walls (a plane or a box) that vehicles hit, under every contact law.

A scenario lists its barriers (core.scenario.BarrierSpec, TOML `[[barriers]]`; arrays in
core.params.BarrierParams, built by build.py):
  plane: a point of the wall face and its outward normal (pointing into free space);
  box:   its centre, full length, width and height along its own axes, and its yaw about E3.
A box is checked along its four horizontal face normals (separating axes of a wall taller
than the car): the contact face is the one the vehicle has penetrated least.

Vehicle-wall geometry is closed form: the point of the vehicle's contact shape deepest beyond
a face with outward normal n is its support point in the direction -n (shapes/support.py,
the superellipsoid of eps1, eps2), and the depth is delta = n.(face point) - n.T. The engaged
width is the overlap of the vehicle's and the face's extents along the horizontal tangent
t = E3 x n (a plane is unbounded); the force point moves along t to its middle.

The force on the vehicle is the law's (`ContactLaw.wall_terms`, contact/laws/): the crush
law with a rigid second body and friction mu_barrier, the spring-damper on the depth, or
MEDUSA's multipliers with the wall as a body at rest. The per vehicle-barrier state (largest
overlap, multipliers) is core.state.BarrierState.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.laws.crush import engaged_width
from jaxmedusa.contact.shapes.frames import inv3
from jaxmedusa.contact.shapes.support import extent, horizontal_tangent, support
from jaxmedusa.contact.types import ContactTerms, Crush, Motion, WallContact
from jaxmedusa.core.params import BarrierParams, Settings
from jaxmedusa.core.state import BarrierState

__all__ = ["wall_contact", "barrier_stage", "WallInfo"]


class WallInfo(NamedTuple):
    """What the barrier stage saw: force [V, NB] the normal force on each vehicle from each
    barrier [N]; crush: Crush (contact.types) with leaves [V, NB, ...], body 2 the wall."""

    force: jnp.ndarray
    crush: Crush


def _face(r, F, axes, n, face_point, eps1, eps2):
    """(depth [m], deepest point) of the body beyond the face plane {x: n.x = n.face_point}."""
    h, T = support(r, F, axes, -n, eps1, eps2)  # h = -min over the body of n.x
    return jnp.dot(n, face_point) + h, T


def wall_contact(bp: BarrierParams, r, F, axes, eps1, eps2, width_min) -> WallContact:
    """One vehicle (r (3,), F (3, 3), contact semi-axes (3,) [m]) against one barrier (leaves
    of one barrier, no NB axis). Both kinds are evaluated and the barrier's own is selected."""
    dp, Tp = _face(r, F, axes, bp.normal, bp.point, eps1, eps2)
    normals = jnp.stack([bp.axes[:, 0], -bp.axes[:, 0], bp.axes[:, 1], -bp.axes[:, 1]])
    halves = jnp.stack([bp.half[0], bp.half[0], bp.half[1], bp.half[1]])
    depths, Ts = jax.vmap(lambda n, h: _face(r, F, axes, n, bp.point + h * n, eps1, eps2))(normals, halves)
    k = jnp.argmin(depths)  # separating axes: the least penetrated face
    box = bp.kind > 0.5
    n = jnp.where(box, normals[k], bp.normal)
    depth = jnp.where(box, depths[k], dp)
    T = jnp.where(box, Ts[k], Tp)
    t = horizontal_tangent(n)
    lo_v, hi_v = extent(r, F, axes, t, eps1, eps2)
    e_box = jnp.sum(jnp.abs(bp.axes.T @ t) * bp.half)  # the box's half extent along t
    c_box = jnp.dot(t, bp.point)
    big = 1e9  # [m]: a plane is unbounded along t
    width, mid = engaged_width(lo_v, hi_v, jnp.where(box, c_box - e_box, -big), jnp.where(box, c_box + e_box, big),
                               width_min)
    T = T + (mid - jnp.dot(t, T)) * t
    return WallContact(touching=depth > 0.0, depth=depth, n=n, T=T, X=inv3(F) @ (T - r), width=width)


def barrier_stage(batch_item, bstate: BarrierState, r_pred, F_pred, v, W, settings: Settings):
    """Every vehicle of one scenario against every barrier, under `settings.contact_law`.

    batch_item.barriers: leaves [NB, ...]; bstate: leaves [V, NB, ...]; r_pred, F_pred (the
    predicted positions), v, W: [V, ...]. Returns (ContactTerms [V, ...] summed over the
    barriers, new BarrierState, WallInfo [V, NB]). Padding vehicles touch nothing."""
    law = LAWS.resolve(settings.contact_law, where="Settings.contact_law")
    if law.wall_terms is None:
        raise ValueError(f"contact law {law.name!r} has no barrier contact (ContactLaw.wall_terms)")
    cp = batch_item.contact

    def one(bp, crush, gamma, r, F, vi, Wi, p, ok):
        wall = wall_contact(bp, r, F, p.contact_axes, cp.eps1, cp.eps2, cp.width_min)
        wall = wall._replace(touching=wall.touching & ok)
        return law.wall_terms(wall, gamma, crush, Motion(vi, Wi, r, F), p, cp)

    per_vehicle = jax.vmap(one, in_axes=(0, 0, 0, None, None, None, None, None, None))  # over barriers
    gamma, terms, force, crush = jax.vmap(per_vehicle, in_axes=(None, 0, 0, 0, 0, 0, 0, 0, 0))(
        batch_item.barriers, bstate.crush, bstate.gamma, r_pred, F_pred, v, W, batch_item.vehicle, batch_item.valid)
    terms = ContactTerms(*[jnp.sum(x, axis=1) for x in terms])
    return terms, BarrierState(crush=crush.memory, gamma=gamma), WallInfo(force=force, crush=crush)
