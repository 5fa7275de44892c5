"""The contact stage's skip of pairs its last search proved apart (apart_certificate.apart_gap,
stage.still_apart): the proved gap is a lower bound of the bodies' distance (against scipy's
SLSQP on the two shapes' inequality constraints), and a pair moved by less than that gap is
still apart (against the search run to convergence)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.contact.shapes import cold_warm, pair_geometry
from jaxmedusa.contact.shapes.narrow_phase import CERT
from jaxmedusa.contact.shapes.superellipsoid import ellipsoid_gauge, superellipsoid_gauge
from jaxmedusa.contact.stage import SKIP_MARGIN, still_apart

CAR = np.array([2.4, 0.9, 0.7])  # contact semi-axes [m]
GAUGES = {"superellipsoid": lambda y: superellipsoid_gauge(y, 0.4, 0.4), "ellipsoid": ellipsoid_gauge}


def rot(yaw, pitch=0.0):
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    return np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]]) @ np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0],
                                                                                     [-sp, 0.0, cp]])


@functools.partial(jax.jit, static_argnums=(0, 6))
def _geometry(shape, r1, F1, r2, F2, warm, apart_exit):
    return pair_geometry(shape, r1, F1, jnp.asarray(CAR), r2, F2, jnp.asarray(CAR), warm, 0.4, 0.4,
                         broad_phase="enclosing", apart_exit=apart_exit)


def _distance(shape, r1, F1, r2, F2):
    """The distance [m] between the two bodies {x: G((F diag(a))^-1 (x - r)) <= 1}: min |x1 - x2|
    by SLSQP over the unit coordinates of both, from the centres' midpoints (an independent
    solver; converged to ~1e-10 m on these smooth convex problems)."""
    g = jax.jit(GAUGES[shape])
    dg = jax.jit(jax.grad(GAUGES[shape]))
    B1, B2 = F1 * CAR[None, :], F2 * CAR[None, :]

    def gap(z):
        d = (r1 + B1 @ z[:3]) - (r2 + B2 @ z[3:])
        return float(d @ d)

    def gap_grad(z):
        d = (r1 + B1 @ z[:3]) - (r2 + B2 @ z[3:])
        return np.concatenate([2.0 * B1.T @ d, -2.0 * B2.T @ d])

    cons = [{"type": "ineq", "fun": lambda z: 1.0 - float(g(z[:3])),
             "jac": lambda z: np.concatenate([-np.asarray(dg(z[:3])), np.zeros(3)])},
            {"type": "ineq", "fun": lambda z: 1.0 - float(g(z[3:])),
             "jac": lambda z: np.concatenate([np.zeros(3), -np.asarray(dg(z[3:]))])}]
    z0 = np.concatenate([np.linalg.solve(B1, 0.5 * (r2 - r1)), np.linalg.solve(B2, 0.5 * (r1 - r2))])
    res = minimize(gap, 0.5 * z0, jac=gap_grad, constraints=cons, method="SLSQP",
                   options={"ftol": 1e-16, "maxiter": 500})
    return float(np.sqrt(res.fun))


def _cases(n, seed):
    """n pairs apart by 1 mm to 40 cm: body 2 behind, beside or at a corner of body 1, yawed and
    pitched a little (rear-end, side-swipe and corner approaches of the offset study)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        kind = rng.integers(3)
        gap = 10.0 ** rng.uniform(-3.0, np.log10(0.4))
        if kind == 0:  # nose to tail, offset sideways
            r2 = np.array([2 * CAR[0] + gap, rng.uniform(-1.5, 1.5), rng.uniform(-0.05, 0.05)])
        elif kind == 1:  # side by side
            r2 = np.array([rng.uniform(-2.0, 2.0), 2 * CAR[1] + gap, rng.uniform(-0.05, 0.05)])
        else:  # corner to corner
            r2 = np.array([2 * CAR[0] + gap, 2 * CAR[1] + gap, 0.0]) * rng.uniform(0.95, 1.05)
        out.append((r2, rot(rng.uniform(-0.3, 0.3), rng.uniform(-0.02, 0.02)), rot(rng.uniform(-0.05, 0.05))))
    return out


@pytest.mark.parametrize("shape", ["superellipsoid", "ellipsoid"])
def test_the_proved_gap_is_a_lower_bound_of_the_distance(shape):
    """40 pairs (those at least 1 mm apart), cold and then warm-started searches with the stage's early exit: wherever
    a search proves a gap, the bodies' distance (SLSQP) is at least that gap (to SLSQP's 1e-8 m);
    and the proof is not empty: at 2 cm and more apart, every pair gets a gap of at least a
    tenth of its distance (the gauge's ratio h - 1 times the smallest semi-axis, 0.7 m, against
    the distance along a semi-axis of up to 2.4 m: a third of it at best)."""
    proved = 0
    for r2, F2, F1 in _cases(40, seed=7 if shape == "superellipsoid" else 8):
        r1 = np.zeros(3)
        dist = _distance(shape, r1, F1, r2, F2)
        if dist < 1e-3:  # the yaw of body 1 swung a corner into body 2
            continue
        geo = _geometry(shape, jnp.asarray(r1), jnp.asarray(F1), jnp.asarray(r2), jnp.asarray(F2), cold_warm(), True)
        geo = _geometry(shape, jnp.asarray(r1), jnp.asarray(F1), jnp.asarray(r2), jnp.asarray(F2), geo.warm, True)
        assert not bool(geo.touching)
        gap = float(geo.warm[CERT])
        assert gap <= dist + 1e-8, (r2, gap, dist)
        if dist >= 0.02:
            assert gap >= 0.1 * dist, (r2, gap, dist)
        proved += gap > 0.0
    assert proved >= 30


def test_a_pair_moved_by_less_than_its_gap_is_still_apart():
    """Pairs proved apart, then both bodies moved by random rigid motions (translations of ~5 cm
    and yaws up to 0.05 rad, or body 1 turned on the spot by up to 0.2 rad), each motion scaled
    down until `still_apart` holds: the search
    run to convergence from a cold start then finds them apart (both h > 1), every time; and the
    motions that break the proof include ones that make the pair touch (the test is not empty)."""
    rng = np.random.default_rng(11)
    held = touched = 0
    for r2, F2, F1 in _cases(30, seed=12):
        r1 = np.zeros(3)
        geo = _geometry("superellipsoid", jnp.asarray(r1), jnp.asarray(F1), jnp.asarray(r2), jnp.asarray(F2),
                        cold_warm(), True)
        if bool(geo.touching):  # the yaw of body 1 swung a corner into body 2
            continue
        for k in range(4):
            t1, t2 = rng.normal(size=3) * 0.05, rng.normal(size=3) * 0.05
            t1[2], t2[2] = 0.0, 0.0
            y1, y2 = rng.uniform(-0.05, 0.05, 2)
            if k % 2:  # a turn on the spot, which swings the corners
                t1, t2, y1, y2 = 0.0 * t1, 0.0 * t2, rng.uniform(-0.2, 0.2), 0.0
            for scale in (1.0, 0.3, 0.1, 0.03):
                q1, G1 = r1 + scale * t1, rot(scale * y1) @ F1
                q2, G2 = r2 + scale * t2, rot(scale * y2) @ F2
                ok = bool(still_apart(geo.warm, jnp.asarray(q1), jnp.asarray(G1), jnp.asarray(CAR), jnp.asarray(q2),
                                      jnp.asarray(G2), jnp.asarray(CAR)))
                full = _geometry("superellipsoid", jnp.asarray(q1), jnp.asarray(G1), jnp.asarray(q2),
                                 jnp.asarray(G2), cold_warm(), False)
                if ok:
                    held += 1
                    assert not bool(full.touching) and float(full.phi1) > 0.0, (r2, scale)
                else:
                    touched += bool(full.touching)
    assert held >= 30 and touched >= 1
    assert SKIP_MARGIN > 0.0

