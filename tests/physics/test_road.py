"""Road geometry (jaxmedusa/road.py): spline, banking, tracking point, off-road flag.

Expected values come from outside the code under test: the user points themselves, the
flat plane, rotations written out by hand (Rodrigues), finite differences, and a dense
brute-force search for the closest point.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.physics.road import (
    RoadWarning,
    build_road,
    initial_tracking,
    n_segments,
    road_frame,
    road_params,
)
from jaxmedusa.core.scenario import RoadSpec

# A gently curved, sloped and banked road. Spacing 30, 30, 30, then 90: the first cubic
# spans three intervals of 30 m per unit s, so 90 m segments keep the parametrisation
# speed continuous and the continuation cubics do not double back (see the notes).
CURVED = ((0, 0, 0, 0), (30, 1, 0.5, 2), (60, 3, 1.5, 4), (90, 4, 2, 3), (180, 2, 1, -2), (270, 0, 0.5, 0))
BANKED = ((0, 0, 0, 5), (30, 0, 0, 2.5), (60, 0, 0, -4), (90, 0, 0, 0), (200, 0, 0, 0), (400, 0, 0, 0), (800, 0, 0, 0))
PRINTED_FLAT = ((0, 0, 0, 0), (100, 0, 0, 0), (500, 0, 0, 0), (1000, 0, 0, 0))


def road_of(points):
    """build_road; only the printed flat road may warn (it doubles back near x = 0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if points == PRINTED_FLAT else "error", RoadWarning)
        return build_road(RoadSpec(points=points))


# Few compiled functions, shared by the tests (compilation dominates the test time).
init_v = jax.jit(jax.vmap(initial_tracking, in_axes=(None, 0)))  # r: [N, 3]
frame_v = jax.jit(jax.vmap(road_frame, in_axes=(None, 0, 0, 0)))


def track_v(road, rs):
    """initial_tracking, then road_frame, for points rs [N, 3]."""
    seg, s = init_v(road, rs)
    return frame_v(road, rs, seg, s)


def init1(road, r):
    """initial_tracking for one point, through the compiled batch function."""
    seg, s = init_v(road, jnp.asarray(r)[None])
    return seg[0], s[0]


def frame1(road, r, seg, s):
    """road_frame for one point, through the compiled batch function."""
    out = frame_v(road, jnp.asarray(r)[None], jnp.asarray(seg)[None], jnp.asarray(s)[None])
    return jax.tree.map(lambda x: x[0], out)


def np_curve(road, seg, s):
    """Point and derivative of segment `seg` (1-based) at s, in numpy."""
    c = np.asarray(road.coef[int(seg) - 1])
    s = float(s)
    return c[0] + c[1] * s + c[2] * s**2 + c[3] * s**3, c[1] + 2 * c[2] * s + 3 * c[3] * s**2


def user_segments(road, points):
    """(seg, lo, hi) of the user segments 2..NP (MEDUSA numbering)."""
    lo, hi = np.asarray(road.s_lo), np.asarray(road.s_hi)
    return [(k, lo[k - 1], hi[k - 1]) for k in range(2, len(points) + 1)]


def brute_closest(road, points, r, n=20001):
    """Dense search over every user segment: (distance, point)."""
    best = (np.inf, None)
    for k, lo, hi in user_segments(road, points):
        c = np.asarray(road.coef[k - 1])
        s = np.linspace(lo, hi, n)[:, None]
        pts = c[0] + c[1] * s + c[2] * s**2 + c[3] * s**3
        d = np.linalg.norm(pts - np.asarray(r), axis=1)
        i = int(np.argmin(d))
        if d[i] < best[0]:
            best = (d[i], pts[i])
    return best


# ----------------------------------------------------------------------------- building


def test_shapes_and_user_points_interpolated():
    road = road_of(CURVED)
    n = len(CURVED)
    assert n_segments(road) == n + 1
    assert road.coef.shape == (n + 1, 4, 3)
    pts = np.array(CURVED, float)
    # node j+1 (user point j) is the start of segment j+1 (j = 1..n)
    for j in range(1, n + 1):
        p, _ = np_curve(road, j + 1, road.s_lo[j])
        np.testing.assert_allclose(p, pts[j - 1, :3], atol=1e-12)
    # the first cubic passes through user points 1-4 at s = 0, 1/3, 2/3, 1
    for i, s in enumerate((0.0, 1 / 3, 2 / 3, 1.0)):
        p, _ = np_curve(road, 2, s)
        np.testing.assert_allclose(p, pts[i, :3], atol=1e-12)
    # virtual end points, ten segment lengths out, at the height of their neighbour
    np.testing.assert_allclose(road.nodes[0], [-300.0, -10.0, 0.0])
    np.testing.assert_allclose(road.nodes[-1], [270.0 + 900.0, 0.0 + 10 * (0 - 2), 0.5])


def test_spline_continuity_at_interior_nodes():
    """Value, first and second derivative agree from both sides at nodes 3..NP+1
    (one-sided finite differences of each segment's own polynomial)."""
    road = road_of(CURVED)
    ns = n_segments(road)
    h = 1e-4
    for k in range(2, ns):  # node k+1 between segments k and k+1
        cl, cr = np.asarray(road.coef[k - 1]), np.asarray(road.coef[k])
        a, b = float(road.s_hi[k - 1]), float(road.s_lo[k])
        left = lambda s: cl[0] + cl[1] * s + cl[2] * s**2 + cl[3] * s**3  # noqa: E731
        right = lambda s: cr[0] + cr[1] * s + cr[2] * s**2 + cr[3] * s**3  # noqa: E731
        np.testing.assert_allclose(left(a), right(b), atol=1e-9)
        d1l = (3 * left(a) - 4 * left(a - h) + left(a - 2 * h)) / (2 * h)
        d1r = (-3 * right(b) + 4 * right(b + h) - right(b + 2 * h)) / (2 * h)
        np.testing.assert_allclose(d1l, d1r, rtol=1e-5, atol=1e-5)
        d2l = (2 * left(a) - 5 * left(a - h) + 4 * left(a - 2 * h) - left(a - 3 * h)) / h**2
        d2r = (2 * right(b) - 5 * right(b + h) + 4 * right(b + 2 * h) - right(b + 3 * h)) / h**2
        np.testing.assert_allclose(d2l, d2r, rtol=1e-3, atol=2e-3)


@pytest.mark.parametrize(
    "points, match",
    [
        (((0, 0, 0, 0), (10, 0, 0, 0), (20, 0, 0, 0)), "at least 4 points"),
        (((0, 0, 0, 0), (10, 0, 0, 0), (10, 0, 0, 3), (30, 0, 0, 0)), "road point 3 of 4 repeats road point 2"),
        (((0, 0, 0, 0), (10, 0, 0, 0), (20, float("nan"), 0, 0), (30, 0, 0, 0)), "road point 3 of 4: finite"),
        (((0, 0, 0, 0), (10, 0, 0, 0), (20, 0, 0, 0), (30, 0, float("inf"), 0)), "road point 4 of 4: finite"),
        (((0, 0, 0, 0), (10, 0, 0), (20, 0, 0, 0), (30, 0, 0, 0)), "road point 2 of 4: 4 numbers"),
        (((0, 0, 0, 95), (10, 0, 0, 0), (20, 0, 0, 0), (30, 0, 0, 0)), "road point 1 of 4: banking angle"),
    ],
)
def test_build_road_rejects_bad_points(points, match):
    with pytest.raises(ValueError, match=match):
        build_road(RoadSpec(points=points))


def test_flat_plane_spec_gives_none():
    assert build_road(RoadSpec()) is None


def test_road_params_is_build_road_and_differentiable_in_the_points():
    """road_params (jax.numpy, traceable) builds what build_road (numpy) builds; the
    derivative of e3 with respect to a uniform bank [deg] is the rotation rate pi/180."""
    ref = road_of(CURVED)
    got = jax.jit(road_params)(np.array(CURVED, float))
    for name in ("coef", "s_lo", "s_hi", "bank", "nodes", "node_tangent"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-14, atol=1e-12)
    straight = np.array([(x, 0.0, 0.0, 4.0) for x in (0.0, 30.0, 60.0, 90.0)])
    r = jnp.array([40.0, 0.3, 0.5])
    seg, s = 3, 0.5  # on the first cubic, x = 90 s

    @jax.jit
    def e3_and_derivative(bank_deg):
        def e3_of(bank_deg):
            pts = jnp.asarray(straight).at[:, 3].set(bank_deg)
            return road_frame(road_params(pts), r, seg, s)[0].e3

        return jax.jvp(e3_of, (bank_deg,), (1.0,))

    e3, de3 = e3_and_derivative(4.0)
    b = np.radians(4.0)
    np.testing.assert_allclose(e3, [0.0, -np.sin(b), np.cos(b)], atol=1e-15)
    np.testing.assert_allclose(de3, np.radians(1.0) * np.array([0.0, -np.cos(b), -np.sin(b)]), atol=1e-15)


# ----------------------------------------------------------------------------- frames


def test_straight_flat_road_matches_flat_plane():
    """A straight flat road (evenly spaced, and the printed Chapter 3 road) gives the flat
    plane's triad, and a tracking point in the plane z = 0 abeam the point."""
    key = jax.random.PRNGKey(0)
    flat = jax.jit(jax.vmap(lambda r: road_frame(None, r, 0, 0.0)[0]))
    straight = ((0, 0, 0, 0), (30, 0, 0, 0), (60, 0, 0, 0), (90, 0, 0, 0))
    for points, xmax in ((straight, 89.0), (PRINTED_FLAT, 999.0)):
        road = road_of(points)
        rs = jax.random.uniform(key, (40, 3), minval=jnp.array([0.2, -4.0, 0.0]), maxval=jnp.array([xmax, 4.0, 1.0]))
        f, _, _, off = track_v(road, rs)
        g = flat(rs)
        assert not np.any(off)
        np.testing.assert_array_equal(f.e3, g.e3)  # bitwise: the suspension sees the same plane
        for a, b in ((f.e1, g.e1), (f.e2, g.e2)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(f.point[:, 2], 0.0)  # same plane: (A - point).e3 is the same number
        np.testing.assert_allclose(f.point[:, 0], rs[:, 0], atol=1e-9)  # the closest point is abeam


def test_printed_flat_road_warns():
    with pytest.warns(RoadWarning, match="from point 1 to point 2: the fitted curve runs backwards"):
        build_road(RoadSpec(points=PRINTED_FLAT))


def _rodrigues(v, axis, angle):
    axis = axis / np.linalg.norm(axis)
    return v * np.cos(angle) + np.cross(axis, v) * np.sin(angle) + axis * np.dot(axis, v) * (1 - np.cos(angle))


@pytest.mark.parametrize("beta", [5.0, -7.0])
def test_constant_bank_tilts_normal_about_tangent(beta):
    """Heading 30 deg, grade 4 %: e3(beta) = rotation of e3(0) by +beta about e1, i.e. the
    normal leans to the right of travel and the road falls to the right (section 3.6)."""
    head, grade = np.radians(30.0), 0.04
    d = np.array([np.cos(head), np.sin(head), grade])
    # stations 0, 30, 60, 90, 180, 270 m: spacing that keeps the continuation cubics straight
    pts0 = tuple(tuple(float(v) for v in (d * x)) + (0.0,) for x in (0.0, 30.0, 60.0, 90.0, 180.0, 270.0))
    ptsb = tuple(p[:3] + (beta,) for p in pts0)
    b = np.radians(beta)
    rs = jnp.asarray(np.array([10.0, 45.0, 80.0, 120.0])[:, None] * d + np.array([0.3, -0.2, 0.6]))
    f0, _, _, _ = track_v(road_of(pts0), rs)
    fb, _, _, _ = track_v(road_of(ptsb), rs)
    e1 = d / np.linalg.norm(d)
    right = np.array([np.sin(head), -np.cos(head), 0.0])  # horizontal, right of travel
    e30 = np.array([-grade * np.cos(head), -grade * np.sin(head), 1.0]) / np.sqrt(1 + grade**2)
    for i in range(len(rs)):
        np.testing.assert_allclose(f0.e1[i], e1, atol=1e-12)
        np.testing.assert_allclose(fb.e1[i], e1, atol=1e-12)
        np.testing.assert_allclose(f0.e3[i], e30, atol=1e-12)
        np.testing.assert_allclose(fb.e3[i], _rodrigues(e30, e1, b), atol=1e-12)
        assert np.dot(fb.e3[i], right) == pytest.approx(np.sin(b), abs=1e-12)
        np.testing.assert_allclose(np.cross(fb.e3[i], fb.e1[i]), fb.e2[i], atol=1e-15)


def test_banked_example_bank_profile():
    """Section 3.6 road: x = 90 s on the first cubic, bank 5 -> 2.5 -> -4 -> 0 deg linear in x."""
    xs = np.array([0.5, 15.0, 29.0, 31.0, 45.0, 59.0, 61.0, 75.0, 89.0, 95.0, 300.0])
    rs = jnp.asarray(np.stack([xs, np.full_like(xs, 0.2), np.full_like(xs, 0.5)], axis=1))
    f, _, _, off = track_v(road_of(BANKED), rs)
    expected = np.interp(xs, [0, 30, 60, 90], [5.0, 2.5, -4.0, 0.0])
    np.testing.assert_allclose(np.degrees(np.arcsin(-np.asarray(f.e3[:, 1]))), expected, atol=1e-9)
    assert not np.any(off)


def test_road_along_y_stays_finite():
    """A road heading +y (t1 = 0: alpha = atan(t2/0) = pi/2 in road.c) with +3 deg bank:
    e1 = E2 (up to the grade), e3 leans to the right of travel (+x). Its virtual first
    segment degenerates to a point (x1 = x2): the frame there is still finite (E1, E3)."""
    road = road_of(((0, 0, 0, 3), (0, 30, 0, 3), (0, 60, 1, 3), (0, 90, 1, 3)))
    rs = jnp.array([[0.5, 10.0, 0.5], [-0.5, 45.0, 1.2], [0.3, -5.0, 0.5]])
    f, seg, _, _ = track_v(road, rs)
    for a in (f.point, f.e1, f.e2, f.e3):
        assert np.all(np.isfinite(np.asarray(a)))
    assert float(f.e1[0, 1]) > 0.99 and float(f.e3[0, 0]) == pytest.approx(np.sin(np.radians(3.0)), abs=1e-3)
    np.testing.assert_array_equal(f.e3[2], [0.0, 0.0, 1.0])  # virtual segment 1: unbanked
    assert int(seg[2]) == 1


# ----------------------------------------------------------------------------- tracking


def test_tracking_finds_true_closest_point():
    """Random points beside the curved road: one tracking step from a warm start 0.5 m
    back gives the closest point of a dense brute-force search over the whole road."""
    road = road_of(CURVED)
    rng = np.random.default_rng(1)
    n = 25
    rs = []
    for x, lat, up in zip(rng.uniform(2, 268, n), rng.uniform(-3, 3, n), rng.uniform(0.2, 1.2, n)):
        _, c = brute_closest(road, CURVED, np.array([x, 0.0, 0.0]), n=2001)
        rs.append(c + np.array([0.0, lat, up]))
    rs = np.array(rs)
    seg0, s0 = init_v(road, jnp.asarray(rs - np.array([0.5, 0.0, 0.0])))
    f, seg, s, off = frame_v(road, jnp.asarray(rs), seg0, s0)
    fi, _, _, _ = track_v(road, jnp.asarray(rs))
    assert not np.any(off)
    for i, r in enumerate(rs):
        d_ref, p_ref = brute_closest(road, CURVED, r)
        d = np.linalg.norm(np.asarray(f.point[i]) - r)
        assert d <= d_ref + 1e-12
        assert d == pytest.approx(d_ref, abs=1e-5)
        np.testing.assert_allclose(f.point[i], p_ref, atol=5e-3)
        # a stationary point of the distance: (tp - r).C'(s) = 0, d_road() = 0
        _, t = np_curve(road, seg[i], s[i])
        assert abs(np.dot(np.asarray(f.point[i]) - r, t)) < 1e-9 * np.linalg.norm(t)
        np.testing.assert_allclose(fi.point[i], f.point[i], atol=1e-9)  # initial_tracking agrees


@pytest.mark.parametrize("node", [3, 5, 6])  # inside the first cubic (2 -> 3), cubic -> segment 5, 5 -> 6
def test_tracking_crosses_a_node_in_one_step(node):
    road = road_of(CURVED)
    pn = np.asarray(road.nodes[node - 1])
    t = np.asarray(road.node_tangent[node - 1])
    lateral = np.cross([0.0, 0.0, 1.0], t)
    lateral /= np.linalg.norm(lateral)
    up = np.cross(t, lateral)  # normal to t: the offsets do not move the point along t
    base = pn + 0.4 * lateral + 0.5 * up
    before, after = base - 0.01 * t, base + 0.01 * t
    seg0, s0 = init1(road, jnp.asarray(before))
    assert int(seg0) == node - 1
    f, seg, s, off = frame1(road, jnp.asarray(after), seg0, s0)
    assert int(seg) == node
    d_ref, _ = brute_closest(road, CURVED, after)
    assert np.linalg.norm(np.asarray(f.point) - after) == pytest.approx(d_ref, abs=1e-6)
    _, seg2, _, _ = frame1(road, jnp.asarray(before), seg, s)  # and back again
    assert int(seg2) == node - 1


def test_off_road_beyond_the_end_and_before_the_start():
    road = road_of(CURVED)  # last user point x = 270, virtual first point x = -300
    seg, s = init1(road, jnp.array([269.0, 0.0, 0.5]))
    _, seg1, s1, off1 = frame1(road, jnp.array([269.9, 0.0, 0.5]), seg, s)
    assert not bool(off1)
    f2, seg2, _, off2 = frame1(road, jnp.array([270.1, 0.0, 0.5]), seg1, s1)
    assert bool(off2) and int(seg2) == n_segments(road)
    assert np.all(np.isfinite(np.asarray(f2.e3)))
    seg, s = init1(road, jnp.array([-299.0, -10.0, 0.5]))
    _, seg3, _, off3 = frame1(road, jnp.array([-301.0, -10.0, 0.5]), seg, s)
    assert int(seg3) == 1 and bool(off3)
    _, _, _, off4 = frame1(road, jnp.array([-299.0, -10.0, 0.5]), seg, s)
    assert not bool(off4)


def test_tracking_a_drive_along_the_printed_flat_road():
    """Step a point from x = 0 to 1001 m in 5 cm steps (the original program loses it at
    once): the frame stays the flat plane's, the flag rises only past x = 1000."""
    road = road_of(PRINTED_FLAT)
    xs = np.arange(0.0, 1001.0, 0.05)

    @jax.jit
    def drive(road, xs):
        def step(carry, x):
            seg, s = carry
            f, seg, s, off = road_frame(road, jnp.array([x, 0.1, 0.5]), seg, s)
            return (seg, s), (f.point[0], f.e3, off, seg)

        seg0, s0 = initial_tracking(road, jnp.array([0.0, 0.1, 0.5]))
        return jax.lax.scan(step, (seg0, s0), xs)[1]

    px, e3, off, seg = map(np.asarray, drive(road, jnp.asarray(xs)))
    np.testing.assert_array_equal(e3, np.broadcast_to([0.0, 0.0, 1.0], e3.shape))
    assert not off[xs <= 1000.0].any() and off[xs > 1000.0].all()
    # Entering the backwards cubic at its start node, the tracking point stays on the node
    # until a sample of the forward branch is nearer (x = 3.8 m here); then it is abeam.
    np.testing.assert_allclose(px[xs > 4.0], xs[xs > 4.0], atol=1e-9)
    early = xs <= 4.0
    assert np.all((px[early] == 0.0) | (np.abs(px[early] - xs[early]) < 0.01))
    assert np.all(np.diff(seg) >= 0)


# ----------------------------------------------------------------------------- JAX


def test_jit_vmap_over_vehicles_and_roads():
    road = road_of(CURVED)
    rng = np.random.default_rng(2)
    rs = jnp.asarray(np.stack([rng.uniform(1, 260, 64), rng.uniform(-2, 4, 64), rng.uniform(0.3, 2.0, 64)], axis=1))
    seg0, s0 = init_v(road, rs)
    out = frame_v(road, rs, seg0, s0)
    for i in (0, 17, 63):
        ref = frame1(road, rs[i], seg0[i], s0[i])
        np.testing.assert_allclose(out[0].point[i], ref[0].point, atol=1e-12)
        np.testing.assert_allclose(out[0].e3[i], ref[0].e3, atol=1e-12)
        assert int(out[1][i]) == int(ref[1])
    # a batch of roads with the same number of points stacks along a leading axis
    roads = [road, road_of(tuple((x, y, z, b + 3.0) for x, y, z, b in CURVED))]
    stacked = jax.tree.map(lambda *a: jnp.stack(a), *roads)
    r = jnp.array([40.0, 2.0, 1.5])
    seg, s = init1(road, r)
    both = jax.jit(jax.vmap(road_frame, in_axes=(0, None, None, None)))(stacked, r, seg, s)
    for b, rd in enumerate(roads):
        ref = frame1(rd, r, seg, s)
        np.testing.assert_allclose(both[0].e3[b], ref[0].e3, atol=1e-12)


def _outputs(road, r, seg, s):
    f, _, _, _ = road_frame(road, r, seg, s)
    return jnp.concatenate([f.point, f.e3])


jac_fwd = jax.jit(jax.jacfwd(_outputs, argnums=1))
_W = jnp.array([0.3, -1.1, 0.7, 2.0, -0.5, 1.3])  # a fixed weighting of (point, e3)
grad_rev = jax.jit(jax.grad(lambda road, r, seg, s: jnp.dot(_W, _outputs(road, r, seg, s)), argnums=1))


@pytest.mark.parametrize("points, r", [
    (CURVED, [40.0, 2.5, 1.4]),
    (CURVED, [90.0, 4.0, 2.5]),  # abeam a node
    (PRINTED_FLAT, [0.0, 0.0, 0.5]),  # exactly on the first node of the backwards cubic
    (PRINTED_FLAT, [50.0, 1.0, 0.5]),
])
def test_gradients_finite(points, r):
    """d(point, e3)/dr: finite in forward mode everywhere; reverse mode and central
    differences agree on the curved road."""
    road = road_of(points)
    r = jnp.asarray(r)
    seg, s = init1(road, r)
    jac = jac_fwd(road, r, seg, s)
    assert np.all(np.isfinite(np.asarray(jac)))
    if points is CURVED:
        np.testing.assert_allclose(grad_rev(road, r, seg, s), _W @ jac, atol=1e-12)  # reverse mode
        h = 1e-5
        rs = jnp.concatenate([r + h * jnp.eye(3), r - h * jnp.eye(3)])
        f, _, _, _ = frame_v(road, rs, jnp.full(6, seg), jnp.full(6, s))
        out = np.concatenate([f.point, f.e3], axis=1)
        fd = ((out[:3] - out[3:]) / (2 * h)).T
        np.testing.assert_allclose(jac, fd, atol=1e-6)
