"""A physical spring-damper normal contact law through the mass matrix (an option, not MEDUSA's).

Independent of dt, it conserves linear momentum for any masses and never gains energy in a
collision (up to the change of the contact points and normal during contact).
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.contact.types import ContactLaw, ContactTerms, material_point_velocity, overlap_crush

__all__ = ["normal_force", "physical_law", "pair_terms", "wall_terms", "LAW"]


def normal_force(geom, state1, state2, contact_params):
    """Magnitude [N] of the physical law's normal force: k * penetration + c * closing speed,
    no tension, zero when not touching. The force on body 2 is f n1, on body 1 -f n1."""
    rate = jnp.dot(material_point_velocity(state2, geom.X2) - material_point_velocity(state1, geom.X1), geom.n1)
    f = contact_params.stiffness * (-geom.phi1) - contact_params.damping * rate
    return jnp.where(geom.touching, jnp.maximum(f, 0.0), 0.0)


def physical_law(geom, state1, state2, params1, params2, contact_params):
    """Spring-damper normal contact through the mass matrix (an option, not MEDUSA's law).

    f = max(0, stiffness * (-phi1) - damping * phi2) with phi2 = (v2(X2) - v1(X1)).n1 [m/s];
    the force f n1 acts on body 2 at X2 and -f n1 on body 1 at X1, entered like an applied
    force of eq. (1.31): dv = F/m, dW[:, i] = X^i F / my^i. params1, params2: VehicleParams
    (mass, my); contact_params: ContactParams (stiffness [N/m], damping [N s/m]).
    Independent of dt; conserves linear momentum for any masses; the contact power
    f * phi2 is that of a spring plus a dashpot, so a collision never gains energy (up to the
    change of the contact points and normal during contact). Returns (terms1, terms2).
    """
    f = normal_force(geom, state1, state2, contact_params)
    force = f * geom.n1  # on body 2 [N]
    z3, z33 = jnp.zeros_like(force), jnp.zeros((3, 3), force.dtype)
    terms2 = ContactTerms(z3, z33, force / params2.mass, jnp.outer(force, geom.X2 / params2.my))
    terms1 = ContactTerms(z3, z33, -force / params1.mass, -jnp.outer(force, geom.X1 / params1.my))
    return terms1, terms2


def pair_terms(geom, gamma, memory, m1, m2, p1, p2, cp):
    """The ContactLaw interface (contact.types.ContactLaw); this law has no multipliers and
    no structures (the crush reported is the overlap)."""
    t1, t2 = physical_law(geom, m1, m2, p1, p2, cp)
    crush = overlap_crush(geom.touching, -geom.phi1, memory)
    return jnp.zeros_like(gamma), t1, t2, normal_force(geom, m1, m2, cp), crush


def wall_terms(wall, gamma, memory, m, p, cp):
    """The ContactLaw wall interface: stiffness * depth + damping * closing speed (>= 0) along
    the wall normal, at the wall contact point, through the mass matrix (eq. 1.31)."""
    rate = -jnp.dot(material_point_velocity(m, wall.X), wall.n)  # closing speed [m/s]
    f = jnp.where(wall.touching, jnp.maximum(cp.stiffness * wall.depth + cp.damping * rate, 0.0), 0.0)
    force = f * wall.n
    z3, z33 = jnp.zeros_like(force), jnp.zeros((3, 3), force.dtype)
    terms = ContactTerms(z3, z33, force / p.mass, jnp.outer(force, wall.X / p.my))
    return jnp.zeros_like(gamma), terms, f, overlap_crush(wall.touching, wall.depth, memory)


# Spheres that enclose the shapes: MEDUSA's spheres miss corner contacts until the surfaces overlap.
LAW = ContactLaw(name="physical", pair_terms=pair_terms, broad_phase="enclosing", wall_terms=wall_terms)
