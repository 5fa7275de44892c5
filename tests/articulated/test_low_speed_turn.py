"""A car and trailer in a low-speed steady turn: the trailer axle runs on the kinematic radius
sqrt(R_r^2 + c^2 - l_t^2) of the tow vehicle's rear-axle radius R_r (c: hitch behind the tow
vehicle's rear axle, l_t: hitch to trailer axle), the off-tracking of a towed axle."""
from __future__ import annotations

import numpy as np

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.simulate import simulate

from combination import HITCH_BEHIND_AXLE, KINGPIN_X, TRAILER_L2, car_model, combination, trailer_model


def circle_radius(xy):
    """Least-squares circle through points (N, 2) (Kasa's algebraic fit): its radius [m]."""
    A = np.column_stack([2 * xy[:, 0], 2 * xy[:, 1], np.ones(len(xy))])
    b = np.sum(xy * xy, axis=1)
    (cx, cy, c0), *_ = np.linalg.lstsq(A, b, rcond=None)
    return float(np.sqrt(c0 + cx * cx + cy * cy))


def axle_track(samples, vehicle, x_axle):
    """Plan-view path (S, 2) of the axle centre x_axle [m] (body frame) of a vehicle."""
    r = np.asarray(samples.r)[0, :, vehicle]
    F = np.asarray(samples.F)[0, :, vehicle]
    return (r + F @ np.array([x_axle, 0.0, 0.0]))[:, :2]


def test_trailer_axle_runs_on_the_kinematic_radius():
    car = car_model()
    trailer = trailer_model(car)
    wheelbase = car.l1 + car.l2
    steer = np.degrees(np.arctan(wheelbase / 20.0))  # about a 20 m rear-axle radius
    sc = combination(2.0, steer_deg=steer, car=car, trailer=trailer)
    settings = Settings(end_time=36.0, dt=4e-4, save_every=0.25, step_control="constant", contact=False)
    batch, state = build_batch([sc], dt=settings.dt)
    res = simulate(batch, state, settings)
    assert int(res.final.clock.status[0]) == 0
    t = np.asarray(res.samples.t)[0]
    steady = t >= 18.0  # after 36 m of travel, > 10 trailer lengths: the trailer angle has settled
    R_r = circle_radius(axle_track(res.samples, 0, -car.l2)[steady])
    R_t = circle_radius(axle_track(res.samples, 1, -TRAILER_L2)[steady])
    c, l_t = HITCH_BEHIND_AXLE, KINGPIN_X + TRAILER_L2
    expected = np.sqrt(R_r ** 2 + c ** 2 - l_t ** 2)
    assert 15.0 < R_r < 30.0
    # 1 %: the tolerance; tire side slip at 0.2 m/s^2 lateral acceleration moves
    # each axle's path by millimetres, well inside it (R_t - R_r itself is ~0.2 m = 1 %,
    # so this also fails if the trailer simply followed the car's rear axle)
    assert abs(R_t - expected) < 0.01 * expected, (R_r, R_t, expected)
    assert abs(R_t - expected) < 0.5 * abs(R_r - expected), (R_r, R_t, expected)
