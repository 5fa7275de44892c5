"""MEDUSA's contact law: accumulated penalty multipliers (vehicle.c set_constraint_forces()).

A law takes a `contact.types.PairGeometry` and returns one `ContactTerms` per body. The
solver adds them to the rates (eq. 1.41):
    rate of z1 = z2 + (dr, dF),    rate of z2 = g + (dv, dW),
with dF, dW (3, 3) holding director rates as columns (like F and W). Terms of several pairs
acting on one vehicle are summed (vehicle.c accumulates contact.force over all pairs).
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.contact.types import ContactLaw, ContactTerms, Motion, PairGeometry, material_point_velocity, overlap_crush

__all__ = ["medusa_law", "pair_terms", "wall_terms", "LAW"]


def medusa_law(geom, gamma, state1, state2, params):
    """vehicle.c set_constraint_forces() for one pair (eqs 1.39-1.42, 1.52 2-3).

    geom: PairGeometry (of the predicted positions z~1); gamma (2,): accumulated multipliers
    gamma1, gamma2; state1, state2: VehicleState (v, W used); params: ContactParams (p1, p2).
    Returns (gamma_new (2,), terms1, terms2).

    Signs are the code's: with rho1 = T1 - r1 and rho2 = T2 - r1 from detect_contact(),
      phi1 = (rho1 - rho2).n1 = (T1 - T2).n1 = -geom.phi1  (> 0 when penetrating),
      phi2 = (v1(X1) - v2(X2)).n1                          (> 0 when closing),
      gamma1 -= p1 phi1, gamma2 -= p2 phi2  while in contact, both reset to 0 otherwise,
      body 1: dr += gamma1 n, d_j += X1^j gamma1 n (rate of z1); dv += gamma2 n,
              w_j += X1^j gamma2 n (rate of z2); body 2: the same with -n and X2.
    The report prints phi1 = (T2 - T1).n1 and gamma1 += p1 phi1 (eq. 1.52); with the normality
    rule (1.42) that would attract the bodies; the code's signs repel them.
    Not divided by the masses: momentum is conserved only for equal masses (docs).
    """
    n = geom.n1
    phi1 = jnp.dot(geom.T1 - geom.T2, n)  # vehicle.c: (rho1 - rho2).normal
    phi2 = jnp.dot(material_point_velocity(state1, geom.X1) - material_point_velocity(state2, geom.X2), n)
    g1 = gamma[0] - params.p1 * phi1
    g2 = gamma[1] - params.p2 * phi2
    gamma_new = jnp.where(geom.touching, jnp.stack([g1, g2]), 0.0)
    n1 = gamma_new[0] * n  # position part, eq. (1.42)_1
    n2 = gamma_new[1] * n  # velocity part, eq. (1.42)_2
    terms1 = ContactTerms(n1, jnp.outer(n1, geom.X1), n2, jnp.outer(n2, geom.X1))
    terms2 = ContactTerms(-n1, -jnp.outer(n1, geom.X2), -n2, -jnp.outer(n2, geom.X2))
    return gamma_new, terms1, terms2


def pair_terms(geom, gamma, memory, m1, m2, p1, p2, cp):
    """The ContactLaw interface (contact.types.ContactLaw): MEDUSA's law, whose force is
    |gamma2| times body 1's mass (gamma2 is an acceleration of body 1). No structures: the
    crush reported is the overlap."""
    gamma_new, t1, t2 = medusa_law(geom, gamma, m1, m2, cp)
    return gamma_new, t1, t2, jnp.abs(gamma_new[1]) * p1.mass, overlap_crush(geom.touching, -geom.phi1, memory)


def wall_terms(wall, gamma, memory, m, p, cp):
    """The ContactLaw wall interface: vehicle.c's multipliers with the wall as a body at rest
    (body 2: T2 on the wall face, so phi1 = -depth; multipliers per vehicle and barrier)."""
    z3 = jnp.zeros(3, wall.T.dtype)
    geom = PairGeometry(candidate=wall.touching, touching=wall.touching, phi1=-wall.depth, n1=-wall.n, T1=wall.T,
                        T2=wall.T + wall.depth * wall.n, X1=wall.X, X2=z3, residual=jnp.zeros_like(wall.depth),
                        warm=jnp.zeros(1, wall.T.dtype))
    gamma_new, terms, _ = medusa_law(geom, gamma, m, Motion(z3, jnp.zeros((3, 3), z3.dtype)), cp)
    return gamma_new, terms, jnp.abs(gamma_new[1]) * p.mass, overlap_crush(wall.touching, wall.depth, memory)


# MEDUSA's bounding spheres (largest semi-axis) as contact.c's broad phase. The default
# shape is contact.c's own search: the program's collision outcome is made of that search's
# answers (docs/medusa-search.md); the other shapes stay as options.
LAW = ContactLaw(name="medusa", pair_terms=pair_terms, broad_phase="medusa", wall_terms=wall_terms,
                 default_shape="medusa_search")
