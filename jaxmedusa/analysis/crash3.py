"""CRASH3 energy and delta-V from measured crush, as an accident reconstructionist computes them.

NHTSA's CRASH3 (CRASH3 User's Guide and Technical Manual, DOT HS 805 732, 1981; Campbell,
"Energy basis for collision severity", SAE 740565) models a vehicle face as a row of
structures whose force per unit width grows linearly with the residual crush C [m]:

    F / w = A + B C,        A [N/m], B [N/m^2]                               (Campbell)

so the energy absorbed over a width L with a crush profile C(y) is

    E = integral_0^L (A C + B C^2 / 2 + G) dy,    G = A^2 / (2 B) [J/m]      (CRASH3)

With N equally spaced crush measurements C1..CN (the NASS protocol takes N = 6 across the
damage width L) and C linear between stations, the integral is the trapezoidal formula

    E = (L / (N-1)) sum_segments [ A (Ci + Ci+1)/2 + B (Ci^2 + Ci Ci+1 + Ci+1^2)/6 + G ]

which for N = 6 is the familiar
    E = L/5 [ A/2 (C1 + 2C2 + 2C3 + 2C4 + 2C5 + C6)
            + B/6 (C1^2 + 2C2^2 + 2C3^2 + 2C4^2 + 2C5^2 + C6^2 + C1C2 + C2C3 + C3C4 + C4C5 + C5C6)
            + 5 A^2 / (2B) ].
CRASH3 multiplies it by (1 + tan^2 alpha) for a principal direction of force alpha off the
face normal (the force-direction correction, capped in practice at 45 degrees).

Two vehicles: CRASH3 takes a common velocity at the end of the crush phase (restitution 0)
and momentum conservation, so the total energy E1 + E2 fixes the closing speed and the
delta-V of each vehicle (effective masses gamma_i m_i for eccentric impacts, gamma = k^2 /
(k^2 + h^2), k the yaw radius of gyration, h the moment arm of the force):

    dV1 = sqrt( 2 (E1 + E2) m2' / (m1' (m1' + m2')) ),    dV2 = dV1 m1' / m2'.

A barrier (rigid, immovable) gives the barrier-equivalent speed sqrt(2 E / m).

Campbell's velocity form: a barrier test at speed V leaves C = (V - b0) / b1, so that
A = m b0 b1 / w and B = m b1^2 / w (`stiffness_from_speed_line`).

All functions are jnp, vectorise over leading axes and are differentiable (sqrt guarded).
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.safe_math import safe_sqrt

__all__ = ["crash3_energy", "crash3_delta_v", "barrier_equivalent_speed", "closing_speed",
           "stiffness_from_speed_line", "force_direction_factor"]


def crash3_energy(profile, width, a, b):
    """CRASH3 crush energy [J] of a profile.

    profile [..., N] (N >= 2): residual crush [m] at N equally spaced stations across the
    damage width (C1..CN; the NASS protocol's N = 6); width [...] [m]: the damage width L;
    a [N/m], b [N/m^2]: the face's Campbell coefficients (broadcast against width). A
    profile of zeros gives L G = L A^2 / 2B, the energy below the damage threshold (CRASH3
    counts it as soon as there is a damage width)."""
    c = jnp.asarray(profile)
    lo, hi = c[..., :-1], c[..., 1:]
    a, b = jnp.asarray(a)[..., None], jnp.asarray(b)[..., None]
    seg = jnp.asarray(width) / (c.shape[-1] - 1)  # [m] width of one segment
    per_seg = a * 0.5 * (lo + hi) + b * (lo * lo + lo * hi + hi * hi) / 6.0 + a * a / (2.0 * b)
    return seg * jnp.sum(per_seg, axis=-1)


def force_direction_factor(pdof_off_normal_rad, cap_rad=jnp.pi / 4):
    """CRASH3's force-direction correction 1 + tan^2(alpha) [-], alpha the principal
    direction of force off the damaged face's normal (capped at cap_rad, 45 degrees)."""
    a = jnp.minimum(jnp.abs(pdof_off_normal_rad), cap_rad)
    return 1.0 + jnp.tan(a) ** 2


def barrier_equivalent_speed(energy, mass):
    """sqrt(2 E / m) [m/s]: the speed into a rigid barrier that absorbs E [J]."""
    return safe_sqrt(2.0 * energy / mass)


def closing_speed(e1, e2, m1, m2, gamma1=1.0, gamma2=1.0):
    """Closing speed [m/s] that two vehicles' crush energies imply (common velocity at the end
    of crush, momentum conserved): sqrt(2 (E1 + E2) (m1' + m2') / (m1' m2'))."""
    m1e, m2e = gamma1 * m1, gamma2 * m2
    return safe_sqrt(2.0 * (e1 + e2) * (m1e + m2e) / (m1e * m2e))


def crash3_delta_v(e1, e2, m1, m2, gamma1=1.0, gamma2=1.0, restitution=0.0):
    """(dV1, dV2) [m/s]: CRASH3's delta-V of two vehicles from their crush energies E1, E2 [J],
    masses m1, m2 [kg] and effective-mass factors gamma (module docstring). CRASH3 assumes
    restitution 0; `restitution` e > 0 scales both by (1 + e) / sqrt(1 - e^2), the
    momentum-and-energy answer when the crush energy is (1 - e^2) of the closing energy."""
    m1e, m2e = gamma1 * m1, gamma2 * m2
    dv1 = safe_sqrt(2.0 * (e1 + e2) * m2e / (m1e * (m1e + m2e)))
    k = (1.0 + restitution) / jnp.sqrt(1.0 - restitution * restitution)
    return k * dv1, k * dv1 * m1e / m2e


def stiffness_from_speed_line(mass, width, b0, b1):
    """(A [N/m], B [N/m^2]) from Campbell's speed line V = b0 + b1 C (b0 [m/s] the no-damage
    speed, b1 [1/s] the slope) of a car of mass [kg] and face width [m]: A = m b0 b1 / w,
    B = m b1^2 / w (Campbell 1974; CRASH3 manual)."""
    return mass * b0 * b1 / width, mass * b1 * b1 / width
