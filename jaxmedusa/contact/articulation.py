"""Articulation of towed vehicles: the angle between a trailer and its tow vehicle, the hitch
force and point, for the trajectory table and the study metrics (docs/trailers.md).

The articulation of vehicle b towed by a is the yaw of b's director d1 in the road plane
minus that of a's, wrapped to (-180, 180] degrees: positive when the trailer points to the
left of its tow vehicle. Vehicles that nobody tows have 0.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.joints import JointParams, joint_forces

__all__ = ["JACKKNIFE_DEG", "articulation", "hitch_forces", "hitch_points", "trajectory_columns"]

# Jackknife: an articulation beyond 60 degrees. A car-trailer's ball and a semitrailer's
# fifth wheel reach their geometric limits (drawbar against bumper, trailer front against
# the cab) at about 70-90 degrees; a combination past 60 degrees at speed is no longer
# steerable back (the tractor's rear is pushed sideways), the point where reconstruction
# reports speak of a jackknife rather than of sway.
JACKKNIFE_DEG = 60.0


def _yaw(F):
    """Yaw of director d1 [rad]; F (..., 3, 3), columns are directors."""
    return jnp.arctan2(F[..., 1, 0], F[..., 0, 0])


def articulation(joints: JointParams | None, F):
    """(V,) articulation of each vehicle [rad] (0 for vehicles not towed); F (V, 3, 3)."""
    n = F.shape[0]
    if joints is None:
        return jnp.zeros(n, F.dtype)
    yaw = _yaw(F)
    d = yaw[joints.body_b] - yaw[joints.body_a]
    d = jnp.arctan2(jnp.sin(d), jnp.cos(d))
    ib = (joints.body_b[:, None] == jnp.arange(n)[None, :]) & joints.valid[:, None]  # (J, V)
    return jnp.sum(jnp.where(ib, d[:, None], 0.0), axis=0)


def hitch_forces(joints: JointParams | None, r, F, v, W):
    """(V, 3) world force of each vehicle's hitch on it [N] (the trailer's row; 0 for vehicles
    not towed); r (V, 3), F (V, 3, 3), v (V, 3), W (V, 3, 3)."""
    n = r.shape[0]
    if joints is None:
        return jnp.zeros((n, 3), r.dtype)
    f = joint_forces(joints, r, F, v, W)
    ib = ((joints.body_b[:, None] == jnp.arange(n)[None, :]) & joints.valid[:, None]).astype(f.dtype)
    return ib.T @ f


def trajectory_columns(samples, joints) -> dict[str, np.ndarray]:
    """{articulation_deg: [B, S, V], hitch_force: [B, S, V] (magnitude [N]), hitch_fx, hitch_fy,
    hitch_fz: [B, S, V] world components [N], hitch_x, hitch_y, hitch_z: [B, S, V] the hitch point
    [m] (NaN for vehicles not towed)} of saved Samples (leaves [B, S, ...]) and the
    batch's JointParams ([B, J, ...]); the trajectory table adds them when a batch has joints."""
    def one(jp, r, F, v, W):
        art = jax.vmap(lambda F_: articulation(jp, F_))(F)
        f = jax.vmap(lambda *x: hitch_forces(jp, *x))(r, F, v, W)
        return art, f

    art, f = jax.vmap(one)(joints, samples.r, samples.F, samples.v, samples.W)
    f = np.asarray(f)
    point = hitch_points(joints, samples.r, samples.F)
    return {"articulation_deg": np.degrees(np.asarray(art)), "hitch_force": np.linalg.norm(f, axis=-1),
            "hitch_fx": f[..., 0], "hitch_fy": f[..., 1], "hitch_fz": f[..., 2],
            "hitch_x": point[..., 0], "hitch_y": point[..., 1], "hitch_z": point[..., 2]}


def hitch_points(joints, r, F) -> np.ndarray:
    """[B, S, V, 3] world position of each towed vehicle's kingpin, r + F X_kingpin [m] (NaN
    for vehicles not towed); joints [B, J, ...], r [B, S, V, 3], F [B, S, V, 3, 3]."""
    r, F = np.asarray(r), np.asarray(F)
    out = np.full(r.shape, np.nan)
    b_idx, xb, valid = (np.asarray(x) for x in (joints.body_b, joints.Xb, joints.valid))
    for i in range(r.shape[0]):
        for j in np.flatnonzero(valid[i]):
            v = b_idx[i, j]
            out[i, :, v] = r[i, :, v] + F[i, :, v] @ xb[i, j]
    return out
