"""contact.c `pert()` and its helpers `opp()`, `search()`, `piksrt()`: MEDUSA's search for the
points of deepest penetration along the intersection curve of two overlapping superellipsoids
(report V, Section 1.5.3), ported operation by operation from the repaired listing.

`pert(a)` starts from the angles a = (u1, v1, u2, v2) of a point pair on the intersection
curve: it perturbs a along NT = 32 directions with a step SHIFT adapted until at least five
perturbed points of each body lie inside the other body, walks from a through the five best
to the opposite side of the intersection curve (`opp()`), and line-searches (`search()`) and
bisects towards the minimum of the other body's function. Returns (a, ok, flags): ok is the
C return value (False when SHIFT leaves [1e-9, 0.1]).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.shapes.medusa_search_surface import PI, f_on1, f_on2, pos
from jaxmedusa.core.small_sort import argsort_small

EPS1 = 1.0e-15
EPS2 = 1.0e-15
NT = 32
FAC1 = 0.7
FAC2 = 2.0
MAX = 300
FVMIN = 1.0e-15
ITERMAX = 200
PERT_OUTER_MAX = 200  # pert()'s SHIFT loop has no limit in C; it ends within ~60 in practice
OPP_GROW_MAX = 200  # opp()'s doubling loops have no limit in C

# perturbation directions: cos/sin((i-1)*2*Pi/NT), computed as the C does (libm = XLA here)
_ANG = [((i * 2) * PI) / NT for i in range(NT)]
COS_NT = np.asarray([math.cos(t) for t in _ANG])
SIN_NT = np.asarray([math.sin(t) for t in _ANG])


def _fmin(a, b):
    return jnp.where(a < b, a, b)


def _f1(fr, x):
    """Body 1's point of x in body 2's function (func(r1, xbar, len2, v2))."""
    return f_on2(fr, pos(fr, x)[0])


def _f2(fr, x):
    """Body 2's point of x in body 1's function (func(r2, null, len1, v1))."""
    return f_on1(fr, pos(fr, x)[1])


def _sl(blk):
    return slice(0, 2) if blk == 0 else slice(2, 4)


def _fb(fr, blk):
    return (lambda x: _f1(fr, x)) if blk == 0 else (lambda x: _f2(fr, x))


def piksrt(arr, rows, blk):
    """contact.c piksrt(k, n, arr, brr): sort arr ascending (stable insertion sort) and the
    columns of block blk (0: columns 1-2, 1: columns 3-4) of rows (n, 4) with it."""
    order = argsort_small(arr)
    s = _sl(blk)
    return arr[order], rows.at[:, s].set(rows[order][:, s])


def opp(fr, a, b, run=True):
    """contact.c opp(): from a through b (4,) to the other side of the intersection curve."""
    sht = b - a
    out = []
    flag = jnp.asarray(False)
    for blk in (0, 1):
        s = _sl(blk)
        fn = _fb(fr, blk)
        shtmin = _fmin(sht[s][0], sht[s][1])
        enl = jnp.where(jnp.abs(shtmin) < 1.0e-7, 1.0e7, jnp.abs(1 / shtmin))
        bb = b.at[s].set(a[s] + enl * sht[s])
        fv = fn(bb)

        def gcond(c):
            return (c[2] < 0.0) & (c[3] < OPP_GROW_MAX) & run

        def gbody(c, s=s, fn=fn):
            enl, bb, _, k = c
            enl = enl * 2
            bb = bb.at[s].set(a[s] + enl * sht[s])
            return enl, bb, fn(bb), k + 1

        enl, bb, fv, k = jax.lax.while_loop(gcond, gbody, (enl, bb, fv, jnp.asarray(0)))
        flag = flag | (k >= OPP_GROW_MAX)

        def bcond(c):
            return (jnp.abs(c[2]) > FVMIN) & (c[3] < ITERMAX) & run

        def bbody(c, s=s, fn=fn):
            enl, bb, fv, ite = c
            enl = enl / 2
            step = enl * sht[s]
            bb = bb.at[s].set(jnp.where(fv > 0, bb[s] - step, bb[s] + step))
            return enl, bb, fn(bb), ite + 1

        _, bb, _, _ = jax.lax.while_loop(bcond, bbody, (enl, bb, fv, jnp.asarray(1)))
        out.append(bb[s])
    return jnp.concatenate(out), flag


def search(fr, a, c, fc1, fc2, g, run=True):
    """contact.c search(): line search from c along +-(c - a) per body; returns (a, c)."""
    for blk in (0, 1):
        s = _sl(blk)
        fn = _fb(fr, blk)
        fc = fc1 if blk == 0 else fc2
        anew_p = c + 1.0e-12 * (c - a)
        anew_m = c - 1.0e-12 * (c - a)
        fanew = fn(anew_p)
        fbnew = fn(anew_m)
        stay = (fc < fanew) & (fc < fbnew)
        sgn = jnp.where(fanew < fc, 1.0, -1.0)
        factor = 0.1
        # the C keeps the other body's entries of anew from the -1e-12 evaluation (unused)
        anew = anew_m.at[s].set(c[s] + sgn * (factor * (c[s] - a[s])))
        fnew = fn(anew)

        def cond(k):
            return (jnp.abs(k[3] - k[1]) > g) & (k[5] < MAX)

        def body(k, s=s, fn=fn, sgn=sgn):
            cb, fcb, fac, fnew, anew, lp = k
            better = fnew < fcb
            cb = cb.at[s].set(jnp.where(better, anew[s], cb[s]))
            fcb = jnp.where(better, fnew, fcb)
            fac = jnp.where(better, fac, fac / 2)
            anew = anew.at[s].set(cb[s] + sgn * (fac * (cb[s] - a[s])))
            return cb, fcb, fac, fn(anew), anew, lp + 1

        lp0 = jnp.where(stay | ~jnp.asarray(run), MAX, 1)
        cb, _, _, _, _, _ = jax.lax.while_loop(cond, body, (c, fc, jnp.asarray(factor), fnew, anew, lp0))
        c = c.at[s].set(cb[s])
        a = a.at[s].set(c[s])
    return a, c


def pert(fr, a, shift, active=True):
    """contact.c pert(a, SHIFT). Returns (a (4,), ok, loop_cap_hit)."""

    def eval_all(shift):
        atri = jnp.stack([a[0] + COS_NT * shift, a[1] + SIN_NT * shift,
                          a[2] + COS_NT * shift, a[3] + SIN_NT * shift], axis=1)
        r1, r2 = jax.vmap(lambda x: pos(fr, x))(atri)
        fb = jax.vmap(lambda r: f_on2(fr, r))(r1)
        fa = jax.vmap(lambda r: f_on1(fr, r))(r2)
        fb, atri = piksrt(fb, atri, 0)
        fa, atri = piksrt(fa, atri, 1)
        return atri, fb, fa

    def cond(c):
        _, fb, fa, _, _, _, stop, k = c
        return ((fb[4] > 0.0) | (fa[4] > 0.0)) & ~stop & (k < PERT_OUTER_MAX)

    def body(c):
        _, _, _, shift, va1, va2, _, k = c
        atri, fb, fa = eval_all(shift)
        again = (fb[4] > 0.0) | (fa[4] > 0.0)
        shift_n = jnp.where((fa[0] > va1) | (fb[0] > va2), shift * FAC1, shift * FAC2)
        fail = again & ((shift_n > 0.1) | (shift_n < 1.0e-9))
        shift = jnp.where(again, shift_n, shift)
        va1 = jnp.where(again, fa[0], va1)
        va2 = jnp.where(again, fb[0], va2)
        return atri, fb, fa, shift, va1, va2, fail, k + 1

    one = jnp.ones((), a.dtype)
    init_f = jnp.where(active, 1.0, -1.0) * jnp.ones(NT, a.dtype)  # fb[5] = fa[5] = 1.0
    init = (jnp.zeros((NT, 4), a.dtype), init_f, init_f, jnp.asarray(shift, a.dtype), one, one,
            jnp.asarray(False), jnp.asarray(0))
    atri, fb, fa, _, _, _, fail, k = jax.lax.while_loop(cond, body, init)
    capped = active & (k >= PERT_OUTER_MAX)
    ok = active & ~fail & ~capped

    bj, fl = jax.vmap(lambda row: opp(fr, a, row, ok))(atri[:5])  # the five best directions
    opp_flag = jnp.any(fl)
    btri = (a + bj) / 2  # middle points
    r1, r2 = jax.vmap(lambda x: pos(fr, x))(btri)
    fb5 = jax.vmap(lambda r: f_on2(fr, r))(r1)
    fa5 = jax.vmap(lambda r: f_on1(fr, r))(r2)
    fb5, btri = piksrt(fb5, btri, 0)
    fa5, btri = piksrt(fa5, btri, 1)
    def along(j, carry):  # search() from a (updated by each call) through the three best
        a, btri = carry
        a, cj = search(fr, a, btri[j], fb5[j], fa5[j], EPS2, ok)
        return a, btri.at[j].set(cj)

    a, btri = jax.lax.fori_loop(0, 3, along, (a, btri))
    b = btri[0] + 0.01 * (btri[1] - btri[0])
    ftemp1, ftemp2 = _f1(fr, b), _f2(fr, b)
    c12 = jnp.where(ftemp1 < fb5[0], (btri[0, 0:2] + btri[1, 0:2]) / 2, (btri[0, 0:2] + btri[2, 0:2]) / 2)
    c34 = jnp.where(ftemp2 < fa5[0], (btri[0, 2:4] + btri[1, 2:4]) / 2, (btri[0, 2:4] + btri[2, 2:4]) / 2)
    c = jnp.concatenate([c12, c34])
    fc1, fc2 = _f1(fr, c), _f2(fr, c)
    b = btri[0]
    fbest = [fb5[0], fa5[0]]
    fcs = [fc1, fc2]
    for blk in (0, 1):
        s = _sl(blk)
        fn = _fb(fr, blk)

        def cond2(k):
            return (jnp.abs(jnp.abs(k[2]) - jnp.abs(k[3])) > EPS1) & (k[4] < MAX) & ok

        def body2(k, s=s, fn=fn):
            b, c, fbv, fcv, lp = k
            mid = (c[s] + b[s]) / 2
            upd_c = fbv < fcv
            c = c.at[s].set(jnp.where(upd_c, mid, c[s]))
            b = b.at[s].set(jnp.where(upd_c, b[s], mid))
            fnew = fn(jnp.where(upd_c, c, b))
            return b, c, jnp.where(upd_c, fbv, fnew), jnp.where(upd_c, fnew, fcv), lp + 1

        b, c, fbest[blk], fcs[blk], _ = jax.lax.while_loop(cond2, body2, (b, c, fbest[blk], fcs[blk], jnp.asarray(1)))
    a_new, _ = search(fr, a, c, fcs[0], fcs[1], EPS2, ok)
    a_out = jnp.where(ok, a_new, a)
    return a_out, ok, capped | (ok & opp_flag)

