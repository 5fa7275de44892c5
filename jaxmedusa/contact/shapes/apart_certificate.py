"""The apart certificate: a lower bound of the distance between two bodies that the narrow
phase's searches proved apart (narrow_phase._solve_one's h_low), so that the contact stage can
skip a pair's search while the bodies have moved less than that gap (contact/stage.py)."""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.safe_math import safe_norm as _norm
from jaxmedusa.core.safe_math import safe_sqrt as _ssqrt

__all__ = ["apart_gap"]


def _smallest_stretch(F, Finv):
    """A lower bound of F's smallest singular value: the larger of 1 / |F^-1|_F and, by Weyl's
    inequality on F^T F = I + C, sqrt(1 - |C|_F) (tight for the near-rigid F of a vehicle,
    where the first is 1/sqrt(3))."""
    C = F.T @ F - jnp.eye(3)
    return jnp.maximum(1.0 / _norm(Finv), _ssqrt(jnp.maximum(1.0 - _norm(C), 0.0)))


def apart_gap(h_low, rho, ell1, F1, Finv1, ell2, F2, Finv2):
    """A lower bound [m] of the distance between two bodies that a search proved apart, 0 where
    it did not. h_low (2,): the searches' lower bounds of min G2 over surface 1 and of min G1
    over surface 2 (narrow_phase._solve_one); rho: the unit shape's inner radius (Shape.inner_radius);
    ell_k (3,) [m]: the surfaces' semi-axes; F_k, Finv_k (3, 3): F_k and its inverse.

    Both bounds above 1 prove the bodies apart (each lies outside the other scaled by h_low
    about its centre). Body k = r_k + F_k diag(ell_k) {G <= 1} contains the ball of radius
    rho_k = rho min(ell_k) s_k about r_k, s_k <= the smallest singular value of F_k
    (`_smallest_stretch`), so the h-scaled body contains every point within (h - 1) rho_k of
    it, and no point of body 1 is nearer body 2 than (h_low[0] - 1) rho_2, nor any of body 2
    nearer body 1 than (h_low[1] - 1) rho_1."""
    h = jnp.where(h_low > 1.0, h_low, 1.0)  # finite everywhere (h_low may be -inf)
    rho1 = rho * jnp.min(ell1) * _smallest_stretch(F1, Finv1)
    rho2 = rho * jnp.min(ell2) * _smallest_stretch(F2, Finv2)
    return jnp.where(jnp.all(h_low > 1.0), jnp.maximum((h[0] - 1.0) * rho2, (h[1] - 1.0) * rho1), 0.0)
