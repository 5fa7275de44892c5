"""Per-pair generalized contact terms: MEDUSA's penalty law and a physical spring-damper law.

Both take a `contact.PairGeometry` and return one `ContactTerms` per vehicle. The integrator
adds them to the rates (eq. 1.41):
    rate of z1 = z2 + (dr, dF),    rate of z2 = g + (dv, dW),
with dF, dW (3, 3) holding director rates as columns (like F and W). Terms of several pairs
acting on one vehicle are summed (vehicle.c accumulates contact.force over all pairs).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp


class ContactTerms(NamedTuple):
    """Additions to one vehicle's state rates. dr (3,) [m/s], dF (3, 3) [1/s] (columns are
    director rates), dv (3,) [m/s^2], dW (3, 3) [1/s^2] (columns)."""

    dr: jnp.ndarray
    dF: jnp.ndarray
    dv: jnp.ndarray
    dW: jnp.ndarray


def zero_terms(dtype=jnp.float64) -> ContactTerms:
    z3, z33 = jnp.zeros((3,), dtype), jnp.zeros((3, 3), dtype)
    return ContactTerms(z3, z33, z3, z33)


def material_point_velocity(state, X):
    """Velocity v + W X of the material point X (3,) [m] of a vehicle state [m/s]."""
    return state.v + state.W @ X


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
