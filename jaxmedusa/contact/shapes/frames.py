"""Body frames of the contact shapes: the map between world points and unit coordinates.

World point x <-> unit coordinates y = A (x - r), x = r + B y, B = A^-1 (see narrow_phase.py
for the two frames, "affine" and "principal"). Also the 3x3 helpers the contact code uses
instead of LAPACK calls (they fuse and vmap cheaply).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxmedusa.core.safe_math import TINY, normalize, safe_norm, safe_sqrt

__all__ = ["FRAMES", "Body", "body", "det3", "inv3", "gram_schmidt", "principal_frame"]

FRAMES = ("affine", "principal")


def gram_schmidt(F):
    """Orthonormal frame (columns) from the directors d1, d2 (columns of F)."""
    p1 = normalize(F[:, 0])
    d2 = F[:, 1] - jnp.dot(F[:, 1], p1) * p1
    p2 = normalize(d2, jnp.cross(jnp.array([0.0, 0.0, 1.0]), p1))
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
            den = jnp.abs(d) + safe_sqrt(d * d + 4.0 * apq * apq)
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
    e = safe_sqrt(lam)
    Q = (Fa @ V) / e[None, :]
    return Q, e


class Body(NamedTuple):
    """The unit-coordinate map of one body and what the broad phase and box normals need."""

    A: jnp.ndarray  # (3, 3) world offset -> unit coordinates
    B: jnp.ndarray  # (3, 3) inverse of A
    Finv: jnp.ndarray  # (3, 3)
    P: jnp.ndarray  # (3, 3) orthonormal principal frame (columns), for box normals
    h: jnp.ndarray  # (3,) current box half-dimensions [m] (box kind)
    radius_medusa: jnp.ndarray  # () MEDUSA bounding-sphere radius [m]
    radius_enclosing: jnp.ndarray  # () radius that encloses the shape [m]


def body(ellipsoid_scale: float, F, axes, frame: str) -> Body:
    """Unit-coordinate map of one body. `axes` are the contact semi-axes (for "box": the box
    half-dimensions); the contact points live on the surface with semi-axes
    ellipsoid_scale * axes (Shape.ellipsoid_scale, static)."""
    ell = axes if ellipsoid_scale == 1.0 else ellipsoid_scale * axes
    Finv = inv3(F)
    if frame == "affine":
        A = Finv / ell[:, None]
        B = F * ell[None, :]
        P = gram_schmidt(F)
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
    stretch = jnp.sqrt(1.0 + safe_sqrt(jnp.sum(C * C)))
    if frame == "principal":
        stretch = 1.0  # e are already the current semi-axes
    h = axes * jnp.cbrt(det3(F))  # report IV: box volume = deformed ellipsoid volume
    return Body(A, B, Finv, P, h, jnp.max(ell), safe_norm(ell) * stretch)
