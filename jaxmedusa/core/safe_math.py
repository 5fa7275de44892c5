"""NaN-safe small math: values AND gradients stay finite where the plain formula has a 0/0.

Every helper uses the "double where": the unsafe branch is fed a harmless argument where it
would be singular, so its derivative is finite too (a plain `where` still propagates NaN
gradients from the untaken branch). TINY is the threshold below which a squared length or
a base is treated as 0.

Also here: `tan_once`, the tangent as XLA's CPU compiler should see it (its docstring), and the
heading, pitch and roll of a vehicle from its directors, written once for
JAX and NumPy (`xp`), as MEDUSA's main.c derives them.
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.core.vector_math import atan2, sincos

__all__ = ["TINY", "tan_once", "safe_pow", "safe_sqrt", "safe_norm", "safe_hypot", "normalize", "safe_atan2",
           "heading", "orientation_angles"]

TINY = 1e-30  # below this, |x|^q and sqrt(x) are treated as 0


def tan_once(x):
    """tan(x) as sin(x)/cos(x), with core/vector_math.py's sincos: within 4 eps relative of
    NumPy's tan on [-1.57, 1.57] (tests/core/test_tan_once.py).

    Why: XLA's fusion cost model counts tan, sin and cos as cheap and copies them into every
    fusion that reads them, while a divide counts as expensive and is computed once and stored.
    A tire's tan(alpha) feeds the forces, the friction and the skid flag, i.e. about ten fusions
    of a step: written as jnp.tan it was evaluated ten times per wheel and step, 40 % of a
    free-driving step (benchmarks/RESULTS.md, "The tire's tangent computed once")."""
    sin, cos = sincos(x)
    return sin / cos


def safe_pow(a, q):
    """a^q for a >= 0, with value and derivatives 0 at a <= TINY (double where)."""
    ok = a > TINY
    return jnp.where(ok, jnp.exp(q * jnp.log(jnp.where(ok, a, 1.0))), 0.0)


def safe_sqrt(s):
    """sqrt(s) for s >= 0, 0 (value and derivative) at s <= TINY."""
    ok = s > TINY
    return jnp.where(ok, jnp.sqrt(jnp.where(ok, s, 1.0)), 0.0)


def safe_norm(v, axis=None):
    """Euclidean norm |v| (over all elements, or along `axis`), 0 with a 0 gradient at v = 0."""
    return safe_sqrt(jnp.sum(v * v, axis=axis))


def safe_hypot(a, b):
    """sqrt(a^2 + b^2) with a finite gradient at the origin (exactly 0 only there)."""
    sq = a * a + b * b
    is_zero = sq == 0.0
    return jnp.where(is_zero, 0.0, jnp.sqrt(jnp.where(is_zero, 1.0, sq)))


def normalize(v, fallback=None):
    """v/|v|; `fallback` (default E1) where |v| is 0."""
    s = jnp.sum(v * v)
    ok = s > TINY
    u = v / jnp.sqrt(jnp.where(ok, s, 1.0))
    fb = jnp.zeros_like(v).at[0].set(1.0) if fallback is None else fallback
    return jnp.where(ok, u, fb)


def safe_atan2(y, x):
    """atan2(y, x), 0 (value and derivatives) at the origin."""
    ok = x * x + y * y > TINY
    return jnp.where(ok, jnp.arctan2(jnp.where(ok, y, 0.0), jnp.where(ok, x, 1.0)), 0.0)


def heading(F, xp=jnp):
    """Heading [rad] of director d1 (first column of F, [..., 3, 3]): atan2(d12, d11), main.c.
    Under JAX the vectorised atan2 of core/vector_math.py (a step's trackers read it)."""
    return (atan2 if xp is jnp else xp.arctan2)(F[..., 1, 0], F[..., 0, 0])


def orientation_angles(F, xp=jnp):
    """Heading, pitch and roll [rad] as main.c derives them for SmartPath from the directors
    (F [..., 3, 3], directors as columns). `xp` is jax.numpy or numpy."""
    d11, d12 = F[..., 0, 0], F[..., 1, 0]
    d31, d32, d33 = F[..., 0, 2], F[..., 1, 2], F[..., 2, 2]
    h = xp.sqrt(d11 * d11 + d12 * d12)
    pitch = xp.arctan2((d31 * d11 + d12 * d32) / h, d33)
    roll = xp.arctan2((d12 * d31 - d11 * d32) / h, d33)
    return heading(F, xp), pitch, roll
