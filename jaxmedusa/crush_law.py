"""The crush law: a calibrated structural contact law for one pair (no batch axis).

Reconstruction practice (CRASH3, EDSMAC, PC-Crash) models a car's structure by its crush:
a force per unit damage width that grows with crush depth, unloading along a steeper path so
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
(delta_max - delta_p))^n, n = ContactParams.unload_exp >= 1. It lies below the loading line,
so every load-unload cycle absorbs energy; it returns the fraction 2 (delta_max - delta_p) /
((n + 1) delta_max) of the loading energy (restitution^2 without the rate term): sqrt(2/(n+1))
below the damage threshold, much less in a severe crash. delta_max, the largest overlap
reached, is the pair's state (`PairState.crush`): permanent, never reset.

Crush rate: F = w f(delta) max(0, 1 + zeta d(delta)/dt), zeta = ContactParams.crush_rate
[s/m] (the structure's strain-rate stiffening on loading, a dashpot-like loss on unloading;
its power is never positive). Friction: Coulomb, mu F, opposing the tangential sliding
velocity v_t at the contact point, regularised as v_t / sqrt(|v_t|^2 + v_slip^2) (smooth,
differentiable; full Coulomb friction once |v_t| >> v_slip).

Faces. The outward normal of vehicle i at the contact, in its body frame (u1 forward,
u2 left), weights its face coefficients: B = (max(u1,0)^2 B_front + max(-u1,0)^2 B_rear +
u2^2 B_side) / (u1^2 + u2^2), the same for A (continuous in the contact direction).

Width: the engaged width w is the overlap of the two bodies' extents along the horizontal
tangent t = E3 x n (closed form from the support function, `extent`), at least
ContactParams.width_min; the contact points are moved along t to the middle of the engaged
interval so the force's yaw moment is that of the engaged region.

Forces enter like an applied force of eq. (1.31): dv = f/m, dW[:, i] = X^i f / my^i, equal
and opposite on the two bodies, so linear momentum is conserved exactly.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .contact_law import ContactTerms, material_point_velocity

FRONT, REAR, SIDE = 0, 1, 2  # order of VehicleParams.crush_a / crush_b
_TINY = 1e-30
BOX_EXPONENT = 0.1  # the "box" geometry kind is treated as a superellipsoid with eps = 0.1 here


def _safe_sqrt(s):
    ok = s > _TINY
    return jnp.where(ok, jnp.sqrt(jnp.where(ok, s, 1.0)), 0.0)


def _safe_pow(a, q):
    """a^q for a >= 0 (value and gradients 0 at a = 0: double where)."""
    ok = a > _TINY
    return jnp.where(ok, jnp.exp(q * jnp.log(jnp.where(ok, a, 1.0))), 0.0)


def _normalize(v, fallback):
    s = jnp.sum(v * v)
    ok = s > _TINY
    return jnp.where(ok, v / jnp.sqrt(jnp.where(ok, s, 1.0)), fallback)


# ----------------------------------------------------------------------------- shape support


def shape_exponents(kind: str, eps1, eps2):
    """(eps1, eps2) of the gauge used for the support function: the superellipsoid's own,
    1 for the ellipsoid, BOX_EXPONENT for the box kind."""
    if kind == "ellipsoid":
        return 1.0, 1.0
    if kind == "box":
        return BOX_EXPONENT, BOX_EXPONENT
    return eps1, eps2


def dual_gauge(u, eps1, eps2):
    """Support function of the unit superellipsoid (gauge dual, [-]): max over G(y) <= 1 of u.y.

    Barr's gauge is a nested norm, G(y) = || (||(y1, y2)||_p2, y3) ||_p1 with p2 = 2/eps2,
    p1 = 2/eps1, so its dual is the nested dual norm with q = p / (p - 1):
    G*(u) = || (||(u1, u2)||_q2, u3) ||_q1. eps1 = eps2 = 1 is the ellipsoid (q = 2)."""
    q1 = 2.0 / (2.0 - eps1)  # p/(p-1) with p = 2/eps
    q2 = 2.0 / (2.0 - eps2)
    a = jnp.abs(u)
    inner = _safe_pow(_safe_pow(a[0], q2) + _safe_pow(a[1], q2), 1.0 / q2)
    return _safe_pow(_safe_pow(inner, q1) + _safe_pow(a[2], q1), 1.0 / q1)


def support(r, F, axes, d, eps1, eps2):
    """Support of a body x = r + F diag(axes) y, G(y) <= 1, in the world direction d (3,).

    Returns (h, T): h = max over the body of d.x [m] and T the point attaining it: with
    B = F diag(axes) and u = B^T d, h = d.r + G*(u) and T = r + B grad G*(u) (the gradient of
    the dual norm is the maximiser, a closed form)."""
    B = F * axes[None, :]
    u = B.T @ d
    g, y = jax.value_and_grad(dual_gauge)(u, eps1, eps2)
    return jnp.dot(d, r) + g, r + B @ y


def extent(r, F, axes, t, eps1, eps2):
    """(lo, hi) [m]: the interval the body covers along the unit direction t (symmetric shape)."""
    h = dual_gauge((F * axes[None, :]).T @ t, eps1, eps2)
    c = jnp.dot(t, r)
    return c - h, c + h


def horizontal_tangent(n):
    """Unit horizontal tangent E3 x n (E2 when n is vertical)."""
    t = jnp.stack([-n[1], n[0], jnp.zeros_like(n[0])])
    return _normalize(t, jnp.array([0.0, 1.0, 0.0]))


# ----------------------------------------------------------------------------- faces


def face_coefficients(crush_a, crush_b, F, n_out):
    """(A [N/m], B [N/m^2]) of the face of a vehicle whose outward normal at the contact is
    n_out (3,): the face coefficients (front, rear, side) weighted by the squared components
    of n_out along the unit forward (d1) and left (d2) directors."""
    d1 = _normalize(F[:, 0], jnp.array([1.0, 0.0, 0.0]))
    d2 = _normalize(F[:, 1], jnp.array([0.0, 1.0, 0.0]))
    u1, u2 = jnp.dot(n_out, d1), jnp.dot(n_out, d2)
    w = jnp.stack([jnp.maximum(u1, 0.0) ** 2, jnp.maximum(-u1, 0.0) ** 2, u2 * u2])
    s = jnp.sum(w)
    w = jnp.where(s > _TINY, w / jnp.where(s > _TINY, s, 1.0), 1.0 / 3.0)  # vertical normal: the mean
    return jnp.dot(w, crush_a), jnp.dot(w, crush_b)


# ----------------------------------------------------------------------------- the force law


class CrushForce(NamedTuple):
    """The crush law's answer for one contact (one pair or one vehicle-barrier contact).

    force () normal force [N] (>= 0); dmax () new largest overlap [m]; crush (2,) dynamic
    crush of body 1, body 2 [m]; residual (2,) permanent crush [m]; power (2,) power going
    into each structure [W] (its time integral is the absorbed energy; negative while
    unloading returns energy)."""

    force: jnp.ndarray
    dmax: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray


def crush_force(delta, rate, dmax, width, a1, b1, a2, b2, unload_exp, crush_rate):
    """Normal force of two crushable structures in series (module docstring).

    delta [m]: overlap (> 0 when touching; <= 0 gives no force); rate [m/s]: d(delta)/dt
    (> 0 closing); dmax [m]: largest overlap so far (state); width [m]; a_i [N/m], b_i
    [N/m^2]: Campbell coefficients of the faces in contact; b2 = inf for a rigid barrier
    (then a2 is not used). unload_exp [-] >= 1; crush_rate [s/m]. Returns CrushForce.
    """
    rigid2 = jnp.isinf(b2)
    b2f = jnp.where(rigid2, 1.0, b2)
    s1 = jnp.where(rigid2, 1.0, b2f / (b1 + b2f))  # share of the overlap on body 1 (series springs)
    s2 = 1.0 - s1
    b_s = jnp.where(rigid2, b1, b1 * b2f / (b1 + b2f))
    d0_1 = a1 / b1  # CRASH3 no-damage deflection
    d0_2 = jnp.where(rigid2, 0.0, a2 / b2f)
    d = jnp.maximum(delta, 0.0)
    dmax_new = jnp.maximum(dmax, d)
    xmax = jnp.stack([s1, s2]) * dmax_new  # each structure's largest crush
    xp = jnp.maximum(xmax - jnp.stack([d0_1, d0_2]), 0.0)  # permanent: Campbell's C = x_max - A/B
    dp = jnp.sum(xp)
    span = dmax_new - dp  # >= 0; = sum of min(x_max_i, d0_i)
    ok = span > _TINY
    ratio = jnp.clip((d - dp) / jnp.where(ok, span, 1.0), 0.0, 1.0)
    f_path = b_s * dmax_new * _safe_pow(ratio, unload_exp)  # = b_s d on the loading line
    f = width * f_path * jnp.maximum(1.0 + crush_rate * rate, 0.0)
    f = jnp.where(delta > 0.0, f, 0.0)
    # Each structure's crush on the path: on loading the series shares, on unloading each
    # recovers in proportion to its elastic part (x_max_i - x_p_i).
    loading = d >= dmax
    c_unl = jnp.where(ok, (xmax - xp) / jnp.where(ok, span, 1.0), jnp.stack([s1, s2]))
    crush = jnp.where(loading, jnp.stack([s1, s2]) * d, xp + c_unl * jnp.maximum(d - dp, 0.0))
    share = jnp.where(loading, jnp.stack([s1, s2]), c_unl)
    power = f * share * jnp.where(d - dp > 0.0, rate, 0.0)
    return CrushForce(force=f, dmax=dmax_new, crush=crush, residual=xp, power=power)


def friction_force(normal_force, v_slide, mu, v_slip):
    """Regularised Coulomb friction [N] (3,) opposing the sliding velocity v_slide (3,) [m/s]:
    -mu N v / sqrt(|v|^2 + v_slip^2) (smooth; its power is never positive)."""
    s = jnp.sum(v_slide * v_slide)
    return -mu * normal_force * v_slide / jnp.sqrt(s + v_slip * v_slip)


def applied_terms(force, X, params) -> ContactTerms:
    """ContactTerms of a force (3,) [N] acting at the material point X (3,) [m] of a vehicle:
    dv = f/m, dW[:, i] = X^i f / my^i (eq. 1.31 applied force through the mass matrix)."""
    z3, z33 = jnp.zeros_like(force), jnp.zeros((3, 3), force.dtype)
    return ContactTerms(z3, z33, force / params.mass, jnp.outer(force, X / params.my))


def crush_law(geom, dmax, state1, state2, params1, params2, contact_params, kind="superellipsoid"):
    """Crush law for one vehicle pair (module docstring).

    geom: contact.PairGeometry (phi1 < 0 overlap, n1 outward normal of body 1, T1, T2);
    dmax () [m]: the pair's largest overlap so far; state1, state2: with r, F, v, W;
    params1, params2: VehicleParams (mass, my, contact_axes, crush_a, crush_b);
    contact_params: ContactParams (mu, v_slip, crush_rate, unload_exp, width_min, eps1, eps2);
    kind (static): the contact geometry kind. Returns (CrushForce, terms1, terms2).
    """
    cp = contact_params
    n = geom.n1
    e1, e2 = shape_exponents(kind, cp.eps1, cp.eps2)
    t = horizontal_tangent(n)
    lo1, hi1 = extent(state1.r, state1.F, params1.contact_axes, t, e1, e2)
    lo2, hi2 = extent(state2.r, state2.F, params2.contact_axes, t, e1, e2)
    lo, hi = jnp.maximum(lo1, lo2), jnp.minimum(hi1, hi2)
    width = jnp.maximum(hi - lo, cp.width_min)
    mid = jnp.where(hi > lo, 0.5 * (lo + hi), 0.5 * (0.5 * (lo1 + hi1) + 0.5 * (lo2 + hi2)))
    T1 = geom.T1 + (mid - jnp.dot(t, geom.T1)) * t
    T2 = geom.T2 + (mid - jnp.dot(t, geom.T2)) * t
    X1 = _material(state1.F, T1 - state1.r)
    X2 = _material(state2.F, T2 - state2.r)

    a1, b1 = face_coefficients(params1.crush_a, params1.crush_b, state1.F, n)
    a2, b2 = face_coefficients(params2.crush_a, params2.crush_b, state2.F, -n)
    v_rel = material_point_velocity(state2, X2) - material_point_velocity(state1, X1)
    rate = -jnp.dot(v_rel, n)  # closing speed
    delta = jnp.where(geom.touching, -geom.phi1, 0.0)
    out = crush_force(delta, rate, dmax, width, a1, b1, a2, b2, cp.unload_exp, cp.crush_rate)
    v_t = v_rel - jnp.dot(v_rel, n) * n
    f2 = out.force * n + friction_force(out.force, v_t, cp.mu, cp.v_slip)  # on body 2
    return out, applied_terms(-f2, X1, params1), applied_terms(f2, X2, params2)


def _material(F, x):
    """Material label X = F^-1 x (3,) [m] (3x3 solve by cofactors; no LAPACK)."""
    c0, c1, c2 = F[:, 0], F[:, 1], F[:, 2]
    rows = jnp.stack([jnp.cross(c1, c2), jnp.cross(c2, c0), jnp.cross(c0, c1)])
    return rows @ x / jnp.dot(c0, rows[0])


# ----------------------------------------------------------------------------- per-vehicle summary


class CrashInfo(NamedTuple):
    """One step's contacts per vehicle (V,), pairs and barriers together (for outcomes.py).

    touching: bool, some contact carries force; crush [m]: largest current dynamic crush
    over the vehicle's contacts; residual [m]: largest permanent crush; power [W]: power into
    its structure (sum); partner int32: the other body of its strongest contact (vehicle
    index, -1 a barrier, -2 none)."""

    touching: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray
    partner: jnp.ndarray


def crash_info(pairs, barriers, n_vehicles: int) -> CrashInfo:
    """CrashInfo from integrate.PairInfo (leaves [P, ...]) and barrier.BarrierInfo ([V, NB])
    or None. The pair order is state.pair_indices'."""
    import numpy as np  # noqa: PLC0415

    from .state import pair_indices  # noqa: PLC0415

    n = n_vehicles
    a, b = pair_indices(n)
    inc = np.zeros((len(a), n), bool)
    inc[np.arange(len(a)), a] = True
    inc[np.arange(len(a)), b] = True
    other = jnp.asarray(np.where(inc, (a + b)[:, None] - np.arange(n)[None, :], -2).astype(np.int32))  # (P, V)
    inc = jnp.asarray(inc)  # (P, V)
    body = jnp.asarray(np.where(np.arange(n)[None, :] == b[:, None], 1, 0))  # (P, V): which body of the pair
    t = pairs.touching[:, None] & inc
    pick = lambda x: jnp.take_along_axis(x, body, axis=1)  # noqa: E731  (P, 2) -> (P, V)
    force = jnp.where(t, pairs.force[:, None], 0.0)
    crush = jnp.max(jnp.where(inc, pick(pairs.crush), 0.0), axis=0) if len(a) else jnp.zeros(n)
    residual = jnp.max(jnp.where(inc, pick(pairs.residual), 0.0), axis=0) if len(a) else jnp.zeros(n)
    power = jnp.sum(jnp.where(inc, pick(pairs.power), 0.0), axis=0) if len(a) else jnp.zeros(n)
    best_f = jnp.max(force, axis=0) if len(a) else jnp.zeros(n)
    partner = jnp.where(jnp.any(t, axis=0), other[jnp.argmax(force, axis=0), jnp.arange(n)], -2) if len(a) else \
        jnp.full((n,), -2, jnp.int32)
    touching = jnp.any(t, axis=0) if len(a) else jnp.zeros(n, bool)
    if barriers is not None:
        bf = jnp.where(barriers.touching, barriers.force, 0.0)
        crush = jnp.maximum(crush, jnp.max(barriers.crush, axis=1))
        residual = jnp.maximum(residual, jnp.max(barriers.residual, axis=1))
        power = power + jnp.sum(barriers.power, axis=1)
        wall = jnp.max(bf, axis=1)
        partner = jnp.where(jnp.any(barriers.touching, axis=1) & (wall >= best_f), -1, partner)
        touching = touching | jnp.any(barriers.touching, axis=1)
    return CrashInfo(touching=touching, crush=crush, residual=residual, power=power, partner=partner.astype(jnp.int32))
