"""Fiala (brush) tire model, the tire of the EDC programs EDSVS, EDVTS and EDSMAC.

A second tire model beside CALSPAN/STI (`tire.py`), with the same call signature and sign
conventions, so a vehicle can use either: `fiala_tire_forces(fz, alpha, s, fp) -> (fx, fy)`.
Equations, defaults and their sources, and a comparison with CALSPAN: docs/tire-fiala.md.

Pure lateral slip is EDC's Fiala formula (Fiala 1954): with abar = C_a tan(alpha)/(mu Fz),
    Fy = mu Fz (abar - abar|abar|/3 + abar^3/27)   for |abar| < 3,   mu Fz sign(alpha) above.
Combined slip uses the brush model's theoretical slip (Pacejka, Tire and Vehicle Dynamics,
sec. 3.2): sigma_x = s/(1 - s), sigma_y = tan(alpha)/(1 - s), and one cubic law on the
stiffness-weighted magnitude psi = |(C_s sigma_x, C_a sigma_y)|. The force points along
(C_s sigma_x, C_a sigma_y) below full sliding and turns to the sliding velocity in full sliding
(EDC's locked wheel: Fx = -mu_s Fz cos(alpha), Fy = mu_s Fz sin(alpha)). Friction falls from
the peak mu_p to the locked-wheel slide value mu_s with the sliding-speed fraction
sqrt(sin^2 alpha + s^2 cos^2 alpha) (EDC's mu_p/mu_s in the form of eq (1.21)'s
mu = mu0 (1 - k_mu s3)).

Values and gradients are finite everywhere (double-where), including alpha = s = 0, the
locked wheel s = 1, and Fz -> 0.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.safe_math import safe_hypot, tan_once
from jaxmedusa.physics.tire.model import TireModel


@pytree_dataclass
class FialaParams:
    """Fiala tire parameters, scalars per tire (all four tires alike).

    c_alpha: cornering stiffness C_a = dFy/dalpha at alpha = s = 0 and Fz = fz_ref [N/rad];
    c_s: longitudinal slip stiffness C_s = -dFx/ds at alpha = s = 0 and Fz = fz_ref [N];
    mu_p: peak friction coefficient [-]; mu_s: sliding (locked-wheel) friction coefficient [-];
    fz_ref: reference load of c_alpha and c_s [N];
    c_alpha_exp, c_s_exp: load exponents, C(Fz) = C (Fz/fz_ref)^exp [-] (0: EDC's constant
    stiffness; 0.5 and 1.0 follow CALSPAN's load sensitivity near fz_ref, docs/tire-fiala.md).
    """

    c_alpha: jnp.ndarray
    c_s: jnp.ndarray
    mu_p: jnp.ndarray
    mu_s: jnp.ndarray
    fz_ref: jnp.ndarray
    c_alpha_exp: jnp.ndarray
    c_s_exp: jnp.ndarray


# Goodyear 185SR14 on the report's Appendix C car (1573 kg): the CALSPAN model's own small-slip
# behaviour at the mean static wheel load Fz0 = 1573*9.81/4 N, so both models agree there.
FIALA_185SR14 = dict(
    c_alpha=40060.917813187625,  # tire.cornering_stiffness(Fz0) = a0 + a1 Fz0 - a1/a2 Fz0^2
    c_s=69440.085,  # CALSPAN's -dFx/ds at the origin: cs_fz * Fz0 = 18 * Fz0 (eq 1.20 Kc)
    mu_p=0.9080457251306411,  # tire.peak_friction(Fz0), mu0 of eq (1.20)
    mu_s=0.726436580104513,  # (1 - k_mu) mu_p, k_mu = 0.2: CALSPAN's friction at full sliding
    fz_ref=3857.7825,  # 1573 kg * 9.81 m/s^2 / 4
    c_alpha_exp=0.0,  # EDC: constant cornering stiffness
    c_s_exp=0.0,
)


def fiala_params(values: dict | None = None) -> FialaParams:
    """FialaParams from a dict of floats (default: FIALA_185SR14); unknown keys raise ValueError."""
    v = dict(FIALA_185SR14)
    if values:
        unknown = set(values) - set(v)
        if unknown:
            raise ValueError(f"unknown Fiala tire parameter(s) {sorted(unknown)}; expected {sorted(v)}")
        v.update(values)
    return FialaParams(**{k: np.asarray(float(x)) for k, x in v.items()})


def fiala_stiffnesses(fz, fp: FialaParams):
    """(C_a, C_s) at load fz [N] > 0: C (Fz/fz_ref)^exp [N/rad], [N]."""
    ratio = fz / fp.fz_ref
    return fp.c_alpha * ratio**fp.c_alpha_exp, fp.c_s * ratio**fp.c_s_exp


def fiala_friction(alpha, s, fp: FialaParams, mu_road=None):
    """Friction coefficient [-]: mu_p at rolling, mu_s when the contact patch slides at the
    full wheel speed (locked wheel, or alpha = 90 deg). Linear in the sliding-speed fraction
    S = sqrt(sin^2 alpha + s^2 cos^2 alpha), the s3 of eq (1.21). mu_road: None, or the road
    surface's (mu_peak, mu_slide), which then replace (mu_p, mu_s)."""
    tana = tan_once(alpha)
    cos2 = 1.0 / (1.0 + tana * tana)
    s_sq = (tana * tana + s * s) * cos2  # sin^2 alpha + s^2 cos^2 alpha
    frac = jnp.where(s_sq == 0.0, 0.0, jnp.sqrt(jnp.where(s_sq == 0.0, 1.0, s_sq)))
    mu_p, mu_s = (fp.mu_p, fp.mu_s) if mu_road is None else mu_road
    return mu_p + (mu_s - mu_p) * frac


def friction(fz, fp: FialaParams):
    """(mu_peak, mu_slide) of the tire on its own surface [-]: (mu_p, mu_s), for every load."""
    return jnp.broadcast_to(fp.mu_p, jnp.shape(fz)), jnp.broadcast_to(fp.mu_s, jnp.shape(fz))


def fiala_forces_and_sliding(fz, alpha, s, fp: FialaParams, mu_road=None):
    """(Fx, Fy, sliding): `fiala_tire_forces` and `fiala_sliding` from one evaluation (the flag
    is the forces' own regime switch; physics.tire.model.TireModel.forces_and_sliding says why)."""
    # Remark 3: |s| > 1 -> s = -1. Remark 2: |alpha| > pi/2 -> alpha = pi - alpha (as tire.py).
    s = jnp.where(jnp.abs(s) > 1.0, -1.0, s)
    alpha = jnp.where(jnp.abs(alpha) > 0.5 * jnp.pi, jnp.pi - alpha, alpha)
    fz = jnp.where(fz > 0.0, fz, 1.0)  # keeps the unused lanes of lifted wheels finite

    c_a, c_s = fiala_stiffnesses(fz, fp)
    mu = fiala_friction(alpha, s, fp, mu_road)
    ux = c_s * s  # (1 - s) C_s sigma_x
    tana = tan_once(alpha)
    uy = c_a * tana  # (1 - s) C_a sigma_y
    n = safe_hypot(ux, uy)  # (1 - s) psi
    f_max = mu * fz
    # Full sliding when psi >= 3 mu Fz, written without dividing by 1 - s (s = 1: locked wheel).
    one_minus_s = 1.0 - s  # in [0, 2] after Remark 3
    sliding = (n >= 3.0 * f_max * one_minus_s) & (n > 0.0)

    # Adhesion: F/psi = 1 - lam + lam^2/3 with lam = psi/(3 mu Fz) < 1; F = mu Fz (1 - (1 - lam)^3).
    d = jnp.where(sliding, 1.0, one_minus_s)  # > 0 on this branch (or n = 0, where F = 0)
    den = d * 3.0 * f_max
    den = jnp.where(sliding | (den <= 0.0), 1.0, den)
    lam = n / den
    g_adh = (1.0 - lam + lam * lam / 3.0) / d
    # Sliding: |F| = mu Fz. Its direction turns from (ux, uy) at the onset of sliding (continuous
    # with adhesion) to the sliding velocity (s, tan alpha) at the locked wheel, where EDC has
    # Fx = -mu_s Fz cos(alpha), Fy = mu_s Fz sin(alpha). w = (1 - 1/lam)^2 runs from 0 to 1 and
    # starts with zero slope, so the force stays C^1 across the onset of sliding.
    n_sl = jnp.where(sliding, n, 1.0)
    w = jnp.where(sliding, 1.0 - 3.0 * f_max * one_minus_s / n_sl, 0.0) ** 2
    m = safe_hypot(s, tana)
    m_sl = jnp.where(sliding & (m > 0.0), m, 1.0)
    bx = (1.0 - w) * ux / n_sl + w * s / m_sl
    by = (1.0 - w) * uy / n_sl + w * tana / m_sl
    b = safe_hypot(bx, by)  # >= 1/sqrt(2) where sliding: both unit vectors lie in one quadrant
    g_sl = f_max / jnp.where(sliding, b, 1.0)
    fx = jnp.where(sliding, -g_sl * bx, -g_adh * ux)
    fy = jnp.where(sliding, g_sl * by, g_adh * uy)
    return fx, fy, sliding


def fiala_tire_forces(fz, alpha, s, fp: FialaParams, mu_road=None):
    """Longitudinal and lateral tire forces (Fx, Fy) [N] of the Fiala brush model.

    Same signature and signs as `tire.tire_forces`: fz normal load [N] (> 0; the caller zeroes
    the forces of lifted wheels), alpha (lagged) slip angle [rad] (alpha > 0 gives Fy > 0),
    s longitudinal slip 1 - R omega / v_x of eq (1.19) [-] (s > 0, braking, gives Fx < 0).
    Broadcasts over any common shape of fz, alpha, s. mu_road: None for the tire's own
    friction, or (mu_peak, mu_slide) of the road surface under it (replacing mu_p, mu_s).
    """
    return fiala_forces_and_sliding(fz, alpha, s, fp, mu_road)[:2]


def fiala_sliding(fz, alpha, s, fp: FialaParams, mu_road=None):
    """EDC's skid flag for the Fiala tire: True in the brush model's full-sliding regime, where
    the whole contact patch slides: psi >= 3 mu Fz (lam >= 1 in `fiala_tire_forces`; the
    locked wheel s = 1 with any slip is in it)."""
    return fiala_forces_and_sliding(fz, alpha, s, fp, mu_road)[2]


MODEL = TireModel(name="fiala", forces=fiala_tire_forces, params=fiala_params, defaults=FIALA_185SR14,
                  sliding=fiala_sliding, friction=friction,
                  forces_and_sliding=fiala_forces_and_sliding)
