"""The contact stage of one integration step: every vehicle pair, one contact law.

Called by `integrate.scenario_step` on the predicted positions z1~ = z1 + dt z2 and the
current velocities, as main.c calls `set_constraint_forces()`. Pairs are (a, b), a < b,
in `state.pair_indices` order; the generalized terms of simultaneous contacts are summed
per vehicle.

Laws (static `Settings.contact_law`):
- "medusa": vehicle.c `set_constraint_forces()`. With phi1 = (T1 - T2).n1 (> 0 when
  penetrating: the code's sign, the negative of eq. (1.39)) and phi2 = (v(X1) - v(X2)).n1
  (> 0 when approaching, eq. (1.40)), the multipliers are accumulated on every attempt in
  contact, gamma1 -= p1 phi1, gamma2 -= p2 phi2 (eqs. 1.52_2,3), and reset to 0 when the
  pair is not in contact. Body 1 gets gamma1 n1 added to the rate of r and X1^j gamma1 n1
  to the rate of d_j (position part), gamma2 n1 and X1^j gamma2 n1 to the rates of v and
  w_j (velocity part, eq. 1.42); body 2 the opposite with X2. The velocity part is an
  acceleration, not divided by the mass: momentum is conserved only for equal masses, the
  law can add energy, and its stiffness depends on dt (docs/medusa-notes.md, Contact).
- "physical": a normal force f = max(0, k delta + c delta_dot) [N] from the penetration
  delta = -phi1 >= 0 (eq. 1.39 sign) and its rate, stiffness k [N/m] and damping c [N s/m]
  (ContactParams); -f n1 acts on body 1 at X1 and +f n1 on body 2 at X2, through the mass
  matrix (dv = f/m, dw_j = X^j f/my^jj). Momentum is conserved for any masses, the force
  does not depend on dt, and it never pulls (f >= 0).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .contact import PairGeometry, pair_geometry
from .integrate import ContactTerms, PairInfo
from .params import Settings
from .state import PairState, pair_indices

# A pair in contact whose contact-point solver residual (sine of the angle between the two
# optimality directions) exceeds this marks the scenario "contact_not_converged".
CONTACT_RESIDUAL_TOL = 1e-2


def _material_velocity(v, W, X):
    """Velocity of the material point X: v + X^j w_j (W has the w_j as columns)."""
    return v + W @ X


# Spheres of this many times |semi-axes| enclose every geometry kind (the "box" kind's
# equal-volume ellipsoid is (6/pi)^(1/3) = 1.24 times larger), with room for strain.
SKIP_RADIUS_FACTOR = 1.3


def scenario_geometry(batch_item, r_pred, F_pred, warm, settings: Settings) -> PairGeometry:
    """Contact geometry of every pair of one scenario (leaves [P, ...])."""
    a, b = pair_indices(r_pred.shape[0])
    p, cp = batch_item.vehicle, batch_item.contact
    # MEDUSA's bounding sphere (largest semi-axis) misses corner contacts until the surfaces
    # overlap; the physical law uses spheres that enclose the shape.
    broad = "enclosing" if settings.contact_law == "physical" else "medusa"
    return jax.vmap(
        lambda r1, F1, a1, r2, F2, a2, w: pair_geometry(settings.contact_geometry, r1, F1, a1, r2, F2, a2, w,
                                                        cp.eps1, cp.eps2, broad_phase=broad)
    )(r_pred[a], F_pred[a], p.contact_axes[a], r_pred[b], F_pred[b], p.contact_axes[b], warm)


def _far_apart(batch_item, r_pred, warm) -> PairGeometry:
    """The geometry of pairs whose enclosing spheres are apart: no contact, cold warm start."""
    a, b = pair_indices(r_pred.shape[0])
    d = r_pred[b] - r_pred[a]
    z3 = jnp.zeros_like(d)
    n1 = jnp.zeros_like(d).at[:, 0].set(1.0)
    none = jnp.zeros(d.shape[0], bool)
    return PairGeometry(candidate=none, touching=none, phi1=jnp.full(d.shape[0], jnp.inf), n1=n1, T1=r_pred[a],
                        T2=r_pred[b], X1=z3, X2=z3, residual=jnp.zeros(d.shape[0]), warm=jnp.zeros_like(warm))


def batch_geometry(batch, r_pred, F_pred, warm, settings: Settings) -> PairGeometry:
    """Contact geometry of a whole batch (leaves [B, P, ...]). The fixed-cost narrow phase
    runs only when some pair of some scenario is within enclosing spheres (a batch-level
    lax.cond, outside vmap, so it really skips); MEDUSA's detect_contact() likewise returns
    before searching when the bounding spheres are apart."""
    a, b = pair_indices(r_pred.shape[1])
    axes = batch.vehicle.contact_axes
    radius = SKIP_RADIUS_FACTOR * jnp.linalg.norm(axes, axis=-1)  # [B, V]
    dist = jnp.linalg.norm(r_pred[:, b] - r_pred[:, a], axis=-1)
    near = (dist < radius[:, a] + radius[:, b]) & batch.valid[:, a] & batch.valid[:, b]
    return jax.lax.cond(
        jnp.any(near),
        lambda: jax.vmap(scenario_geometry, in_axes=(0, 0, 0, 0, None))(batch, r_pred, F_pred, warm, settings),
        lambda: jax.vmap(_far_apart)(batch, r_pred, warm),
    )


def contact_stage(batch_item, r_pred, F_pred, v, W, pairs: PairState, settings: Settings, geom=None):
    """Returns (any pair touching, new PairState, ContactTerms per vehicle, PairInfo, failed).
    `geom` is this scenario's PairGeometry when the caller computed it for a whole batch."""
    n = r_pred.shape[0]
    a, b = pair_indices(n)
    p = batch_item.vehicle
    cp = batch_item.contact
    physical = settings.contact_law == "physical"
    if geom is None:
        geom = scenario_geometry(batch_item, r_pred, F_pred, pairs.warm, settings)
    touching = geom.touching & batch_item.valid[a] & batch_item.valid[b]
    n1 = geom.n1
    vel1 = jax.vmap(_material_velocity)(v[a], W[a], geom.X1)
    vel2 = jax.vmap(_material_velocity)(v[b], W[b], geom.X2)
    approach = jnp.sum((vel1 - vel2) * n1, axis=1)  # phi2 of vehicle.c, > 0 when closing

    if physical:
        depth = -geom.phi1
        force = jnp.where(touching, jnp.maximum(0.0, cp.stiffness * depth + cp.damping * approach), 0.0)
        gamma = jnp.zeros_like(pairs.gamma)
        zero = jnp.zeros_like(n1)
        pos1, pos2 = zero, zero  # no position-level terms
        vel_1 = -(force / p.mass[a])[:, None] * n1  # through the mass matrix
        vel_2 = (force / p.mass[b])[:, None] * n1
        dW1 = -force[:, None, None] * n1[:, :, None] * (geom.X1 / p.my[a])[:, None, :]
        dW2 = force[:, None, None] * n1[:, :, None] * (geom.X2 / p.my[b])[:, None, :]
        dF1 = dF2 = jnp.zeros_like(dW1)
    else:
        phi1 = -geom.phi1  # vehicle.c: (rho1 - rho2).n1
        g1 = jnp.where(touching, pairs.gamma[:, 0] - cp.p1 * phi1, 0.0)
        g2 = jnp.where(touching, pairs.gamma[:, 1] - cp.p2 * approach, 0.0)
        gamma = jnp.stack([g1, g2], axis=1)
        force = jnp.abs(g2) * p.mass[a]  # the velocity part is an acceleration of body 1
        pos1 = g1[:, None] * n1
        pos2 = -pos1
        vel_1 = g2[:, None] * n1
        vel_2 = -vel_1
        dF1 = pos1[:, :, None] * geom.X1[:, None, :]  # column j: X1^j gamma1 n1
        dF2 = pos2[:, :, None] * geom.X2[:, None, :]
        dW1 = vel_1[:, :, None] * geom.X1[:, None, :]
        dW2 = vel_2[:, :, None] * geom.X2[:, None, :]

    def gather(x1, x2):
        """Sum pair terms per vehicle: body 1 of pair k is vehicle a[k], body 2 is b[k]."""
        out = jnp.zeros((n,) + x1.shape[1:], x1.dtype)
        return out.at[a].add(x1).at[b].add(x2)

    terms = ContactTerms(dr=gather(pos1, pos2), dF=gather(dF1, dF2), dv=gather(vel_1, vel_2), dW=gather(dW1, dW2))
    new_pairs = PairState(gamma=gamma, warm=geom.warm, in_contact=touching)
    info = PairInfo(touching=touching, phi1=jnp.where(geom.candidate, geom.phi1, jnp.inf), force=force, gamma=gamma)
    failed = jnp.any(touching & (geom.residual > CONTACT_RESIDUAL_TOL))
    return jnp.any(touching), new_pairs, terms, info, failed
