"""The contact stage of one integration step: every vehicle pair, one contact law.

Called by `solver.step.scenario_step` on the predicted positions z1~ = z1 + dt z2 and the
current velocities, as main.c calls `set_constraint_forces()`. Pairs are (a, b), a < b,
in `core.state.pair_indices` order; the generalized terms of simultaneous contacts are
summed per vehicle.

The law and the shape are named by the static `Settings.contact_law` and
`Settings.contact_geometry` (None: the law's default shape, `shape_name`) and resolved here,
once per compilation, through LAWS and SHAPES: "medusa" is vehicle.c's accumulated-multiplier
law, updated on every attempt in contact, including attempts that main.c then redoes with a
smaller step; "physical" is a spring-damper normal force through the mass matrix; "crush"
the calibrated crush law (its permanent crush is the pair state's `crush`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.broad_phase import boxes_overlap, compacted_map
from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import SHAPES, pair_geometry
from jaxmedusa.contact.shapes.narrow_phase import CERT
from jaxmedusa.contact.types import ContactTerms, Motion, PairGeometry, PairInfo, overlap_crush
from jaxmedusa.core.control_flow import dense_pairs
from jaxmedusa.core.params import Settings
from jaxmedusa.core.safe_math import safe_norm
from jaxmedusa.core.state import PairState, pair_indices

__all__ = ["contact_stage", "no_contact", "batch_geometry", "batch_law_terms", "scenario_geometry", "uses_contact",
           "own_search", "shape_name", "still_apart", "CONTACT_RESIDUAL_TOL", "SKIP_RADIUS_FACTOR", "SKIP_MARGIN"]

# A pair in contact whose contact-point solver residual (sine of the angle between the two
# optimality directions) exceeds this marks the scenario "contact_not_converged".
CONTACT_RESIDUAL_TOL = 1e-2


# A pair proved apart by its last search by a gap g [m] skips the search while its bodies'
# points have moved less than g - SKIP_MARGIN since (`still_apart`); the margin keeps the
# decision clear of round-off in the gap and the motion.
SKIP_MARGIN = 1e-4  # [m]


# Spheres of this many times |semi-axes| enclose every geometry kind (the "box" kind's
# equal-volume ellipsoid is (6/pi)^(1/3) = 1.24 times larger), with room for strain.
SKIP_RADIUS_FACTOR = 1.3


def shape_name(settings: Settings) -> str:
    """The contact shape a run uses: Settings.contact_geometry, or the law's default shape."""
    if settings.contact_geometry is not None:
        return settings.contact_geometry
    return LAWS.resolve(settings.contact_law, where="Settings.contact_law").default_shape


def _shape(settings: Settings):
    return SHAPES.resolve(shape_name(settings), where="Settings.contact_geometry")


def scenario_geometry(batch_item, r_pred, F_pred, warm, settings: Settings) -> PairGeometry:
    """Contact geometry of every pair of one scenario (leaves [P, ...])."""
    a, b = pair_indices(r_pred.shape[0])
    p, cp = batch_item.vehicle, batch_item.contact
    # The law chooses its broad phase: MEDUSA's bounding sphere (largest semi-axis) misses
    # corner contacts until the surfaces overlap; the physical law uses enclosing spheres.
    law = LAWS.resolve(settings.contact_law, where="Settings.contact_law")
    shape = _shape(settings)
    if shape.geometry is not None:  # a shape with its own search (contact.types.Shape.geometry)
        one = shape.geometry
    else:
        def one(r1, F1, a1, r2, F2, a2, w):
            return pair_geometry(shape, r1, F1, a1, r2, F2, a2, w, cp.eps1, cp.eps2, broad_phase=law.broad_phase,
                                 tangent_cutoff=law.tangent_cutoff, apart_exit=True)
    return jax.vmap(one)(r_pred[a], F_pred[a], p.contact_axes[a], r_pred[b], F_pred[b], p.contact_axes[b], warm)


def own_search(settings: Settings) -> bool:
    """Whether contact is on and its shape runs its own search (medusa_search), whose state
    `warm` lives across steps."""
    return settings.contact and _shape(settings).geometry is not None


def _far_apart(batch_item, r_pred, warm) -> PairGeometry:
    """The geometry of pairs whose enclosing spheres are apart: no contact, cold warm start."""
    a, b = pair_indices(r_pred.shape[0])
    d = r_pred[b] - r_pred[a]
    z3 = jnp.zeros_like(d)
    n1 = jnp.zeros_like(d).at[:, 0].set(1.0)
    none = jnp.zeros(d.shape[0], bool)
    return PairGeometry(candidate=none, touching=none, phi1=jnp.full(d.shape[0], jnp.inf), n1=n1, T1=r_pred[a],
                        T2=r_pred[b], X1=z3, X2=z3, residual=jnp.zeros(d.shape[0]), warm=jnp.zeros_like(warm))


def _flat(x):
    """[B, P, ...] -> [B P, ...]: a batch's pairs along one axis, as the packed buffer takes them."""
    return x.reshape((-1,) + x.shape[2:])


def _unflat(x, shape):
    """[B P, ...] -> [B, P, ...] (the inverse of `_flat`): `shape` = (B, P)."""
    return x.reshape(tuple(shape) + x.shape[1:])


def _per_pair(x, shape):
    """A per-scenario value (an array [B], or one number for all) for each pair: `shape` = (B, P)."""
    return jnp.broadcast_to(jnp.asarray(x).reshape(-1, 1), shape)


def still_apart(warm, r1, F1, ell1, r2, F2, ell2):
    """Whether a pair that its last search proved apart (apart_certificate.apart_gap, kept in the
    warm vector with the bodies' r and F then) is still apart now (..., bool); ell_k (..., 3)
    [m] the contact surfaces' semi-axes. A translation of both bodies leaves their distance as
    it is; after the one that brings r2 back, a material point X of body 1 has moved by at most
    |dr1 - dr2| + |dF1 X| and one of body 2 by |dF2 X|, and |dF X| <= sum_i ell_i |dF[:, i]|
    (the shape lies in its box, |X_i| <= ell_i), so the distance has shrunk by at most their sum."""
    c = warm[..., CERT:]

    def turned(F, F_then, ell):  # sum_i ell_i |column i of F - F_then| (F_then row-major)
        d = F - F_then.reshape(F_then.shape[:-1] + (3, 3))
        return jnp.sum(ell * safe_norm(d, axis=-2), axis=-1)

    d_r = safe_norm((r1 - c[..., 1:4]) - (r2 - c[..., 13:16]), axis=-1)
    return c[..., 0] - d_r - turned(F1, c[..., 4:13], ell1) - turned(F2, c[..., 16:25], ell2) > SKIP_MARGIN


def batch_geometry(batch, r_pred, F_pred, warm, settings: Settings) -> PairGeometry:
    """Contact geometry of a whole batch (leaves [B, P, ...]). The narrow phase runs only on
    the pairs whose enclosing spheres and boxes overlap, compacted into a buffer (broad_phase.py:
    cost per near pair, not per batch x pairs); the others get `_far_apart`. MEDUSA's
    detect_contact() likewise returns before searching when the bounding spheres are apart."""
    bsz, nv = r_pred.shape[:2]
    a, b = pair_indices(nv)
    npair = a.shape[0]
    axes = batch.vehicle.contact_axes
    radius = SKIP_RADIUS_FACTOR * jnp.linalg.norm(axes, axis=-1)  # [B, V]
    dist = jnp.linalg.norm(r_pred[:, b] - r_pred[:, a], axis=-1)
    # each pair's bodies, one pair per row of the packed buffer's inputs
    inputs = (_flat(r_pred[:, a]), _flat(F_pred[:, a]), _flat(axes[:, a]), _flat(r_pred[:, b]), _flat(F_pred[:, b]),
              _flat(axes[:, b]), _flat(warm))
    shape = _shape(settings)
    if shape.geometry is not None:
        # A shape with its own search (medusa_search) runs it on the pairs whose enclosing
        # spheres overlap (a superset of contact.c's bounding-sphere test: 1.3 |A| >= max(A)),
        # one pair per round in a one-scenario run (a vmapped loop runs as long as its
        # slowest lane: one lane, one pair's iterations); the others keep their warm vector
        # (contact.c leaves `previous` untouched while the bounding spheres are apart).
        near = (dist < radius[:, a] + radius[:, b]) & batch.valid[:, a] & batch.valid[:, b]
        if getattr(batch, "joints", None) is not None:
            near = near & jnp.logical_not(batch.joints.excluded)
        default = jax.tree.map(_flat, jax.vmap(_far_apart)(batch, r_pred, warm)._replace(warm=warm))
        geom = compacted_map(lambda x: shape.geometry(*x), _flat(near), inputs, default,
                             capacity=1 if bsz == 1 else None)
        return jax.tree.map(lambda x: _unflat(x, (bsz, npair)), geom)
    law = LAWS.resolve(settings.contact_law, where="Settings.contact_law")
    Bm = F_pred * (shape.ellipsoid_scale * axes)[:, :, None, :]  # [B, V, 3, 3]: F diag(a), the box of each body
    # on the batch's pairs along one axis, not vmapped (broad_phase.boxes_overlap)
    boxes = _unflat(boxes_overlap(_flat(r_pred[:, a]), _flat(Bm[:, a]), _flat(r_pred[:, b]), _flat(Bm[:, b])),
                    (bsz, npair))
    near = (dist < radius[:, a] + radius[:, b]) & boxes & batch.valid[:, a] & batch.valid[:, b]
    if getattr(batch, "joints", None) is not None:  # coupled pairs: no contact (docs/trailers.md)
        near = near & jnp.logical_not(batch.joints.excluded)
    # squareness exponents: static floats (the batch's own, compiled in: integer powers) are
    # closed into the pair function; arrays [B] go to each pair (core.params.ContactParams)
    eps = (batch.contact.eps1, batch.contact.eps2)
    static_eps = all(isinstance(e, float) for e in eps)
    if not static_eps:
        inputs += tuple(_flat(_per_pair(e, (bsz, npair))) for e in eps)
    # a pair still apart by its last search's proof skips the search and keeps its warm vector
    # (while it holds, no force can act); the law then takes it as apart (far_terms)
    ell = shape.ellipsoid_scale * axes  # [B, V, 3]
    skip = still_apart(warm, r_pred[:, a], F_pred[:, a], ell[:, a], r_pred[:, b], F_pred[:, b], ell[:, b])
    default = jax.vmap(_far_apart)(batch, r_pred, warm)
    default = jax.tree.map(_flat, default._replace(warm=jnp.where(skip[..., None], warm, default.warm)))
    dense = dense_pairs(bsz * npair)  # an accelerator's small batch: no conditions (core/control_flow.py)

    def one(x):  # apart_exit: a pair that is apart needs only its overlap decision (narrow_phase.APART_MARGIN)
        return pair_geometry(shape, *x, *(eps if static_eps else ()), broad_phase=law.broad_phase, unrolled=dense,
                             tangent_cutoff=law.tangent_cutoff, apart_exit=True)

    geom = compacted_map(one, _flat(near & ~skip), inputs, default, dense=dense)
    return jax.tree.map(lambda x: _unflat(x, (bsz, npair)), geom)


def _law_geometry(batch_item, geom: PairGeometry) -> PairGeometry:
    """The geometry a law sees (one scenario): no contact for padding vehicles, nor between a
    tow vehicle and its trailer (docs/trailers.md, "Contact")."""
    a, b = pair_indices(batch_item.valid.shape[0])
    geom = geom._replace(touching=geom.touching & batch_item.valid[a] & batch_item.valid[b])
    joints = getattr(batch_item, "joints", None)
    if joints is not None:
        free = jnp.logical_not(joints.excluded)
        geom = geom._replace(touching=geom.touching & free, candidate=geom.candidate & free)
    return geom


def _pair_inputs(batch_item, geom, pairs: PairState, r_pred, F_pred, v, W):
    """The arguments of law.pair_terms for every pair of one scenario (leaves [P, ...])."""
    a, b = pair_indices(r_pred.shape[0])
    p = batch_item.vehicle
    m1, m2 = Motion(v[a], W[a], r_pred[a], F_pred[a]), Motion(v[b], W[b], r_pred[b], F_pred[b])
    p1, p2 = jax.tree.map(lambda x: x[a], p), jax.tree.map(lambda x: x[b], p)
    return geom, pairs.gamma, pairs.crush, m1, m2, p1, p2


def batch_law_terms(batch, geom: PairGeometry, pairs: PairState, r_pred, F_pred, v, W, settings: Settings):
    """The contact law's pair terms for a whole batch (leaves [B, P, ...]: (gamma, terms1, terms2,
    force, Crush), as law.pair_terms returns them per pair), or None when the law has no
    `far_terms` or the batch's contact stage is dense (core/control_flow.py: no conditions on
    an accelerator); contact_stage then evaluates pair_terms for every pair. pair_terms runs only
    for the pairs whose narrow phase ran (geom.candidate), packed into the buffer the narrow
    phase uses (broad_phase.compacted_map); far_terms gives the others' at a fraction of the
    cost: with the crush law the terms of pairs that are apart were 0.65 us of a 2.2 us step
    per scenario, and the trackers reading their crash records 0.65 more (benchmarks/RESULTS.md,
    "The crush law only for near pairs")."""
    law = LAWS.resolve(settings.contact_law, where="Settings.contact_law")
    bsz, npair = geom.touching.shape[:2]
    if law.far_terms is None or dense_pairs(bsz * npair):  # (an accelerator's dense stage: every pair anyway)
        return None
    geom = jax.vmap(_law_geometry)(batch, geom)
    args = jax.vmap(_pair_inputs)(batch, geom, pairs, r_pred, F_pred, v, W)
    cp = jax.tree.map(lambda x: _per_pair(x, (bsz, npair)), batch.contact)
    inputs = jax.tree.map(_flat, (*args, cp))
    default = jax.vmap(lambda i: law.far_terms(*i[1:]))(inputs)  # (everything but the geometry)
    out = compacted_map(lambda i: law.pair_terms(*i), _flat(geom.candidate), inputs, default)
    return jax.tree.map(lambda x: _unflat(x, (bsz, npair)), out)


def uses_contact(settings: Settings, n_vehicles: int) -> bool:
    """Whether a run with `n_vehicles` vehicles has a contact stage (static)."""
    return settings.contact and n_vehicles >= 2


def no_contact(batch_item, r_pred, F_pred, v, W, pairs: PairState, settings: Settings, geom=None, law_terms=None):
    """Contact stage for runs without contact: nothing touches (same returns as contact_stage)."""
    n, p = r_pred.shape[0], pairs.gamma.shape[0]
    z3, z33 = jnp.zeros((n, 3)), jnp.zeros((n, 3, 3))
    none = jnp.zeros((p,), bool)
    info = PairInfo(touching=none, phi1=jnp.full((p,), jnp.inf), force=jnp.zeros((p,)), gamma=jnp.zeros((p, 2)),
                    crush=jax.vmap(overlap_crush)(none, jnp.zeros((p,)), pairs.crush),
                    point=jnp.zeros((p, 3)), normal=jnp.zeros((p, 3)))
    return jnp.asarray(False), pairs, ContactTerms(z3, z33, z3, z33), info, jnp.asarray(False)


def contact_stage(batch_item, r_pred, F_pred, v, W, pairs: PairState, settings: Settings, geom=None,
                  law_terms=None):
    """Returns (any pair touching, new PairState, ContactTerms per vehicle, PairInfo, failed).
    `geom` is this scenario's PairGeometry, and `law_terms` its pairs' law.pair_terms
    (batch_law_terms), when the caller computed them for a whole batch."""
    n = r_pred.shape[0]
    a, b = pair_indices(n)
    law = LAWS.resolve(settings.contact_law, where="Settings.contact_law")
    if geom is None:
        geom = scenario_geometry(batch_item, r_pred, F_pred, pairs.warm, settings)
    geom = _law_geometry(batch_item, geom)
    if law_terms is None:
        gamma, t1, t2, force, crush = jax.vmap(law.pair_terms, in_axes=(0, 0, 0, 0, 0, 0, 0, None))(
            *_pair_inputs(batch_item, geom, pairs, r_pred, F_pred, v, W), batch_item.contact)
    else:
        gamma, t1, t2, force, crush = law_terms
    touching = crush.touching  # the crush law: overlap inside the permanent crush carries no force

    def gather(x1, x2):
        """Sum pair terms per vehicle: body 1 of pair k is vehicle a[k], body 2 is b[k]. Static
        sums in the order of a scatter-add (x1 terms, then x2 terms, pair by pair), written
        out: a scatter keeps XLA from compiling the time loop whole (core/xla_flags.py)."""
        rows = []
        for vehicle in range(n):
            parts = [x1[k] for k in np.flatnonzero(a == vehicle)] + [x2[k] for k in np.flatnonzero(b == vehicle)]
            rows.append(sum(parts[1:], parts[0]) if parts else jnp.zeros(x1.shape[1:], x1.dtype))
        return jnp.stack(rows)

    terms = ContactTerms(*[gather(x1, x2) for x1, x2 in zip(t1, t2)])
    new_pairs = PairState(gamma=gamma, warm=geom.warm, in_contact=touching, crush=crush.memory)
    seen = geom.candidate[:, None]
    info = PairInfo(touching=touching, phi1=jnp.where(geom.candidate, geom.phi1, jnp.inf), force=force, gamma=gamma,
                    crush=crush, point=jnp.where(seen, 0.5 * (geom.T1 + geom.T2), 0.0),
                    normal=jnp.where(seen, geom.n1, 0.0))
    # a search shape fails as the C aborts: on any candidate pair's failed search
    watched = geom.candidate if own_search(settings) else touching
    failed = jnp.any(watched & (geom.residual > CONTACT_RESIDUAL_TOL))
    return jnp.any(touching), new_pairs, terms, info, failed
