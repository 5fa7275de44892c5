"""float64 atan2 and sine/cosine as arithmetic that XLA's CPU compiler vectorises.

Why: for float64, XLA's CPU backend (jaxlib 0.10.2) calls the C library's scalar atan2, sin
and cos once per element, never a vector routine (its LLVM has no vector library switched
on), so a batch of scenarios pays 10-23 ns per element for each of them while a multiply
costs about 1 ns (benchmarks/RESULTS.md, "Slip angle, steering and tangent as vector
arithmetic"). A vehicle step evaluates an atan2 per wheel (the slip angle, eq (1.19)), a
sine and cosine per wheel (the tire's tan alpha) and per vehicle (steering, eq (1.15); the
road's banking). Written here as additions, multiplications, one division and selects,
they fuse into the step's vector loops.

Method (the textbook one, in branch-free form):
- sincos(x): x = n pi/2 + r with n = round(2x/pi) and r computed with pi/2 in three parts
  (the first two of 33 significant bits, so n * part is exact for |n| < 2^20: Cody and Waite's
  reduction); then the Taylor polynomials of sin r and cos r to r^17 and r^18, whose first
  omitted terms are below 1e-19 on |r| <= pi/4; the quadrant n mod 4 swaps and negates them.
- atan2(y, x): t = min(|x|,|y|)/max(|x|,|y|) in [0, 1], shifted by atan(t) = atan(c) +
  atan((t - c)/(1 + c t)) with c = 0, tan(pi/8) or 1 so that the argument is at most
  tan(pi/16) = 0.199; the Taylor series of atan to t^23 (first omitted term 3e-20 relative);
  then pi/2 - a where |y| > |x|, pi - a where x < 0 (its sign bit, so that x = -0 gives pi
  as C does) and the sign of y.
Accuracy: within 2 units in the last place of NumPy's (the C library's) results, checked over
several magnitudes by tests/core/test_vector_math.py. sincos is meant for |x| < 2^20 pi/2
(1.6e6 rad), the range of its exact reduction; vehicle angles are within a few radians.
Derivatives are the exact ones (custom JVPs): d atan2 = (x dy - y dx)/(x^2 + y^2),
d sin = cos dx, d cos = -sin dx. Like jnp.arctan2, atan2's derivative at the origin is NaN:
callers keep the origin out of it (the double where of core/safe_math.py).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from jaxmedusa.core.fusion import stored_once

__all__ = ["atan2", "sincos"]

# pi, pi/2 and pi/4 as a double and the double nearest to the rest (hi + lo to 1e-33)
_PI_HI, _PI_LO = 3.141592653589793, 1.2246467991473532e-16
_PIO2_HI, _PIO2_LO = 1.5707963267948966, 6.123233995736766e-17
_PIO4_HI, _PIO4_LO = 0.7853981633974483, 3.061616997868383e-17
# pi/2 = _P1 + _P2 + _P3: _P1 and _P2 with 33 significant bits, _P3 the double nearest to the rest
_P1, _P2, _P3 = 1.5707963267341256, 6.077100506303966e-11, 2.0222662487959506e-21
# c = tan(pi/8) = sqrt(2) - 1 rounded to a double, and atan(c) of that double as hi + lo
# (not pi/8 itself: the rounding of c moves its arctangent by 1.2e-17); mpmath, 300 bits
_TAN_PI8 = 0.41421356237309503
_ATAN_C_HI, _ATAN_C_LO = 0.39269908169872414, 3.060132146563891e-18
# the shifts' switch points tan(pi/16) and tan(3 pi/16): |(t - c)/(1 + c t)| <= tan(pi/16)
_TAN_PI16, _TAN_3PI16 = math.tan(math.pi / 16), math.tan(3.0 * math.pi / 16)

# Taylor coefficients: atan t = t + t z sum_k (-1)^k z^(k-1)/(2k+1) (z = t^2, k = 1..11);
# sin r = r + r z sum_k (-1)^k z^(k-1)/(2k+1)! (k = 1..8); cos r = 1 - z/2 + z^2 sum_k (-1)^k
# z^(k-2)/(2k)! (k = 2..9)
_ATAN_TAYLOR = tuple((-1) ** k / (2 * k + 1) for k in range(1, 12))
_SIN_TAYLOR = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(1, 9))
_COS_TAYLOR = tuple((-1) ** k / math.factorial(2 * k) for k in range(2, 10))


def _horner(z, coefficients):
    """sum_i coefficients[i] z^i."""
    acc = coefficients[-1]
    for c in coefficients[-2::-1]:
        acc = acc * z + c
    return acc


@jax.custom_jvp
def atan2(y, x):
    """The angle [rad] in (-pi, pi] of the point (x, y), elementwise, as C's atan2 (module
    docstring: method and accuracy). y, x: float64 arrays of one broadcast shape."""
    ax, ay = jnp.abs(x), jnp.abs(y)
    a, b = jnp.minimum(ax, ay), jnp.maximum(ax, ay)  # t = a/b in [0, 1]
    mid = a > _TAN_PI16 * b  # shift by c = tan(pi/8)
    high = a > _TAN_3PI16 * b  # shift by c = 1
    c = jnp.where(high, 1.0, jnp.where(mid, _TAN_PI8, 0.0))
    den = b + c * a
    t = (a - c * b) / jnp.where(den == 0.0, 1.0, den)  # (t - c)/(1 + c t), |t| <= tan(pi/16)
    z = t * t
    shifted = t + t * z * _horner(z, _ATAN_TAYLOR)
    angle = (jnp.where(high, _PIO4_HI, jnp.where(mid, _ATAN_C_HI, 0.0))
             + (jnp.where(high, _PIO4_LO, jnp.where(mid, _ATAN_C_LO, 0.0)) + shifted))  # atan(a/b)
    angle = jnp.where(ay > ax, (_PIO2_HI - angle) + _PIO2_LO, angle)  # atan(|y|/|x|)
    angle = jnp.where(jnp.signbit(x), (_PI_HI - angle) + _PI_LO, angle)
    return jnp.copysign(stored_once(angle), y)  # stored: its readers do not each repeat the series


@atan2.defjvp
def _atan2_jvp(primals, tangents):
    y, x = primals
    dy, dx = tangents
    return atan2(y, x), (x * dy - y * dx) / (x * x + y * y)


@jax.custom_jvp
def sincos(x):
    """(sin x, cos x), elementwise, x [rad] a float64 array with |x| < 1.6e6 (module docstring)."""
    n = jnp.round(x * (2.0 / math.pi))
    r = ((x - n * _P1) - n * _P2) - n * _P3  # x - n pi/2, |r| <= pi/4 (to rounding)
    z = r * r
    s = r + r * z * _horner(z, _SIN_TAYLOR)
    half = 0.5 * z
    w = 1.0 - half
    c = w + (((1.0 - w) - half) + z * z * _horner(z, _COS_TAYLOR))  # 1 - z/2 + ..., the rounding of w kept
    quadrant = n - 4.0 * jnp.floor(0.25 * n)  # n mod 4, as a float (AVX2 has no vector float64 -> int64)
    odd = (quadrant == 1.0) | (quadrant == 3.0)
    sin = jnp.where(odd, c, s)
    cos = jnp.where(odd, s, c)
    return (jnp.where(quadrant >= 2.0, -sin, sin),
            jnp.where((quadrant == 1.0) | (quadrant == 2.0), -cos, cos))


@sincos.defjvp
def _sincos_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    s, c = sincos(x)
    return (s, c), (c * dx, -s * dx)
