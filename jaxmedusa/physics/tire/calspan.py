"""CALSPAN/STI tire model of Allen et al. as MEDUSA codes it: eqs (1.19)-(1.26), Remarks 1-3.

Written so that values and gradients stay finite everywhere, including the 0/0 of
Remark 1 at s = 0, alpha = 0 (where the forces vanish, as vehicle.c sets them).
"""
from __future__ import annotations

import jax.numpy as jnp

import numpy as np

from jaxmedusa.core.fusion import stored_once
from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.safe_math import safe_hypot, tan_once
from jaxmedusa.physics.tire.model import TireModel

__all__ = ["TireParams", "GOODYEAR_185SR14", "tire_params", "tire_forces", "tire_sliding", "forces_and_sliding",
           "contact_patch_length", "peak_friction", "cornering_stiffness", "MODEL"]


@pytree_dataclass
class TireParams:
    """CALSPAN/STI tire parameters, eqs (1.20)-(1.26). Scalars per tire (all four tires alike).

    a0 [N], a1 [-], a2 [N], b1 [1/N], b3 [-], b4 [1/N^2], cs_fz [-], sn_t, sn_p [-],
    fz_t [lbs], t_w [in], t_p [psi] (non-SI as in the report), k_mu [-], c1..c4 [-].
    """

    a0: jnp.ndarray
    a1: jnp.ndarray
    a2: jnp.ndarray
    b1: jnp.ndarray
    b3: jnp.ndarray
    b4: jnp.ndarray
    cs_fz: jnp.ndarray
    sn_t: jnp.ndarray
    sn_p: jnp.ndarray
    fz_t: jnp.ndarray
    t_w: jnp.ndarray
    t_p: jnp.ndarray
    k_mu: jnp.ndarray
    c1: jnp.ndarray
    c2: jnp.ndarray
    c3: jnp.ndarray
    c4: jnp.ndarray


# Goodyear 185SR14, eqs (1.24)-(1.26), with the digits of vehicle.c's #defines.
GOODYEAR_185SR14 = dict(
    a0=7092.7808,  # 1583.21*4.48
    a1=11.94,
    a2=13571.0848,  # 3029.26*4.48
    b1=-0.0000254464285714286,  # -1.140E-04/4.48
    b3=1.007,
    b4=-5.2913743622449e-11,  # -1.062E-09/4.48/4.48
    cs_fz=18.0,
    sn_t=85.0,
    sn_p=85.0,
    fz_t=1160.0,
    t_w=5.0,
    t_p=28.0,
    k_mu=0.2,
    c1=0.535,
    c2=1.05,
    c3=1.15,
    c4=0.8,
)


def tire_params(values: dict | None = None) -> TireParams:
    """TireParams from a dict of floats (default: Goodyear 185SR14)."""
    v = dict(GOODYEAR_185SR14)
    if values:
        unknown = set(values) - set(v)
        if unknown:
            raise ValueError(f"unknown tire parameter(s) {sorted(unknown)}; expected {sorted(v)}")
        v.update(values)
    return TireParams(**{k: np.asarray(float(x)) for k, x in v.items()})


def contact_patch_length(fz, tp: TireParams):
    """a_p0 of eq (1.20) [in the report's mixed units]; fz [N] > 0."""
    return 0.0768 * jnp.sqrt(fz * tp.fz_t) / (tp.t_w * (tp.t_p + 5.0))


def peak_friction(fz, tp: TireParams):
    """mu0 of eq (1.20) [-]."""
    return (tp.b1 * fz + tp.b3 + tp.b4 * fz * fz) * tp.sn_p / tp.sn_t


def _slip_terms(fz, alpha, s, tp: TireParams, mu_road=None):
    """The inputs of eqs (1.21)-(1.23) after Remarks 2-3: (s, fz, tana, ks, kc_prime, mu, g1, g2, c).
    mu_road: None, or (mu_peak, mu_slide) of the road under the tire (`road_friction`)."""
    # Remark 3: |s| > 1 -> s = -1. Remark 2: |alpha| > pi/2 -> alpha = pi - alpha.
    s = jnp.where(jnp.abs(s) > 1.0, -1.0, s)
    alpha = jnp.where(jnp.abs(alpha) > 0.5 * jnp.pi, jnp.pi - alpha, alpha)
    fz = jnp.where(fz > 0.0, fz, 1.0)  # keeps the unused lanes of lifted wheels finite

    tana = tan_once(alpha)  # once per step, not once per reader (core/safe_math.py)
    # sin^2 = tan^2/(1 + tan^2), cos^2 = 1/(1 + tan^2): from the tangent, no further sin or cos
    cos2 = 1.0 / (1.0 + tana * tana)
    ap0 = contact_patch_length(fz, tp)  # eq (1.20)
    ks = 2.0 / (ap0 * ap0) * (tp.a0 + tp.a1 * fz - tp.a1 / tp.a2 * fz * fz)
    kc = 2.0 / (ap0 * ap0) * fz * tp.cs_fz
    if mu_road is None:
        mu0, k_mu = peak_friction(fz, tp), tp.k_mu
    else:
        mu0, k_mu = road_friction(mu_road)
    s3_sq = (tana * tana + s * s) * cos2  # sin^2 alpha + s^2 cos^2 alpha, eq (1.21)
    s3 = jnp.where(s3_sq == 0.0, 0.0, jnp.sqrt(jnp.where(s3_sq == 0.0, 1.0, s3_sq)))
    kc_prime = kc + (ks - kc) * s3
    mu = mu0 * (1.0 - k_mu * s3)

    # s = 1 is the pole of Remark 1; s only reaches it for an infinite wheel-plane speed.
    one_minus_s = jnp.where(jnp.abs(1.0 - s) < 1e-12, 1e-12, 1.0 - s)
    g1 = safe_hypot(ks * tana, kc * s / one_minus_s)  # composite slip sigma = c*g1, eq (1.22)
    g2 = safe_hypot(ks * tana, kc_prime * s)  # denominator of eq (1.23)
    c = jnp.pi * ap0 * ap0 / (8.0 * mu0 * fz)
    return s, fz, tana, ks, kc_prime, mu, g1, g2, c


# The composite slip sigma of eq (1.22) at which the tire counts as sliding: f(sigma) starts as
# 4 sigma / pi, the same initial slope as the brush (Fiala) law F/(mu Fz) = 1 - (1 - lam)^3 with
# lam = psi/(3 mu Fz), whose contact patch slides as a whole from lam = 1, i.e. from
# psi/(mu Fz) = 3 = (4/pi) sigma. So sigma >= 3 pi/4 (f = 0.97 with the 185SR14 constants).
SLIDING_SIGMA = 0.75 * np.pi


def road_friction(mu_road):
    """(mu0, k_mu) of eqs (1.20)-(1.21) on a road surface of peak and sliding friction
    mu_road = (mu_peak, mu_slide): mu0 = mu_peak (replacing the load-dependent polynomial
    b1 Fz + b3 + b4 Fz^2 times sn_p/sn_t, whose skid-number ratio is what a surface changes)
    and k_mu = 1 - mu_slide/mu_peak, so that mu = mu0 (1 - k_mu s3) is mu_slide at full
    sliding s3 = 1, as it is mu0 (1 - k_mu) for the tire's own surface (docs/vehicles-and-scenes.md)."""
    mu_peak, mu_slide = mu_road
    return mu_peak, 1.0 - mu_slide / mu_peak


def friction(fz, tp: TireParams):
    """(mu_peak, mu_slide) of the tire on its own surface [-]: mu0 of eq (1.20) and the
    locked-wheel value mu0 (1 - k_mu) of eq (1.21) at s3 = 1."""
    mu0 = peak_friction(jnp.where(fz > 0.0, fz, 1.0), tp)
    return mu0, mu0 * (1.0 - tp.k_mu)


def forces_and_sliding(fz, alpha, s, tp: TireParams, mu_road=None):
    """(Fx, Fy, sliding): `tire_forces` and `tire_sliding` from one evaluation of the slip terms.

    The composite slip sigma = c g1 of eq (1.22) is stored once (core.fusion.stored_once: the
    same values), so that the flag's compare and the forces' polynomial read it instead of each
    evaluating the slip terms anew (benchmarks/RESULTS.md, "The skid flag from the tire's own terms").
    """
    s, fz, tana, ks, kc_prime, mu, g1, g2, c = _slip_terms(fz, alpha, s, tp, mu_road)
    sig = stored_once(c * g1)  # c > 0, g1 >= 0: never -0.0, so the same bits
    # f / sigma of eq (1.22), regular at sigma = 0:
    f_over_sig = (sig * (tp.c1 * sig + tp.c2) + 4.0 / jnp.pi) / (sig * (sig * (tp.c1 * sig + tp.c3) + tp.c4) + 1.0)
    # g1/g2 -> 1 at the origin along every direction (kc_prime -> kc there).
    both_zero = g2 == 0.0
    ratio = jnp.where(both_zero, 1.0, g1 / jnp.where(both_zero, 1.0, g2))
    s2 = mu * fz * f_over_sig * c * ratio  # = mu*Fz*f / sqrt(Ks^2 tan^2 + Kc'^2 s^2)
    fy = s2 * ks * tana  # eq (1.23)
    fx = -s2 * kc_prime * s
    return fx, fy, (sig >= SLIDING_SIGMA) | (s >= 1.0)


def tire_forces(fz, alpha, s, tp: TireParams, mu_road=None):
    """Longitudinal and lateral tire forces (Fx, Fy) [N], eqs (1.20)-(1.23).

    fz: normal load [N] (> 0; the caller zeroes the forces of lifted wheels),
    alpha: (lagged) slip angle [rad], s: longitudinal slip [-]; mu_road: None for the tire's
    own friction, or (mu_peak, mu_slide) of the road surface under it (`road_friction`).
    """
    return forces_and_sliding(fz, alpha, s, tp, mu_road)[:2]


def tire_sliding(fz, alpha, s, tp: TireParams, mu_road=None):
    """EDC's skid flag for the CALSPAN tire: True when the composite slip sigma of eq (1.22)
    reaches SLIDING_SIGMA = 3 pi/4, where a brush tire of the same initial slope slides over its
    whole contact patch (the Fiala model's sliding regime), or the wheel is locked (s = 1)."""
    return forces_and_sliding(fz, alpha, s, tp, mu_road)[2]


def cornering_stiffness(fz, tp: TireParams):
    """dFy/dalpha at alpha = 0, s = 0 [N/rad]: eq (1.23) with f ~ 4 sigma/pi and mu = mu0
    for small alpha gives Fy ~ mu0*Fz*(4/pi)*c*Ks*tan(alpha) = Ks*a_p0^2/2 * tan(alpha)."""
    ap0 = contact_patch_length(fz, tp)
    ks = 2.0 / (ap0 * ap0) * (tp.a0 + tp.a1 * fz - tp.a1 / tp.a2 * fz * fz)
    return 0.5 * ks * ap0 * ap0


MODEL = TireModel(name="calspan", forces=tire_forces, params=tire_params, defaults=GOODYEAR_185SR14,
                  sliding=tire_sliding, friction=friction, forces_and_sliding=forces_and_sliding)
