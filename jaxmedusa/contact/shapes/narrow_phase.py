"""Pairwise contact geometry: MEDUSA's points of deepest mutual penetration, one pair at a time.

MEDUSA (report V, Sections 1.4-1.5, contact.c) defines, for two overlapping vehicles,
  T1 = the point of the surface of body 1 that minimises body 2's inside-outside function,
  T2 = the point of the surface of body 2 that minimises body 1's inside-outside function,
  n1 = the outward unit normal of body 1 at T1,
  phi1 = (T2 - T1) . n1                                                   # eq. (1.39)
and reports contact when phi1 <= 0. contact.c finds T1, T2 with alternating BFGS searches
and a perturbation search (pert()); here a branchless, warm-started Levenberg-Marquardt/
Newton search of at most `iters` iterations does it (closed-form derivatives for the
superellipsoid and ellipsoid, an early exit once converged; see `pair_geometry`). Its derivatives (forward
and reverse mode) are those of the optimality conditions at the answer, by the implicit
function theorem (`implicit_solver`), not those of the iterations.

Shapes (contact.shapes.SHAPES, a `contact.types.Shape` each) differ only in their gauge
function G of the unit shape (1 on the surface, G(t y) = t G(y)), the scale of the surface
the contact points live on, and an optional normal rule; this solver serves them all.
Minimising MEDUSA's func() f = sum |y_i|^(2/eps) - 1 (eq. 1.51) or G is the same problem:
G = (f + 1)^(eps/2) is monotone in f and better conditioned.

World point x <-> unit coordinates y = A (x - r), x = r + B y, B = A^-1 (frames.py). Two frames:
  frame="affine" (default): A = diag(1/a) F^-1, i.e. the reference superellipsoid mapped
      through F (y = X / a with X the material label). Exact for rigid motion, no eigen-solve.
  frame="principal": contact.c's construction (info(), eig()): the superellipsoid built on
      the principal axes q_k and semi-axes 1/sqrt(lambda_k) of K_hat = F^-T K F^-1 (eq. 1.50).
For an ellipsoid the two coincide exactly; for the superellipsoid they differ at first order
in the shear strain (docs/medusa-notes.md, "Contact", gives the measured difference).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmedusa.contact.shapes.apart_certificate import apart_gap
from jaxmedusa.contact.shapes.frames import body
from jaxmedusa.contact.shapes.registry import SHAPES
from jaxmedusa.contact.shapes.superellipsoid import is_static
from jaxmedusa.contact.shapes.superellipsoid_derivatives import derivatives_for, radial_derivatives
from jaxmedusa.contact.types import TANGENT_CUTOFF, PairGeometry, Shape
from jaxmedusa.core.safe_math import TINY
from jaxmedusa.core.safe_math import normalize as _normalize
from jaxmedusa.core.safe_math import safe_norm as _norm
from jaxmedusa.core.safe_math import safe_sqrt as _ssqrt

__all__ = ["pair_geometry", "cold_warm", "implicit_solver", "WARM_SIZE", "CERT", "DEFAULT_ITERS",
           "BROAD_PHASES"]

BROAD_PHASES = ("medusa", "enclosing")

# Most LM iterations per problem. Warm-started every step, 95 % of the offset study's searches
# converge in 2-5; a packed buffer runs as long as its slowest search. A cap of 4 made the study
# 18 % faster but its outcomes rough in the parameters at the 1e-4 level, failing the derivative
# checks (benchmarks/RESULTS.md, "Narrow-phase iterations"). The tests' cold starts take up to 11.
DEFAULT_ITERS = 12
# warm start: y1 (3), y2 (3) (the previous unit-surface points), then mu1, mu2, the damping
# each search ended at: a diagnostic, not read back (docs/medusa-notes.md, "Warm start and
# rounding", says why); then the apart certificate of the last search (`apart_gap`): the gap
# [m] it proved (0: none), and the r1 (3), F1 (9, row-major), r2 (3), F2 (9) it holds for;
# contact/stage.py skips the search while the bodies have moved less than that gap since;
# then y1, y2 of the search before the last (the extrapolated start, `_solve_one`)
# (core.state.CONTACT_WARM_SIZE)
CERT = 8  # where the certificate starts in the warm vector
PREV = CERT + 1 + 24  # where the search before the last's points start
WARM_SIZE = PREV + 6

# The damping of a step along an eigenvector of the tangent Hessian (_solve_one's docstring):
MU0 = 1e-9  # the adaptive LM part's start, every call [-]
MU_MIN, MU_MAX = 1e-12, 1e6
MU_DOWN, MU_UP = 0.25, 8.0
GRAD_DAMPING = 0.1  # plus this times |tangent gradient| (Fan and Yuan 2005: mu_k ~ |g_k|) [-]
GRAD_NOISE = 1e-16  # plus GRAD_NOISE^2 / (|g_i| NOISE_STEP): the round-off of a gradient component [-] ...
NOISE_STEP = 1e-10  # ... moves the iterate by at most this [unit coordinates]
STEP_MAX = 0.5  # largest step in unit coordinates per iteration [-]
# One trial point per iteration at a step fraction t carried over: x T_DOWN after a rejection,
# x T_UP (to 1 at most) after an acceptance. 7-9 % faster collisions than three fractions tried
# in parallel (benchmarks/RESULTS.md, "One trial point per iteration, its fraction carried").
T_UP, T_DOWN = 4.0, 0.25
# A search stops once its proposed step is shorter than STEP_TOL [unit coordinates] (the next
# iterate would move by less, far below the 1e-9 m that matters for the contact points of a
# ~1 m body), or once every component of its tangent gradient is below GRAD_STOP: a factor 100
# above GRAD_NOISE, where a step no longer carries information (along a direction of curvature
# lam it would move the iterate by GRAD_STOP / lam, 2e-8 at the offset study's softest 5e-7).
STEP_TOL = 1e-13
GRAD_STOP = 1e-14
# It also stops one iteration sooner, after two accepted full steps (fraction 1) of lengths s0, s1
# whose quadratic-rate extrapolation s1 (s1 / s0)^2 is below STEP_TOL (at a linear rate r = s1 / s0,
# 3/4 along |s|^5, the next step r s1 is then below STEP_TOL / r): 2.8-3.1 iterations a search in
# the offset study became 2.0-2.3 (benchmarks/RESULTS.md, "The narrow phase's last iteration").
# With apart_exit (the contact stage's choice), a search also stops once h, the other body's gauge
# at its point, stays above 1 + APART_MARGIN even after APART_SAFETY times the decrease that its
# undamped quadratic model still expects (a convex model only; 4 covers Newton's underestimate
# of 1.6 on |s|^5): the pair is apart, no force acts, and only the overlap decision and a warm
# start are needed. Those were most of the searches that still took 6-8 iterations (cars that
# slide apart after the collisions; benchmarks/RESULTS.md, "Which searches still take 6-8").
APART_MARGIN, APART_SAFETY = 1e-3, 4.0
NEWTON_ZONE = 1e-7  # a proposed step shorter than this is a Newton step near the minimum [-]
ROUNDOFF = 8.0 * 2.220446049250313e-16  # relative round-off of h over a few operations [-]

MEDUSA_BROAD_SLACK = 1e-8  # contact.c: dist < max(A) + max(B) + 1.e-8


# ----------------------------------------------------------------------------- solver


def _tangent_basis(u):
    """Two orthonormal vectors spanning u^perp for a unit u, without branches (Duff et al. 2017)."""
    s = jnp.where(u[2] >= 0.0, 1.0, -1.0)
    a = -1.0 / (s + u[2])
    b = u[0] * u[1] * a
    t1 = jnp.stack([1.0 + s * u[0] * u[0] * a, s * b, -s * u[0]])
    t2 = jnp.stack([b, s + u[1] * u[1] * a, -u[1]])
    return jnp.stack([t1, t2], axis=1)


def _solve_one(c, M, w_cold, w_warm, g, iters, dG=None, unrolled=False, apart_exit=False, w_prev=None):
    """min over the unit surface {G(y) = 1} of h(y) = G(c + M y) (the other body's gauge).

    Radial parameterisation y = w / G(w), so every iterate lies on the surface exactly; each
    iteration is a damped Newton step in the tangent plane of w (2x2 system, Hessian shifted to
    be positive semi-definite), tried at the step fraction t the previous trial left (T_UP,
    T_DOWN) and accepted only if h decreases. Returns (y, h(y), mu), mu the
    adaptive damping the search ended at (reported, not carried to the next call), and
    h_low, a lower bound of the minimum of h: h minus APART_SAFETY times the decrease the
    undamped quadratic model expected at the last iterate whose model is convex and not a
    start's first (the trust apart_exit puts in the model), -inf where there was none.
    apart_exit (static): also stop once the pair is certainly apart (APART_MARGIN).

    The step is taken along the two eigenvectors of the tangent Hessian (closed form), each
    component s_i = -g_i / (lam_i + shift + mu + GRAD_DAMPING |g| + GRAD_NOISE^2 / (|g_i| NOISE_STEP)):
    - lam_i: Newton. The contact problems are badly conditioned: along the flat faces of two
      superellipsoids (G varies like |s|^5 there) the softer curvature is 1e-7..1e-3 of the
      stiffer one in the offset study, and exactly 0 across a plane of mirror symmetry (two
      cars at the same height: the vertical direction).
    - mu: Levenberg-Marquardt's adaptive part (x MU_UP on a rejected step, x MU_DOWN on an
      accepted full one, t = 1), from MU0 = 1e-9 at every call, warm-started or not.
    - GRAD_DAMPING |g| (Fan and Yuan 2005, mu_k = |g_k|): while the stiff direction is far
      from converged, the soft eigenvector carries a small share of its large gradient (its
      direction shifts with the iterate), and an undamped step along a curvature ~0 would
      turn that share into a long excursion (without this term, a cold search of two cars at
      the same height, tests/contact/test_gauge_derivatives.py, left the symmetry plane by 2e-3
      in four iterations). The term fades as the search converges, which keeps the convergence
      quadratic along the stiff directions and Newton's along the soft ones.
    - GRAD_NOISE^2 / (|g_i| NOISE_STEP): a component at round-off (|g_i| ~ 1e-16) moves the
      iterate by at most NOISE_STEP = 1e-10, one well above it is not damped. Where both
      surfaces are flat across the line of contact, a gradient that is zero in exact
      arithmetic but ~1e-17 after rounding would otherwise become a step of ~1e-5..0.5
      (STEP_MAX): h cannot reject it (the flat direction costs only |s|^5), and the iterate
      leaves the symmetry plane and comes back at Newton's linear rate on |s|^5, (p-2)/(p-1)
      = 3/4 per iteration. Whether and when rounding starts such an excursion depends on the
      CPU's code generation (FMA, vector width), and the separated gap |T2 - T1| grows with the
      vertical offset (docs/medusa-notes.md, Contact).
    An earlier search damped every direction by LM alone from 1e-3 at each call: along a soft
    direction of curvature 5e-7 it then crept (steps g / 1e-3 instead of g / 5e-7) until the
    damping had decayed, and 36 % of the offset study's searches ran to the cap of 8 (2-5 now,
    benchmarks/RESULTS.md, "The narrow phase's damping per direction").
    """
    y_of = lambda w: w / g(w)  # noqa: E731
    h = lambda w: g(c + M @ y_of(w))  # noqa: E731

    # Starts: the warm start, the point on the line of centres, and the corner of the unit
    # box facing the other body, and with w_prev (the search before the warm start's) the warm
    # start extrapolated by the last two answers' difference (a contact point sliding along a
    # face moves on by about as much each step); take the one with the smallest h.
    warm_ok = jnp.sum(w_warm * w_warm) > TINY
    w_cold = _normalize(w_cold)
    corner = jnp.sign(w_cold) + 1e-3 * w_cold  # (+-1, +-1, +-1), nudged off exact symmetry
    candidates = [jnp.where(warm_ok, w_warm, w_cold), w_cold, corner]
    if w_prev is not None:
        prev_ok = warm_ok & (jnp.sum(w_prev * w_prev) > TINY)
        candidates.append(jnp.where(prev_ok, 2.0 * w_warm - w_prev, w_cold))
    starts = jax.vmap(y_of)(jnp.stack(candidates))
    hs = jax.vmap(h)(starts)
    hs = hs.at[0].set(jnp.where(warm_ok, hs[0], jnp.inf))
    if w_prev is not None:
        hs = hs.at[3].set(jnp.where(prev_ok, hs[3], jnp.inf))
    i0 = jnp.argmin(hs)
    w = starts[i0]
    fw = hs[i0]
    mu = jnp.asarray(MU0, w.dtype)  # not the previous call's damping: see the docstring

    if dG is None:  # no closed form for this gauge: automatic differentiation
        grad_h = jax.grad(h)
        hess_h = jax.jacfwd(grad_h)
        derivs = lambda w: (grad_h(w), hess_h(w))  # noqa: E731
    else:  # closed forms (superellipsoid_derivatives.py): one power per coordinate
        derivs = lambda w: radial_derivatives(dG, c, M, w)[1:]  # noqa: E731

    def step(carry):
        i, w, fw, mu, _, h_low, t, last = carry  # last: the previous full step's length, 0 if none
        gr, H = derivs(w)
        T = _tangent_basis(_normalize(w))
        gt = T.T @ gr
        Ht = T.T @ H @ T
        a, b, d = Ht[0, 0], 0.5 * (Ht[0, 1] + Ht[1, 0]), Ht[1, 1]
        disc = _ssqrt(0.25 * (a - d) ** 2 + b * b)
        l_hi, l_lo = 0.5 * (a + d) + disc, 0.5 * (a + d) - disc
        # eigenvector of l_hi from the better-conditioned row of (Ht - l_hi I); any basis if Ht ~ l I
        v = _normalize(jnp.where(a >= d, jnp.stack([l_hi - d, b]), jnp.stack([b, l_hi - a])))
        V = jnp.stack([v, jnp.stack([-v[1], v[0]])], axis=1)  # columns: eigenvectors of l_hi, l_lo
        lams = jnp.stack([l_hi, l_lo])
        ge = V.T @ gt
        damping = (mu + jnp.maximum(0.0, -l_lo) + GRAD_DAMPING * _norm(gt)
                   + GRAD_NOISE ** 2 / (jnp.maximum(jnp.abs(ge), TINY) * NOISE_STEP))
        s = V @ (-ge / (lams + damping))
        sn = _norm(s)
        # converged: the step no longer moves the iterate, or the gradient is down to round-off
        done = (sn < STEP_TOL) | jnp.all(jnp.abs(ge) < GRAD_STOP)
        # the least h the undamped quadratic model allows, with APART_SAFETY's room (not on a
        # start's first model, which may be far from the minimum, unless it is converged there)
        model_drop = jnp.where(l_lo > 0.0, 0.5 * jnp.sum(ge * ge / jnp.maximum(lams, TINY)), jnp.inf)
        low = jnp.where((i >= 1) | done, fw - APART_SAFETY * model_drop, -jnp.inf)
        if apart_exit:  # (static) or certainly apart (APART_MARGIN)
            done = done | ((i >= 1) & (low > 1.0 + APART_MARGIN))
        predicted = -(jnp.dot(gt, s) + 0.5 * s @ Ht @ s)  # decrease of h by the quadratic model
        big = sn > STEP_MAX
        s = s * jnp.where(big, STEP_MAX / jnp.where(big, sn, 1.0), 1.0)
        taken = t * jnp.minimum(sn, STEP_MAX)  # the trial step's length (T has orthonormal columns)
        w_try = y_of(w + t * (T @ s))
        f_try = h(w_try)
        f_try = jnp.where(jnp.isnan(f_try), jnp.inf, f_try)
        # Near the minimum, and along a soft direction, h is flat to round-off (a step of 1e-8
        # changes h by ~1e-16), so comparing values accepts or rejects a step by the last bit's
        # luck, or picks a short trial among equal values, and the search stalls short of the
        # minimum. A trial step that is short, or whose predicted decrease is below round-off,
        # and that raises h by no more than round-off is taken (the model is reliable there).
        flat = (sn < NEWTON_ZONE) | (predicted < ROUNDOFF * jnp.abs(fw))
        acc = (flat & (f_try <= fw + ROUNDOFF * jnp.abs(fw))) | (f_try <= fw)  # NaN is rejected
        w = jnp.where(acc, w_try, w)
        fw = jnp.where(acc, f_try, fw)
        full = acc & (t >= 1.0)
        # the next step extrapolated below STEP_TOL (the comment there); last = 0 never stops
        done = done | (full & (taken * taken * taken < STEP_TOL * last * last))
        mu = jnp.where(full, mu * MU_DOWN, jnp.where(acc, mu, mu * MU_UP))
        t = jnp.where(acc, jnp.minimum(1.0, t * T_UP), t * T_DOWN)
        return i + 1, w, fw, jnp.clip(mu, MU_MIN, MU_MAX), done, low, t, jnp.where(full, taken, 0.0)

    # At most `iters` iterations, fewer once the proposed (or extrapolated) step is below STEP_TOL
    # (under vmap the loop runs until the last problem of the buffer is done; the others masked).
    # `unrolled` (static): all `iters` run, written out, those after convergence masked (an
    # accelerator's choice, core/control_flow.py). Not differentiated: implicit_solver's rule.
    carry = (jnp.asarray(0, jnp.int32), w, fw, mu, jnp.asarray(False), jnp.asarray(-jnp.inf, w.dtype),
             jnp.asarray(1.0, w.dtype), jnp.asarray(0.0, w.dtype))  # ..., t: the first trial's step fraction, last
    if unrolled:
        def masked(_, c):
            return jax.tree.map(lambda new, old: jnp.where(c[4], old, new), step(c), c)

        _, w, fw, mu, _, h_low, _, _ = jax.lax.fori_loop(0, iters, masked, carry, unroll=True)
    else:
        _, w, fw, mu, _, h_low, _, _ = jax.lax.while_loop(lambda c: (c[0] < iters) & ~c[4], step, carry)
    return w, fw, mu, h_low


def _optimality(z, c, M, gauge, eps):
    """Residual of the optimality (KKT) conditions of min h(y) = G(c + M y) on {G(y) = 1}:
    [grad h(y) - lam grad G(y); G(y) - 1] at z = (y, lam), (4,)."""
    y, lam = z[:3], z[3]
    g = lambda u: gauge(u, eps)  # noqa: E731
    gh = jax.grad(lambda u: g(c + M @ u))(y)
    return jnp.concatenate([gh - lam * jax.grad(g)(y), (g(y) - 1.0)[None]])


def implicit_solver(gauge, iters, gauge_derivatives=None, unrolled=False, cutoff=TANGENT_CUTOFF, apart_exit=False):
    """`_solve_one` with derivatives by the implicit function theorem (a jax.custom_jvp).

    The primal is the search's answer. Its tangent is NOT the derivative of
    the iterations (that one depends on which iterations were accepted: once the search has
    converged, every step is rejected and the tangent is frozen at whatever the warm start
    carried from earlier steps); it is the derivative of the solution of the optimality
    conditions R(y, lam; c, M, eps) = 0 (`_optimality`): dz = -(dR/dz)^-1 (dR/dtheta) dtheta,
    one 4x4 solve per problem, filtered where the system is nearly singular (a non-strict
    minimum, e.g. parallel flat faces: see the comment in the rule); a singular one gives a
    zero tangent instead of NaN.

    gauge(y, eps) -> G(y); eps: a tuple of traced squareness exponents, or () when they are
    static (closed into gauge). gauge_derivatives(y, eps) -> (G, grad G, hess G), the closed
    forms of superellipsoid_derivatives.py, or None for automatic differentiation (used by the
    search only; the tangent rule differentiates `gauge`). Returns solve(c, M, w_cold, w_warm, w_prev, eps) ->
    (y, h(y), mu, h_low) like _solve_one; mu (the search's damping) and h_low (a bound used for a
    decision) have no derivative. cutoff (static):
    the relative singular value below which the tangent leaves a direction out (below).
    """

    @jax.custom_jvp
    def solve(c, M, w_cold, w_warm, w_prev, eps):
        dG = None if gauge_derivatives is None else (lambda u: gauge_derivatives(u, eps))
        return _solve_one(c, M, w_cold, w_warm, lambda u: gauge(u, eps), iters, dG, unrolled, apart_exit, w_prev)

    @solve.defjvp
    def solve_jvp(primals, tangents):
        c, M, w_cold, w_warm, w_prev, eps = primals
        dc, dM, _, _, _, deps = tangents
        y, fy, mu, h_low = solve(c, M, w_cold, w_warm, w_prev, eps)
        g = lambda u: gauge(u, eps)  # noqa: E731
        gg = jax.grad(g)(y)
        gh = jax.grad(lambda u: g(c + M @ u))(y)
        lam = jnp.dot(gh, gg) / jnp.maximum(jnp.dot(gg, gg), TINY)  # the multiplier at the minimum
        z = jnp.concatenate([y, lam[None]])
        J = jax.jacfwd(_optimality)(z, c, M, gauge, eps)
        _, rhs = jax.jvp(lambda c_, M_, e_: _optimality(z, c_, M_, gauge, e_), (c, M, eps), (dc, dM, deps))
        # the check is on the primal J only, so the rule stays linear in the tangents (reverse mode)
        det = jnp.linalg.det(J)
        ok = jnp.isfinite(det) & (jnp.abs(det) > 1e-12 * jnp.maximum(jnp.max(jnp.abs(J)), TINY) ** 4)
        # A filtered least-squares solve: dz = -V diag(f(s_i) / s_i) V^T J^T rhs, s_i = sigma_i^2 the
        # eigenvalues of J^T J, f(s) = s^2 / (s^2 + lam^4), lam = cutoff max|J|: the exact
        # solve along directions with sigma >> lam (relative change (lam / sigma)^4, below 1e-8
        # for sigma > 100 lam), none along nearly singular ones (the tangent there bounded by
        # about 0.6 / lam of the right-hand side). Nearly parallel, nearly flat faces
        # (superellipsoids, eps 0.4) make J nearly singular: the deepest point slides along the
        # face, its exact tangent grows as 1/sigma_min, and whether an iteration landed a hair
        # nearer the singularity changes forward-mode derivatives of a whole run by 10-300x at
        # isolated scenarios or parameter values (docs/gradients.md, "Nearly singular contact
        # points"). Tikhonov's (J^T J + lam^2 I)^-1, i.e. f(s) = s / (s + lam^2), bounds it the same
        # but changes the well-conditioned directions by (lam / sigma)^2: at lam = 1e-3 max|J|,
        # by 1e-3 where sigma is 3 % of max|J|, which central differences see.
        Js = jnp.where(ok, J, jnp.eye(4, dtype=J.dtype))
        lam2 = (cutoff * jnp.max(jnp.abs(Js))) ** 2
        s, V = jnp.linalg.eigh(Js.T @ Js)
        s = jnp.maximum(s, 0.0)
        dz = jnp.where(ok, -(V @ (s / (s * s + lam2 * lam2) * (V.T @ (Js.T @ rhs)))), 0.0)
        dy = dz[:3]
        _, dfy = jax.jvp(lambda u, c_, M_, e_: gauge(c_ + M_ @ u, e_), (y, c, M, eps), (dy, dc, dM, deps))
        return (y, fy, mu, h_low), (dy, dfy, jnp.zeros_like(mu), jnp.zeros_like(h_low))

    return solve


# ----------------------------------------------------------------------------- public API


def cold_warm(dtype=jnp.float64):
    """The warm start that means 'no previous answer' (all zeros)."""
    return jnp.zeros((WARM_SIZE,), dtype)


def pair_geometry(
    shape: Shape | str,
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
    unrolled=False,
    tangent_cutoff=TANGENT_CUTOFF,
    apart_exit=False,
):
    """Contact geometry of one pair of vehicles (vmap over pairs and batches).

    shape (static): a contact.types.Shape or its name in SHAPES ("superellipsoid",
    "ellipsoid", "box"). r (3,) [m] centre of mass;
    F (3, 3) deformation gradient, directors as columns; axes (3,) contact semi-axes [m]
    (half of CONTACT A1 A2 A3; for "box", the box half-dimensions). warm (WARM_SIZE,) the
    previous call's `warm` (zeros for a cold start). eps1, eps2: squareness exponents
    ("superellipsoid" only). broad_phase (static): "medusa" (sphere radius = largest
    semi-axis, as contact.c) or "enclosing" (spheres that enclose the shapes). frame (static):
    "affine" or "principal" (module docstring). iters (static): solver iterations; unrolled
    (static): run all of them, masked after convergence (core/control_flow.py).
    tangent_cutoff (static): implicit_solver's cutoff (the contact law's, ContactLaw.tangent_cutoff).
    apart_exit (static): a search of a pair that is certainly apart stops early (APART_MARGIN):
    its overlap decision is exact, its points and gap are not converged. The contact stage sets
    it (no force acts on such a pair); by default the points are the minimum's.

    The narrow phase always runs (branchless), so the warm start stays current even while
    the broad phase fails. stage.batch_geometry calls it for the pairs whose enclosing
    spheres overlap (contact/broad_phase.py) and resets the warm start of the others.
    """
    if isinstance(shape, str):
        shape = SHAPES.resolve(shape, where="pair_geometry")
    if broad_phase not in BROAD_PHASES:
        raise ValueError(f"broad_phase must be one of {BROAD_PHASES}, got {broad_phase!r}")
    dtype = jnp.result_type(r1, F1, float)
    r1, F1, axes1, r2, F2, axes2, warm = (
        jnp.asarray(x, dtype) for x in (r1, F1, axes1, r2, F2, axes2, warm)
    )
    dfun = derivatives_for(shape.gauge)
    if is_static(eps1) and is_static(eps2):  # static exponents: closed into the gauge (integer powers)
        eps = ()
        gauge_eps = lambda y, e: shape.gauge(y, eps1, eps2)  # noqa: E731
        deriv_eps = None if dfun is None else (lambda y, e: dfun(y, eps1, eps2))
    else:
        eps1 = jnp.asarray(eps1, dtype)
        eps2 = jnp.asarray(eps2, dtype)
        eps = (eps1, eps2)
        gauge_eps = lambda y, e: shape.gauge(y, e[0], e[1])  # noqa: E731
        deriv_eps = None if dfun is None else (lambda y, e: dfun(y, e[0], e[1]))
    g = lambda y: gauge_eps(y, eps)  # noqa: E731

    b1 = body(shape.ellipsoid_scale, F1, axes1, frame)
    b2 = body(shape.ellipsoid_scale, F2, axes2, frame)

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
    w_prev = jnp.stack([warm[PREV:PREV + 3], warm[PREV + 3:PREV + 6]])
    # derivatives of the contact points by the implicit function theorem (implicit_solver)
    solver = implicit_solver(gauge_eps, iters, deriv_eps, unrolled, tangent_cutoff, apart_exit)
    y, hval, mu, h_low = jax.vmap(lambda *a: solver(*a, eps))(c, M, w_cold, w_warm, w_prev)
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

    if shape.normal is not None:  # e.g. report IV's rounded-box normal and rule (1)
        n1, excluded = shape.normal(T1, T2, r1, r2, b1, b2)
    else:
        n1, excluded = n1s, jnp.asarray(False)

    d = T2 - T1
    phi1 = jnp.where(overlap, jnp.dot(d, n1), _norm(d))  # eq. (1.39)
    touching = candidate & overlap & ~excluded

    X1 = b1.Finv @ (T1 - r1)
    X2 = b2.Finv @ (T2 - r2)
    rho = 0.0 if shape.inner_radius is None else shape.inner_radius(eps1, eps2)
    gap = apart_gap(h_low, rho, shape.ellipsoid_scale * axes1, F1, b1.Finv, shape.ellipsoid_scale * axes2, F2, b2.Finv)
    cert = jnp.concatenate([gap[None], r1, F1.reshape(9), r2, F2.reshape(9)])
    warm_new = jnp.concatenate([y1, y2, mu, jax.lax.stop_gradient(cert), warm[0:6]])
    return PairGeometry(candidate, touching, phi1, n1, T1, T2, X1, X2, residual, warm_new)
