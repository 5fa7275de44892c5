"""MEDUSA's own contact search, part 1: the angle-parametrised surfaces of contact.c.

(`medusa_search.py` has detect_contact(); this module has what it evaluates and the
listing's constants.)

A port, operation by operation, of the repaired listing (docs/medusa-search.md): the
superellipsoids are parametrised by angles x = (u1, v1, u2, v2) (eq. 1.47); `dist` is the
distance between the two surface points; alternating two-variable BFGS minimisations of
`dist` with SHIFT1 / SHIFT2 perturbations (phases I-III) and a four-variable refinement find
the closest (or, once overlapping, a stationary) pair of points; the no-contact test on
`check` and `pt` (DEV, DEV1) and `pert()` (the search for the points of deepest penetration
along the intersection curve) decide contact. The answer depends on the warm start
(`contact.previous`, the four angles) and, in the face-to-face case, on rounding: a change of
1e-15 m in a position can move the contact point by centimetres (docs/medusa-search.md).

Branchy and not meant to be differentiated. Every loop is a bounded `lax.while_loop` with the
listing's maxima, so the function vmaps over pairs and scenarios; the listing's aborts
("too many iterations") become bits of the returned status.

The C program's rounding is reproduced when XLA does not contract a*b + c into fused
multiply-adds (on x86-64: XLA_FLAGS=--xla_cpu_max_isa=AVX; the listing's build had no FMA).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxmedusa.contact.shapes.medusa_search_minimize import eigsrt, jacobi, matmul_long, matrix_inverse, seqsum

PI = 3.1415926535898  # common.h's Pi (not math.pi: angles are reduced with this value)
TWO_PI = 2 * PI
HALF_PI = PI / 2
THREE_HALF_PI = 3 * PI / 2
EP = 1.0e-4  # contact.c constants
EP1 = 5.0e-7
MAXSTEP = 20
SHIFT1 = 5.0e-2
SHIFT2 = 1.0e-6
DEV = 2e-4
DEV1 = 1.5e-4
EXP = 0.4  # squareness exponent of both angles
STEP1MAX = 300
STEP2MAX = 300
BROAD_SLACK = 1.0e-8
PERT_SHIFT = 1.0e-7  # detect_contact(): pert(state, 1.e-7)
COLD = PI / 4.0  # init.c: previous[i][j] = Pi/4.0

# status bits (0 = fine)
FAIL_MINIMIZE = 1  # minimize(): "too many iterations in minimize"
FAIL_JACOBI = 2  # jacobi(): "Too many iterations in routine jacobi()"
FAIL_LOOP = 4  # an unbounded loop of pert()/opp() (no limit in C) hit this port's cap

# Exit points of detect_contact() (diagnostics)
EXIT_FAR, EXIT_APART, EXIT_CHECK1, EXIT_CHECK2, EXIT_PERT, EXIT_CONTACT = 0, 1, 2, 3, 4, 5


class Frame(NamedTuple):
    """contact.c's globals for one pair: xbar (3,) = r2 - r1, v1, v2 (3, 3) principal
    directions (columns, after the column swap), len1, len2 (3,) semi-axes [m]."""

    xbar: jnp.ndarray
    v1: jnp.ndarray
    v2: jnp.ndarray
    len1: jnp.ndarray
    len2: jnp.ndarray


# ----------------------------------------------------------------------------- angles


def _reduce(x):
    """x - 2 k Pi with k = (int)(x / (2 Pi)) (norm_angle())."""
    k = jnp.trunc(x / TWO_PI)
    return jnp.where(x >= 0.0, x - (2 * k) * PI, x - (2 * (k - 1)) * PI)


def norm_angle(x, mask):
    """contact.c norm_angle() on the entries where mask is 1."""
    return jnp.where(mask > 0.0, _reduce(x), x)


def angle(x):
    """contact.c angle(): (t in [0, Pi/2], s, c) with the quadrant's signs of sin and cos."""
    x = _reduce(x)
    q1 = (x >= 0.0) & (x <= HALF_PI)
    q2 = (x > HALF_PI) & (x <= PI)
    q3 = (x > PI) & (x <= THREE_HALF_PI)
    t = jnp.where(q1, x, jnp.where(q2, PI - x, jnp.where(q3, x - PI, TWO_PI - x)))
    s = jnp.where(q1 | q2, 1.0, -1.0)
    c = jnp.where(q1 | (~q1 & ~q2 & ~q3), 1.0, -1.0)
    return t, s, c


def _ct_st(x):
    t, s, c = angle(x)
    sine, cose = jnp.sin(t), jnp.cos(t)
    return t, s, c, sine, cose, c * jnp.power(cose, EXP), s * jnp.power(sine, EXP)


def _m(fr: Frame, ct, st):
    """The vector r2 - r1 (negated) of dist()/d_dist(), per component, in the listing's order."""
    v1, v2, l1, l2 = fr.v1, fr.v2, fr.len1, fr.len2
    return (-fr.xbar + v1[:, 0] * ct[0] * ct[1] * l1[0] - v2[:, 0] * ct[2] * ct[3] * l2[0]
            + v1[:, 2] * l1[2] * st[0] + v1[:, 1] * ct[0] * l1[1] * st[1]
            - v2[:, 2] * l2[2] * st[2] - v2[:, 1] * ct[2] * l2[1] * st[3])


def dist(fr: Frame, x):
    """contact.c dist(): distance between the surface points of x = (u1, v1, u2, v2) [m]."""
    _, _, _, _, _, ct, st = _ct_st(x)
    m = _m(fr, ct, st)
    return jnp.sqrt(seqsum([m[i] * m[i] for i in range(3)]))


def d_dist(fr: Frame, x):
    """contact.c d_dist(): gradient of dist (4,). Its entries 0-1 and 2-3 are d_dist1() and
    d_dist2() bit for bit (same expressions)."""
    t, s, c, sine, cose, ct, st = _ct_st(x)
    cn = jnp.where(t > HALF_PI - 1.0e-14, 1.0e14, jnp.power(cose, EXP - 1))
    sn = jnp.where(t < 1.0e-14, 1.0e14, jnp.power(sine, EXP - 1))
    v1, v2, l1, l2 = fr.v1, fr.v2, fr.len1, fr.len2
    m = _m(fr, ct, st)
    ds = seqsum([m[i] * m[i] for i in range(3)])
    d0 = (-v1[:, 0] * cn[0] * l1[0] * s[0] * sine[0] * ct[1] - v1[:, 1] * cn[0] * l1[1] * s[0] * sine[0] * st[1]
          + v1[:, 2] * sn[0] * l1[2] * c[0] * cose[0]) * EXP * m
    d1 = (-v1[:, 0] * ct[0] * cn[1] * l1[0] * s[1] * sine[1] + v1[:, 1] * ct[0] * sn[1] * l1[1] * c[1] * cose[1]) * EXP * m
    d2 = (v2[:, 0] * cn[2] * l2[0] * s[2] * sine[2] * ct[3] + v2[:, 1] * cn[2] * l2[1] * s[2] * sine[2] * st[3]
          - v2[:, 2] * sn[2] * l2[2] * c[2] * cose[2]) * EXP * m
    d3 = (v2[:, 0] * ct[2] * cn[3] * l2[0] * s[3] * sine[3] - v2[:, 1] * ct[2] * sn[3] * l2[1] * c[3] * cose[3]) * EXP * m
    sq = jnp.sqrt(ds)
    return jnp.stack([seqsum([d[i] for i in range(3)]) for d in (d0, d1, d2, d3)]) / sq


def pos(fr: Frame, x):
    """contact.c pos(): surface points r1, r2 (3,) of x, relative to vehicle a's centre [m]."""
    t, s, c = angle(x)
    sx1 = s[0] * jnp.power(jnp.sin(t[0]), EXP)
    sx3 = s[2] * jnp.power(jnp.sin(t[2]), EXP)
    cx1 = c[0] * jnp.power(jnp.cos(t[0]), EXP)
    cx3 = c[2] * jnp.power(jnp.cos(t[2]), EXP)
    cx12 = cx1 * c[1] * jnp.power(jnp.cos(t[1]), EXP)
    cx34 = cx3 * c[3] * jnp.power(jnp.cos(t[3]), EXP)
    csx12 = cx1 * s[1] * jnp.power(jnp.sin(t[1]), EXP)
    csx34 = cx3 * s[3] * jnp.power(jnp.sin(t[3]), EXP)
    L1 = (fr.len1[0] * cx12, fr.len1[1] * csx12, fr.len1[2] * sx1)
    L2 = (fr.len2[0] * cx34, fr.len2[1] * csx34, fr.len2[2] * sx3)
    r1 = seqsum([L1[j] * fr.v1[:, j] for j in range(3)])
    r2 = seqsum([L2[j] * fr.v2[:, j] for j in range(3)]) + fr.xbar
    return r1, r2


def enorm(fr: Frame, x):
    """contact.c enorm(): outward unit normals (3,) of both surfaces at x."""
    t, s, c = angle(x)
    big = 1.0e16
    sxn = jnp.where(t < 1.0e-16, big, jnp.power(jnp.sin(t), EXP - 1))
    cxn = jnp.where(t > HALF_PI - 1.0e-16, big, jnp.power(jnp.cos(t), EXP - 1))
    sxp = s * jnp.power(jnp.sin(t), EXP)
    cxp = c * jnp.power(jnp.cos(t), EXP)
    sx = s * jnp.sin(t)
    cx = c * jnp.cos(t)
    l1, l2 = fr.len1, fr.len2
    z = jnp.zeros((), x.dtype)
    L1 = (-l1[0] * cxn[0] * sx[0] * cxp[1], -l1[1] * cxn[0] * sx[0] * sxp[1], l1[2] * sxn[0] * cx[0])
    L2 = (-l1[0] * cxp[0] * sx[1] * cxn[1], l1[1] * cxp[0] * cx[1] * sxn[1], z)
    L3 = (-l2[0] * cxn[2] * sx[2] * cxp[3], -l2[1] * cxn[2] * sx[2] * sxp[3], l2[2] * sxn[2] * cx[2])
    L4 = (-l2[0] * cxp[2] * sx[3] * cxn[3], l2[1] * cxp[2] * cx[3] * sxn[3], z)
    tg = lambda L, v: seqsum([EXP * L[j] * v[:, j] for j in range(3)])  # noqa: E731
    t1, t2, t3, t4 = tg(L1, fr.v1), tg(L2, fr.v1), tg(L3, fr.v2), tg(L4, fr.v2)

    def cross(a, b):  # cp = (b2 a3 - a2 b3, b3 a1 - b1 a3, b1 a2 - b2 a1) with a = tang1, b = tang2
        return jnp.stack([b[1] * a[2] - a[1] * b[2], b[2] * a[0] - b[0] * a[2], b[0] * a[1] - b[1] * a[0]])

    cp1, cp2 = cross(t1, t2), cross(t3, t4)
    n1 = jnp.sqrt(seqsum([cp1[i] * cp1[i] for i in range(3)]))
    n2 = jnp.sqrt(seqsum([cp2[i] * cp2[i] for i in range(3)]))
    k = jnp.trunc(x / TWO_PI)
    test = jnp.abs(x - (2 * k) * PI)
    out = (test <= HALF_PI) | (test >= THREE_HALF_PI)
    nv1 = jnp.where(out[0], cp1 / n1, -cp1 / n1)
    nv2 = jnp.where(out[2], cp2 / n2, -cp2 / n2)
    return nv1, nv2


def func(x, z, L, v):
    """contact.c func(): superellipsoid function (sum |y.v_i / L_i|^(2/EXP)) - 1 of point x (3,)."""
    y = x - z
    proj = jnp.stack([jnp.abs(seqsum([y[j] * v[j, i] for j in range(3)])) for i in range(3)])
    return seqsum([jnp.power(proj[i] / L[i], 2.0 / EXP) for i in range(3)]) - 1


def f_on2(fr, r1):
    """func(r1, xbar, len2, v2): body 1's point in body 2's function (< 0: inside body 2)."""
    return func(r1, fr.xbar, fr.len2, fr.v2)


def f_on1(fr, r2):
    """func(r2, null, len1, v1): body 2's point in body 1's function."""
    return func(r2, jnp.zeros(3, r2.dtype), fr.len1, fr.v1)


# ----------------------------------------------------------------------------- info()/eig()


def principal(F, semi):
    """info() + eig() + the column swap of detect_contact(): principal directions v (columns;
    column 0 the longest axis) and semi-axes len (3,) of K_hat = F^-T K F^-1 (eq. 1.50)."""
    finv = matrix_inverse(F)
    K = jnp.diag(1.0 / (semi * semi))
    khat = matmul_long(matmul_long(finv.T, K), finv)
    d, v, ok = jacobi(khat)
    d, v = eigsrt(d, v)
    v = v[:, jnp.array([2, 1, 0])]
    length = jnp.stack([1 / jnp.sqrt(d[2]), 1 / jnp.sqrt(d[1]), 1 / jnp.sqrt(d[0])])
    return v, length, ok
