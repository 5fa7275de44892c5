"""Road geometry: MEDUSA's spline road, its banked triad {e1, e2, e3}, and the tracking point.

This is the one interface the vehicle model uses to reach the road:

    frame, seg, s, off_road = road_frame(road, r, seg, s)

`road=None` is MEDUSA's ideal flat plane z = 0 (triad E1, E2, E3, point (x, y, 0)).
Otherwise `road` is a `RoadParams` built by `build_road` exactly as init.c `road_init()`
builds the spline (report section 1.3, eqs (1.35)-(1.36)), and `road_frame` follows road.c
`road()`: the tracking point is the point of the vehicle's road segment closest (3D) to the
centre of mass (`dist_road()`), the tangent has |dx/ds| (`tangent[1] = fabs(tangent[1])`),
and the normal e3 is tilted by the interpolated banking angle, positive to the right.

Segments use MEDUSA's numbering 1..NS, NS = n_points + 1 (the C arrays are 1-based):
segment k runs from node k to node k+1, where node 1 and node NS+1 are the two virtual end
points. Segments 2, 3, 4 share one cubic (through user points 1-4) and cover its parameter
s in [0, 1/3], [1/3, 2/3], [2/3, 1]; every other segment has s in [0, 1].

Tracking is branchless and fixed-cost (see docs/medusa-notes.md, "Road"): the segment
label moves by at most one per call, by the half-planes through the nodes normal to the
road tangent (MEDUSA's spheres and `projection()` tests); the parameter is the global
minimiser of |C(s) - r| on that segment (a grid of samples plus the warm start, then
Newton steps). A vehicle past the last user point, or before the first virtual point,
gets off_road = True (MEDUSA exits the program there).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.safe_math import TINY
from jaxmedusa.core.vector_math import sincos

N_GRID = 8  # samples of |C(s) - r| per segment in the closest-point search
N_GRID_INITIAL = 32  # samples per segment in initial_tracking (runs once: dense)
N_NEWTON = 4  # Newton steps on (C(s) - r).C'(s) = 0: one before the samples, the rest after


class RoadWarning(UserWarning):
    """A road the original program would mishandle (e.g. a segment that runs backwards in x)."""


class RoadFrame(NamedTuple):
    point: jnp.ndarray  # (3,) tracking point on the road [m] (road.c `tp`)
    e1: jnp.ndarray  # (3,) road tangent
    e2: jnp.ndarray  # (3,) e3 x e1
    e3: jnp.ndarray  # (3,) upward normal of the (banked) road plane


@pytree_dataclass
class RoadParams:
    """A spline road (NS = n_points + 1 segments). A batch stacks leaves on a leading axis.

    coef[k-1, p] is the xyz coefficient of s^p of segment k, i.e. road.c's C[1..3][k][4-p]:
    C_k(s) = coef[k-1, 0] + coef[k-1, 1] s + coef[k-1, 2] s^2 + coef[k-1, 3] s^3, eq (1.35).
    """

    coef: jnp.ndarray  # (NS, 4, 3) [m]
    s_lo: jnp.ndarray  # (NS,) lower end of the segment's parameter range
    s_hi: jnp.ndarray  # (NS,) upper end
    bank: jnp.ndarray  # (NS, 2): banking angle = bank[k-1, 0] * s + bank[k-1, 1] [rad]
    nodes: jnp.ndarray  # (NS + 1, 3) nodal points, virtual ends included (init.c XIN) [m]
    node_tangent: jnp.ndarray  # (NS + 1, 3) unit tangent at each node, |x| as projection() takes it


# ----------------------------------------------------------------------------- building


def validate_points(points) -> np.ndarray:
    """(n, 4) float array of the user points; ValueError naming the (1-based) point."""
    if points is None:
        raise ValueError("road has no points (points=None is the flat plane: use road=None)")
    rows = list(points)
    n = len(rows)
    if n < 4:
        raise ValueError(
            f"a road needs at least 4 points (road_init() fits the first cubic through points 1-4), got {n}"
        )
    out = np.empty((n, 4))
    for i, row in enumerate(rows, start=1):
        try:
            vals = [float(v) for v in row]
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"road point {i} of {n}: 4 numbers (x, y, z [m], bank [deg]) expected, got {row!r}"
            ) from exc
        if len(vals) != 4:
            raise ValueError(f"road point {i} of {n}: 4 numbers (x, y, z [m], bank [deg]) expected, got {len(vals)}")
        if not all(np.isfinite(vals)):
            raise ValueError(f"road point {i} of {n}: finite x, y, z [m] and bank [deg] expected, got {tuple(vals)}")
        if abs(vals[3]) >= 90.0:
            raise ValueError(f"road point {i} of {n}: banking angle in (-90, 90) deg expected, got {vals[3]:g}")
        out[i - 1] = vals
        if i > 1 and np.array_equal(out[i - 1, :3], out[i - 2, :3]):
            raise ValueError(
                f"road point {i} of {n} repeats road point {i - 1} at {tuple(out[i - 1, :3])}: "
                "neighbouring road points must be distinct"
            )
    return out


def spline_coefficients(user, xp=np):
    """init.c `road_init()` for user points (n, 4) [m, m, m, deg]. Returns RoadParams'
    fields as a dict (coef, s_lo, s_hi, bank, nodes, node_tangent), computed with the
    array module `xp`: numpy in build_road, jax.numpy to trace it (derivatives with
    respect to the road points, see `road_params`)."""
    n = user.shape[0]
    ns = n + 1
    pts = user[:, :3]
    bank_user = user[:, 3] * (np.pi / 180.0)  # degrees -> rad (end of road_init())
    # Virtual points ten segment-lengths out, at the height of their neighbour, no bank.
    first = xp.concatenate([pts[0, :2] - 10.0 * (pts[1, :2] - pts[0, :2]), pts[0, 2:]])
    last = xp.concatenate([pts[-1, :2] + 10.0 * (pts[-1, :2] - pts[-2, :2]), pts[-1, 2:]])
    nodes = xp.concatenate([first[None], pts, last[None]])  # nodes[i] is MEDUSA's XIN[i+1]
    b = xp.concatenate([xp.zeros(1), bank_user, xp.zeros(1)])

    zero = xp.zeros(3)
    # Segment 1, "a straight line": road_init() sets y, z constant (C[j][1][1..3] = 0,
    # C[j][1][4] = XIN[1][j]) and x linear from XIN[1] to XIN[2]. The printed x formula
    # (p = (XIN[1][1]+XIN[2][1])/3 ...) is straight only when XIN[1][1] = 0; see the notes.
    seg1 = xp.stack([nodes[0], xp.concatenate([nodes[1, :1] - nodes[0, :1], xp.zeros(2)]), zero, zero])
    # Segments 2-4: the cubic through user points 1-4 at s = 0, 1/3, 2/3, 1.
    p1, p2, p3, p4 = nodes[1], nodes[2], nodes[3], nodes[4]
    cubic = xp.stack([
        p1,
        -11.0 * p1 / 2 + 9.0 * p2 - 9.0 * p3 / 2 + p4,
        9.0 * p1 - 45.0 * p2 / 2 + 18.0 * p3 - 9.0 * p4 / 2,
        (-9.0 * p1 + 27.0 * p2 - 27.0 * p3 + 9.0 * p4) / 2,
    ])
    segs = [seg1, cubic, cubic, cubic]
    # Segments 5..NS: continuity of value, slope and curvature at s = 1 of the previous
    # segment, eq (1.36); the cubic's slope is per 1/3 of its s, hence possible overshoot.
    for k in range(4, ns):  # 0-based segment index (MEDUSA segment k+1)
        prev = segs[-1]
        c1 = prev[1] + 2.0 * prev[2] + 3.0 * prev[3]
        c2 = prev[2] + 3.0 * prev[3]
        segs.append(xp.stack([nodes[k], c1, c2, nodes[k + 1] - nodes[k] - c1 - c2]))
    coef = xp.stack(segs)

    s_lo = np.array([0.0, 0.0, 1.0 / 3.0, 2.0 / 3.0] + [0.0] * (ns - 4))
    s_hi = np.array([1.0, 1.0 / 3.0, 2.0 / 3.0, 1.0] + [1.0] * (ns - 4))

    # Banking angle = a s + b per segment, road.c `road()` (segment 1 is unbanked).
    bank = xp.stack(
        [xp.zeros(2),
         xp.stack([3.0 * (b[2] - b[1]), b[1]]),
         xp.stack([3.0 * (b[3] - b[2]), 2.0 * b[2] - b[3]]),
         xp.stack([3.0 * (b[4] - b[3]), 3.0 * b[3] - 2.0 * b[4]])]
        + [xp.stack([b[k + 1] - b[k], b[k]]) for k in range(4, ns)]
    )

    # Unit tangent at each node, |x| as projection() takes it: node k+1 starts segment
    # k+1; the last node ends segment NS.
    t = xp.stack([coef[k, 1] + 2.0 * coef[k, 2] * s_lo[k] + 3.0 * coef[k, 3] * s_lo[k] ** 2 for k in range(ns)]
                 + [coef[-1, 1] + 2.0 * coef[-1, 2] + 3.0 * coef[-1, 3]])
    t = xp.concatenate([xp.abs(t[:, :1]), t[:, 1:]], axis=1)
    nn = xp.sum(t * t, axis=1, keepdims=True)
    ok = nn > TINY
    node_tangent = xp.where(ok, t / xp.sqrt(xp.where(ok, nn, 1.0)), xp.array([1.0, 0.0, 0.0]))
    return dict(coef=coef, s_lo=s_lo, s_hi=s_hi, bank=bank, nodes=nodes, node_tangent=node_tangent)


def _np_derivative(c, s):
    return c[1] + 2.0 * c[2] * s + 3.0 * c[3] * s * s


def _warn_backwards(coef, s_lo, s_hi, n_points):
    """RoadWarning for each user segment (2..n_points) whose curve runs backwards in x."""
    u = np.linspace(0.0, 1.0, 65)
    for k in range(1, n_points):  # 0-based index of MEDUSA segments 2..NP
        s = s_lo[k] + (s_hi[k] - s_lo[k]) * u
        dx = _np_derivative(coef[k, :, 0], s)
        if np.any(dx < 0.0):
            x = coef[k, 0, 0] + s * (coef[k, 1, 0] + s * (coef[k, 2, 0] + s * coef[k, 3, 0]))
            warnings.warn(
                f"road segment from point {k} to point {k + 1}: the fitted curve runs backwards in x "
                f"(x from {x[0]:g} reaches {x.min():g} .. {x.max():g} m on the way to {x[-1]:g}). "
                "road.c takes |dx/ds| there and the original program loses track of a vehicle; "
                "jaxmedusa tracks the closest point on the segment, but on a sloped or curved road "
                "the triad there is not the road's. Respace the points (see docs/medusa-notes.md, Road).",
                RoadWarning,
                stacklevel=3,
            )


def build_road(spec) -> RoadParams | None:
    """RoadParams from a RoadSpec (points: >= 4 tuples (x, y, z [m], bank [deg])), exactly
    as init.c `road_init()` builds the spline. `spec.points is None` gives None (flat plane).

    Raises ValueError for fewer than 4 points, a point that is not 4 finite numbers, a bank
    outside (-90, 90) deg, or a point equal to its predecessor. Warns (RoadWarning) when a
    user segment runs backwards in x, where the original program loses the vehicle.
    """
    points = spec.points if hasattr(spec, "points") else spec
    if points is None:
        return None
    user = validate_points(points)
    fields = spline_coefficients(user)
    _warn_backwards(fields["coef"], fields["s_lo"], fields["s_hi"], user.shape[0])
    return RoadParams(**{k: jnp.asarray(v, dtype=jnp.float64) for k, v in fields.items()})


def road_params(points) -> RoadParams:
    """RoadParams from an (n, 4) array of points (x, y, z [m], bank [deg]), traceable:
    jax.jvp / jax.grad through it give derivatives with respect to the road points and
    banks. No validation (use build_road for user input)."""
    return RoadParams(**{k: jnp.asarray(v, dtype=jnp.float64)
                         for k, v in spline_coefficients(jnp.asarray(points), xp=jnp).items()})


def n_segments(road: RoadParams) -> int:
    """NS = n_points + 1 (static: from the array shapes)."""
    return road.coef.shape[-3]


# ----------------------------------------------------------------------------- evaluation


# The evaluation is written component by component on scalars ("structure of arrays"):
# under vmap every operation is then elementwise over the vehicles, which XLA fuses and
# vectorises; (N, 3) arrays with dot products over the last axis ran 2-3x slower on CPU.


def _components(c, s):
    """Per component j: (C_j(s), C_j'(s), C_j''(s)) of a segment with coefficients c (4, 3), scalar s."""
    out = []
    for j in range(3):
        a0, a1, a2, a3 = c[0, j], c[1, j], c[2, j], c[3, j]
        out.append((((a3 * s + a2) * s + a1) * s + a0, (3.0 * a3 * s + 2.0 * a2) * s + a1, 6.0 * a3 * s + 2.0 * a2))
    return out


def curve(road: RoadParams, seg, s):
    """Point C(s) (3,) [m] and derivative C'(s) (3,) of segment `seg` (1-based) at scalar s."""
    comp = _components(road.coef[seg - 1], s)
    return jnp.stack([p for p, _, _ in comp]), jnp.stack([d for _, d, _ in comp])


def _dist2(c, s, r):
    """|C(s) - r|^2 [m^2] (dist_road() squared) for scalar s."""
    acc = 0.0
    for j in range(3):
        d = ((c[3, j] * s + c[2, j]) * s + c[1, j]) * s + c[0, j] - r[j]
        acc = acc + d * d
    return acc


def _newton(c, lo, hi, r, s):
    """One safeguarded Newton step on g(s) = (C(s) - r).C'(s) = 0 (d_road()'s gradient
    times the distance), clamped to [lo, hi]."""
    g = h1 = h2 = 0.0
    for j, (p, d1, d2) in enumerate(_components(c, s)):
        diff = p - r[j]
        g = g + diff * d1
        h1 = h1 + d1 * d1
        h2 = h2 + diff * d2
    h = jnp.maximum(h1 + h2, 0.5 * h1)  # g'(s), kept positive: a descent step
    ok = h > TINY
    step = jnp.where(ok, -g / jnp.where(ok, h, 1.0), 0.0)
    step = jnp.clip(step, -(hi - lo), hi - lo)
    return jnp.clip(s + step, lo, hi)


def _closest_on_segment(c, lo, hi, r, s_warm, n_grid=N_GRID):
    """argmin over s in [lo, hi] of |C(s) - r| (dist_road()), at fixed cost: one Newton
    step from the warm start; the closer of that and the best of n_grid samples (which
    catches another branch of a segment that doubles back); N_NEWTON - 1 more steps,
    traced for the derivative in r.

    The sample sweep and the Newton steps run in lax.fori_loop on purpose: as one long
    chain of cheap elementwise operations, XLA duplicated them into every consumer of the
    result (each updated state array), which made a whole vehicle step 3-4x slower. A
    loop's result is computed once."""
    r0 = jax.lax.stop_gradient(r)
    lo0, hi0 = jax.lax.stop_gradient(lo), jax.lax.stop_gradient(hi)
    s = _newton(c, lo0, hi0, r0, jax.lax.stop_gradient(jnp.clip(s_warm, lo0, hi0)))

    def sample(i, carry):  # where-tournament over the sample midpoints
        s, best = carry
        g = lo0 + (hi0 - lo0) * ((i + 0.5) / n_grid)  # midpoints: Newton reaches the ends
        d = _dist2(c, g, r0)
        closer = d < best  # strict: the warm result wins ties
        return jnp.where(closer, g, s), jnp.where(closer, d, best)

    s, _ = jax.lax.fori_loop(0, n_grid, sample, (s, _dist2(c, s, r0)))
    # Differentiable in r: at the converged minimum a Newton step has d(step)/ds = 0, so
    # the derivative of the last step is the implicit-function derivative ds/dr.
    return jax.lax.fori_loop(0, N_NEWTON - 1, lambda i, s: _newton(c, lo0, hi0, r, s), jax.lax.stop_gradient(s))


def _frame(road: RoadParams, k, s):
    """Tracking point and triad at (segment k, parameter s), as road.c `road()` computes them."""
    (p1, d1, _), (p2, t2, _), (p3, t3, _) = _components(road.coef[k - 1], s)
    t1 = jnp.abs(d1)  # tangent[1] = fabs(tangent[1])
    # alpha = atan(t2/t1) (heading) and the grade from tan = t3/hypot(t1, t2). Written so
    # that a level tangent gives h = 1, sb = 0 exactly (e3 = E3 bitwise on a flat road).
    hh = t1 * t1 + t2 * t2
    okh = hh > TINY
    hr = jnp.sqrt(jnp.where(okh, hh, 1.0))
    ca = jnp.where(okh, t1 / hr, 1.0)  # cos(alpha), t1 >= 0
    sa = jnp.where(okh, t2 / hr, 0.0)  # sin(alpha)
    q = jnp.where(okh, t3 / hr, 0.0)  # tan(grade)
    vertical = jnp.logical_not(okh) & (t3 != 0.0)  # guard: C'(s) along E3 (or zero: e1 = E1)
    h = jnp.where(vertical, 0.0, 1.0 / jnp.sqrt(1.0 + q * q))  # cos(grade) = |horizontal part of e1|
    sb = jnp.where(vertical, jnp.sign(t3), q * h)  # sin(grade) = e1 . E3
    e1 = (ca * h, sa * h, sb)
    angle = road.bank[k - 1, 0] * s + road.bank[k - 1, 1]  # banking, positive: cw seen along e1
    st, ct = sincos(angle)
    e3 = (-ct * sb * ca + st * sa, -ct * sb * sa - st * ca, ct * h)  # road.c normal[1..3]
    # e2 = e3 x e1, as vehicle.c: vector_product(e2, e3, e1)
    e2 = (e3[1] * e1[2] - e3[2] * e1[1], e3[2] * e1[0] - e3[0] * e1[2], e3[0] * e1[1] - e3[1] * e1[0])
    return RoadFrame(jnp.stack([p1, p2, p3]), jnp.stack(e1), jnp.stack(e2), jnp.stack(e3))


def _station(road: RoadParams, j, r):
    """(r - node_j).t_j: road.c's projection() at node j (1-based); > 0 means past the node."""
    n, t = road.nodes[j - 1], road.node_tangent[j - 1]
    return (r[0] - n[0]) * t[0] + (r[1] - n[1]) * t[1] + (r[2] - n[2]) * t[2]


def road_frame(road, r, seg, s):
    """Road frame under the point r (3,) [m] given the tracking state (seg int32, s float).

    Returns (frame, seg_new, s_new, off_road) where off_road is a bool scalar: the vehicle
    is past the last user point (segment NS) or before the first virtual point. The frame
    stays finite (and differentiable in r) there too.
    """
    if road is None:
        point = jnp.array([r[0], r[1], 0.0])
        eye = jnp.eye(3, dtype=r.dtype)
        return RoadFrame(point, eye[0], eye[1], eye[2]), seg, s, jnp.asarray(False)
    ns = n_segments(road)
    k = jnp.clip(jnp.asarray(seg, jnp.int32), 1, ns)
    # Segment label: move at most one segment per call (road.c's sphere tests).
    fwd = (k < ns) & (_station(road, jnp.minimum(k + 1, ns + 1), r) > 0.0)
    bwd = (k > 1) & (_station(road, k, r) <= 0.0)
    k_new = k + fwd.astype(jnp.int32) - bwd.astype(jnp.int32)
    lo, hi = road.s_lo[k_new - 1], road.s_hi[k_new - 1]
    s_warm = jnp.where(k_new == k, s, jnp.where(k_new > k, lo, hi))
    s_new = _closest_on_segment(road.coef[k_new - 1], lo, hi, r, s_warm)
    off = (k_new == ns) | ((k_new == 1) & (_station(road, 1, r) < 0.0))
    return _frame(road, k_new, s_new), k_new, s_new, off


def initial_tracking(road: RoadParams | None, r):
    """Initial (seg int32, s) of a vehicle at r (3,) (init.c `seg_init()`), by a global search:
    the segment whose node half-planes contain r (closest such one if several), else the
    closest segment. Runs once per vehicle, so it searches all NS segments.
    (0, 0.0) for the flat plane (road=None), whose tracking state is unused."""
    if road is None:
        return jnp.asarray(0, jnp.int32), jnp.asarray(0.0, jnp.asarray(r).dtype)
    return _initial_tracking(road, r)


@jax.jit
def _initial_tracking(road: RoadParams, r):
    ns = n_segments(road)
    ks = jnp.arange(1, ns + 1)
    s_all = jax.vmap(lambda c, lo, hi: _closest_on_segment(c, lo, hi, r, lo, N_GRID_INITIAL))(
        road.coef, road.s_lo, road.s_hi)
    dist = jax.vmap(_dist2, in_axes=(0, 0, None))(road.coef, s_all, r)
    p = jax.vmap(lambda j: _station(road, j, r))(jnp.arange(1, ns + 2))  # nodes 1..NS+1
    inside = ((ks == 1) | (p[:-1] > 0.0)) & ((ks == ns) | (p[1:] <= 0.0))
    score = jnp.where(jnp.any(inside), jnp.where(inside, dist, jnp.inf), dist)
    i = jnp.argmin(score)
    return ks[i].astype(jnp.int32), s_all[i]
