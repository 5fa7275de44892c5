"""Types the contact stage hands to the solver, and shapes, laws and stage share.

They live below both the contact package and the solver, so neither imports the other's
internals (MJX's collision_types.py does the same). Shapes are per pair, without a batch
axis; the stage lifts them with vmap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import jax.numpy as jnp

__all__ = ["PairGeometry", "ContactTerms", "PairInfo", "Motion", "material_point_velocity", "Shape", "ContactLaw",
           "TANGENT_CUTOFF", "zero_terms", "Crush", "overlap_crush", "WallContact", "add_terms"]


class PairGeometry(NamedTuple):
    """Contact geometry of one pair (body 1, body 2). World quantities in metres.

    candidate: () bool, broad phase passed (bounding spheres overlap, eq. 1.43).
    touching: () bool, MEDUSA's contact (detect_contact() returns TRUE): candidate and the
        bodies overlap (phi1 <= 0 for superellipsoid/ellipsoid); for "box" also not excluded
        by rule (1) of report IV.
    phi1: () gap [m]: (T2 - T1).n1 when the bodies overlap (eq. 1.39, <= 0); when they are
        separated, |T2 - T1| > 0 (an upper bound of the distance that tends to 0 at first touch).
    n1: (3,) outward unit normal of body 1 at T1 (box normal for "box").
    T1, T2: (3,) world points of deepest mutual penetration.
    X1, X2: (3,) material labels X = F^-1 (T - r) [m].
    residual: () sine of the angle between the surface normal at T and the gradient of the
        other body's inside-outside function there (0 at an exact solution), max over T1, T2.
    warm: (WARM_SIZE,) warm start for the next call (shapes.narrow_phase.WARM_SIZE).
    """

    candidate: jnp.ndarray
    touching: jnp.ndarray
    phi1: jnp.ndarray
    n1: jnp.ndarray
    T1: jnp.ndarray
    T2: jnp.ndarray
    X1: jnp.ndarray
    X2: jnp.ndarray
    residual: jnp.ndarray
    warm: jnp.ndarray


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


def add_terms(a: ContactTerms, b: ContactTerms) -> ContactTerms:
    """The sum of two sets of contact terms (same shapes)."""
    return ContactTerms(*[x + y for x, y in zip(a, b)])


class Crush(NamedTuple):
    """What one contact did to the structures of its two bodies on this step; every law
    returns it (the crush law, contact/laws/crush.py, fills it; the others report the overlap).

    touching () bool: the contact carries force; memory (3,) [m]: the pair's persistent
    state after the step (core.state.PairState.crush: the largest overlap so far, then the
    overlaps of the last two steps, contact/laws/crush.py); crush (2,) [m]: dynamic crush
    of body 1 and body 2; residual (2,) [m]: their permanent crush; power (2,) [W]: the
    power going into each structure (its time integral is the absorbed energy). Laws with
    structures also say where (analysis/damage.py): width () [m] the engaged width; X (2, 3)
    [m] the force point's material label in each body; normal (2, 3) each body's outward
    normal at the contact in its own frame (components along its unit d1, d2, d3); None
    for laws without."""

    touching: jnp.ndarray
    memory: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray
    width: jnp.ndarray | None = None
    X: jnp.ndarray | None = None
    normal: jnp.ndarray | None = None


def overlap_crush(touching, overlap, memory) -> Crush:
    """The Crush of a law without structures: both bodies' crush is the overlap [m] (>= 0)
    while touching, nothing permanent, no power; memory passes through unchanged."""
    x = jnp.where(touching, jnp.maximum(overlap, 0.0), 0.0)
    z = jnp.zeros((2,), x.dtype)
    return Crush(touching=touching, memory=memory, crush=jnp.stack([x, x]), residual=z, power=z)


class WallContact(NamedTuple):
    """One vehicle against one rigid barrier (contact/barrier.py), world quantities in m.

    touching () bool: the vehicle's contact shape reaches beyond the wall face; depth () [m]:
    how far (> 0 penetrating); n (3,): the wall's outward unit normal at the contact (the
    direction of the normal force on the vehicle); T (3,): the force point; X (3,): its
    material label X = F^-1 (T - r); width () [m]: the engaged width along E3 x n."""

    touching: jnp.ndarray
    depth: jnp.ndarray
    n: jnp.ndarray
    T: jnp.ndarray
    X: jnp.ndarray
    width: jnp.ndarray


class PairInfo(NamedTuple):
    """What the contact stage saw on this step, per pair (P, ...)."""

    touching: jnp.ndarray  # (P,) bool, contact (for the crush law: contact that carries force)
    phi1: jnp.ndarray  # (P,) gap along n1 [m] (large positive when not a candidate)
    force: jnp.ndarray  # (P,) normal contact force magnitude [N] (law-specific, see contact/laws/)
    gamma: jnp.ndarray  # (P, 2) multipliers gamma1, gamma2 after this step (MEDUSA law; 0 otherwise)
    crush: Crush | None = None  # leaves [P, ...]: crush of the two bodies (Crush)
    point: jnp.ndarray | None = None  # (P, 3) midpoint of T1, T2 of the predicted state [m] (0: no candidate)
    normal: jnp.ndarray | None = None  # (P, 3) n1, outward unit normal of body 1 there (0: no candidate)


class Motion(NamedTuple):
    """What a contact law may read of one vehicle: v (3,) [m/s], W (3, 3) [1/s] (columns w_j),
    and the predicted position r (3,) [m] and directors F (3, 3) of the step (the crush law
    reads them for the faces and the engaged width; None where a caller has none)."""

    v: jnp.ndarray
    W: jnp.ndarray
    r: jnp.ndarray | None = None
    F: jnp.ndarray | None = None


def material_point_velocity(state, X):
    """Velocity v + W X of the material point X (3,) [m] of a vehicle (a Motion or a
    VehicleState: v, W used) [m/s]."""
    return state.v + state.W @ X


@dataclass(frozen=True)
class Shape:
    """A contact shape (an entry of contact.shapes.SHAPES).

    gauge(y, eps1, eps2) -> G: the gauge function of the unit shape (1 on the surface), y (3,)
        unit coordinates; eps1, eps2 static floats or traced arrays.
    ellipsoid_scale: the contact points live on the surface with semi-axes
        ellipsoid_scale * axes (1 for the shape itself; (6/pi)^(1/3) for report IV's box).
    normal(T1, T2, r1, r2, body1, body2) -> (n1 (3,), excluded ()): a contact normal that
        replaces the surface normal of body 1, and a rule that excludes contact; None keeps
        the surface normal and excludes nothing.
    inner_radius(eps1, eps2) -> rho: the radius of a ball about the centre that the unit shape
        contains (unit coordinates); the narrow phase turns a search's proof that two bodies
        are apart into a gap in metres with it (apart_certificate.apart_gap). None: no such proof.
    geometry(r1, F1, axes1, r2, F2, axes2, warm) -> PairGeometry: a shape with its own contact
        search (e.g. MEDUSA's detect_contact(), shapes/medusa_search.py) replaces the
        narrow-phase solver with it; the stage then keeps `warm` (the search's state) while
        the pair is far apart and counts a failed search of any candidate pair (residual >
        stage.CONTACT_RESIDUAL_TOL) as a failure. None: the narrow-phase solver on `gauge`.
    """

    name: str
    gauge: Callable
    ellipsoid_scale: float = 1.0
    normal: Callable | None = None
    inner_radius: Callable | None = None
    geometry: Callable | None = None


# relative size of the singular values below which the narrow phase's implicit derivative
# (shapes/narrow_phase.py, `implicit_solver`) leaves a direction out; a law may ask for another
TANGENT_CUTOFF = 1e-6


@dataclass(frozen=True)
class ContactLaw:
    """A contact law (an entry of contact.laws.LAWS).

    pair_terms(geom, gamma, memory, m1, m2, p1, p2, cp) -> (gamma_new (2,), terms1, terms2,
        force, Crush): one pair's generalized terms (ContactTerms of body 1 and body 2), its
        multipliers after the step (zeros for laws without them), its normal force
        magnitude [N] and what it did to the structures (Crush, whose memory is the pair's new
        persistent state); geom: PairGeometry, gamma (2,) the multipliers before,
        memory (3,) the state before [m], m1, m2: Motion, p1, p2: VehicleParams of the
        two bodies, cp: ContactParams of the scenario.
    wall_terms(wall, gamma, memory, m, p, cp) -> (gamma_new (2,), terms, force, Crush): the
        same for one vehicle against a rigid barrier (contact/barrier.py): wall a
        WallContact, body 1 the vehicle, body 2 the wall (its crush 0); None: the law has
        no barrier contact.
    broad_phase: "medusa" (contact.c's spheres of the largest semi-axis) or "enclosing"
        (spheres that enclose the shapes), see shapes.narrow_phase.pair_geometry.
    shrink_on_contact: whether contact asks the step control to redo the step with a
        smaller dt (MEDUSA's rule, which its multiplier law needs); False: the law's answer
        does not depend on it and the steps stay at dt.
    default_shape: the contact shape (a name of contact.shapes.SHAPES) the law uses when
        the settings name none (`Settings.contact_geometry = None`).
    tangent_cutoff: the relative singular value below which the narrow phase's implicit
        derivative leaves a direction of the contact points out (shapes/narrow_phase.py,
        `implicit_solver`): the deepest point's slide along nearly parallel flat faces.
    far_terms(gamma, memory, m1, m2, p1, p2, cp) -> what pair_terms returns for a pair whose
        narrow phase did not run (its geometry contact.stage._far_apart: no contact), computed
        cheaply; then a batch evaluates pair_terms only for the pairs whose narrow phase ran,
        packed as the narrow phase's are (contact.stage.batch_law_terms), and far_terms for the
        rest. None: pair_terms for every pair and step.
    """

    name: str
    pair_terms: Callable
    broad_phase: str = "medusa"
    wall_terms: Callable | None = None
    shrink_on_contact: bool = True
    default_shape: str = "superellipsoid"
    tangent_cutoff: float = TANGENT_CUTOFF
    far_terms: Callable | None = None
