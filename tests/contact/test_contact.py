"""Contact geometry (jaxmedusa.contact) against expectations from outside the code:
report II test cases 1-2, report IV example 2, symmetry, and a brute-force surface search."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401
from jaxmedusa.contact.shapes import BOX_ELLIPSOID_SCALE, WARM_SIZE, cold_warm, pair_geometry
from jaxmedusa.core.state import CONTACT_WARM_SIZE

I3 = np.eye(3)
ITERS = 16  # cold starts in these tests; one compiled variant per (kind, frame, broad phase)
ZERO = np.zeros(3)
CAR1 = np.array([2.5, 0.9, 0.7])  # semi-axes [m] of a car-like superellipsoid
CAR2 = np.array([2.3, 0.85, 0.7])


def rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


@functools.lru_cache(maxsize=None)
def _geom_fn(kind, iters, broad_phase="medusa", frame="affine"):
    return jax.jit(lambda r1, F1, a1, r2, F2, a2, w: pair_geometry(
        kind, r1, F1, a1, r2, F2, a2, w, broad_phase=broad_phase, frame=frame, iters=iters))


def geom(kind, r1, F1, a1, r2, F2, a2, warm=None, iters=ITERS, **kw):
    w = cold_warm() if warm is None else warm
    return _geom_fn(kind, iters, **kw)(*(jnp.asarray(x, float) for x in (r1, F1, a1, r2, F2, a2)), w)


def test_warm_size_matches_state():
    assert WARM_SIZE == CONTACT_WARM_SIZE


# ---------------------------------------------------------------- report II, cases 1 and 2
# Report II (PRR-97-34) Section 0.4: principal semi-axes A = 4, B = 2, C = 1 m for both
# ellipsoids; case 1 head-to-head with ellipsoid 2 at 8 E1 (identity rotations); case 2
# ellipsoid 2 turned a quarter turn (Euler angle psi = pi/2) at (0, 6, 0).
REPORT2_AXES = np.array([4.0, 2.0, 1.0])


@pytest.mark.parametrize("kind", ["ellipsoid", "superellipsoid"])
@pytest.mark.parametrize("push", [0.0, 0.1])
def test_report2_case1_head_to_head(kind, push):
    g = geom(kind, ZERO, I3, REPORT2_AXES, [8.0 - push, 0, 0], I3, REPORT2_AXES)
    np.testing.assert_allclose(g.T1, [4.0, 0, 0], atol=1e-8)
    np.testing.assert_allclose(g.T2, [4.0 - push, 0, 0], atol=1e-8)
    np.testing.assert_allclose(g.n1, [1.0, 0, 0], atol=1e-8)
    np.testing.assert_allclose(g.phi1, -push, atol=1e-8)
    np.testing.assert_allclose(g.X1, [4.0, 0, 0], atol=1e-8)
    np.testing.assert_allclose(g.X2, [-4.0, 0, 0], atol=1e-8)
    assert bool(g.candidate)
    if push > 0:
        assert bool(g.touching)


@pytest.mark.parametrize("kind", ["ellipsoid", "superellipsoid"])
@pytest.mark.parametrize("push", [0.0, 0.1])
def test_report2_case2_head_to_side(kind, push):
    g = geom(kind, ZERO, I3, REPORT2_AXES, [0, 6.0 - push, 0], rot_z(np.pi / 2), REPORT2_AXES)
    # two flat superellipsoid faces: along them h varies like s^5, so the deepest point is
    # determined only to ~(1e-16)^(1/5) in unit coordinates (phi1 is not affected)
    tol = 1e-3 if kind == "superellipsoid" else 1e-8
    np.testing.assert_allclose(g.T1, [0, 2.0, 0], atol=tol)
    np.testing.assert_allclose(g.T2, [0, 2.0 - push, 0], atol=tol)
    np.testing.assert_allclose(g.n1, [0, 1.0, 0], atol=1e-8)
    np.testing.assert_allclose(g.phi1, -push, atol=1e-7)
    np.testing.assert_allclose(g.X2, [-4.0, 0, 0], atol=tol)  # the head of body 2
    if push > 0:
        assert bool(g.touching)


def test_report2_separated_no_contact():
    g = geom("ellipsoid", ZERO, I3, REPORT2_AXES, [8.5, 0, 0], I3, REPORT2_AXES)
    assert not bool(g.touching)
    np.testing.assert_allclose(g.phi1, 0.5, atol=1e-8)


# ---------------------------------------------------------------- superellipsoid faces
@pytest.mark.parametrize("delta", [0.001, 0.05, 0.2])
@pytest.mark.parametrize("yaw", [0.0, 0.7])
def test_superellipsoid_face_to_face(delta, yaw):
    R = rot_z(yaw)
    # side by side, overlapping by delta: face normal d2
    g = geom("superellipsoid", ZERO, R, CAR1, R @ [0.3, 0.9 + 0.85 - delta, 0], R, CAR2)
    # flat faces: the deepest point converges slowly along the face (x^5-like minimum), which
    # moves phi1 by far less than a micrometre
    np.testing.assert_allclose(g.phi1, -delta, atol=1e-6)
    np.testing.assert_allclose(g.n1, R[:, 1], atol=1e-4)
    assert bool(g.touching)
    # head to tail: face normal d1
    g = geom("superellipsoid", ZERO, R, CAR1, R @ [2.5 + 2.3 - delta, 0.1, 0.05], R, CAR2)
    np.testing.assert_allclose(g.phi1, -delta, atol=1e-6)
    np.testing.assert_allclose(g.n1, R[:, 0], atol=1e-4)


# ---------------------------------------------------------------- invariance
def _touching_configs(n, seed):
    """Random-yaw (and slightly tilted) pairs moved along a random direction to first touch
    (bisection), then pushed 0..0.2 m together."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        R1 = rot_z(rng.uniform(-np.pi, np.pi)) @ random_rotation_small(rng)
        R2 = rot_z(rng.uniform(-np.pi, np.pi)) @ random_rotation_small(rng)
        ang = rng.uniform(0, 2 * np.pi)
        u = np.array([np.cos(ang), np.sin(ang), rng.uniform(-0.05, 0.05)])
        lo, hi = 1.0, 8.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            if float(geom("superellipsoid", ZERO, R1, CAR1, mid * u, R2, CAR2, iters=ITERS).phi1) <= 0:
                lo = mid
            else:
                hi = mid
        out.append((R1, R2, (hi - rng.uniform(0.0, 0.2)) * u))
    return out


def random_rotation_small(rng, s=0.05):
    a = rng.normal(size=3) * s
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.linalg.matrix_power(np.eye(3) + K / 64, 64)  # ~ expm(K)


@pytest.fixture(scope="module")
def configs():
    return _touching_configs(8, seed=3)


def test_rotation_of_the_pair(configs):
    rng = np.random.default_rng(7)
    for R1, R2, r2 in configs:
        Q = random_rotation(rng)
        r1 = rng.normal(size=3)
        g = geom("superellipsoid", ZERO, R1, CAR1, r2, R2, CAR2, iters=ITERS)
        gq = geom("superellipsoid", r1, Q @ R1, CAR1, r1 + Q @ r2, Q @ R2, CAR2, iters=ITERS)
        np.testing.assert_allclose(gq.phi1, g.phi1, atol=1e-7)
        np.testing.assert_allclose(gq.n1, Q @ np.asarray(g.n1), atol=1e-6)
        np.testing.assert_allclose(gq.X1, g.X1, atol=1e-5)


def test_swapping_the_bodies(configs):
    for R1, R2, r2 in configs:
        g = geom("superellipsoid", ZERO, R1, CAR1, r2, R2, CAR2, iters=ITERS)
        s = geom("superellipsoid", r2, R2, CAR2, ZERO, R1, CAR1, iters=ITERS)
        np.testing.assert_allclose(s.T1, g.T2, atol=1e-5)
        np.testing.assert_allclose(s.T2, g.T1, atol=1e-5)
        # MEDUSA's normal is body 1's; swapped, it is body 2's normal at T2, which is -n1
        # up to the small misalignment of the two normals of penetrating surfaces.
        assert float(jnp.dot(s.n1, g.n1)) < -0.99
        np.testing.assert_allclose(s.phi1, g.phi1, atol=0.05 * abs(float(g.phi1)) + 1e-6)
        assert bool(s.touching) == bool(g.touching)


def test_symmetric_swap_exact():
    g = geom("superellipsoid", ZERO, I3, CAR1, [4.7, 0.3, 0], rot_z(np.pi), CAR2)
    s = geom("superellipsoid", [4.7, 0.3, 0], rot_z(np.pi), CAR2, ZERO, I3, CAR1)
    np.testing.assert_allclose(s.n1, -np.asarray(g.n1), atol=1e-4)
    np.testing.assert_allclose(s.phi1, g.phi1, atol=1e-7)


# ---------------------------------------------------------------- brute force
def _surface_grid(n, eps=0.4):
    """Points of the unit superellipsoid sum |y_i|^(2/eps) = 1 (eq. 1.51): an n x n grid on
    each face of the cube [-1, 1]^3, projected radially (even spacing, unlike the
    parametric form (1.45), which is sparse near the face centres)."""
    t = np.linspace(-1.0, 1.0, n)
    A, B = np.meshgrid(t, t)
    A, B = A.ravel(), B.ravel()
    one = np.ones_like(A)
    faces = []
    for axis in range(3):
        for sgn in (-1.0, 1.0):
            cols = [A, B]
            cols.insert(axis, sgn * one)
            faces.append(np.stack(cols, -1))
    w = np.concatenate(faces)
    return w / (np.sum(np.abs(w) ** (2 / eps), -1, keepdims=True) ** (eps / 2))


def _f(y):  # eq. (1.51) with the superellipsoid exponent 2/0.4 = 5: f + 1
    return np.sum(np.abs(y) ** 5, axis=-1)


def test_deepest_points_brute_force(configs):
    S = _surface_grid(301)  # ~1 cm spacing on a car
    for R1, R2, r2 in configs:
        g = geom("superellipsoid", ZERO, R1, CAR1, r2, R2, CAR2, iters=ITERS)
        P1 = (S * CAR1) @ R1.T  # surface of body 1 (world)
        f1 = _f(((P1 - r2) @ R2) / CAR2)  # body 2's inside-outside function there
        P2 = r2 + (S * CAR2) @ R2.T
        f2 = _f((P2 @ R1) / CAR1)
        fs1 = _f(((np.asarray(g.T1) - r2) @ R2) / CAR2)
        fs2 = _f((np.asarray(g.T2) @ R1) / CAR1)
        # the solver's points are at least as deep as the best grid points ...
        assert fs1 <= f1.min() + 1e-9 and fs2 <= f2.min() + 1e-9
        # ... and the grid points of nearly the same depth lie around them (flat faces make
        # the minimiser weakly determined: compare to all grid points within 1e-3 of the min)
        near1 = P1[f1 <= f1.min() + 1e-3]
        near2 = P2[f2 <= f2.min() + 1e-3]
        assert np.min(np.linalg.norm(near1 - np.asarray(g.T1), axis=1)) < 0.02
        assert np.min(np.linalg.norm(near2 - np.asarray(g.T2), axis=1)) < 0.02
        assert float(g.residual) < 1e-6


# ---------------------------------------------------------------- report IV example 2
REPORT4_BOX = np.array([5.0, 3.0, 2.9]) / 2  # model.dat CONTACT A1 A2 A3 (box half-dims)


@pytest.mark.parametrize("dx", [-1.5, 0.0, 1.0])
def test_report4_side_by_side_box_no_contact(dx):
    """Report IV, example 2 (platoon2.dat): vehicles 3.0 m wide, side by side 3.6 m apart.
    The ellipsoids of report IV's model intersect; the box model's rule (1) reports no contact."""
    r2 = [dx, 3.6, 0.0]
    ell = BOX_ELLIPSOID_SCALE * REPORT4_BOX  # the equal-volume ellipsoid of the box
    ge = geom("ellipsoid", ZERO, I3, ell, r2, I3, ell)
    gb = geom("box", ZERO, I3, REPORT4_BOX, r2, I3, REPORT4_BOX)
    assert bool(ge.touching) and float(ge.phi1) < 0
    assert bool(gb.candidate) and not bool(gb.touching)


def test_box_normals():
    # head to tail (face to face): n1 = 1P1
    g = geom("box", ZERO, I3, REPORT4_BOX, [5.5, 0.2, 0], I3, REPORT4_BOX)
    assert bool(g.touching)
    np.testing.assert_allclose(g.n1, [1, 0, 0], atol=1e-12)
    # offset head-on-tail with vehicle 2 yawed by 0.3 rad: report IV's face-to-face case. By
    # hand from the contact points: the ray from each centre through its contact point meets
    # a flat face (front of 1, rear of 2, away from the 0.3 m rounded edges); norm() keeps the
    # face whose normal makes the smaller planar angle psi with its ray, and n1 points from
    # body 1 to body 2: E1 (front of 1) or R e1 (minus the rear-face normal of 2).
    R = rot_z(0.3)
    g = geom("box", ZERO, I3, REPORT4_BOX, [5.6, 2.0, 0], R, REPORT4_BOX)
    assert bool(g.touching)
    a1 = np.asarray(g.T1)  # body 1's frame is the world frame
    a2 = R.T @ (np.asarray(g.T2) - [5.6, 2.0, 0])
    assert a1[0] > 0 and abs(a1[1]) / a1[0] * REPORT4_BOX[0] < REPORT4_BOX[1] - 0.3  # front face
    assert a2[0] < 0 and abs(a2[1]) / -a2[0] * REPORT4_BOX[0] < REPORT4_BOX[1] - 0.3  # rear face
    psi1, psi2 = np.arctan2(abs(a1[1]), abs(a1[0])), np.arctan2(abs(a2[1]), abs(a2[0]))
    expected = np.array([1.0, 0, 0]) if psi1 < psi2 else R[:, 0]
    # the normal is a column of an exact rotation: equal to rounding (1e-12)
    np.testing.assert_allclose(g.n1, expected, atol=1e-12)
    # the plain ellipsoid normal differs: report IV Fig. 1 (counter-clockwise rotation)
    ge = geom("ellipsoid", ZERO, I3, REPORT4_BOX * BOX_ELLIPSOID_SCALE, [5.6, 2.0, 0], rot_z(0.3),
              REPORT4_BOX * BOX_ELLIPSOID_SCALE)
    assert abs(float(ge.n1[1])) > 0.1


# ---------------------------------------------------------------- broad phase
def test_broad_phase_medusa_misses_offset_corner():
    """MEDUSA's spheres (radius = largest semi-axis) miss an offset pair whose corners overlap."""
    r2 = [4.75, 0.8, 0.0]  # head to head, offset: corners overlap by ~3 cm; |r2| = 4.817 > 2.5 + 2.3
    gm = geom("superellipsoid", ZERO, I3, CAR1, r2, rot_z(np.pi), CAR2, broad_phase="medusa")
    ge = geom("superellipsoid", ZERO, I3, CAR1, r2, rot_z(np.pi), CAR2, broad_phase="enclosing")
    assert float(gm.phi1) < 0 and float(ge.phi1) < 0
    assert not bool(gm.candidate) and not bool(gm.touching)
    assert bool(ge.candidate) and bool(ge.touching)


# ---------------------------------------------------------------- warm start, frames, vmap
def test_warm_start_tracks_a_moving_pair():
    """Warm-started with 2 iterations per step, the solver follows an oblique approach.

    Both cars stand at z = 0 and turn about E3, so the pair is mirror-symmetric in z and the
    exact T1, T2 lie at z = 0; along z both superellipsoid faces are flat (G ~ |z|^5), the
    direction in which a too-small carried LM damping once amplified rounding into a vertical
    excursion that 2-3 iterations cannot undo (the separated gap came out doubled, issue 9).
    """
    w = cold_warm()
    g = None
    for k in range(40):
        t = k * 0.01
        r2 = [5.6 - 2.5 * t, 1.0 - 1.75 * t, 0.0]
        F2 = rot_z(0.1 + 0.2 * t)
        g = geom("superellipsoid", ZERO, I3, CAR1, r2, F2, CAR2, warm=w, iters=2)
        w = g.warm
        c = geom("superellipsoid", ZERO, I3, CAR1, r2, F2, CAR2, iters=ITERS)
        # Touching: phi1 = (T2 - T1).n1 is stationary in the tangential positions, and the
        # non-flat tangent direction converges quadratically: 2e-5 m (20 um) is ~1e-4 of the
        # 0.2 m overlap reached. Separated: phi1 = |T2 - T1| only has to be a sensible
        # positive gap; 2e-3 m is an eighth of the 16 mm gap (k = 31) that the old solver
        # returned doubled, and 2 cold iterations at k = 0 already come within ~1e-5 m.
        np.testing.assert_allclose(g.phi1, c.phi1, atol=2e-5 if bool(c.touching) else 2e-3)
        # Symmetry: z = 0 up to rounding. Along the flat direction a gradient component g at
        # round-off (at most 2e-18 in this run) is damped by GRAD_NOISE^2 / (g NOISE_STEP): it
        # moves the iterate by at most g^2 NOISE_STEP / GRAD_NOISE^2 = 4e-14 per iteration, and
        # even a component of 1e-17 by 1e-12: < 1e-10 m over 40 calls of 2 iterations; 1e-9 m
        # leaves a margin of 10.
        np.testing.assert_allclose([g.T1[2], g.T2[2]], 0.0, atol=1e-9)
    assert bool(g.touching)


@pytest.mark.parametrize("kind", ["superellipsoid", "ellipsoid"])
def test_frames_agree_for_rigid_motion(kind):
    R = rot_z(0.8)
    a = geom(kind, ZERO, R, CAR1, [1.0, 4.4, 0], rot_z(-0.4), CAR2, frame="affine")
    p = geom(kind, ZERO, R, CAR1, [1.0, 4.4, 0], rot_z(-0.4), CAR2, frame="principal")
    np.testing.assert_allclose(p.phi1, a.phi1, atol=1e-9)
    np.testing.assert_allclose(p.n1, a.n1, atol=1e-8)


def test_frames_differ_at_first_order_in_strain():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3, 3))
    S = 0.5 * (S + S.T) / np.linalg.norm(S)
    F = rot_z(0.3) @ (I3 + 1e-3 * S)

    def diff(e):
        F = rot_z(0.3) @ (I3 + e * S)
        a = geom("superellipsoid", ZERO, F, CAR1, [1.0, 1.75, 0], rot_z(0.3), CAR2, frame="affine")
        p = geom("superellipsoid", ZERO, F, CAR1, [1.0, 1.75, 0], rot_z(0.3), CAR2, frame="principal")
        return abs(float(a.phi1 - p.phi1))

    e = 1e-3
    d1, d2 = diff(e), diff(2 * e)
    # Bounds: a first-order difference is at most ~ strain * largest semi-axis (2.5e-3 m); a
    # second-order one (as for the ellipsoid) would be ~ e^2 * 2.5 m = 2.5e-6 m, so the
    # difference must exceed ten times that.
    assert 10 * e**2 * CAR1[0] < d1 < e * CAR1[0]
    # Scaling: doubling the strain doubles a first-order difference (x4 at second order);
    # measured x2.39 (strain^1.26: the flat faces shift the deepest point, T1 moves along
    # them), so accept exponents 0.85..1.5, i.e. a ratio of 1.8..2.83.
    assert 1.8 < d2 / d1 < 2.83
    # ellipsoids: the two constructions are the same surface
    a = geom("ellipsoid", ZERO, F, CAR1, [1.0, 1.75, 0], rot_z(0.3), CAR2, frame="affine")
    p = geom("ellipsoid", ZERO, F, CAR1, [1.0, 1.75, 0], rot_z(0.3), CAR2, frame="principal")
    np.testing.assert_allclose(p.phi1, a.phi1, atol=1e-9)


def test_vmap_over_pairs():
    f = jax.jit(jax.vmap(lambda r2: pair_geometry("superellipsoid", ZERO, I3, CAR1, r2, I3, CAR2,
                                                  cold_warm(), iters=8)))
    r2 = jnp.array([[4.7, 0.0, 0.0], [0.0, 1.7, 0.0], [30.0, 0.0, 0.0]])
    g = f(r2)
    np.testing.assert_allclose(g.phi1[:2], [-0.1, -0.05], atol=1e-9)
    assert list(np.asarray(g.touching)) == [True, True, False]
    assert g.warm.shape == (3, WARM_SIZE)


# ---------------------------------------------------------------- gradients
GRAD_CONFIGS = {
    "aligned_touch": ([4.8, 0, 0], I3),  # first touch, exactly aligned
    "aligned_overlap": ([4.7, 0, 0], I3),
    "flat_side": ([0.0, 1.7, 0], I3),  # faces meeting flat
    "quarter_turn": ([0.0, 3.2, 0], rot_z(np.pi / 2)),
    "offset_corner": ([4.75, 1.7, 0], I3),
    "far": ([40.0, 3.0, 0], I3),
    "coincident": ([0.0, 0.0, 0], I3),
}


@pytest.mark.parametrize("kind", ["superellipsoid", "ellipsoid", "box"])
def test_gradients_finite(kind):
    def out(r2, F2, a1):
        g = pair_geometry(kind, jnp.zeros(3), jnp.eye(3), a1, r2, F2, CAR2, cold_warm(), iters=6)
        return jnp.concatenate([g.phi1[None], g.n1, g.T1, g.T2, g.X1, g.residual[None]])

    jf = jax.jit(jax.vmap(jax.jacfwd(out, argnums=(0, 1, 2))))
    r2 = jnp.asarray([c[0] for c in GRAD_CONFIGS.values()], float)
    F2 = jnp.asarray(np.stack([c[1] for c in GRAD_CONFIGS.values()]))
    a1 = jnp.tile(jnp.asarray(CAR1), (len(r2), 1))
    J = jf(r2, F2, a1)
    for k, name in enumerate(GRAD_CONFIGS):
        assert all(bool(jnp.all(jnp.isfinite(j[k]))) for j in J), (kind, name)
    # the gap's gradient along the line of centres at first touch is the unit normal
    if kind != "box":
        np.testing.assert_allclose(J[0][0][0], [1.0, 0.0, 0.0], atol=1e-8)


@pytest.mark.slow
def test_gradients_finite_reverse_mode_and_exponents():
    """Reverse mode, and derivatives in the squareness exponents (traced eps path)."""
    def phi(r2, eps):
        return pair_geometry("superellipsoid", jnp.zeros(3), jnp.eye(3), CAR1, r2, jnp.eye(3), CAR2,
                             cold_warm(), eps1=eps, eps2=eps, iters=6).phi1

    r2 = jnp.asarray([c[0] for c in GRAD_CONFIGS.values()], float)
    gr = jax.jit(jax.vmap(jax.grad(phi, argnums=(0, 1)), in_axes=(0, None)))(r2, jnp.asarray(0.4))
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in gr)
