"""Pairwise contact geometry: MEDUSA's points of deepest mutual penetration, one pair at a time.

MEDUSA (report V, Sections 1.4-1.5, contact.c) defines, for two overlapping vehicles,
  T1 = the point of the surface of body 1 that minimises body 2's inside-outside function,
  T2 = the point of the surface of body 2 that minimises body 1's inside-outside function,
  n1 = the outward unit normal of body 1 at T1,
  phi1 = (T2 - T1) . n1                                                   # eq. (1.39)
and reports contact when phi1 <= 0. contact.c finds T1, T2 with alternating BFGS searches
and a perturbation search (pert()); here a fixed-iteration, branchless, warm-started
Levenberg-Marquardt/Newton search does it (see `pair_geometry`).

Shape of a body: a superellipsoid (eq. 1.45) with semi-axes a (3,) [m] and squareness
exponents eps1 (E3 direction, 'u' in eq. 1.45) and eps2 (E1-E2 plane, 'v'). In unit
coordinates y its gauge (Minkowski) function is Barr's inside-outside function
F(y) = (|y1|^(2/eps2) + |y2|^(2/eps2))^(eps2/eps1) + |y3|^(2/eps1) raised to eps1/2, so that
G(y) = 1 on the surface, G < 1 inside, and G(t y) = t G(y). With eps1 = eps2 = eps it is
the p-norm G(y) = ||y||_p, p = 2/eps, i.e. MEDUSA's func() f = sum |y_i|^(2/eps) - 1
(eq. 1.51 with the superellipsoid exponent). Minimising f or G is the same problem:
G = (f + 1)^(eps/2) is monotone in f and better conditioned.

World point x <-> unit coordinates y = A (x - r), x = r + B y, B = A^-1. Two frames:
  frame="affine" (default): A = diag(1/a) F^-1, i.e. the reference superellipsoid mapped
      through F (y = X / a with X the material label). Exact for rigid motion, no eigen-solve.
  frame="principal": contact.c's construction (info(), eig()): the superellipsoid built on
      the principal axes q_k and semi-axes 1/sqrt(lambda_k) of K_hat = F^-T K F^-1 (eq. 1.50).
For an ellipsoid the two coincide exactly; for the superellipsoid they differ at first order
in the shear strain (docs/medusa-notes.md, "Contact", gives the measured difference).

Geometry kinds (static):
  "superellipsoid": report V (default; eps1 = eps2 = 0.4);
  "ellipsoid":      report II (plain ellipsoid with the given semi-axes);
  "box":            report IV: contact points on the ellipsoid that has the volume, aspect
                    ratios and principal directions of the vehicle box (semi-axes
                    (6/pi)^(1/3) * axes), contact normal from the box with rounded edges and
                    corners (R = 0.3 m), and the side-by-side no-contact rule (1).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

KINDS = ("superellipsoid", "ellipsoid", "box")
BROAD_PHASES = ("medusa", "enclosing")
FRAMES = ("affine", "principal")

DEFAULT_ITERS = 8  # LM iterations per problem; 2-3 suffice when warm-started every step
# warm start: y1 (3), y2 (3) (the previous unit-surface points), then mu1, mu2, the damping
# each search ended at: a diagnostic, not read back (_solve_one says why) (state.CONTACT_WARM_SIZE)
WARM_SIZE = 8

TINY = 1e-30  # below this, |x|^q and sqrt(x) are treated as 0 (double-where guard)
MU0 = 1e-3  # initial LM damping [-] (unit-coordinate Hessians are O(1))
MU_MIN, MU_MAX = 1e-12, 1e6
MU_DOWN, MU_UP = 0.25, 8.0
STEP_MAX = 0.5  # largest step in unit coordinates per iteration [-]
LINE_SEARCH = (1.0, 0.25, 0.0625)  # step fractions tried in parallel

BOX_CORNER_RADIUS = 0.3  # report IV, norm(): RAD1 = RAD2 = 0.3 m
BOX_PARALLEL_DEV = 2e-4  # rule (1) "parallel": |1P2 . 2P2| >= 1 - DEV (contact.c DEV)
BOX_ELLIPSOID_SCALE = (6.0 / math.pi) ** (1.0 / 3.0)  # box half-dims -> equal-volume ellipsoid
MEDUSA_BROAD_SLACK = 1e-8  # contact.c: dist < max(A) + max(B) + 1.e-8


class PairGeometry(NamedTuple):
    """Contact geometry of one pair (body 1, body 2). World quantities in metres.

    candidate: () bool, broad phase passed (bounding spheres overlap, eq. 1.43).
    touching: () bool, MEDUSA's contact (detect_contact() returns TRUE): candidate and the
        bodies overlap (phi1 <= 0 for superellipsoid/ellipsoid); for "box" also not excluded
        by rule (1) of report IV.
    phi1: () gap [m]: (T2 - T1).n1 when the bodies overlap (eq. 1.39, <= 0); when they are
        separated, |T2 - T1| > 0 (an upper bound of the distance that tends to 0 at first touch).
    n1: (3,) outward unit normal of body 1 at T1 (box normal for "box").
    T1, T2: (3,) world points of deepest mutual penetration.
    X1, X2: (3,) material labels X = F^-1 (T - r) [m].
    residual: () sine of the angle between the surface normal at T and the gradient of the
        other body's inside-outside function there (0 at an exact solution), max over T1, T2.
    warm: (WARM_SIZE,) warm start for the next call.
    """

    candidate: jnp.ndarray
    touching: jnp.ndarray
    phi1: jnp.ndarray
    n1: jnp.ndarray
    T1: jnp.ndarray
    T2: jnp.ndarray
    X1: jnp.ndarray
    X2: jnp.ndarray
    residual: jnp.ndarray
    warm: jnp.ndarray


# ----------------------------------------------------------------------------- safe primitives


def _spow(a, q):
    """a^q for a >= 0, with value and derivatives 0 at a <= TINY (double where)."""
    ok = a > TINY
    return jnp.where(ok, jnp.exp(q * jnp.log(jnp.where(ok, a, 1.0))), 0.0)


def _ssqrt(s):
    ok = s > TINY
    return jnp.where(ok, jnp.sqrt(jnp.where(ok, s, 1.0)), 0.0)


def _norm(v):
    return _ssqrt(jnp.sum(v * v))


def _normalize(v, fallback=None):
    """v/|v|; `fallback` (default E1) where |v| is 0."""
    s = jnp.sum(v * v)
    ok = s > TINY
    u = v / jnp.sqrt(jnp.where(ok, s, 1.0))
    fb = jnp.zeros_like(v).at[0].set(1.0) if fallback is None else fallback
    return jnp.where(ok, u, fb)


def _atan2(y, x):
    ok = x * x + y * y > TINY
    return jnp.where(ok, jnp.arctan2(jnp.where(ok, y, 0.0), jnp.where(ok, x, 1.0)), 0.0)


# ----------------------------------------------------------------------------- shape functions


def _is_static(x):
    return isinstance(x, (int, float))


def _abspow(a, q):
    """a^q for a >= 0: integer powers by multiplication when q is a static integer (exact,
    no exp/log, derivatives finite at 0 for q >= 2), else the guarded exp(q log a)."""
    if _is_static(q) and abs(q - round(q)) < 1e-12 and round(q) >= 2:
        return a ** int(round(q))
    return _spow(a, q)


def gauge(y, kind="superellipsoid", eps1=0.4, eps2=0.4):
    """Gauge function G(y) of the unit shape (1 on the surface), y (3,) unit coordinates.

    eps1, eps2 may be Python floats (static: faster, integer powers when 2/eps is an integer,
    as for MEDUSA's 0.4) or traced arrays (differentiable in eps).
    """
    if kind in ("ellipsoid", "box"):
        return _ssqrt(jnp.sum(y * y))
    a = jnp.abs(y)
    if _is_static(eps1) and _is_static(eps2) and eps1 == eps2:
        p = 2.0 / eps1
        return _spow(jnp.sum(_abspow(a, p)), 1.0 / p)  # eq. (1.51): sum |y_i|^(2/eps)
    q2 = 2.0 / eps2
    inner = _abspow(a[0], q2) + _abspow(a[1], q2)
    f = _spow(inner, eps2 / eps1) + _abspow(a[2], 2.0 / eps1)  # Barr's inside-outside function
    return _spow(f, 0.5 * eps1)


def _gram_schmidt(F):
    """Orthonormal frame (columns) from the directors d1, d2 (columns of F)."""
    p1 = _normalize(F[:, 0])
    d2 = F[:, 1] - jnp.dot(F[:, 1], p1) * p1
    p2 = _normalize(d2, jnp.cross(jnp.array([0.0, 0.0, 1.0]), p1))
    return jnp.stack([p1, p2, jnp.cross(p1, p2)], axis=1)


def det3(F):
    """Determinant of a 3x3 matrix (no LAPACK call)."""
    return jnp.dot(F[:, 0], jnp.cross(F[:, 1], F[:, 2]))


def inv3(F):
    """Inverse of a 3x3 matrix by cofactors (no LAPACK call: fuses, and vmaps cheaply)."""
    c0, c1, c2 = F[:, 0], F[:, 1], F[:, 2]
    rows = jnp.stack([jnp.cross(c1, c2), jnp.cross(c2, c0), jnp.cross(c0, c1)])
    return rows / jnp.dot(c0, rows[0])


def _jacobi_eigh(S, sweeps):
    """Eigen-decomposition of a symmetric 3x3 S by cyclic Jacobi rotations (contact.c jacobi(),
    fixed sweep count, branchless). Returns (eigenvalues (3,), V (3, 3) eigenvectors as columns).
    For a nearly diagonal S the eigenvalues stay in their diagonal slots and V is near I."""
    V = jnp.eye(3, dtype=S.dtype)
    for _ in range(sweeps):
        for p, q in ((0, 1), (0, 2), (1, 2)):
            apq = S[p, q]
            d = S[q, q] - S[p, p]
            sg = jnp.where(d >= 0.0, 1.0, -1.0)
            den = jnp.abs(d) + _ssqrt(d * d + 4.0 * apq * apq)
            ok = den > TINY
            t = jnp.where(ok, 2.0 * apq * sg / jnp.where(ok, den, 1.0), 0.0)  # tan of the angle
            c = 1.0 / jnp.sqrt(1.0 + t * t)
            sn = t * c
            J = jnp.eye(3, dtype=S.dtype).at[p, p].set(c).at[q, q].set(c).at[p, q].set(sn).at[q, p].set(-sn)
            S = J.T @ S @ J
            V = V @ J
    return jnp.diagonal(S), V


def principal_frame(F, axes, sweeps=4):
    """contact.c info() + eig(): principal directions Q (columns) and semi-axes e (3,) [m] of
    the deformed ellipsoid, K_hat = F^-T K F^-1 with K = diag(1/a^2) (eq. 1.50).

    K_hat^-1 = (F diag(a)) (F diag(a))^T, so Q and e come from the SVD of F diag(a): the
    eigen-decomposition of diag(a) F^T F diag(a), which is nearly diagonal (strains ~1e-5),
    so a few Jacobi sweeps converge and keep e_i, Q[:, i] attached to reference axis i with
    Q[:, i] along the director d_i (needed when eps1 != eps2, for the box normals, and for a
    consistent warm start). Equal semi-axes make the principal directions ambiguous.
    """
    Fa = F * axes[None, :]
    lam, V = _jacobi_eigh(Fa.T @ Fa, sweeps)
    e = _ssqrt(lam)
    Q = (Fa @ V) / e[None, :]
    return Q, e


class _Body(NamedTuple):
    A: jnp.ndarray  # (3, 3) world offset -> unit coordinates
    B: jnp.ndarray  # (3, 3) inverse of A
    Finv: jnp.ndarray  # (3, 3)
    P: jnp.ndarray  # (3, 3) orthonormal principal frame (columns), for box normals
    h: jnp.ndarray  # (3,) current box half-dimensions [m] (box kind)
    radius_medusa: jnp.ndarray  # () MEDUSA bounding-sphere radius [m]
    radius_enclosing: jnp.ndarray  # () radius that encloses the shape [m]


def _body(kind, F, axes, frame):
    """Unit-coordinate map of one body. `axes` are the contact semi-axes (for "box": the box
    half-dimensions; the contact points live on the equal-volume ellipsoid)."""
    ell = BOX_ELLIPSOID_SCALE * axes if kind == "box" else axes
    Finv = inv3(F)
    if frame == "affine":
        A = Finv / ell[:, None]
        B = F * ell[None, :]
        P = _gram_schmidt(F)
        e = ell
    elif frame == "principal":
        P, e = principal_frame(F, ell)
        A = P.T / e[:, None]
        B = P * e[None, :]
    else:
        raise ValueError(f"frame must be one of {FRAMES}, got {frame!r}")
    # Enclosing radius: the shape lies in the box [-e, e] (eps <= 2); |F diag(e) s| <=
    # sqrt(lambda_max(F^T F)) |e| <= sqrt(1 + ||F^T F - I||_F) |e|.
    C = F.T @ F - jnp.eye(3)
    stretch = jnp.sqrt(1.0 + _ssqrt(jnp.sum(C * C)))
    if frame == "principal":
        stretch = 1.0  # e are already the current semi-axes
    h = axes * jnp.cbrt(det3(F))  # report IV: box volume = deformed ellipsoid volume
    return _Body(A, B, Finv, P, h, jnp.max(ell), _norm(ell) * stretch)


# ----------------------------------------------------------------------------- narrow phase


def _tangent_basis(u):
    """Two orthonormal vectors spanning u^perp for a unit u, without branches (Duff et al. 2017)."""
    s = jnp.where(u[2] >= 0.0, 1.0, -1.0)
    a = -1.0 / (s + u[2])
    b = u[0] * u[1] * a
    t1 = jnp.stack([1.0 + s * u[0] * u[0] * a, s * b, -s * u[0]])
    t2 = jnp.stack([b, s + u[1] * u[1] * a, -u[1]])
    return jnp.stack([t1, t2], axis=1)


def _solve_one(c, M, w_cold, w_warm, g, iters):
    """min over the unit surface {G(y) = 1} of h(y) = G(c + M y) (the other body's gauge).

    Radial parameterisation y = w / G(w), so every iterate lies on the surface exactly; each
    iteration is a Levenberg-Marquardt step in the tangent plane of w (2x2 system, Hessian
    shifted to be positive definite), accepted only if h decreases. Returns (y, h(y), mu), mu
    the damping the search ended at (reported, not carried to the next call).

    Every call starts with the damping MU0, also from a warm start. Carrying the previous
    call's final damping (as this solver once did) breaks tracking: a run of accepted full
    steps drives it to MU_MIN = 1e-12, and where both surfaces are flat across the line of
    contact (a superellipsoid's face: G varies like |s|^5, so the tangent Hessian has an
    eigenvalue ~0 along it, e.g. the vertical direction of two cars side by side at the same
    height) a gradient that is zero in exact arithmetic but ~1e-17 after rounding becomes a
    step of ~1e-5..0.5 (STEP_MAX). The line search accepts it whenever the other component of
    the step lowers h, since the flat direction costs only |s|^5 in h; the iterate then leaves
    the symmetry plane and comes back at Newton's linear rate on |s|^5, (p-2)/(p-1) = 3/4 per
    iteration, i.e. not within 2-3 warm iterations. Whether and when rounding starts the
    excursion depends on the CPU's code generation (FMA, vector width), and the separated gap
    |T2 - T1| grows with the vertical offset (docs/medusa-notes.md, Contact). From MU0 the
    amplification is at most 1/(MU0 MU_DOWN^(iters-1)) (1.6e7 at 8 iterations: a 1e-17
    gradient moves the iterate 1e-10), while a well-conditioned direction (eigenvalues O(1))
    still contracts by ~MU0 per iteration.
    """
    y_of = lambda w: w / g(w)  # noqa: E731
    h = lambda w: g(c + M @ y_of(w))  # noqa: E731

    # Starts: the warm start, the point on the line of centres, and the corner of the unit
    # box facing the other body; take the one with the smallest h.
    warm_ok = jnp.sum(w_warm * w_warm) > TINY
    w_cold = _normalize(w_cold)
    corner = jnp.sign(w_cold) + 1e-3 * w_cold  # (+-1, +-1, +-1), nudged off exact symmetry
    starts = jnp.stack([jnp.where(warm_ok, w_warm, w_cold), w_cold, corner])
    starts = jax.vmap(y_of)(starts)
    hs = jax.vmap(h)(starts)
    hs = hs.at[0].set(jnp.where(warm_ok, hs[0], jnp.inf))
    i0 = jnp.argmin(hs)
    w = starts[i0]
    fw = hs[i0]
    mu = jnp.asarray(MU0, w.dtype)  # not the previous call's damping: see the docstring
    LS = jnp.asarray(LINE_SEARCH, w.dtype)

    grad_h = jax.grad(h)
    hess_h = jax.jacfwd(grad_h)

    def step(_, carry):
        w, fw, mu = carry
        gr = grad_h(w)
        H = hess_h(w)
        T = _tangent_basis(_normalize(w))
        gt = T.T @ gr
        Ht = T.T @ H @ T
        a, b, d = Ht[0, 0], 0.5 * (Ht[0, 1] + Ht[1, 0]), Ht[1, 1]
        lam_min = 0.5 * (a + d) - _ssqrt(0.25 * (a - d) ** 2 + b * b)
        m = mu + jnp.maximum(0.0, -lam_min)  # shift: positive definite tangent Hessian
        det = (a + m) * (d + m) - b * b
        s = -jnp.stack([(d + m) * gt[0] - b * gt[1], (a + m) * gt[1] - b * gt[0]]) / det
        sn = _norm(s)
        big = sn > STEP_MAX
        s = s * jnp.where(big, STEP_MAX / jnp.where(big, sn, 1.0), 1.0)
        # Parallel backtracking: try the step scaled by 1, 1/4, 1/16 and keep the best.
        w_try = jax.vmap(lambda t: y_of(w + t * (T @ s)))(LS)
        f_try = jax.vmap(h)(w_try)
        f_try = jnp.where(jnp.isnan(f_try), jnp.inf, f_try)
        j = jnp.argmin(f_try)
        acc = f_try[j] <= fw  # NaN is rejected
        w = jnp.where(acc, w_try[j], w)
        fw = jnp.where(acc, f_try[j], fw)
        mu = jnp.where(acc & (j == 0), mu * MU_DOWN, jnp.where(acc, mu, mu * MU_UP))
        return w, fw, jnp.clip(mu, MU_MIN, MU_MAX)

    # lax.fori_loop with a static trip count: fixed cost, one compiled body, and it is
    # differentiable in both modes (it lowers to a scan).
    w, fw, mu = jax.lax.fori_loop(0, iters, step, (w, fw, mu))
    return w, fw, mu


# ----------------------------------------------------------------------------- box normals (report IV)


def _box_ray_normal(a, h, R):
    """Rounded box of half-dims h (3,) with edge/corner radius R, local coordinates.

    The ray from the centre through a (3,) meets the surface at t* a. Returns the outward
    unit normal there, whether that point is on a rounded part (report IV: points B, C, D of
    Fig. 3, cylinders and spheres) and the outward normal of the flat face the ray meets first
    (choice()), with the code's planar angle psi between the ray and that face normal.
    """
    u = jnp.abs(a)
    c = jnp.maximum(h - R, 0.0)  # inner box: the rounded box is inner box (+) ball(R)
    big = 1e300
    tb = jnp.where(u > TINY, c / jnp.where(u > TINY, u, 1.0), big)  # ray leaves the inner slab i
    order = jnp.argsort(tb)
    us, cs, ts = u[order], c[order], tb[order]
    A_ = jnp.cumsum(us * us)
    B_ = jnp.cumsum(us * cs)
    C_ = jnp.cumsum(cs * cs)
    disc = jnp.maximum(B_ * B_ - A_ * (C_ - R * R), 0.0)
    Asafe = jnp.where(A_ > TINY, A_, 1.0)
    tk = (B_ + _ssqrt(disc)) / Asafe  # distance to inner box = R with k axes active
    upper = jnp.concatenate([ts[1:], jnp.array([big])])
    valid = (tk >= ts * (1 - 1e-12)) & (tk <= upper * (1 + 1e-12)) & (A_ > TINY)
    k = jnp.argmax(valid)
    t = tk[k]
    e = jnp.maximum(t * u - c, 0.0)  # excess over the inner box, per axis
    sgn = jnp.where(a >= 0.0, 1.0, -1.0)
    n = _normalize(sgn * e)
    rounded = jnp.sum(e > 1e-9 * R) >= 2
    i = order[0]  # face met first
    face = jnp.zeros(3).at[i].set(sgn[i])
    psi = jnp.stack([_atan2(u[1], u[0]), _atan2(u[0], u[1]), _atan2(u[0], u[2])])[i]  # norm()
    return n, rounded, face, psi


def _box_normal(T1, T2, r1, r2, b1, b2):
    """Contact normal n1 of report IV's norm() (Appendix B) and rule (1)."""
    R1 = jnp.minimum(BOX_CORNER_RADIUS, jnp.min(b1.h))
    R2 = jnp.minimum(BOX_CORNER_RADIUS, jnp.min(b2.h))
    nr1, rnd1, face1, psi1 = _box_ray_normal(b1.P.T @ (T1 - r1), b1.h, R1)
    _, rnd2, face2, psi2 = _box_ray_normal(b2.P.T @ (T2 - r2), b2.h, R2)
    nr1, face1, face2 = b1.P @ nr1, b1.P @ face1, b2.P @ face2
    n_ff = jnp.where(psi1 < psi2, face1, -face2)  # face to face: the face closer to the ray
    n = jnp.where(rnd1 & rnd2, nr1, jnp.where(rnd1, -face2, jnp.where(rnd2, face1, n_ff)))
    # rule (1): 1P2 parallel to 2P2 and d > (B1 + B2)/2 -> no contact
    p21, p22 = b1.P[:, 1], b2.P[:, 1]
    parallel = jnp.abs(jnp.dot(p21, p22)) >= 1.0 - BOX_PARALLEL_DEV
    d = jnp.abs(jnp.dot(r2 - r1, p21))
    excluded = parallel & (d > b1.h[1] + b2.h[1])
    return n, excluded


# ----------------------------------------------------------------------------- public API


def cold_warm(dtype=jnp.float64):
    """The warm start that means 'no previous answer' (all zeros)."""
    return jnp.zeros((WARM_SIZE,), dtype)


def pair_geometry(
    kind,
    r1,
    F1,
    axes1,
    r2,
    F2,
    axes2,
    warm,
    eps1=0.4,
    eps2=0.4,
    broad_phase="medusa",
    frame="affine",
    iters=DEFAULT_ITERS,
):
    """Contact geometry of one pair of vehicles (vmap over pairs and batches).

    kind (static): "superellipsoid" | "ellipsoid" | "box". r (3,) [m] centre of mass;
    F (3, 3) deformation gradient, directors as columns; axes (3,) contact semi-axes [m]
    (half of CONTACT A1 A2 A3; for "box", the box half-dimensions). warm (WARM_SIZE,) the
    previous call's `warm` (zeros for a cold start). eps1, eps2: squareness exponents
    ("superellipsoid" only). broad_phase (static): "medusa" (sphere radius = largest
    semi-axis, as contact.c) or "enclosing" (spheres that enclose the shapes). frame (static):
    "affine" or "principal" (module docstring). iters (static): solver iterations.

    The narrow phase always runs (fixed cost, branchless), so the warm start stays current
    even while the broad phase fails: call it every step for every pair.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if broad_phase not in BROAD_PHASES:
        raise ValueError(f"broad_phase must be one of {BROAD_PHASES}, got {broad_phase!r}")
    dtype = jnp.result_type(r1, F1, float)
    r1, F1, axes1, r2, F2, axes2, warm = (
        jnp.asarray(x, dtype) for x in (r1, F1, axes1, r2, F2, axes2, warm)
    )
    if not (_is_static(eps1) and _is_static(eps2)):
        eps1 = jnp.asarray(eps1, dtype)
        eps2 = jnp.asarray(eps2, dtype)
    g = lambda y: gauge(y, kind, eps1, eps2)  # noqa: E731

    b1 = _body(kind, F1, axes1, frame)
    b2 = _body(kind, F2, axes2, frame)

    # Broad phase, eq. (1.43).
    dist = _norm(r2 - r1)
    if broad_phase == "medusa":
        candidate = dist < b1.radius_medusa + b2.radius_medusa + MEDUSA_BROAD_SLACK
    else:
        candidate = dist < b1.radius_enclosing + b2.radius_enclosing

    # Narrow phase: T1 = argmin_{surface 1} G2, T2 = argmin_{surface 2} G1 (Section 1.5.3).
    c = jnp.stack([b2.A @ (r1 - r2), b1.A @ (r2 - r1)])
    M = jnp.stack([b2.A @ b1.B, b1.A @ b2.B])
    w_cold = jnp.stack([b1.A @ (r2 - r1), b2.A @ (r1 - r2)])
    w_warm = jnp.stack([warm[0:3], warm[3:6]])
    solve = lambda *a: _solve_one(*a, g, iters)  # noqa: E731
    y, hval, mu = jax.vmap(solve)(c, M, w_cold, w_warm)
    y1, y2 = y[0], y[1]
    T1 = r1 + b1.B @ y1
    T2 = r2 + b2.B @ y2
    overlap = (hval[0] <= 1.0) | (hval[1] <= 1.0)

    # Outward normals (eq. 1.46 / gradient of eq. 1.51) and the optimality residual.
    gy = jax.grad(g)
    n1s = _normalize(b1.A.T @ gy(y1))
    n2s = _normalize(b2.A.T @ gy(y2))
    o1 = _normalize(b2.A.T @ gy(b2.A @ (T1 - r2)))  # grad G2 at T1
    o2 = _normalize(b1.A.T @ gy(b1.A @ (T2 - r1)))  # grad G1 at T2
    res1 = _norm(o1 - jnp.dot(o1, n1s) * n1s)
    res2 = _norm(o2 - jnp.dot(o2, n2s) * n2s)
    residual = jnp.maximum(res1, res2)

    if kind == "box":
        n1, excluded = _box_normal(T1, T2, r1, r2, b1, b2)
    else:
        n1, excluded = n1s, jnp.asarray(False)

    d = T2 - T1
    phi1 = jnp.where(overlap, jnp.dot(d, n1), _norm(d))  # eq. (1.39)
    touching = candidate & overlap & ~excluded

    X1 = b1.Finv @ (T1 - r1)
    X2 = b2.Finv @ (T2 - r2)
    warm_new = jnp.concatenate([y1, y2, mu])
    return PairGeometry(candidate, touching, phi1, n1, T1, T2, X1, X2, residual, warm_new)
