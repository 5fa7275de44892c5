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

`medusa_pair_geometry` wraps it as a `contact.types.PairGeometry`, and `MEDUSA_SEARCH` is
the contact shape (`[simulation] contact_geometry = "medusa_search"`, with the MEDUSA law)
whose `geometry` the contact stage calls instead of the narrow-phase solver. Its squareness
exponent is the listing's EXP = 0.4 whatever the scenario's eps1, eps2.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.shapes.medusa_search_minimize import fmax, lin_solve, minimize, seqsum
from jaxmedusa.contact.shapes.medusa_search_pert import pert
from jaxmedusa.contact.shapes.medusa_search_surface import (COLD, DEV, DEV1, EP, EP1, EXIT_APART, EXIT_CHECK1,
                                                            EXIT_CHECK2, EXIT_CONTACT, EXIT_FAR, EXIT_PERT,
                                                            FAIL_JACOBI, FAIL_LOOP, FAIL_MINIMIZE, MAXSTEP,
                                                            PERT_SHIFT, SHIFT1, SHIFT2, STEP1MAX, STEP2MAX, Frame,
                                                            d_dist, dist, enorm, norm_angle, pos, principal)
from jaxmedusa.contact.shapes.superellipsoid import superellipsoid_gauge
from jaxmedusa.contact.types import PairGeometry, Shape

__all__ = ["detect_contact", "medusa_pair_geometry", "medusa_geometry", "warm_angles", "Search", "MEDUSA_SEARCH",
           "SEARCH_WARM_SIZE", "EXIT_FAR", "EXIT_APART", "EXIT_CHECK1", "EXIT_CHECK2", "EXIT_PERT", "EXIT_CONTACT",
           "FAIL_MINIMIZE", "FAIL_JACOBI", "FAIL_LOOP"]

# the pair's warm vector: u1, v1, u2, v2 and a flag (0: never set -> Pi/4, as init.c); the
# pair state holds core.state.CONTACT_WARM_SIZE >= 5 entries, the rest unused
SEARCH_WARM_SIZE = 5

_M1 = np.array([1.0, 1.0, 0.0, 0.0])  # minimize(state, 2, dist, d_dist1, state)
_M2 = np.array([0.0, 0.0, 1.0, 1.0])  # minimize(state+2, 2, dist, d_dist2, state)
_M4 = np.ones(4)  # minimize(state, 4, dist, d_dist, state)


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


# Phases of the search loop (one minimize() call per loop turn, so that XLA compiles
# minimize() once): START (the first two-variable minimisation), sweeps of phases I, II, III
# (two turns each: u2, v2 then u1, v1), the two four-variable refinements, DONE.
_START, _PH1, _PH2, _REF1, _PH3, _REF2, _DONE = 0, 1, 2, 3, 4, 5, 6
_TURNS_MAX = 1 + 2 * (MAXSTEP + 1) + 2 * (STEP1MAX - 1) + 1 + 2 * (STEP2MAX - 1) + 1


def detect_contact(state, r1, F1, A, r2, F2, B):
    """contact.c detect_contact() for vehicles a (r1 (3,) [m], F1 (3, 3) directors as columns,
    A (3,) half box dimensions [m]) and b; state (4,) the warm start angles [rad].

    The listing's sequence of minimisations runs as one loop over `phase` (module constants):
    each turn shifts the angles as the listing does, calls minimize() on the block the phase
    selects, and applies the listing's loop tests to choose the next phase."""
    xbar = r2 - r1
    candidate = _dt(r2, r1) < (_cmax3(A) + _cmax3(B) + 1.0e-8)
    v1, len1, okj1 = principal(F1, A)
    v2, len2, okj2 = principal(F2, B)
    fr = Frame(xbar, v1, v2, len1, len2)
    f = lambda x: dist(fr, x)  # noqa: E731
    df = lambda x: d_dist(fr, x)  # noqa: E731
    min_ab = _cmin6(A, B)
    z3 = jnp.zeros(3, state.dtype)
    i32 = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731

    def turn(c):
        st, p1, p2, o1, o2, delt, phase, sub, k, fail, ext, n1, turns = c
        sweep = (phase == _PH1) | (phase == _PH2) | (phase == _PH3)
        refine = (phase == _REF1) | (phase == _REF2)
        first_half = sweep & (sub == 0)
        mask = jnp.where(refine, _M4, jnp.where(first_half, _M2, _M1))
        shift = jnp.where(phase == _PH1, SHIFT1, SHIFT2)
        add = jnp.where(sweep, shift, 0.0) * jnp.where(first_half, _M2, _M1)
        o1 = jnp.where(first_half, p1, o1)  # rold1 = r1, rold2 = r2 at the top of a sweep
        o2 = jnp.where(first_half, p2, o2)
        st = st + add  # state[3] += SHIFT; state[4] += SHIFT (or [1], [2]); + 0.0 elsewhere
        st, ok = minimize(f, df, st, mask)
        st = norm_angle(st, mask)
        fail = fail | ~ok
        q1, q2 = pos(fr, st)
        en1, en2 = enorm(fr, st)
        # sweeps: the listing's loop tests after the u1, v1 half
        d_new = fmax(_dt(q1, o1), _dt(q2, o2))
        delt = jnp.where(sweep & ~first_half, d_new, delt)
        k1 = k + 1
        go_on = jnp.where(phase == _PH1, (delt > EP) & (k1 <= MAXSTEP),
                          jnp.where(phase == _PH2, (delt > EP) & (k1 + 1 < STEP1MAX), (delt > EP1) & (k1 + 1 < STEP2MAX)))
        apart = ~(_dt(q1, q2) < min_ab)
        after12 = jnp.where(apart, _DONE, _REF1)  # if (dt(r1,r2) < min(A, B)) ... else return FALSE
        after_sweep = jnp.where(phase == _PH1, jnp.where(delt > EP, _PH2, after12),
                                jnp.where(phase == _PH2, after12, _REF2))
        # refinements: the no-contact test on check and pt
        check = _dot3(q2 - q1, en1)
        pt = _dot3(en1, en2)
        dev = jnp.where(phase == _REF1, DEV, DEV1)
        separated = (check > 0.0) & (pt <= -1 + dev)
        after_ref1 = jnp.where(separated, _DONE, jnp.where(delt > EP1, _PH3, _REF2))
        nxt = jnp.where(phase == _START, jnp.asarray(_PH1),
                        jnp.where(first_half, phase,
                                  jnp.where(sweep, jnp.where(go_on, phase, after_sweep),
                                            jnp.where(phase == _REF1, after_ref1, _DONE))))
        k_new = jnp.where(first_half, k, jnp.where(nxt == phase, k1, 0))
        sub_new = jnp.where(first_half, 1, 0)
        ext_new = jnp.where(sweep & ~first_half & ~go_on & (after_sweep == _DONE), EXIT_APART,
                            jnp.where(refine & separated, jnp.where(phase == _REF1, EXIT_CHECK1, EXIT_CHECK2),
                                      jnp.where(phase == _REF2, EXIT_PERT, ext)))
        return (st, q1, q2, o1, o2, delt, i32(nxt), i32(sub_new), i32(k_new), fail, i32(ext_new),
                jnp.where(phase == _REF2, en1, n1), turns + 1)

    c0 = (state, z3, z3, z3, z3, jnp.asarray(10.0 * EP), i32(_START), i32(0), i32(0), jnp.asarray(False),
          i32(EXIT_FAR), z3, i32(0))
    c = jax.lax.while_loop(lambda c: candidate & (c[6] != _DONE) & (c[12] < _TURNS_MAX), turn, c0)
    st, _, _, _, _, _, phase, _, _, fail, ext, _, _ = c
    # EXIT_PERT here means "reached pert()"; pert() decides
    go_p = candidate & (ext == EXIT_PERT)
    sp, okp, capped = pert(fr, st, PERT_SHIFT, go_p)
    contact = go_p & okp
    st = jnp.where(contact, sp, st)
    rho1, rho2 = pos(fr, st)
    n1, _ = enorm(fr, st)
    status = (jnp.where(candidate & fail, FAIL_MINIMIZE, 0) | jnp.where(candidate & ~(okj1 & okj2), FAIL_JACOBI, 0)
              | jnp.where(capped | (candidate & (phase != _DONE)), FAIL_LOOP, 0)).astype(jnp.int32)
    exit_ = jnp.where(~candidate, EXIT_FAR, jnp.where(contact, EXIT_CONTACT, ext)).astype(jnp.int32)
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
    [m] (half of CONTACT A1 A2 A3: contact.c's A, B), warm (>= SEARCH_WARM_SIZE,) the pair's warm
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


def medusa_geometry(r1, F1, axes1, r2, F2, axes2, warm):
    """`contact.types.Shape.geometry` of MEDUSA_SEARCH: medusa_pair_geometry's PairGeometry."""
    return medusa_pair_geometry(r1, F1, axes1, r2, F2, axes2, warm)[0]


# The gauge (the superellipsoid of EXP = 0.4) serves diagnostics that evaluate shapes outside
# the stage (e.g. analysis.events' episode geometry); the stage calls `geometry`.
MEDUSA_SEARCH = Shape(name="medusa_search", gauge=superellipsoid_gauge, geometry=medusa_geometry)
