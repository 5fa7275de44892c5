"""The hitch's pitch and roll stops (contact/joint_limits.py, docs/trailers.md "Articulation
limits"): the decomposition against scipy's Euler angles, zero couple inside the limits, the
couple past a limit by the ramp's closed form, equal and opposite couples (momentum and
angular momentum of a step's joint terms), and in a simulation a trailer flung past its roll
limit held within the limit plus the stop's deflection from energy, with the combination's
horizontal momentum and vertical angular momentum conserved through the stop contact."""
from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from jaxmedusa.build import build_batch
from jaxmedusa.contact.joint_limits import ONSET, relative_angles, stop_couple, stop_gains
from jaxmedusa.contact.joints import JointParams, joint_terms
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.io.scenario_toml import scenario_from_dict
from jaxmedusa.io.validation import MedusaInputError
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.study import scenario_for, study_from_dict

from combination import KINGPIN_X, HITCH_Z, car_model, combination, trailer_model

RNG = np.random.default_rng(28)
# compiled once each: eager jvp/jacfwd dispatch would cost seconds per call
_angles = jax.jit(relative_angles)
_stop_couple = jax.jit(stop_couple)


def _rel(kind: str, psi, theta, phi) -> np.ndarray:
    """The trailer's directors in the tow vehicle's frame by the coupling's chain, built by scipy
    (intrinsic "ZYX": Rz(psi) Ry(theta) Rx(phi) for a ball, "XYZ": Rx(phi) Ry(theta) Rz(psi)
    for a fifth wheel)."""
    if kind == "ball":
        return Rotation.from_euler("ZYX", [psi, theta, phi]).as_matrix()
    return Rotation.from_euler("XYZ", [phi, theta, psi]).as_matrix()


def _random_Fa():
    return Rotation.random(random_state=RNG).as_matrix()


def test_decomposition_matches_scipy_euler_angles_at_any_articulation():
    # (pitch, roll) of R_rel = Rz Ry Rx (ball) / Rx Ry Rz (fifth wheel) recovered whatever the
    # articulation psi and the tow vehicle's own attitude; 1e-12 rad is round-off of unit vectors
    for kind, fifth in (("ball", False), ("fifth_wheel", True)):
        for _ in range(20):
            psi, theta, phi = RNG.uniform(-3.1, 3.1), RNG.uniform(-1.2, 1.2), RNG.uniform(-1.5, 1.5)
            Fa = _random_Fa()
            Fb = Fa @ _rel(kind, psi, theta, phi)
            got = np.asarray(_angles(jnp.asarray(Fa), jnp.asarray(1.01 * Fb), fifth))  # a stretched director too
            assert np.allclose(got, [theta, phi], atol=1e-12), (kind, got, theta, phi)


def _couple(Fa, Fb, Wa, Wb, fifth, limits, k=1e6, c=1e3):
    M, _ = _stop_couple(jnp.asarray(Fa), jnp.asarray(Fb), jnp.asarray(Wa), jnp.asarray(Wb), fifth,
                       jnp.asarray(limits), jnp.full(2, k), jnp.full(2, c))
    return np.asarray(M)


def test_couple_is_exactly_zero_inside_the_limits_and_the_ramp_beyond():
    limits = np.radians([15.0, 5.0])
    for kind, fifth in (("ball", False), ("fifth_wheel", True)):
        for _ in range(10):  # any articulation, any rates: exactly 0 (not merely small)
            Fa = _random_Fa()
            Fb = Fa @ _rel(kind, RNG.uniform(-3.1, 3.1), RNG.uniform(-0.25, 0.25), RNG.uniform(-0.08, 0.08))
            M = _couple(Fa, Fb, RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3)), fifth, limits)
            assert np.all(M == 0.0), M
    # pure roll 2 deg past a 5 deg limit, at rest, no articulation: the couple on the trailer
    # is -k (e - ONSET/2) about its longitudinal axis (the ramp's linear part; 1e-9 relative)
    k, e = 1e6, math.radians(2.0)
    for kind, fifth in (("ball", False), ("fifth_wheel", True)):
        Fa = _random_Fa()
        Fb = Fa @ _rel(kind, 0.0, 0.0, limits[1] + e)
        M = _couple(Fa, Fb, np.zeros((3, 3)), np.zeros((3, 3)), fifth, limits, k=k)
        assert np.allclose(M, -k * (e - ONSET / 2) * Fa[:, 0], rtol=1e-9, atol=1e-9 * k * e), (kind, M)
        # halfway up the onset ramp: k e^2 / (2 ONSET)
        Fb = Fa @ _rel(kind, 0.0, 0.0, -(limits[1] + ONSET / 2))
        M = _couple(Fa, Fb, np.zeros((3, 3)), np.zeros((3, 3)), fifth, limits, k=k)
        assert np.allclose(M, k * (ONSET / 2) ** 2 / (2 * ONSET) * Fa[:, 0], rtol=1e-9), (kind, M)
        # roll locked (limit 0): a linear spring, -k phi for any small phi (no lash)
        Fb = Fa @ _rel(kind, 0.0, 0.0, 1e-4)
        M = _couple(Fa, Fb, np.zeros((3, 3)), np.zeros((3, 3)), fifth, np.array([limits[0], 0.0]), k=k)
        assert np.allclose(M, -k * 1e-4 * Fa[:, 0], rtol=1e-9), (kind, M)


def test_gradients_are_finite_at_zero_at_the_limit_and_locked_roll():
    # d|M|^2/d(roll) at roll 0 with a locked roll (limit 0), exactly at a limit, and beyond
    def energy(roll, limit, fifth):
        Fb = jnp.asarray(_rel("ball", 0.3, 0.0, 0.0)) @ jnp.array([[1.0, 0.0, 0.0],
                                                                  [0.0, jnp.cos(roll), -jnp.sin(roll)],
                                                                  [0.0, jnp.sin(roll), jnp.cos(roll)]])
        M, _ = stop_couple(jnp.eye(3), Fb, jnp.zeros((3, 3)), jnp.zeros((3, 3)), fifth, jnp.array([0.3, limit]),
                           jnp.full(2, 1e6), jnp.full(2, 1e3))
        return jnp.sum(M * M)
    grad = jax.jit(jax.grad(energy))
    for roll, limit in ((0.0, 0.0), (0.1, 0.1), (0.2, 0.1), (0.0, 0.1)):
        for fifth in (False, True):
            g = grad(roll, limit, fifth)
            assert np.isfinite(float(g)), (roll, limit, fifth)


@pytree_dataclass
class _Vehicles:
    mass: jnp.ndarray
    my: jnp.ndarray


def test_joint_terms_conserve_momentum_and_angular_momentum_past_both_stops():
    # two bodies joined at coincident anchors (no separation: the linear spring carries no
    # moment s x f), the trailer 10 deg past its pitch limit and 4 deg past its roll limit at
    # 100 deg articulation, with random rates: the step's terms change total momentum
    # (m dv) and angular momentum (m r x dv + sum_i my^i d_i x dW_i, eq. 1.9) by round-off only
    # (1e-12 of the largest term), while the stop's couple is large
    mass = np.array([1573.0, 1200.0])
    my = np.array([[1500.0, 200.0, 100.0], [1800.0, 700.0, 400.0]])
    Fa = _random_Fa()
    Fb = Fa @ _rel("ball", math.radians(100.0), math.radians(30.0), math.radians(29.0))
    Xa, Xb = np.array([-2.5, 0.1, -0.2]), np.array([3.7, 0.0, -0.1])
    ra = np.array([1.0, 2.0, 0.5])
    rb = ra + Fa @ Xa - Fb @ Xb
    r, F = np.stack([ra, rb]), np.stack([Fa, Fb])
    v, W = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3, 3))
    k_stop, c_stop = stop_gains(my[0], my[1], 4e-4)
    joints = JointParams(body_a=jnp.array([0]), body_b=jnp.array([1]), Xa=jnp.asarray(Xa[None]),
                         Xb=jnp.asarray(Xb[None]), stiffness=jnp.array([1e8]), damping=jnp.array([1e5]),
                         valid=jnp.array([True]), excluded=jnp.array([True]), fifth_wheel=jnp.array([False]),
                         limit=jnp.radians(jnp.array([[20.0, 25.0]])), stop_stiffness=jnp.array([k_stop]),
                         stop_damping=jnp.array([c_stop]))
    vehicles = _Vehicles(jnp.asarray(mass), jnp.asarray(my))
    terms, _ = jax.jit(joint_terms)(joints, vehicles, *map(jnp.asarray, (r, F, v, W)))
    dv, dW = np.asarray(terms.dv), np.asarray(terms.dW)
    P = mass @ dv
    L_parts = np.stack([mass[j] * np.cross(r[j], dv[j]) + np.einsum("i,ki->k", my[j], np.cross(F[j].T, dW[j].T).T)
                        for j in range(2)])
    assert np.max(np.abs(L_parts)) > 0.1 * k_stop * math.radians(4.0)  # a couple of ~kNm acts
    assert np.max(np.abs(P)) < 1e-12 * np.max(np.abs(mass[:, None] * dv))
    assert np.max(np.abs(L_parts.sum(axis=0))) < 1e-12 * np.max(np.abs(L_parts)), L_parts


def _roll_deg(F):
    """Relative roll [deg] of the trailer about its drawbar (the ball's "ZYX" chain) by scipy, F (S, 2, 3, 3)."""
    unit = F / np.linalg.norm(F, axis=-2, keepdims=True)
    rel = np.einsum("sji,sjk->sik", unit[:, 0], unit[:, 1])  # A^T B
    return np.degrees(Rotation.from_matrix(rel).as_euler("ZYX")[:, 2])


def test_trailer_flung_past_its_roll_limit_is_held_and_momentum_is_conserved():
    # The car at rest, tires off, suspension undamped; the trailer starts rolling at 1 rad/s
    # about its longitudinal axis through the kingpin. With the ball's 25 deg roll limit its
    # springs alone stop it (spring-only amplitude ~ omega0 sqrt(I_x / K_roll) ~ 8 deg); with a
    # 3 deg limit the stop takes it. One batch of both.
    car = dataclasses.replace(car_model(), d1=0.0, d2=0.0)
    trailer = trailer_model(car, d2=0.0)
    limit = 3.0
    free = combination(0.0, car=car, trailer=trailer, name="free")
    held = combination(0.0, car=car, trailer=trailer, name="held")
    held.vehicles[1] = dataclasses.replace(held.vehicles[1], roll_limit_deg=limit)
    settings = Settings(end_time=0.4, dt=4e-4, save_every=0.004, step_control="constant", contact=False, tires=False)
    batch, state = build_batch([free, held], dt=settings.dt)
    vs = state.vehicles
    F_t = np.asarray(vs.F)[:, 1]  # (B, 3, 3)
    omega = F_t[:, :, 0] * 1.0  # 1 rad/s about the trailer's d1
    kingpin = np.einsum("bij,j->bi", F_t, np.array([KINGPIN_X, 0.0, HITCH_Z]))
    v_t = -np.cross(omega, kingpin)  # the kingpin at rest: no impact on the linear joint
    W_t = np.cross(omega[:, None, :], np.swapaxes(F_t, 1, 2)).swapaxes(1, 2)  # columns omega x d_i
    state = dataclasses.replace(state, vehicles=dataclasses.replace(vs, v=vs.v.at[:, 1].set(v_t),
                                                                    W=vs.W.at[:, 1].set(W_t)))
    res = simulate(batch, state, settings)
    assert np.all(np.asarray(res.final.clock.status) == 0)
    F = np.asarray(res.samples.F)
    roll_free, roll_held = np.max(np.abs(_roll_deg(F[0]))), np.max(np.abs(_roll_deg(F[1])))
    assert roll_free > 2.0 * limit, roll_free  # the forcing goes well past the limit without the stop
    # Held: the stop's potential k (e^2/2 - ONSET e/2 + ONSET^2/6) at the largest excess e is at
    # most the trailer's initial kinetic energy E0 (springs only take energy; gravity releases
    # m g h phi^2/2 < 1 % of E0 at these angles: 10 % margin)
    m_t = float(np.asarray(batch.vehicle.mass)[1, 1])
    my_t = np.asarray(batch.vehicle.my)[1, 1]
    I_x = my_t[1] + my_t[2]
    E0 = 0.5 * I_x + 0.5 * m_t * float(np.sum(v_t[1] ** 2))
    k_stop = float(np.asarray(batch.joints.stop_stiffness)[1, 0])
    # e^2/2 - ONSET e/2 + ONSET^2/6 = 1.1 E0 / k
    e_max = 0.5 * ONSET + math.sqrt(0.25 * ONSET ** 2 - 4 * 0.5 * (ONSET ** 2 / 6 - 1.1 * E0 / k_stop))
    assert limit < roll_held <= limit + math.degrees(e_max), (roll_held, limit + math.degrees(e_max))
    # conservation through the stop contact (as test_hitch_conservation.py): horizontal momentum
    # to round-off (1e-9 of what the hitch moves between the bodies), angular momentum about E3
    # to 1e-5 of what it moves (the linear spring's own s x f moment)
    m = np.asarray(batch.vehicle.mass)[1]
    my = np.asarray(batch.vehicle.my)[1]
    r, v = np.asarray(res.samples.r)[1], np.asarray(res.samples.v)[1]
    W = np.asarray(res.samples.W)[1]
    P_body = np.einsum("v,svk->svk", m, v)[..., :2]
    L = (np.einsum("v,svk->svk", m, np.cross(r, v))
         + np.einsum("vi,svki->svk", my, np.cross(F[1], W, axisa=2, axisb=2, axisc=2)))[..., 2]
    P, Lz = P_body.sum(axis=1), L.sum(axis=1)
    moved_P = np.max(np.abs(P_body[:, 1] - P_body[0, 1]))
    moved_L = np.max(np.abs(L[:, 1] - L[0, 1]))
    assert moved_P > 1.0 and moved_L > 1.0, (moved_P, moved_L)
    assert np.max(np.abs(P - P[0])) < 1e-9 * moved_P, (np.max(np.abs(P - P[0])), moved_P)
    assert np.max(np.abs(Lz - Lz[0])) < 1e-5 * moved_L, (np.max(np.abs(Lz - Lz[0])), moved_L)


STUDIES = Path(__file__).resolve().parents[2] / "studies"


def _toml(name):
    with open(STUDIES / name, "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("change, key", [
    (lambda d: d["vehicles"][1].update(hitch_type="hook"), "vehicles[2].hitch_type"),
    (lambda d: d["vehicles"][1].update(pitch_limit_deg=90.0), "vehicles[2].pitch_limit_deg"),  # +-90 deg: singular
    (lambda d: d["vehicles"][1].update(pitch_limit_deg=0.0), "vehicles[2].pitch_limit_deg"),
    (lambda d: d["vehicles"][1].update(roll_limit_deg=-1.0), "vehicles[2].roll_limit_deg"),
    (lambda d: d["vehicles"][1].update(roll_limit_deg="stiff"), "vehicles[2].roll_limit_deg"),
    (lambda d: d["vehicles"][0].update(roll_limit_deg=5.0), "vehicles[1].roll_limit_deg"),  # not towed
])
def test_bad_limits_name_the_key(change, key):
    data = _toml("caravan.toml")
    change(data)
    with pytest.raises(MedusaInputError) as e:
        scenario_from_dict(data, source="caravan.toml", default_name="caravan")
    assert key in str(e.value), str(e.value)


def test_defaults_by_hitch_type_and_limit_paths():
    caravan = scenario_from_dict(_toml("caravan.toml"), source="caravan.toml", default_name="c")[0].vehicles[1]
    semi = scenario_from_dict(_toml("semitrailer.toml"), source="semitrailer.toml", default_name="s")[0].vehicles[1]
    assert (caravan.hitch_type, caravan.pitch_limit_deg, caravan.roll_limit_deg) == ("ball", 20.0, 25.0)
    assert (semi.hitch_type, semi.pitch_limit_deg, semi.roll_limit_deg) == ("fifth_wheel", 15.0, 0.0)

    def study(values, path="vehicles.2.roll_limit_deg"):
        return study_from_dict({"name": "limits", "scenario": {"path": "caravan.toml"}, "sampler": {"kind": "grid"},
                                "parameters": {path: {"values": values}}}, base_dir=STUDIES, source="<limits>")
    sc, _, _ = scenario_for(study([5.0]), {"vehicles.2.roll_limit_deg": 5.0})
    assert sc.vehicles[1].roll_limit_deg == 5.0 and sc.vehicles[1].pitch_limit_deg == 20.0
    with pytest.raises(MedusaInputError, match="not towed"):
        study([5.0], "vehicles.1.roll_limit_deg")
    with pytest.raises(MedusaInputError, match="roll_limit_deg"):
        study([-5.0])
