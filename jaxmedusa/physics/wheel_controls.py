"""The driver's brake, lock and throttle at each wheel, on top of the tire model's force.

EDC's conventions (the EDC simulation manual, "Tire forces": "Longitudinal tire force",
"Combined longitudinal and lateral force", "The friction circle"):
- the attempted longitudinal force is the sum of the applied forces: the drive force
  (throttle [N]) minus the brake force fraction x mu_peak x Fz (so a fraction of 1.0 is the
  threshold of lock) and the rolling resistance f_r x Fz, both against the wheel's travel;
- it is limited by the available friction mu_peak Fz, and the friction circle
  sqrt(Fx^2 + Fy^2) <= mu_peak Fz leaves the lateral force the room the longitudinal one
  does not use (EDSMAC: the lateral force of the tire model, then limited);
- "any additional attempted force causes the wheel to lock" and a locked wheel slides at
  mu_slide, its force opposite the sliding velocity (Fx = -mu_s Fz cos(alpha), Fy = mu_s Fz
  sin(alpha)): a brake fraction above 1, or the lock table at 1.

A wheel with no brake, throttle or rolling resistance keeps the tire model's force exactly
(MEDUSA's TIRE_SPEED and free rolling are unchanged). Everything is smooth in the brake
fraction below 1 (no NaN in gradients: double-where under every square root).
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.safe_math import safe_hypot

__all__ = ["V_REG", "controlled_forces"]

# Regularisation speed [m/s] of the direction of travel: the brake force and the sliding force
# of a locked wheel point along -v / sqrt(|v|^2 + V_REG^2), so they fade smoothly to 0 at rest
# (a Coulomb force would chatter there). Below V_REG a braked car creeps to rest with time
# constant V_REG/(mu g) ~ 7 ms; the distance it adds, ~V_REG^2/(mu g) ~ 0.3 mm, is negligible.
V_REG = 0.05


def controlled_forces(fx0, fy0, model_sliding, fz, vx, vy, mu_peak, mu_slide, brake, lock, throttle, rolling):
    """(fx, fy, sliding) of the wheels of one vehicle (arrays (W,)) under the driver's controls.

    fx0, fy0 [N]: the tire model's force (sign conventions of physics.tire: fx > 0 forward,
    fy > 0 for a positive slip angle, i.e. pushing along -e_y); model_sliding: the model's
    own skid flag; fz [N]; vx, vy [m/s]: the wheel's in-plane velocity along e_x, e_y;
    mu_peak, mu_slide [-]: the friction under the tire; brake [-] fraction of mu_peak Fz,
    lock [-] (1 locked), throttle [N] drive force; rolling [-] rolling-resistance coefficient.
    sliding: locked (lock or brake > 1 weighing at least 1/2), or, for a wheel under brake,
    throttle or rolling resistance, its attempted force outside the friction circle; for
    the others the model's flag.
    """
    direction = vx / jnp.sqrt(vx * vx + V_REG * V_REG)  # smooth sign of the travel along e_x
    f_peak = mu_peak * fz
    f_attempt = fx0 + throttle - (brake * f_peak + rolling * fz) * direction  # sum of applied forces
    active = (brake != 0.0) | (throttle != 0.0) | (rolling != 0.0)
    fx_roll = jnp.clip(f_attempt, -f_peak, f_peak)  # limited by the available friction
    room_sq = f_peak * f_peak - fx_roll * fx_roll  # friction circle: what Fx leaves to Fy
    positive = room_sq > 0.0
    room = jnp.where(positive, jnp.sqrt(jnp.where(positive, room_sq, 1.0)), 0.0)
    fy_roll = jnp.clip(fy0, -room, room)
    outside = f_attempt * f_attempt + fy0 * fy0 > f_peak * f_peak

    # the locked wheel: full slide at mu_slide against the sliding velocity
    locked = jnp.clip(jnp.maximum(lock, (brake > 1.0).astype(fz.dtype)), 0.0, 1.0)
    speed = safe_hypot(safe_hypot(vx, vy), V_REG)
    fx_lock = -mu_slide * fz * vx / speed
    fy_lock = mu_slide * fz * vy / speed
    fx = jnp.where(active, fx_roll, fx0)
    fy = jnp.where(active, fy_roll, fy0)
    fx = fx + locked * (fx_lock - fx)
    fy = fy + locked * (fy_lock - fy)
    sliding = (locked >= 0.5) | jnp.where(active, outside, model_sliding)
    return fx, fy, sliding
