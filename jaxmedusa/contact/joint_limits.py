"""Angle limits of a hitch: the pitch and roll stops of a ball or a fifth wheel (docs/trailers.md,
"Articulation limits").

The relative rotation of the trailer (body b) against its tow vehicle (body a) is split into
the articulation psi (yaw about the tow vehicle's vertical: always free), a relative pitch
theta and a relative roll phi, in the order of the coupling's own kinematic chain:

- ball (`fifth_wheel` False): the drawbar swings about the ball in yaw, then pitches, then
  rolls about itself: R_rel = Rz(psi) Ry(theta) Rx(phi) (columns: the trailer's unit
  directors in the tow vehicle's frame). Its third row is the tow vehicle's vertical a3 in
  the trailer's frame, u_j = a3 . d_j = (-sin theta, cos theta sin phi, cos theta cos phi),
  so theta = atan2(-u1, hypot(u2, u3)), phi = atan2(u2, u3);
- fifth wheel (True): the plate rolls (locked) and pitches on its trunnions about axes fixed
  in the tractor, and the kingpin turns the trailer about the plate's normal:
  R_rel = Rx(phi) Ry(theta) Rz(psi). Its third column is the trailer's vertical d3 in the
  tractor's frame, n_i = a_i . d3 = (sin theta, -sin phi cos theta, cos phi cos theta), so
  theta = atan2(n1, hypot(n2, n3)), phi = atan2(-n2, n3).

Either way pitch and roll depend on one unit vector only, not on psi: they are smooth
(analytic away from theta = +-90 deg, which the validated limits keep far away), and the
articulation never loads a stop. hypot and atan2 are the double-where forms of
core/safe_math.py, so values and gradients stay finite everywhere.

Beyond a limit a stop acts as a rotational penalty spring-damper on the angle: with
e = |angle| - limit the generalised force is Q = -k sign(angle) ramp(e) - c ramp'(e) angle',
ramp(e) = 0 (e <= 0), e^2/(2 e0) (0 < e < e0), e - e0/2 (e >= e0), e0 = min(ONSET, limit): C1 in
the angle, exactly 0 inside the limits; a locked angle (limit 0) is a linear spring-damper. The couple on the trailer is M_b = sum Q dangle/ddelta_b (the
virtual work of an infinitesimal rotation delta_b of body b), that on the tow vehicle -M_b:
equal and opposite, so linear and angular momentum are untouched. A couple M on a Cosserat
point enters as the rigid angular acceleration alpha = I^-1 M, I = sum_i my^i (|d_i|^2 1 -
d_i d_i^T) (eq. 1.9's inertia), i.e. dW = [alpha]x F: then sum_i my^i d_i x dW_i = M exactly.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.hitches import hitch_limits
from jaxmedusa.core.safe_math import safe_atan2, safe_hypot

__all__ = ["stop_row", "ONSET", "OMEGA_STOP_DT", "ZETA_STOP", "relative_angles", "stop_ramp", "stop_couple", "couple_dW",
           "stop_gains", "smallest_inertia"]

# The stop's onset: the moment grows as a quadratic ramp over the first 0.2 deg past the limit
# (then linearly), so it is C1 in the angle and its derivatives stay finite.
ONSET = math.radians(0.2)
# The stop's own frequency times the step and its damping ratio. A stop shares the bodies with
# the linear hitch spring (contact/joints.py, OMEGA_DT = 0.5): stiffnesses add in the mass
# metric, so the combined highest frequency is at most sqrt(0.5^2 + 2 * 0.3^2) = 0.66 and
# 2 zeta Omega at most 0.5 + 2 * 0.3 = 1.1: 0.43 + 2.2 = 2.63 < 4 (2.94 at 1.1 dt), inside the
# step's bound Omega^2 + 4 zeta Omega < 4 (docs/trailers.md).
OMEGA_STOP_DT = 0.3
ZETA_STOP = 0.5


def _unit_columns(F):
    return F / jnp.sqrt(jnp.sum(F * F, axis=0, keepdims=True))  # directors never vanish (eq. 1.2)


def relative_angles(Fa, Fb, fifth_wheel):
    """(2,) relative pitch and roll [rad] of body b against body a (module docstring); Fa, Fb
    (3, 3) directors as columns; fifth_wheel () bool selects the fifth wheel's decomposition."""
    A, B = _unit_columns(Fa), _unit_columns(Fb)
    u = B.T @ A[:, 2]  # the tow vehicle's vertical in the trailer's frame (ball)
    n = A.T @ B[:, 2]  # the trailer's vertical in the tow vehicle's frame (fifth wheel)
    ball = jnp.stack([safe_atan2(-u[0], safe_hypot(u[1], u[2])), safe_atan2(u[1], u[2])])
    fifth = jnp.stack([safe_atan2(n[0], safe_hypot(n[1], n[2])), safe_atan2(-n[1], n[2])])
    return jnp.where(fifth_wheel, fifth, ball)


def stop_ramp(e, limit):
    """(ramp(e), ramp'(e)) of the stop (module docstring) for excess angles e [rad]: 0 at e <= 0.
    The onset is min(ONSET, limit): a locked angle (limit 0) is a plain linear spring-damper,
    sign(angle) ramp(|angle|) = angle, smooth at 0 (a quadratic onset there would leave a
    lash of zero stiffness and zero damping in which the joint rattles)."""
    onset = jnp.minimum(ONSET, limit)
    has_onset = onset > 0.0
    safe = jnp.where(has_onset, onset, 1.0)  # double where: no 0/0 for a locked angle
    inside = jnp.clip(e, 0.0, onset)
    beyond = e >= onset
    ramp = jnp.where(beyond, e - 0.5 * onset, inside * inside / (2.0 * safe))
    return ramp, jnp.where(beyond, 1.0, inside / safe)


def _rotated(F, delta):
    """F with every director turned by the small rotation vector delta: d_i + delta x d_i."""
    return F + jnp.cross(delta[:, None], F, axisa=0, axisb=0, axisc=0)


def stop_couple(Fa, Fb, Wa, Wb, fifth_wheel, limit, stiffness, damping):
    """((3,) couple of the stops on body b [N m] (that on body a is its negative), (2,) the
    angles [rad]). Fa, Fb (3, 3) directors, Wa, Wb (3, 3) their rates; limit, stiffness
    [N m/rad], damping [N m s/rad]: (2,) for pitch and roll."""
    angles_of = lambda Fa_, Fb_: relative_angles(Fa_, Fb_, fifth_wheel)
    angles, rates = jax.jvp(angles_of, (Fa, Fb), (Wa, Wb))
    ramp, slope = stop_ramp(jnp.abs(angles) - limit, limit)
    Q = -stiffness * jnp.sign(angles) * ramp - damping * slope * rates  # (2,) generalised forces
    grad_b = jax.jacfwd(lambda d: angles_of(Fa, _rotated(Fb, d)))(jnp.zeros(3, Fb.dtype))  # (2, 3)
    return Q @ grad_b, angles


def couple_dW(F, my, M):
    """(3, 3) director accelerations of a couple M (3,) [N m] on a body with directors F (3, 3)
    and director inertias my (3,) [kg m^2]: the rigid angular acceleration alpha = I^-1 M,
    I = sum_i my^i (|d_i|^2 1 - d_i d_i^T), as columns alpha x d_i."""
    I = jnp.eye(3, dtype=F.dtype) * jnp.einsum("i,ki,ki->", my, F, F) - jnp.einsum("i,ki,li->kl", my, F, F)
    alpha = jnp.linalg.solve(I, M)
    return jnp.cross(alpha[:, None], F, axisa=0, axisb=0, axisc=0)


def smallest_inertia(my) -> float:
    """The smallest principal moment of inertia [kg m^2] of a body with director inertias my
    (I_1 = my^2 + my^3, ...: eq. 1.9)."""
    my = np.asarray(my, float)
    return float(min(my[1] + my[2], my[0] + my[2], my[0] + my[1]))


def stop_gains(my_a, my_b, dt: float) -> tuple[float, float]:
    """(k [N m/rad], c [N m s/rad]) of a hitch's stops for step dt [s]: the relative angle obeys
    angle'' = -(k angle + c angle') / I_eff, 1/I_eff = 1/I_a + 1/I_b about the stop's axis, so
    Omega = dt sqrt(k / I_eff) = OMEGA_STOP_DT and 2 zeta Omega = dt c / I_eff. The axis turns
    with the articulation (a ball's pitch axis is the car's roll axis at 90 deg), so each body
    enters with its smallest principal inertia: the highest frequency the stop can reach."""
    i_eff = 1.0 / (1.0 / smallest_inertia(my_a) + 1.0 / smallest_inertia(my_b))
    omega = OMEGA_STOP_DT / dt
    return omega * omega * i_eff, 2.0 * ZETA_STOP * omega * i_eff


def stop_row(v, my_a, my_b, dt: float):
    """(fifth_wheel, (pitch, roll) limits [rad], k [N m/rad], c [N m s/rad]) of the stops of the
    hitch of towed VehicleSpec v (contact.joints.joint_params); gains from stop_gains."""
    fifth, pitch, roll = hitch_limits(v)
    return (fifth, (pitch, roll), *stop_gains(my_a, my_b, dt))
