"""Vehicles with more than two axles (physics/vehicle.py wheel_layout): a three-axle truck's
static axle loads by hand statics, and batches mixing two- and three-axle vehicles."""
import dataclasses

import numpy as np
import pytest

from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import AxleSpec, DriverTable, ModelSpec
from jaxmedusa.solver.simulate import simulate

M, L1, L2, L3, H = 18000.0, 3.8347, 1.0153, 2.3153, 1.0  # [kg], CM to axles 1, 2, 3 [m], CM height over them


def truck(equalised=True, c=(3.0e5, 3.0e5, 3.0e5)):
    """A three-axle truck (tandem rear), Fiala tires with mu_s = 0.6 (steer and drive tires differ)."""
    tires = [{"c_alpha": 2.1e5, "c_s": 3.2e5, "mu_p": 0.8, "mu_s": 0.6, "fz_ref": 26700.0}] + \
        [{"c_alpha": 2.5e5, "c_s": 3.7e5, "mu_p": 0.8, "mu_s": 0.6, "fz_ref": 30800.0}] * 2
    return ModelSpec(mass=M, ix=18750.0, iy=130000.0, iz=125000.0, young=600e6, nu=0.3, volume=20.0, l1=L1, l2=L2,
                     track=2.05, h1=H, h2=H, spring_ref=0.55, c1=c[0], c2=c[1], d1=1.1e4, d2=1.2e4, tire_lag=0.0016,
                     contact_dims=(9.0, 2.5, 3.0), eq_r3=1.45, eq_F=((1, 0, 0), (0, 1, 0), (0, 0, 1)),
                     tire_model="fiala", extra_axles=(AxleSpec(l=L3, track=1.83, h=H, c=c[2], d=1.2e4,
                                                               equalised=equalised),),
                     tires_by_axle=tuple(tires))


def _axle_loads(model):
    fz = solve_equilibrium(model).wheel_loads
    return fz.reshape(3, 2).sum(axis=1)


def test_equalised_tandem_static_loads_by_the_lever_rule():
    # Equalised tandem (EDC: the two rear axles carry equal loads): the tandem acts at its
    # centre l_t = (L2 + L3) / 2 behind the CM, so front = m g l_t / (L1 + l_t), each tandem
    # axle half the rest. 0.5 % (the tolerance) covers the pitch at rest (equal
    # springs: ~0.15 deg, moving the contact points by H sin(pitch) ~ 3 mm).
    lt = 0.5 * (L2 + L3)
    front = M * GRAVITY * lt / (L1 + lt)
    rear = 0.5 * (M * GRAVITY - front)
    np.testing.assert_allclose(_axle_loads(truck()), [front, rear, rear], rtol=0.005)


def test_unequalised_tandem_shares_by_the_springs():
    # Independent springs k at x = L1, -L2, -L3: a rigid beam z = a + b x, k (a + b x_i) summing to m g
    # with no moment about the CM: two linear equations by hand. Springs 3e5 / 4e5 / 2e5 N/m.
    k, x = np.array([3.0e5, 4.0e5, 2.0e5]), np.array([L1, -L2, -L3])
    A = np.array([[k.sum(), (k * x).sum()], [(k * x).sum(), (k * x * x).sum()]])
    a, b = np.linalg.solve(A, [M * GRAVITY, 0.0])
    loads = _axle_loads(truck(equalised=False, c=tuple(k)))
    np.testing.assert_allclose(loads, k * (a + b * x), rtol=0.005)
    assert abs(loads[1] / loads[2] - 1.0) > 0.2  # not the equalised split


def test_mixed_batch_truck_locks_and_car_is_undisturbed(model1_at_equilibrium, single_scenario):
    # A batch of a steering car and a truck locking its wheels from 15 m/s: the truck stops in
    # v^2 / (2 mu_s g) (2 %, as the cars: the pitch transient averages out), and the car, padded
    # to six wheels (two without springs) with a unit load equaliser, runs exactly as in a batch
    # of cars (1e-9 m: only the order of additions of zeros may differ).
    t = with_equilibrium(truck(), solve_equilibrium(truck()))
    car = single_scenario(model1_at_equilibrium, speed=20.0, steering_deg=2.0, name="car")
    lorry = single_scenario(t, speed=15.0, name="truck")
    lorry = dataclasses.replace(lorry, vehicles=[dataclasses.replace(lorry.vehicles[0], lock=DriverTable(values=(1.0,)))])
    settings = Settings(end_time=15.0 / (0.6 * GRAVITY) + 0.2, contact=False, step_control="constant")
    mixed, s0 = build_batch([car, lorry])
    assert mixed.vehicle.X.shape == (2, 1, 6, 3) and s0.vehicles.alpha_lag.shape == (2, 1, 6)
    res = simulate(mixed, s0, settings, record=False).final.vehicles
    assert float(res.r[1, 0, 0]) == pytest.approx(15.0**2 / (2 * 0.6 * GRAVITY), rel=0.02)
    only, s1 = build_batch([car])
    alone = simulate(only, s1, settings, record=False).final.vehicles
    np.testing.assert_allclose(np.asarray(res.r[0]), np.asarray(alone.r[0]), atol=1e-9)
