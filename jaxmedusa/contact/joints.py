"""Joints between bodies: the hitch of an articulated vehicle as one more term of the step.

A joint list lies beside the pair list: per scenario J joints (padded and masked), each
joining body a (the tow vehicle) at material point Xa (the hitch) to body b (the trailer)
at Xb (the kingpin). A spherical joint is a stiff penalty spring-damper on the separation
s = x_b - x_a of the two anchor points x = r + F X (eq. 1.2):

    f_b = -k s - c s',   f_a = -f_b,

which enters each body's equations of motion as the suspension and contact forces do: a
force f at material point X adds f to l0 and f X^i to l^i (eq. 1.10), so dv = f/m and
dW = f (x) (X / my) (eq. 1.30 with the diagonal mass of eq. 1.9). k and c come from the
masses and the step (`joint_gains`, docs/trailers.md): the separation's own frequency is
OMEGA_DT / dt and its damping ratio ZETA, which the semi-implicit step of eq. (1.52) keeps
stable (Omega^2 + 4 zeta Omega < 4).

The joint is free in yaw (the articulation); relative pitch and roll are free within the
hitch's limits, beyond which the stops of contact/joint_limits.py act as a rotational penalty
couple (a fifth wheel's roll limit 0: roll locked, the stop carries the roll moment).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.joint_limits import couple_dW, stop_couple
from jaxmedusa.contact.types import ContactTerms
from jaxmedusa.core.pytree import pytree_dataclass

__all__ = ["JointParams", "joint_gains", "joint_terms", "joint_forces", "anchor_separation", "OMEGA_DT", "ZETA",
           "joint_params", "stop_couples"]

# The separation's natural frequency times the step, omega dt, and its damping ratio: the
# step of eq. (1.52) is stable for Omega^2 + 4 zeta Omega < 4 (docs/trailers.md); with
# Omega = 0.5 and zeta = 0.5 the margin is 1.25 < 4, and still 1.40 < 4 when MEDUSA's step
# control grows the step 10 % above Settings.dt.
OMEGA_DT = 0.5
ZETA = 0.5


@pytree_dataclass
class JointParams:
    """The joints of one scenario, leaves [J, ...] ([B, J, ...] batched; built by build.py).

    body_a, body_b (J,) int32: the tow vehicle and the towed one (0-based); Xa, Xb (J, 3):
    the anchor's material coordinates in each body (hitch, kingpin) [m]; stiffness (J,)
    [N/m]; damping (J,) [N s/m]; valid (J,) bool (False: a padding joint, no force);
    excluded (P,) bool: pairs (core.state.pair_indices order) joined by a hitch, left out
    of contact (docs/trailers.md, "Contact"). The stops (contact/joint_limits.py): fifth_wheel
    (J,) bool (the decomposition of the relative rotation), limit (J, 2) pitch and roll limits
    [rad], stop_stiffness (J,) [N m/rad], stop_damping (J,) [N m s/rad] (0: no stop)."""

    body_a: jnp.ndarray
    body_b: jnp.ndarray
    Xa: jnp.ndarray
    Xb: jnp.ndarray
    stiffness: jnp.ndarray
    damping: jnp.ndarray
    valid: jnp.ndarray
    excluded: jnp.ndarray
    fifth_wheel: jnp.ndarray
    limit: jnp.ndarray
    stop_stiffness: jnp.ndarray
    stop_damping: jnp.ndarray


def point_compliance(mass: float, my, X) -> float:
    """Acceleration of material point X per unit force applied there, 1/m + sum_i X_i^2/my^i
    [1/kg]: from dv = f/m, dW = f (x) X/my, the point's acceleration dv + dW X is f times this
    (isotropic for the diagonal mass of eq. 1.9)."""
    X = np.asarray(X, float)
    return 1.0 / float(mass) + float(np.sum(X * X / np.asarray(my, float)))


def joint_gains(mass_a, my_a, Xa, mass_b, my_b, Xb, dt: float) -> tuple[float, float]:
    """(k [N/m], c [N s/m]) of a hitch for step dt [s]: the separation obeys
    s'' = -w (k s + c s') with w the sum of both anchors' compliances (`point_compliance`), so
    omega = sqrt(w k) = OMEGA_DT / dt and 2 zeta omega = w c (docs/trailers.md)."""
    w = point_compliance(mass_a, my_a, Xa) + point_compliance(mass_b, my_b, Xb)
    omega = OMEGA_DT / dt
    return omega * omega / w, 2.0 * ZETA * omega / w


def joint_params(joints: list[tuple], n_joints: int, n_pairs_of) -> JointParams:
    """JointParams (numpy leaves) of one scenario from [(a, b, Xa, Xb, k, c[, stop])], padded to
    n_joints; stop = (fifth_wheel, (pitch, roll) limits [rad], k_stop, c_stop) (absent: no
    stops); n_pairs_of: (a_idx, b_idx) arrays of core.state.pair_indices."""
    pa, pb = n_pairs_of
    out = dict(body_a=np.zeros(n_joints, np.int32), body_b=np.zeros(n_joints, np.int32),
               Xa=np.zeros((n_joints, 3)), Xb=np.zeros((n_joints, 3)), stiffness=np.zeros(n_joints),
               damping=np.zeros(n_joints), valid=np.zeros(n_joints, bool), excluded=np.zeros(len(pa), bool),
               fifth_wheel=np.zeros(n_joints, bool), limit=np.full((n_joints, 2), np.pi / 4),
               stop_stiffness=np.zeros(n_joints), stop_damping=np.zeros(n_joints))
    for i, (a, b, Xa, Xb, k, c, *stop) in enumerate(joints):
        out["body_a"][i], out["body_b"][i] = a, b
        out["Xa"][i], out["Xb"][i] = Xa, Xb
        out["stiffness"][i], out["damping"][i], out["valid"][i] = k, c, True
        out["excluded"] |= ((pa == min(a, b)) & (pb == max(a, b)))
        if stop:
            fifth, limit, ks, cs = stop[0]
            out["fifth_wheel"][i], out["limit"][i] = fifth, limit
            out["stop_stiffness"][i], out["stop_damping"][i] = ks, cs
    return JointParams(**out)


def anchor_separation(joints: JointParams, r, F, v, W):
    """(s, s') (J, 3): separation x_b - x_a of each joint's anchors [m] and its rate [m/s]
    (eqs. 1.2 and 1.18 at the anchors). r (V, 3), F (V, 3, 3), v (V, 3), W (V, 3, 3)."""
    a, b = joints.body_a, joints.body_b
    xa = r[a] + jnp.einsum("jik,jk->ji", F[a], joints.Xa)
    xb = r[b] + jnp.einsum("jik,jk->ji", F[b], joints.Xb)
    va = v[a] + jnp.einsum("jik,jk->ji", W[a], joints.Xa)
    vb = v[b] + jnp.einsum("jik,jk->ji", W[b], joints.Xb)
    return xb - xa, vb - va


def joint_forces(joints: JointParams, r, F, v, W):
    """(J, 3) force of each joint on its body b (the trailer) [N]; -that on body a; 0 for
    padding joints."""
    s, sd = anchor_separation(joints, r, F, v, W)
    f = -(joints.stiffness[:, None] * s + joints.damping[:, None] * sd)
    return jnp.where(joints.valid[:, None], f, 0.0)


def stop_couples(joints: JointParams, F, W):
    """(J, 3) couple of each joint's pitch and roll stops on its body b [N m] (-that on body a;
    0 inside the limits and for padding joints); F, W (V, 3, 3) (contact/joint_limits.py)."""
    a, b = joints.body_a, joints.body_b
    M, _ = jax.vmap(stop_couple)(F[a], F[b], W[a], W[b], joints.fifth_wheel, joints.limit,
                                 joints.stop_stiffness[:, None], joints.stop_damping[:, None])
    return jnp.where(joints.valid[:, None], M, 0.0)


def joint_terms(joints: JointParams, vehicle, r, F, v, W) -> tuple[ContactTerms, jnp.ndarray]:
    """(ContactTerms with leaves [V, ...], force (J, 3) on body b [N]) of one scenario's joints
    at the predicted positions r, F and the velocities v, W of the step (as the contact
    stage). vehicle: VehicleParams with leaves [V, ...] (mass, my). A force f at material
    point X: dv = f/m, dW = f (x) X/my (eqs. 1.10, 1.30), summed per body by incidence; a stop's
    couple M: dW = [I^-1 M]x F (contact/joint_limits.py)."""
    n = r.shape[0]
    f = joint_forces(joints, r, F, v, W)
    a, b = joints.body_a, joints.body_b
    ia = (a[:, None] == jnp.arange(n)[None, :]).astype(f.dtype)  # (J, V) incidence
    ib = (b[:, None] == jnp.arange(n)[None, :]).astype(f.dtype)
    dv = ia.T @ (-f / vehicle.mass[a][:, None]) + ib.T @ (f / vehicle.mass[b][:, None])
    dWa = -f[:, :, None] * (joints.Xa / vehicle.my[a])[:, None, :]  # (J, 3, 3): column i is -f X^i/my^i
    dWb = f[:, :, None] * (joints.Xb / vehicle.my[b])[:, None, :]
    M = stop_couples(joints, F, W)
    dWa = dWa + jax.vmap(couple_dW)(F[a], vehicle.my[a], -M)
    dWb = dWb + jax.vmap(couple_dW)(F[b], vehicle.my[b], M)
    dW = jnp.einsum("jv,jik->vik", ia, dWa) + jnp.einsum("jv,jik->vik", ib, dWb)
    z3, z33 = jnp.zeros((n, 3), f.dtype), jnp.zeros((n, 3, 3), f.dtype)
    return ContactTerms(z3, z33, dv, dW), f


def critical_omega_dt(zeta: float) -> float:
    """The largest omega dt for which the step of eq. (1.52) keeps a damped spring stable:
    the root of Omega^2 + 4 zeta Omega = 4 (docs/trailers.md)."""
    return -2.0 * zeta + math.sqrt(4.0 * zeta * zeta + 4.0)
