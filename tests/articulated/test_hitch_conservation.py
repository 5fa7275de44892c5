"""The hitch is an internal force: with the tires off (Settings.tires = False) the only
horizontal forces on a car and its trailer are the hitch's, equal and opposite, so the
combination's horizontal momentum and its angular momentum about the vertical are conserved
through a hitch load cycle, and the hitch does no net work (its spring and damper aside:
with the joint's separation of micrometres their energy is below a millijoule)."""
from __future__ import annotations

import dataclasses

import jax
import numpy as np

from jaxmedusa.build import build_batch
from jaxmedusa.contact.joints import anchor_separation
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.simulate import simulate

from combination import car_model, combination, hitch, KINGPIN_X, HITCH_Z, trailer_model


def momenta(batch, samples):
    """(P (S, 2) horizontal momentum [kg m/s], Lz (S, V) angular momentum of each body about E3
    through the origin [kg m^2/s]) of the combination: m r x v + sum_i my^i d_i x w_i (eq. 1.9's
    inertia)."""
    m = np.asarray(batch.vehicle.mass)[0]  # (V,)
    my = np.asarray(batch.vehicle.my)[0]  # (V, 3)
    r, v = np.asarray(samples.r)[0], np.asarray(samples.v)[0]  # (S, V, 3)
    F, W = np.asarray(samples.F)[0], np.asarray(samples.W)[0]  # (S, V, 3, 3)
    P = np.einsum("v,svk->sk", m, v)[:, :2]
    L = np.einsum("v,svk->svk", m, np.cross(r, v)) + np.einsum("vi,svki->svk", my, np.cross(F, W, axisa=2, axisb=2,
                                                                                              axisc=2))
    return P, L[..., 2]


def test_momentum_and_angular_momentum_conserved_through_a_hitch_load_cycle():
    car = dataclasses.replace(car_model(), d1=0.0, d2=0.0)  # no suspension damping: every force conservative
    trailer = trailer_model(car, d2=0.0)
    # the trailer starts kinked 25 deg to the left, its kingpin on the hitch, the car at
    # 8 m/s and the trailer turning at 1.5 rad/s about the hitch (anchor velocities equal: no
    # impact): it swings through the straight position, pulling the car sideways and back
    th = np.radians(25.0)
    h = np.array(hitch(car)[:2])
    k = np.array([KINGPIN_X, 0.0])
    Rt = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    x, y = h - Rt @ k
    sc = combination(8.0, car=car, trailer=trailer, x=float(x), y=float(y), orientation=25.0)
    sc.vehicles[0].tire_speed.values = (0.0,)
    settings = Settings(end_time=1.5, dt=4e-4, save_every=0.05, step_control="constant", contact=False, tires=False)
    batch, state = build_batch([sc], dt=settings.dt)
    vs = state.vehicles
    omega = np.array([0.0, 0.0, -1.5])
    F_t = np.asarray(vs.F)[0, 1]
    v_t = np.asarray(vs.v)[0, 0] - np.cross(omega, F_t @ np.array([KINGPIN_X, 0.0, HITCH_Z]))
    W_t = np.cross(omega[None, :], F_t.T).T  # columns omega x d_i
    state = dataclasses.replace(state, vehicles=dataclasses.replace(
        vs, v=vs.v.at[0, 1].set(v_t), W=vs.W.at[0, 1].set(W_t)))
    res = simulate(batch, state, settings)
    assert int(res.final.clock.status[0]) == 0
    P, Lv = momenta(batch, res.samples)
    Lz = Lv.sum(axis=1)
    m_total = float(np.sum(np.asarray(batch.vehicle.mass)[0]))
    v = np.asarray(res.samples.v)[0]
    # the hitch loads: the trailer's velocity turns by degrees (a load cycle, not a coast)
    turned = np.degrees(np.arctan2(v[-1, 1, 1], v[-1, 1, 0]) - np.arctan2(v[0, 1, 1], v[0, 1, 0]))
    assert abs(turned) > 5.0, turned
    # momentum: the two hitch forces cancel exactly on every step; 1e-9 of m v is round-off
    assert np.max(np.abs(P - P[0])) < 1e-9 * m_total * 8.0
    # angular momentum: the joint's moment on the pair is s x f = -c s x s' with s ~ 1e-6 m;
    # the step of eq. (1.52) conserves the rest exactly. 1e-3 of what the hitch moves
    # between the bodies (the trailer's own Lz changes by ~5e3 kg m^2/s; measured 6e-7 of it).
    exchanged_L = np.max(np.abs(Lv[:, 1] - Lv[0, 1]))
    assert np.max(np.abs(Lz - Lz[0])) < 1e-5 * exchanged_L, (np.max(np.abs(Lz - Lz[0])), exchanged_L)
    # energy: the hitch does no net work; the total energy of both bodies (eq. 1.33, all
    # other forces conservative here) changes only by the joint's spring and damper and the
    # step's own energy error, while the hitch moves ~2e4 J between them (measured: -6.8 J
    # net after 1.5 s, 3e-4 of it; the step's energy error oscillates within 33 J, 1.7e-3).
    E = np.asarray(res.samples.energy)[0]  # (S, V)
    E_sum = E.sum(axis=1)
    exchanged = np.max(np.abs(E[:, 1] - E[0, 1]))
    jp = jax.tree.map(lambda a: a[0], batch.joints)
    s, _ = anchor_separation(jp, *(np.asarray(getattr(res.samples, n))[0, -1] for n in ("r", "F", "v", "W")))
    spring = 0.5 * float(jp.stiffness[0]) * float(np.sum(np.asarray(s) ** 2))
    assert spring < 1e-3 * exchanged
    assert abs(E_sum[-1] - E_sum[0]) < 1e-3 * exchanged, (E_sum[-1] - E_sum[0], exchanged)
