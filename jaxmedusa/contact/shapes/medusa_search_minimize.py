"""The numerical routines of MEDUSA's contact search, ported operation by operation.

common.c `minimize()` (Numerical Recipes `dfpmin`, BFGS, Appendix A of the report) with its
line search `linsearch()` (NR `lnsrch`, Appendix B), and the 3x3 linear algebra that
contact.c `info()` / `eig()` use: `ludcmp`/`lubksb`/`matrix_inverse`, `jacobi`, `eigsrt`.

Everything follows the repaired listing (docs/medusa-search.md): `fp = fret;` after the line
search, `col[j] = 1.0;` in matrix_inverse, the braces around jacobi()'s `sm == 0` return.
Sums are written in the listing's order (left to right), so that, with FMA contraction off,
the results are the C program's to the last bit (XLA's sin, cos, pow, sqrt agree with glibc's
on x86-64). Loops are bounded `lax.while_loop`s with the listing's maxima; where the listing
calls nrerror() ("too many iterations") a flag is returned instead.

All functions are for one pair (no batch axis); vmap them. Float64 throughout.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

ITMAX = 500  # common.c minimize(): iterations
EPS = 1.0e-15
TOLX_MIN = 4 * EPS  # minimize()'s TOLX
STPMX = 200.0
GTOL = 1.0e-12
ALF = 1.0e-4  # linsearch(): sufficient decrease
TOLX_LS = 1.0e-9  # linsearch()'s TOLX
# linsearch() has no iteration limit; each backtrack shrinks alam by 0.1-0.5 and it returns
# once alam < alamin >= TOLX / stpmax (~2.5e-12), so ~40 backtracks at most.
LS_MAX = 100
JACOBI_SWEEPS = 50  # contact.c jacobi()


def fmax(a, b):
    """NR's FMAX macro: a > b ? a : b (b when a is NaN)."""
    return jnp.where(a > b, a, b)


def seqsum(terms):
    """0.0 + t0 + t1 + ... in this order (a C accumulation loop)."""
    s = jnp.zeros_like(terms[0])
    for t in terms:
        s = s + t
    return s


# ----------------------------------------------------------------------------- minimize()


def linsearch(f, x, fold, g, p, stpmax):
    """common.c linsearch(): returns (x, f(x)). x, g, p (4,) with zeros outside the
    active block; f(state) -> () is the full-state function."""
    xold = x
    sum_ = jnp.sqrt(seqsum([p[i] * p[i] for i in range(4)]))
    p = jnp.where(sum_ > stpmax, p * (stpmax / sum_), p)
    slope = seqsum([g[i] * p[i] for i in range(4)])
    test = jnp.zeros_like(fold)
    for i in range(4):
        temp = jnp.abs(p[i]) / fmax(xold[i], 1.0)  # as printed: FMAX(xold[i], 1.0), no fabs
        test = jnp.where(temp > test, temp, test)
    alamin = jnp.where(test == 0.0, 1.0e12, TOLX_LS / jnp.where(test == 0.0, 1.0, test))

    def cond(c):
        return ~c[0] & (c[1] < LS_MAX)

    def body(c):
        _, k, alam, alam2, f2, _, _ = c
        xn = xold + alam * p
        fn = f(xn)
        too_small = alam < alamin
        enough = fn <= fold + ALF * alam * slope
        first = alam == 1.0
        tmp1 = -slope / (2.0 * (fn - fold - slope))
        rhs1 = fn - fold - alam * slope
        rhs2 = f2 - fold - alam2 * slope
        dl = jnp.where(first, 1.0, alam - alam2)
        aa = (rhs1 / (alam * alam) - rhs2 / (alam2 * alam2)) / dl
        bb = (-alam2 * rhs1 / (alam * alam) + alam * rhs2 / (alam2 * alam2)) / dl
        disc = bb * bb - 3.0 * aa * slope
        tmp_q = -slope / (2.0 * bb)
        tmp_c = (-bb + jnp.sqrt(jnp.abs(disc))) / (3.0 * jnp.where(aa == 0.0, 1.0, aa))
        tmp2 = jnp.where(aa == 0.0, tmp_q, tmp_c)
        tmp2 = jnp.where(tmp2 > 0.5 * alam, 0.5 * alam, tmp2)
        tmplam = jnp.where(first, tmp1, tmp2)
        done = too_small | enough
        xout = jnp.where(too_small, xold, xn)
        new_alam = jnp.where(done, alam, fmax(tmplam, 0.1 * alam))
        return done, k + 1, new_alam, alam, fn, xout, fn

    init = (jnp.asarray(False), jnp.asarray(0), jnp.ones_like(fold), jnp.zeros_like(fold),
            jnp.zeros_like(fold), x, fold)
    _, _, _, _, _, x, fret = jax.lax.while_loop(cond, body, init)
    return x, fret


def minimize(f, df, x, mask, active=True):
    """common.c minimize() on the variables of the 4-vector x where mask (4,) is 1.0.

    f(x) -> () and df(x) -> (4,) take the full state (the C `parameter`); mask selects the
    block the C call passes as `x` (state, n=2: u1, v1; state+2, n=2: u2, v2; n=4: all).
    Returns (x, ok): ok False where the listing would abort with "too many iterations".
    Inactive entries enter every sum as exact zeros, so the sums equal the C ones over n.
    active False: x is returned unchanged (a lane of a vmapped call that took another branch).
    """
    n = seqsum([mask[i] for i in range(4)])
    fp = f(x)
    g = df(x) * mask
    xi = -g
    hess = jnp.diag(jnp.ones(4, x.dtype))
    sum_ = seqsum([x[i] * x[i] * mask[i] for i in range(4)])
    stpmax = STPMX * fmax(jnp.sqrt(sum_), n)

    def cond(c):
        return ~c[0] & (c[1] <= ITMAX)

    def body(c):
        _, its, x, fp, g, xi, hess = c
        xold = x
        x, fret = linsearch(f, x, fp, g, xi, stpmax)
        fp = fret  # the restored line (NR dfpmin: fp = *fret)
        xi = x - xold
        test = jnp.zeros_like(fp)
        for i in range(4):
            temp = jnp.abs(xi[i]) / fmax(jnp.abs(x[i]), 1.0)
            test = jnp.where(temp > test, temp, test)
        last = its > ITMAX - 1
        test = jnp.where(last & (test > 1.0e-5), 0.0, test)
        done1 = test < TOLX_MIN
        dg = g
        g = df(x) * mask
        test = jnp.zeros_like(fp)
        den = fmax(fret, 1.0)
        for i in range(4):
            temp = jnp.abs(g[i]) * fmax(jnp.abs(x[i]), 1.0) / den
            test = jnp.where(temp > test, temp, test)
        test = jnp.where(last & (test > 1.0e-5), 0.0, test)
        done2 = test < GTOL
        dg = g - dg
        hdg = jnp.stack([seqsum([hess[i, j] * dg[j] for j in range(4)]) for i in range(4)])
        fac = seqsum([dg[i] * xi[i] for i in range(4)])
        fae = seqsum([dg[i] * hdg[i] for i in range(4)])
        sumdg = seqsum([dg[i] * dg[i] for i in range(4)])
        sumxi = seqsum([xi[i] * xi[i] for i in range(4)])
        upd = fac * fac > EPS * sumdg * sumxi
        fac_i = 1.0 / jnp.where(upd, fac, 1.0)
        fad = 1.0 / jnp.where(upd, fae, 1.0)
        u = fac_i * xi - fad * hdg
        h_new = hess + ((fac_i * xi)[:, None] * xi[None, :] - (fad * hdg)[:, None] * hdg[None, :]
                        + (fae * u)[:, None] * u[None, :])
        h_new = jnp.where(upd, h_new, hess)
        xi_new = jnp.stack([-seqsum([h_new[i, j] * g[j] for j in range(4)]) for i in range(4)])
        # C: xi[i] = 0.0; xi[i] -= h*g ...: 0 - a - b = -(0 + a + b) exactly.
        done = done1 | done2
        keep = lambda new, old: jnp.where(done1, old, new)  # noqa: E731
        # On the first exit test the C returns before the gradient update (x, fp already new).
        return (done, its + 1, x, fp, keep(g, dg), keep(xi_new, xi), jnp.where(done, hess, h_new))

    init = (~jnp.asarray(active), jnp.asarray(1), x, fp, g, xi, hess)
    done, _, x, _, _, _, _ = jax.lax.while_loop(cond, body, init)
    return x, done | ~jnp.asarray(active)


# ----------------------------------------------------------------------------- 3x3 algebra


def ludcmp(a):
    """common.c ludcmp() for 3x3 (implicit partial pivoting). Returns (LU, perm (3 traced ints))."""
    n = 3
    a = jnp.asarray(a)
    vv = 1.0 / jnp.max(jnp.abs(a), axis=1)
    perm = []
    for j in range(n):
        for i in range(j):
            s = a[i, j]
            for k in range(i):
                s = s - a[i, k] * a[k, j]
            a = a.at[i, j].set(s)
        big = jnp.zeros((), a.dtype)
        imax = jnp.asarray(j)
        for i in range(j, n):
            s = a[i, j]
            for k in range(j):
                s = s - a[i, k] * a[k, j]
            a = a.at[i, j].set(s)
            dum = vv[i] * jnp.abs(s)
            better = dum >= big
            big = jnp.where(better, dum, big)
            imax = jnp.where(better, i, imax)
        row_j, row_m = a[j], a[imax]
        swap = imax != j
        a = a.at[j].set(jnp.where(swap, row_m, row_j))
        a = a.at[imax].set(jnp.where(swap, row_j, a[imax]))
        vv = vv.at[imax].set(jnp.where(swap, vv[j], vv[imax]))
        perm.append(imax)
        a = a.at[j, j].set(jnp.where(a[j, j] == 0.0, 1.0e-20, a[j, j]))
        if j != n - 1:
            dum = 1.0 / a[j, j]
            for i in range(j + 1, n):
                a = a.at[i, j].set(a[i, j] * dum)
    return a, perm


def lubksb(a, perm, b):
    """common.c lubksb(): solve with the LU factors of ludcmp() (skips leading zeros as NR)."""
    n = 3
    started = jnp.asarray(False)
    first = jnp.asarray(0)
    for i in range(n):
        ip = perm[i]
        s = b[ip]
        b = b.at[ip].set(b[i])
        acc = s
        for jj in range(i):
            acc = jnp.where(started & (jj >= first), acc - a[i, jj] * b[jj], acc)
        nz = (~started) & (s != 0.0)
        first = jnp.where(nz, i, first)
        started = started | nz
        b = b.at[i].set(acc)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for jj in range(i + 1, n):
            s = s - a[i, jj] * b[jj]
        b = b.at[i].set(s / a[i, i])
    return b


def lin_solve(F, b):
    """common.c lin_solve(): x with F x = b (3x3)."""
    lu, perm = ludcmp(F)
    return lubksb(lu, perm, b)


def matrix_inverse(F):
    """common.c matrix_inverse() (with the repaired `col[j] = 1.0;`)."""
    lu, perm = ludcmp(F)
    cols = [lubksb(lu, perm, jnp.zeros(3, lu.dtype).at[j].set(1.0)) for j in range(3)]
    return jnp.stack(cols, axis=1)


def _two_sum(a, b):
    """a + b = s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _round64(h, l):
    """Round the double-double h + l (normalised) to a 64-bit significand (x87 long double),
    ties to even. h is on that grid already; only l is rounded, to a multiple of
    q = 2^(e - 63) with e the exponent of h + l, by adding and removing 1.5 * 2^52 q."""
    m, ex = jnp.frexp(h)
    e = ex - 1 - jnp.where((jnp.abs(m) == 0.5) & (h * l < 0.0), 1, 0)
    big = jnp.ldexp(jnp.asarray(1.5, h.dtype), e - 11)
    l = jnp.where(h == 0.0, l, (l + big) - big)
    return h, l


def matmul_long(A, B):
    """common.c matrix_times_matrix() for 3x3: `long double dummy; dummy += A*B;` the
    products are doubles (double * double), the running sum is an x87 long double (64-bit
    significand), rounded to double at the end. Emulated exactly with double-double sums."""
    rows = []
    for m in range(3):
        row = []
        for p in range(3):
            h = A[m, 0] * B[0, p]
            l = jnp.zeros((), A.dtype)
            for k in (1, 2):
                s, e = _two_sum(h, A[m, k] * B[k, p])
                h, l2 = _two_sum(s, e + l)
                h, l = _round64(h, l2)
            row.append(h + l)
        rows.append(jnp.stack(row))
    return jnp.stack(rows)


def _rotate(a, i, j, k, l, s, tau):
    """NR's ROTATE(a,i,j,k,l) macro."""
    g = a[i, j]
    h = a[k, l]
    a = a.at[i, j].set(g - s * (h + g * tau))
    return a.at[k, l].set(h + s * (g - h * tau))


def jacobi(a):
    """contact.c jacobi() (NR), as printed: the second convergence test compares with
    fabs(d[ip]). Returns (d (3,), v (3, 3) eigenvectors as columns, ok)."""
    n = 3
    v = jnp.eye(n, dtype=a.dtype)
    d = jnp.diagonal(a)
    b = d
    z = jnp.zeros(n, a.dtype)

    def cond(c):
        return ~c[0] & (c[1] <= JACOBI_SWEEPS)

    def body(c):
        _, i, a, v, d, b, z = c
        sm = seqsum([jnp.abs(a[ip, iq]) for ip in range(n - 1) for iq in range(ip + 1, n)])
        conv = sm == 0.0
        tresh = jnp.where(i < 4, 0.2 * sm / (n * n), 0.0)
        a0, v0, d0, z0 = a, v, d, z
        for ip in range(n - 1):
            for iq in range(ip + 1, n):
                apq = a[ip, iq]
                g = 100.0 * jnp.abs(apq)
                skip = (i > 4) & (jnp.abs(d[ip]) + g == jnp.abs(d[ip])) & (jnp.abs(d[iq]) + g == jnp.abs(d[ip]))
                rot = (~skip) & (jnp.abs(apq) > tresh)
                h = d[iq] - d[ip]
                small = jnp.abs(h) + g == jnp.abs(h)
                apq_s = jnp.where(apq == 0.0, 1.0, apq)
                theta = 0.5 * h / apq_s
                t2 = 1.0 / (jnp.abs(theta) + jnp.sqrt(1.0 + theta * theta))
                t2 = jnp.where(theta < 0.0, -t2, t2)
                t = jnp.where(small, apq / jnp.where(h == 0.0, 1.0, h), t2)
                cc = 1.0 / jnp.sqrt(1 + t * t)
                s = t * cc
                tau = s / (1.0 + cc)
                h = t * apq
                ar = a.at[ip, iq].set(0.0)
                for j in range(ip):
                    ar = _rotate(ar, j, ip, j, iq, s, tau)
                for j in range(ip + 1, iq):
                    ar = _rotate(ar, ip, j, j, iq, s, tau)
                for j in range(iq + 1, n):
                    ar = _rotate(ar, ip, j, iq, j, s, tau)
                vr = v
                for j in range(n):
                    vr = _rotate(vr, j, ip, j, iq, s, tau)
                zr = z.at[ip].add(-h).at[iq].add(h)
                dr = d.at[ip].add(-h).at[iq].add(h)
                a = jnp.where(rot, ar, jnp.where(skip, a.at[ip, iq].set(0.0), a))
                v = jnp.where(rot, vr, v)
                z = jnp.where(rot, zr, z)
                d = jnp.where(rot, dr, d)
        b = b + z
        d = b
        z = jnp.zeros_like(z)
        keep = lambda new, old: jnp.where(conv, old, new)  # noqa: E731
        return conv, i + 1, keep(a, a0), keep(v, v0), keep(d, d0), keep(b, c[5]), keep(z, z0)

    init = (jnp.asarray(False), jnp.asarray(1), a, v, d, b, z)
    conv, _, _, v, d, _, _ = jax.lax.while_loop(cond, body, init)
    return d, v, conv


def eigsrt(d, v):
    """contact.c eigsrt(): eigenvalues in descending order (ties: the last index wins)."""
    n = 3
    for i in range(n - 1):
        p = d[i]
        k = jnp.asarray(i)
        for j in range(i + 1, n):
            ge = d[j] >= p
            p = jnp.where(ge, d[j], p)
            k = jnp.where(ge, j, k)
        swap = k != i
        dk = d[k]
        d = jnp.where(swap, d.at[k].set(d[i]).at[i].set(p), d)
        col_i, col_k = v[:, i], v[:, k]
        vs = v.at[:, k].set(col_i).at[:, i].set(col_k)
        v = jnp.where(swap, vs, v)
        del dk
    return d, v
