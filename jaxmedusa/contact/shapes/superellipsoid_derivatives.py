"""Closed-form value, gradient and Hessian of the superellipsoid and ellipsoid gauges.

The narrow-phase search (narrow_phase._solve_one) needs the gradient and Hessian of
h(w) = G(c + M w / G(w)) at every iteration. By automatic differentiation that costs one
reverse pass for the gradient and three forward passes over it for the Hessian, each with
its own pow calls (exp and log); the closed forms below reuse one power of every
coordinate: d/dy |y|^q = q |y|^(q-2) y and d2/dy2 |y|^q = q (q-1) |y|^(q-2).

Barr's inside-outside function and its gauge (superellipsoid.py), q2 = 2/eps2, q1 = 2/eps1,
r = eps2/eps1 = q1/q2:
    A = |y1|^q2 + |y2|^q2,   B = A^r,   C = |y3|^q1,   F = B + C,   G = F^(1/q1)
    dB/dy_k   = r A^(r-1) A_k,                A_k  = q2 |y_k|^(q2-2) y_k          (k = 1, 2)
    d2B/dy_kl = r (r-1) A^(r-2) A_k A_l + r A^(r-1) q2 (q2-1) |y_k|^(q2-2) delta_kl
    dC/dy3 = q1 |y3|^(q1-2) y3,  d2C/dy3^2 = q1 (q1-1) |y3|^(q1-2)
    grad G = G / (q1 F) grad F,  hess G = G / (q1 F) [hess F + (1/q1 - 1) grad F grad F^T / F]
The ellipsoid is q1 = q2 = 2. `tests/contact/test_gauge_derivatives.py` checks both against
automatic differentiation and finite differences.

`radial_derivatives` then gives h and its derivatives through the chain rule of
y(w) = w / G(w) (a surface point for any w):
    dy/dw = (I - y grad G(w)^T) / G(w)
    d2y_i/dw_j dw_k = [-(delta_ij g_k + delta_ik g_j) - w_i H_jk + 2 w_i g_j g_k / G] / G^2
    grad h = (dy/dw)^T M^T grad G(u),   u = c + M y
    hess h = (M dy/dw)^T hess G(u) (M dy/dw) + sum_i (M^T grad G(u))_i d2y_i/dw dw
"""
from __future__ import annotations

import jax.numpy as jnp

from jaxmedusa.contact.shapes.superellipsoid import ellipsoid_gauge, is_static, superellipsoid_gauge
from jaxmedusa.core.safe_math import TINY

__all__ = ["superellipsoid_derivatives", "ellipsoid_derivatives", "radial_derivatives", "DERIVATIVES",
           "derivatives_for"]


def _pow(a, q):
    """a^q for a >= 0 (0 at a <= TINY): integer powers by multiplication when q is a static
    whole number >= 0, else exp(q log a) behind a double where."""
    if is_static(q) and abs(q - round(q)) < 1e-12 and round(q) >= 0:
        return a ** int(round(q))
    ok = a > TINY
    return jnp.where(ok, jnp.exp(q * jnp.log(jnp.where(ok, a, 1.0))), 0.0)


def superellipsoid_derivatives(y, eps1=0.4, eps2=0.4):
    """(G, grad G (3,), hess G (3, 3)) of the unit superellipsoid's gauge at y (3,) [unit
    coordinates]. eps1, eps2: static floats or traced scalars (module docstring)."""
    static = is_static(eps1) and is_static(eps2)
    q1, q2 = 2.0 / eps1, 2.0 / eps2
    r = eps2 / eps1
    a = jnp.abs(y)
    p12 = _pow(a[:2], q2 - 2.0)  # |y_k|^(q2-2), k = 1, 2
    p3 = _pow(a[2], q1 - 2.0)
    A = jnp.sum(p12 * a[:2] * a[:2])
    Ak = q2 * p12 * y[:2]
    Akk = q2 * (q2 - 1.0) * p12
    if static and r == 1.0:  # the p-norm: B = A
        B, r1, r2 = A, 1.0, 0.0
    else:
        okA = A > TINY
        As = jnp.where(okA, A, 1.0)
        Ar2 = jnp.where(okA, jnp.exp((r - 2.0) * jnp.log(As)), 0.0)  # A^(r-2)
        B = Ar2 * As * As
        r1, r2 = r * Ar2 * As, r * (r - 1.0) * Ar2
    C = p3 * a[2] * a[2]
    F = B + C
    gF = jnp.stack([r1 * Ak[0], r1 * Ak[1], q1 * p3 * y[2]])
    H12 = r2 * jnp.outer(Ak, Ak) + r1 * jnp.diag(Akk)
    HF = jnp.zeros((3, 3), y.dtype).at[:2, :2].set(H12).at[2, 2].set(q1 * (q1 - 1.0) * p3)
    okF = F > TINY
    Fs = jnp.where(okF, F, 1.0)
    G = jnp.where(okF, jnp.exp(jnp.log(Fs) / q1), 0.0)
    k = jnp.where(okF, G / (q1 * Fs), 0.0)
    gG = k * gF
    HG = k * (HF + (1.0 / q1 - 1.0) * jnp.outer(gF, gF) / Fs)
    return G, gG, HG


def ellipsoid_derivatives(y, eps1=None, eps2=None):
    """(G, grad G, hess G) of the unit ball's gauge |y| (exponents ignored)."""
    s = jnp.sum(y * y)
    ok = s > TINY
    G = jnp.where(ok, jnp.sqrt(jnp.where(ok, s, 1.0)), 0.0)
    inv = jnp.where(ok, 1.0 / jnp.where(ok, G, 1.0), 0.0)
    g = y * inv
    H = (jnp.eye(3, dtype=y.dtype) - jnp.outer(g, g)) * inv
    return G, g, H


# gauge function -> its closed-form derivatives (shapes without an entry use autodiff)
DERIVATIVES = {superellipsoid_gauge: superellipsoid_derivatives, ellipsoid_gauge: ellipsoid_derivatives}


def derivatives_for(gauge):
    """The closed-form derivative function of a gauge, or None (then autodiff is used)."""
    return DERIVATIVES.get(gauge)


def radial_derivatives(dG, c, M, w):
    """h(w) = G(c + M y(w)), y(w) = w / G(w), with its gradient (3,) and Hessian (3, 3) at w,
    from dG(y) -> (G, grad G, hess G) (module docstring for the chain rule)."""
    Gw, gw, Hw = dG(w)
    inv = 1.0 / jnp.maximum(Gw, TINY)
    y = w * inv
    Jy = (jnp.eye(3, dtype=w.dtype) - jnp.outer(y, gw)) * inv
    Gu, gu, Hu = dG(c + M @ y)
    MJ = M @ Jy
    grad = MJ.T @ gu
    q = M.T @ gu
    qw = jnp.dot(q, w)
    second = (-(jnp.outer(q, gw) + jnp.outer(gw, q)) - qw * Hw + 2.0 * qw * inv * jnp.outer(gw, gw)) * inv * inv
    return Gu, grad, MJ.T @ Hu @ MJ + second
