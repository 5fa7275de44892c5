"""The crush law: a structural contact law calibrated to crash tests, for one pair (no batch axis).

Reconstruction practice (CRASH3, EDSMAC, PC-Crash) models a car's structure by its crush: a
force per unit damage width that grows with crush depth, unloading along a steeper path so
that crush stays, and friction between the vehicles. docs/crash-law.md derives the defaults
and states their sources. Units: N, m, s.

Loading (Campbell's line). With the residual crush C [m] and the damage width w [m],
Campbell's relation is F/w = A + B C (A [N/m], B [N/m^2]); below the no-damage force A
nothing stays. In terms of the dynamic crush x [m] (the overlap of the undeformed shape)
this is the line F/w = B x with the permanent crush C = x_max - d0, d0 = A / B [m] (CRASH3's
no-damage deflection): the peak force is w (A + B C) and the loading energy is CRASH3's
w (A C + B C^2 / 2 + A^2 / 2B).

Two bodies. The structures are springs in series: on loading vehicle i takes the share
s_i = B_j / (B_i + B_j) of the pair's overlap delta, the pair's line is F/w = B_s delta with
B_s = B_i B_j / (B_i + B_j), and its permanent overlap is delta_p = sum_i max(0, s_i delta_max
- d0_i). A rigid barrier is B_j = infinity (s_vehicle = 1).

Unloading (and reloading below delta_max): F/w = B_s delta_max ((delta - delta_p) /
(delta_max - delta_p))^n. It lies below the loading line, so every load-unload cycle absorbs
energy; it returns the fraction 2 q / (n + 1) of the loading energy, q = (delta_max -
delta_p) / delta_max (restitution^2 of the structure). n follows the state (unloading_exponent)
so that the restitution falls with the crush depth as staged tests show: e(q) = e_high +
(e_low - e_high) q^6, e_low = sqrt(2 / (unload_exp + 1)), e_high = restitution_high.
delta_max, the largest overlap reached, is the pair's state (core.state.PairState.crush):
permanent. It is the peak of the overlap between the step samples, not the largest sample
(`peak_between_steps`): a sample-based maximum makes the unloading path, and every outcome
after it, depend on where the peak falls between two steps, and derivatives through a
collision scatter by tens of % around the outcome's slope (docs/gradients.md). So the state
holds, beside delta_max, the overlaps of the last two steps (core.state.CRUSH_MEMORY).

Crush rate: F = w f(delta) max(0, 1 + zeta d(delta)/dt), zeta = ContactParams.crush_rate
[s/m] (default 0; its power is never positive). The law is planar (CRASH3, EDSMAC): the force
acts along the horizontal part of the contact normal, and friction (Coulomb, mu F) along the
horizontal tangent t = E3 x n against the sliding speed v_t = v_rel . t, regularised as
v_t / sqrt(v_t^2 + v_slip^2) (smooth and differentiable).

Faces. The outward normal of vehicle i at the contact, in its body frame (u1 forward, u2
left), weights its face coefficients: B = (max(u1,0)^2 B_front + max(-u1,0)^2 B_rear +
u2^2 B_side) / (u1^2 + u2^2), the same for A (continuous in the contact direction).

Width: the engaged width w is the overlap of the two bodies' extents along the horizontal
tangent t = E3 x n (shapes/support.py; the superellipsoid of eps1, eps2), at least
ContactParams.width_min; the force points move along t to the middle of the engaged
interval, so the force's yaw moment is that of the engaged region.

Forces enter like an applied force of eq. (1.31): dv = f/m, dW[:, i] = X^i f / my^i, equal
and opposite on the two bodies, so linear momentum is conserved exactly. The law does not
need MEDUSA's shrink-on-contact step rule (shrink_on_contact=False).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxmedusa.contact.shapes.frames import inv3
from jaxmedusa.contact.shapes.support import extent, horizontal_tangent
from jaxmedusa.contact.types import ContactLaw, ContactTerms, Crush, material_point_velocity
from jaxmedusa.core.safe_math import TINY, normalize, safe_pow

__all__ = ["CrushForce", "crush_force", "peak_between_steps", "unloading_exponent", "RESTITUTION_SHAPE", "friction_force", "face_coefficients",
           "applied_terms", "body_normal", "engaged_width",
           "pair_terms", "far_crush", "far_terms", "wall_terms", "LAW", "FRONT", "REAR", "SIDE"]

FRONT, REAR, SIDE = 0, 1, 2  # order of VehicleParams.crush_a / crush_b


class CrushForce(NamedTuple):
    """The crush law's answer for one contact: force () normal force [N] (>= 0); memory (3,)
    the new state (largest overlap, this step's overlap, the previous step's) [m]; crush (2,)
    dynamic crush of body 1, body 2 [m]; residual (2,) permanent crush [m]; power (2,) power
    into each structure [W] (negative while unloading returns energy)."""

    force: jnp.ndarray
    memory: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray


RESTITUTION_SHAPE = 6.0  # [-] p of e(q) = e_high + (e_low - e_high) q^p (docs/crash-law.md, "Restitution")


def unloading_exponent(q, unload_exp, restitution_high):
    """Unloading exponent n [-] of a path whose elastic fraction is q = (delta_max - delta_p) /
    delta_max (1 below the damage threshold, -> A/(B x_max) in a severe crash).

    The path returns 2 q / (n + 1) of the loading energy, a restitution e = sqrt(2 q / (n + 1)).
    The law asks for e(q) = e_high + (e_low - e_high) q^p, e_low = sqrt(2 / (unload_exp + 1))
    (q = 1: the exponent unload_exp), so n = 2 q / e(q)^2 - 1, at least 1."""
    e_low = jnp.sqrt(2.0 / (unload_exp + 1.0))
    e = restitution_high + (e_low - restitution_high) * safe_pow(q, RESTITUTION_SHAPE)
    return jnp.maximum(2.0 * q / jnp.maximum(e * e, TINY) - 1.0, 1.0)


def peak_between_steps(d_before, d_last, d_now):
    """The peak [m] of the overlap between the last step sample and this one, estimated from
    the parabola through the last three samples (equal steps: two steps ago, one step ago,
    now; each [m], >= 0), where that parabola is concave with its vertex in (t_last, t_now];
    0 elsewhere.

    With p(s) = d_last + beta s - kappa s^2 / 2 through s = -1, 0, 1 (in steps), beta =
    (d_now - d_before) / 2 and kappa = 2 d_last - d_before - d_now, the vertex lies at s* =
    beta / kappa with the value d_last + beta s* / 2 (<= d_last + beta / 2: bounded as kappa
    -> 0). Exact for a quadratic overlap history, whatever the phase of the samples, so that
    the unloading path no longer depends on it. Continuous in the samples: at s* = 1 the
    value is d_now, at s* = 0 it is d_last (both already in the running maximum)."""
    beta = 0.5 * (d_now - d_before)
    kappa = 2.0 * d_last - d_before - d_now
    inside = (beta >= 0.0) & (beta <= kappa) & (kappa > TINY)
    s = beta / jnp.where(inside, kappa, 1.0)
    return jnp.where(inside, d_last + 0.5 * beta * s, 0.0)


def _series(a1, b1, a2, b2):
    """The two structures as springs in series (module docstring): (shares (2,), the overlap's
    share on each body; b_s [N/m^2], the pair's B; d0 (2,) [m], CRASH3's no-damage deflections
    A/B). b2 = inf: a rigid barrier."""
    rigid2 = jnp.isinf(b2)
    b2f = jnp.where(rigid2, 1.0, b2)
    s1 = jnp.where(rigid2, 1.0, b2f / (b1 + b2f))  # share of the overlap on body 1
    b_s = jnp.where(rigid2, b1, b1 * b2f / (b1 + b2f))
    return jnp.stack([s1, 1.0 - s1]), b_s, jnp.stack([a1 / b1, jnp.where(rigid2, 0.0, a2 / b2f)])


def crush_force(delta, rate, memory, width, a1, b1, a2, b2, unload_exp, crush_rate, restitution_high=None) -> CrushForce:
    """Normal force of two crushable structures in series (module docstring).

    delta [m]: overlap (> 0 when touching; <= 0 gives no force); rate [m/s]: d(delta)/dt
    (> 0 closing); memory (3,) [m]: the state (largest overlap so far, the overlaps of the
    last two steps; zeros before any contact); width [m]; a_i [N/m], b_i
    [N/m^2]: Campbell coefficients of the faces in contact; b2 = inf for a rigid barrier (a2
    unused). unload_exp [-] >= 1: the unloading exponent below the damage threshold;
    crush_rate [s/m]; restitution_high [-]: the restitution of a severe crush (None: the
    exponent stays unload_exp at every depth).
    """
    shares, b_s, d0 = _series(a1, b1, a2, b2)
    d = jnp.maximum(delta, 0.0)
    dmax, d_last, d_before = memory[0], memory[1], memory[2]
    dmax_new = jnp.maximum(jnp.maximum(dmax, d), peak_between_steps(d_before, d_last, d))
    xmax = shares * dmax_new  # each structure's largest crush
    xp = jnp.maximum(xmax - d0, 0.0)  # permanent: Campbell's C = x_max - A/B
    dp = jnp.sum(xp)
    span = dmax_new - dp  # >= 0; the elastic part sum_i min(x_max_i, d0_i)
    ok = span > TINY
    ratio = jnp.clip((d - dp) / jnp.where(ok, span, 1.0), 0.0, 1.0)
    if restitution_high is None:
        n = unload_exp
    else:  # the elastic fraction q of the largest overlap sets the path (a function of the state)
        q = jnp.where(dmax_new > TINY, span / jnp.where(dmax_new > TINY, dmax_new, 1.0), 1.0)
        n = unloading_exponent(q, unload_exp, restitution_high)
    f_path = b_s * dmax_new * safe_pow(ratio, n)  # = b_s d on the loading line (d = dmax)
    f = width * f_path * jnp.maximum(1.0 + crush_rate * rate, 0.0)
    f = jnp.where(delta > 0.0, f, 0.0)
    # each structure's crush on the path: on loading the series shares; on unloading each
    # recovers in proportion to its elastic part (x_max_i - x_p_i)
    loading = d >= dmax_new
    c_unl = jnp.where(ok, (xmax - xp) / jnp.where(ok, span, 1.0), shares)
    crush = jnp.where(loading, shares * d, xp + c_unl * jnp.maximum(d - dp, 0.0))
    share = jnp.where(loading, shares, c_unl)
    power = f * share * jnp.where(d - dp > 0.0, rate, 0.0)
    return CrushForce(force=f, memory=jnp.stack([dmax_new, d, d_last]), crush=crush, residual=xp, power=power)


def friction_force(normal_force, v_slide, mu, v_slip, t=None):
    """Regularised Coulomb friction [N] (3,) opposing the sliding velocity v_slide (3,) [m/s]:
    -mu N v / sqrt(|v|^2 + v_slip^2) (smooth; its power is never positive). With a unit
    direction t (3,), only the sliding along t counts and the force lies along t."""
    if t is not None:
        v_slide = jnp.dot(v_slide, t) * t
    s = jnp.sum(v_slide * v_slide)
    return -mu * normal_force * v_slide / jnp.sqrt(s + v_slip * v_slip)


def face_coefficients(crush_a, crush_b, F, n_out):
    """(A [N/m], B [N/m^2]) of the face of a vehicle whose outward normal at the contact is
    n_out (3,): the face coefficients (front, rear, side) weighted by the squared components
    of n_out along the unit forward (d1) and left (d2) directors."""
    u1 = jnp.dot(n_out, normalize(F[:, 0]))
    u2 = jnp.dot(n_out, normalize(F[:, 1], jnp.array([0.0, 1.0, 0.0])))
    w = jnp.stack([jnp.maximum(u1, 0.0) ** 2, jnp.maximum(-u1, 0.0) ** 2, u2 * u2])
    s = jnp.sum(w)
    w = jnp.where(s > TINY, w / jnp.where(s > TINY, s, 1.0), 1.0 / 3.0)  # a vertical normal: the mean
    return jnp.dot(w, crush_a), jnp.dot(w, crush_b)


def body_normal(F, n):
    """A world direction n (3,) in a vehicle's frame: its components along the unit directors."""
    return jnp.stack([jnp.dot(n, normalize(F[:, i], jnp.eye(3)[i])) for i in range(3)])


def applied_terms(force, X, params) -> ContactTerms:
    """ContactTerms of a force (3,) [N] acting at the material point X (3,) [m] of a vehicle:
    dv = f/m, dW[:, i] = X^i f / my^i (eq. 1.31, an applied force through the mass matrix)."""
    z3, z33 = jnp.zeros_like(force), jnp.zeros((3, 3), force.dtype)
    return ContactTerms(z3, z33, force / params.mass, jnp.outer(force, X / params.my))


def engaged_width(lo1, hi1, lo2, hi2, width_min):
    """(width [m], middle [m]) of the overlap of two intervals along t (at least width_min;
    the middle of the two centres when they do not overlap)."""
    lo, hi = jnp.maximum(lo1, lo2), jnp.minimum(hi1, hi2)
    mid = jnp.where(hi > lo, 0.5 * (lo + hi), 0.25 * (lo1 + hi1 + lo2 + hi2))
    return jnp.maximum(hi - lo, width_min), mid


def pair_terms(geom, gamma, memory, m1, m2, p1, p2, cp):
    """The ContactLaw interface (contact.types.ContactLaw) for one vehicle pair.

    geom: PairGeometry (phi1 < 0 overlap, n1 outward normal of body 1, T1, T2); memory (3,) [m];
    m1, m2: Motion with the predicted r, F; p1, p2: VehicleParams (mass, my, contact_axes,
    crush_a, crush_b); cp: ContactParams (mu, v_slip, crush_rate, unload_exp, width_min,
    eps1, eps2). Returns (zeros (2,), terms1, terms2, force [N], Crush)."""
    # the law is planar, as CRASH3's and EDSMAC's: the crush force acts along the horizontal
    # part of the contact normal and friction along the horizontal tangent t = E3 x n, so a
    # collinear impact exchanges no vertical momentum through the law (docs/crash-law.md)
    n = normalize(geom.n1 * jnp.array([1.0, 1.0, 0.0]), geom.n1)
    t = horizontal_tangent(n)
    lo1, hi1 = extent(m1.r, m1.F, p1.contact_axes, t, cp.eps1, cp.eps2)
    lo2, hi2 = extent(m2.r, m2.F, p2.contact_axes, t, cp.eps1, cp.eps2)
    width, mid = engaged_width(lo1, hi1, lo2, hi2, cp.width_min)
    T1 = geom.T1 + (mid - jnp.dot(t, geom.T1)) * t
    T2 = geom.T2 + (mid - jnp.dot(t, geom.T2)) * t
    X1, X2 = inv3(m1.F) @ (T1 - m1.r), inv3(m2.F) @ (T2 - m2.r)
    a1, b1 = face_coefficients(p1.crush_a, p1.crush_b, m1.F, n)
    a2, b2 = face_coefficients(p2.crush_a, p2.crush_b, m2.F, -n)
    v_rel = material_point_velocity(m2, X2) - material_point_velocity(m1, X1)
    rate = -jnp.dot(v_rel, n)  # closing speed [m/s]
    delta = jnp.where(geom.touching, -geom.phi1, 0.0)
    out = crush_force(delta, rate, memory, width, a1, b1, a2, b2, cp.unload_exp, cp.crush_rate, cp.restitution_high)
    f2 = out.force * n + friction_force(out.force, v_rel, cp.mu, cp.v_slip, t)  # on body 2
    crush = Crush(touching=geom.touching & (out.force > 0.0), memory=out.memory, crush=out.crush,
                  residual=out.residual, power=out.power, width=width, X=jnp.stack([X1, X2]),
                  normal=jnp.stack([body_normal(m1.F, n), body_normal(m2.F, -n)]))
    return jnp.zeros_like(gamma), applied_terms(-f2, X1, p1), applied_terms(f2, X2, p2), out.force, crush


def far_crush(memory, a1, b1, a2, b2) -> CrushForce:
    """crush_force at delta = 0 and rate = 0 (a pair whose narrow phase did not run), the same
    numbers in closed form: no force and no power, the memory rolled on (the peak between the
    steps still counts), and each structure's crush its permanent crush x_p (unloaded to
    delta = 0 it sits at x_p: crush_force's unloading branch at d = 0). Written out because
    the unloading path's powers (safe_pow, the exponent of unloading_exponent) are the dearest
    part of crush_force and give 0 at delta = 0, which XLA cannot see."""
    shares, _, d0 = _series(a1, b1, a2, b2)
    zero = jnp.zeros((), memory.dtype)
    dmax_new = jnp.maximum(jnp.maximum(memory[0], zero), peak_between_steps(memory[2], memory[1], zero))
    xp = jnp.maximum(shares * dmax_new - d0, 0.0)
    return CrushForce(force=zero, memory=jnp.stack([dmax_new, zero, memory[1]]), crush=xp, residual=xp,
                      power=jnp.zeros((2,), memory.dtype))


def far_terms(gamma, memory, m1, m2, p1, p2, cp):
    """pair_terms of a pair whose narrow phase did not run (ContactLaw.far_terms): its geometry
    is contact.stage._far_apart's (not touching, normal e_x), so the overlap is 0 and the force
    0, and the memory, crush, residual and power are crush_force's at delta = 0 (`far_crush`;
    none of them reads the engaged width, the force points or the closing speed there).
    Without the extents (the superellipsoid's support function) and the force points: width
    is width_min, X and the body normals zeros, which count only where the pair touches
    (contact.crash.crash_info)."""
    e_x = jnp.array([1.0, 0.0, 0.0])
    n = normalize(e_x * jnp.array([1.0, 1.0, 0.0]), e_x)  # as pair_terms forms it from the normal
    a1, b1 = face_coefficients(p1.crush_a, p1.crush_b, m1.F, n)
    a2, b2 = face_coefficients(p2.crush_a, p2.crush_b, m2.F, -n)
    out = far_crush(memory, a1, b1, a2, b2)
    zero = jnp.zeros(3)
    crush = Crush(touching=jnp.asarray(False), memory=out.memory, crush=out.crush, residual=out.residual,
                  power=out.power, width=jnp.asarray(cp.width_min, zero.dtype), X=jnp.zeros((2, 3)),
                  normal=jnp.zeros((2, 3)))
    return jnp.zeros_like(gamma), applied_terms(-zero, zero, p1), applied_terms(zero, zero, p2), out.force, crush


def wall_terms(wall, gamma, memory, m, p, cp):
    """The ContactLaw wall interface: one vehicle (Motion m, VehicleParams p) against a rigid
    barrier (WallContact wall): crush_force with a rigid second body (B = infinity) and
    friction mu_barrier. Returns (gamma, terms, force [N], Crush)."""
    v_p = material_point_velocity(m, wall.X)
    rate = -jnp.dot(v_p, wall.n)  # closing speed [m/s]
    depth = jnp.where(wall.touching, wall.depth, 0.0)
    a, b = face_coefficients(p.crush_a, p.crush_b, m.F, -wall.n)
    out = crush_force(depth, rate, memory, wall.width, a, b, 0.0, jnp.inf, cp.unload_exp, cp.crush_rate,
                      cp.restitution_high)
    f = out.force * wall.n + friction_force(out.force, v_p, cp.mu_barrier, cp.v_slip, horizontal_tangent(wall.n))
    z3 = jnp.zeros_like(wall.X)
    crush = Crush(touching=wall.touching & (out.force > 0.0), memory=out.memory, crush=out.crush,
                  residual=out.residual, power=out.power, width=wall.width, X=jnp.stack([wall.X, z3]),
                  normal=jnp.stack([body_normal(m.F, -wall.n), z3]))
    return gamma, applied_terms(f, wall.X, p), out.force, crush


# Enclosing spheres (corner contacts start before the surfaces overlap); constant steps. The
# contact points' tangents leave out directions whose singular value is below 1e-4 of the
# largest (shapes/narrow_phase.py, `implicit_solver`), not 1e-6: the law moves the force points
# to the middle of the engaged width along t, so the deepest point's slide along flat faces
# does not set its force, while its ill-conditioned tangent (up to ~1/cutoff) spiked
# derivatives of whole runs by 100-1000x at isolated parameter values (docs/gradients.md).
LAW = ContactLaw(name="crush", pair_terms=pair_terms, broad_phase="enclosing", wall_terms=wall_terms,
                 shrink_on_contact=False, tangent_cutoff=1e-4, far_terms=far_terms)
