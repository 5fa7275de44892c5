"""MEDUSA's own contact search as a contact shape: contact.c `detect_contact()`, ported.

`detect_contact` follows the repaired listing step by step (docs/medusa-search.md):
  broad phase   |r2 - r1| < max(A) + max(B) + 1e-8 (A, B the half box dimensions);
  frames        info()/eig(): principal axes and semi-axes of F^-T K F^-1 (eq. 1.50);
  start         a BFGS minimisation of dist over (u1, v1) from the warm start;
  phase I       up to 21 alternations (u2, v2 then u1, v1) each shifted by SHIFT1 = 0.05 rad,
                until the points move less than EP = 1e-4 m;
  phase II      up to 299 more with SHIFT2 = 1e-6 rad while they move more than EP;
  apart?        no contact if |r1 - r2| >= the smallest half dimension;
  refine        a four-variable minimisation; no contact if (r2 - r1).n1 > 0 and
                n1.n2 <= -1 + DEV (separated, normals opposed);
  phase III     up to 299 alternations with SHIFT2 while the points move more than EP1;
  refine        again, with DEV1;
  pert()        the points of deepest penetration along the intersection curve; contact
                when it succeeds.
The state x = (u1, v1, u2, v2) it leaves behind is the next call's warm start
(`contact.previous` in vehicle.c, Pi/4 at the start of a run).

`medusa_pair_geometry` wraps it as a `contact.PairGeometry` for the contact stage
(contact_step.py, `contact_geometry = "medusa_search"`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .contact import PairGeometry
from .medusa_search_minimize import fmax, lin_solve, minimize, seqsum
from .medusa_search_pert import FAIL_LOOP, pert
from .medusa_search_surface import (COLD, DEV, DEV1, EP, EP1, MAXSTEP, PERT_SHIFT, SHIFT1, SHIFT2, STEP1MAX,
                                    STEP2MAX, Frame, d_dist, dist, enorm, norm_angle, pos, principal)

FAIL_MINIMIZE = 1  # minimize(): "too many iterations in minimize" (the C aborts)
FAIL_JACOBI = 2  # jacobi(): "Too many iterations in routine jacobi()" (the C aborts)
# FAIL_LOOP = 4: a loop of pert()/opp() without a limit in C hit this port's cap

EXIT_FAR, EXIT_APART, EXIT_CHECK1, EXIT_CHECK2, EXIT_PERT, EXIT_CONTACT = 0, 1, 2, 3, 4, 5

WARM_SIZE = 5  # pair warm start: u1, v1, u2, v2 and a flag (0: never set -> Pi/4, as init.c)

_M1 = jnp.array([1.0, 1.0, 0.0, 0.0])  # minimize(state, 2, dist, d_dist1, state)
_M2 = jnp.array([0.0, 0.0, 1.0, 1.0])  # minimize(state+2, 2, dist, d_dist2, state)
_M4 = jnp.ones(4)  # minimize(state, 4, dist, d_dist, state)


class Search(NamedTuple):
    """detect_contact()'s outputs for one pair (positions relative to vehicle a's centre)."""

    contact: jnp.ndarray  # () bool, the C return value
    candidate: jnp.ndarray  # () bool, the bounding spheres overlap
    state: jnp.ndarray  # (4,) angles left in `previous` (the next warm start)
    n1: jnp.ndarray  # (3,) outward unit normal of vehicle a at rho1 (valid when contact)
    rho1: jnp.ndarray  # (3,) contact point on vehicle a, relative to r_a [m]
    rho2: jnp.ndarray  # (3,) contact point on vehicle b, relative to r_a [m]
    status: jnp.ndarray  # () int32, FAIL_* bits
    exit: jnp.ndarray  # () int32, EXIT_* (which return statement)


def _dt(x, y):
    """common.c dt(): |x - y| of 3-vectors."""
    d = x - y
    return jnp.sqrt(seqsum([d[i] * d[i] for i in range(3)]))


def _dot3(a, b):
    return seqsum([a[i] * b[i] for i in range(3)])


def _cmax3(a):
    return fmax(a[0], fmax(a[1], a[2]))


def detect_contact(state, r1, F1, A, r2, F2, B):
    """contact.c detect_contact() for vehicles a (r1 (3,) [m], F1 (3, 3) directors as columns,
    A (3,) half box dimensions [m]) and b; state (4,) the warm start angles [rad]."""
    xbar = r2 - r1
    candidate = _dt(r2, r1) < (_cmax3(A) + _cmax3(B) + 1.0e-8)
    v1, len1, okj1 = principal(F1, A)
    v2, len2, okj2 = principal(F2, B)
    fr = Frame(xbar, v1, v2, len1, len2)
    f = lambda x: dist(fr, x)  # noqa: E731
    df = lambda x: d_dist(fr, x)  # noqa: E731
    fail = jnp.asarray(False)

    st, ok = minimize(f, df, state, _M1, candidate)
    fail = fail | ~ok
    st = jnp.where(candidate, norm_angle(st, _M1), st)
    p1, p2 = pos(fr, st)

    def sweep(c, shift):
        st, p1, p2, _, k, fail = c
        st = st.at[2].add(shift).at[3].add(shift)
        st, oka = minimize(f, df, st, _M2)
        st = norm_angle(st, _M2)
        st = st.at[0].add(shift).at[1].add(shift)
        st, okb = minimize(f, df, st, _M1)
        st = norm_angle(st, _M1)
        q1, q2 = pos(fr, st)
        delt = fmax(_dt(q1, p1), _dt(q2, p2))
        return st, q1, q2, delt, k + 1, fail | ~oka | ~okb

    # Phase I: do { ... } while (delt > EP && i++ <= MAXSTEP): at most MAXSTEP + 1 sweeps.
    c = (st, p1, p2, jnp.asarray(10.0 * EP), jnp.asarray(0), fail)
    c = jax.lax.while_loop(lambda c: candidate & ((c[4] == 0) | ((c[3] > EP) & (c[4] <= MAXSTEP))),
                           lambda c: sweep(c, SHIFT1), c)
    # Phase II: for (step1 = 1; delt > EP && step1 < STEP1MAX; step1++).
    c = c[:4] + (jnp.asarray(1),) + c[5:]
    c = jax.lax.while_loop(lambda c: candidate & (c[3] > EP) & (c[4] < STEP1MAX), lambda c: sweep(c, SHIFT2), c)
    st, p1, p2, delt, _, fail = c

    near = candidate & (_dt(p1, p2) < _cmin6(A, B))
    st, ok = minimize(f, df, st, _M4, near)
    fail = fail | ~ok
    st = jnp.where(near, norm_angle(st, _M4), st)
    p1, p2 = pos(fr, st)
    en1, en2 = enorm(fr, st)
    check = _dot3(p2 - p1, en1)
    pt = _dot3(en1, en2)
    go3 = near & ~((check > 0.0) & (pt <= -1 + DEV))

    # Phase III: for (step2 = 1; delt > EP1 && step2 < STEP2MAX; step2++).
    c = (st, p1, p2, delt, jnp.asarray(1), fail)
    c = jax.lax.while_loop(lambda c: go3 & (c[3] > EP1) & (c[4] < STEP2MAX), lambda c: sweep(c, SHIFT2), c)
    st, p1, p2, delt, _, fail = c
    st, ok = minimize(f, df, st, _M4, go3)
    fail = fail | ~ok
    st = jnp.where(go3, norm_angle(st, _M4), st)
    p1, p2 = pos(fr, st)
    n1, en2 = enorm(fr, st)
    check = _dot3(p2 - p1, n1)
    pt = _dot3(n1, en2)
    go_p = go3 & ~((check > 0.0) & (pt <= -1 + DEV1))

    sp, okp, capped = pert(fr, st, PERT_SHIFT, go_p)
    contact = go_p & okp
    st = jnp.where(contact, sp, st)
    rho1, rho2 = pos(fr, st)
    n1, _ = enorm(fr, st)

    status = (jnp.where(fail, FAIL_MINIMIZE, 0) | jnp.where(candidate & ~(okj1 & okj2), FAIL_JACOBI, 0)
              | jnp.where(capped, FAIL_LOOP, 0)).astype(jnp.int32)
    exit_ = jnp.where(~candidate, EXIT_FAR, jnp.where(~near, EXIT_APART, jnp.where(~go3, EXIT_CHECK1, jnp.where(
        ~go_p, EXIT_CHECK2, jnp.where(~contact, EXIT_PERT, EXIT_CONTACT))))).astype(jnp.int32)
    state_out = jnp.where(candidate, st, state)
    return Search(contact, candidate, state_out, n1, rho1, rho2, status, exit_)


def _cmin6(A, B):
    """min(A[1], min(A[2], min(A[3], min(B[1], min(B[2], B[3])))))."""
    m = lambda a, b: jnp.where(a < b, a, b)  # noqa: E731
    return m(A[0], m(A[1], m(A[2], m(B[0], m(B[1], B[2])))))


def warm_angles(warm):
    """The four angles of a pair's warm vector (Pi/4 each until a search has run, init.c)."""
    return jnp.where(warm[4] > 0.0, warm[:4], COLD)


def medusa_pair_geometry(r1, F1, axes1, r2, F2, axes2, warm):
    """detect_contact() as a `contact.PairGeometry` (vmap over pairs and scenarios).

    r (3,) [m] centres of mass, F (3, 3) directors as columns, axes (3,) contact semi-axes
    [m] (half of CONTACT A1 A2 A3: contact.c's A, B), warm (>= WARM_SIZE,) the pair's warm
    vector (zeros at the start of a run). The squareness exponent is the listing's EXP = 0.4.

    Returns (PairGeometry, status): phi1 = (T2 - T1).n1 = -(rho1 - rho2).normal of vehicle.c,
    T = r1 + rho (world points), X1 = F1^-1 rho1, X2 = F2^-1 (r1 - r2 + rho2) (lin_solve as
    vehicle.c), residual 1.0 where the search failed (status != 0) else 0, warm the new state
    (same length as the input warm). status: FAIL_* bits.
    """
    warm = jnp.asarray(warm)
    s = detect_contact(warm_angles(warm), r1, F1, axes1, r2, F2, axes2)
    phi1_code = _dot3(s.rho1 - s.rho2, s.n1)  # vehicle.c: phi1 = (rho1 - rho2).normal
    X1 = lin_solve(F1, s.rho1)
    X2 = lin_solve(F2, (r1 - r2) + s.rho2)
    set_ = warm.at[:4].set(s.state).at[4].set(1.0)
    new_warm = jnp.where(s.candidate, set_, warm)
    residual = jnp.where(s.status != 0, 1.0, 0.0)
    geom = PairGeometry(candidate=s.candidate, touching=s.contact, phi1=jnp.where(s.contact, -phi1_code, jnp.inf),
                        n1=s.n1, T1=r1 + s.rho1, T2=r1 + s.rho2, X1=X1, X2=X2, residual=residual, warm=new_warm)
    return geom, s.status
