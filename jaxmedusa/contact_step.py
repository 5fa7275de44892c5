"""The contact stage of one integration step: every vehicle pair, one contact law.

Called by `integrate.scenario_step` on the predicted positions z1~ = z1 + dt z2 and the
current velocities, as main.c calls `set_constraint_forces()`. Pairs are (a, b), a < b,
in `state.pair_indices` order; the generalized terms of simultaneous contacts are summed
per vehicle.

Laws (static `Settings.contact_law`, defined in contact_law.py): "medusa" is vehicle.c's
accumulated-multiplier law, updated on every attempt in contact, including attempts that
main.c then redoes with a smaller step; "physical" is a spring-damper normal force through
the mass matrix. Geometries: contact.py's kinds, or "medusa_search" (medusa_search.py:
contact.c's own search, warm-started from the pair's warm vector).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from typing import NamedTuple

from .contact import PairGeometry, pair_geometry
from .contact_law import ContactTerms, medusa_law, normal_force, physical_law
from .integrate import PairInfo
from .params import Settings
from .state import PairState, pair_indices

# A pair in contact whose contact-point solver residual (sine of the angle between the two
# optimality directions) exceeds this marks the scenario "contact_not_converged".
CONTACT_RESIDUAL_TOL = 1e-2
MEDUSA_SEARCH = "medusa_search"  # contact_geometry: port of contact.c detect_contact()


class _Motion(NamedTuple):
    """The velocities contact_law needs of one vehicle: v (3,), W (3, 3) (columns w_j)."""

    v: jnp.ndarray
    W: jnp.ndarray


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
    if settings.contact_geometry == MEDUSA_SEARCH:  # contact.c's own search (medusa_search.py)
        from .medusa_search import medusa_pair_geometry  # noqa: PLC0415

        return jax.vmap(lambda *args: medusa_pair_geometry(*args)[0])(
            r_pred[a], F_pred[a], p.contact_axes[a], r_pred[b], F_pred[b], p.contact_axes[b], warm)
    return jax.vmap(
        lambda r1, F1, a1, r2, F2, a2, w: pair_geometry(settings.contact_geometry, r1, F1, a1, r2, F2, a2, w,
                                                        cp.eps1, cp.eps2, broad_phase=broad)
    )(r_pred[a], F_pred[a], p.contact_axes[a], r_pred[b], F_pred[b], p.contact_axes[b], warm)


def _far_apart(batch_item, r_pred, warm, settings: Settings) -> PairGeometry:
    """The geometry of pairs whose enclosing spheres are apart: no contact, cold warm start."""
    a, b = pair_indices(r_pred.shape[0])
    d = r_pred[b] - r_pred[a]
    z3 = jnp.zeros_like(d)
    n1 = jnp.zeros_like(d).at[:, 0].set(1.0)
    none = jnp.zeros(d.shape[0], bool)
    # contact.c keeps `previous` while the bounding spheres are apart: so does medusa_search.
    keep = settings.contact_geometry == MEDUSA_SEARCH
    return PairGeometry(candidate=none, touching=none, phi1=jnp.full(d.shape[0], jnp.inf), n1=n1, T1=r_pred[a],
                        T2=r_pred[b], X1=z3, X2=z3, residual=jnp.zeros(d.shape[0]),
                        warm=warm if keep else jnp.zeros_like(warm))


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
        lambda: jax.vmap(lambda bi, r, w: _far_apart(bi, r, w, settings))(batch, r_pred, warm),
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
    geom = geom._replace(touching=geom.touching & batch_item.valid[a] & batch_item.valid[b])
    touching = geom.touching
    m1, m2 = _Motion(v[a], W[a]), _Motion(v[b], W[b])
    if physical:
        p1, p2 = jax.tree.map(lambda x: x[a], p), jax.tree.map(lambda x: x[b], p)
        t1, t2 = jax.vmap(physical_law, in_axes=(0, 0, 0, 0, 0, None))(geom, m1, m2, p1, p2, cp)
        gamma = jnp.zeros_like(pairs.gamma)
        force = jax.vmap(normal_force, in_axes=(0, 0, 0, None))(geom, m1, m2, cp)
    else:
        gamma, t1, t2 = jax.vmap(medusa_law, in_axes=(0, 0, 0, 0, None))(geom, pairs.gamma, m1, m2, cp)
        force = jnp.abs(gamma[:, 1]) * p.mass[a]  # the velocity part is an acceleration of body 1

    def gather(x1, x2):
        """Sum pair terms per vehicle: body 1 of pair k is vehicle a[k], body 2 is b[k]."""
        out = jnp.zeros((n,) + x1.shape[1:], x1.dtype)
        return out.at[a].add(x1).at[b].add(x2)

    terms = ContactTerms(*[gather(x1, x2) for x1, x2 in zip(t1, t2)])
    new_pairs = PairState(gamma=gamma, warm=geom.warm, in_contact=touching)
    info = PairInfo(touching=touching, phi1=jnp.where(geom.candidate, geom.phi1, jnp.inf), force=force, gamma=gamma)
    failed = jnp.any(touching & (geom.residual > CONTACT_RESIDUAL_TOL))
    if settings.contact_geometry == MEDUSA_SEARCH:  # the C aborts on any failed search
        failed = jnp.any(geom.candidate & (geom.residual > CONTACT_RESIDUAL_TOL))
    return jnp.any(touching), new_pairs, terms, info, failed
