"""The one batch builder (build.py), leaf for leaf against a plain reference builder.

The reference below is the straightforward per-scenario construction the project used
before the fast builder (init.c read_vehicles() per vehicle, road tracking per vehicle,
jnp stacking); the fast builder caches parameters per model and road and vmaps the road
tracking, and must give the same arrays bit for bit.
"""
from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch, initial_state, table_arrays, table_length
from jaxmedusa.core.params import Batch, DriverParams, contact_params
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.core.state import CONTACT_WARM_SIZE, CRUSH_MEMORY, PairState, VehicleState, pair_indices
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.physics import road as road_mod
from jaxmedusa.physics.vehicle import vehicle_params


def _stack(trees):
    return jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *trees)


def reference_build(scenarios, dt, contact=None, n_vehicles=None, tire=None):
    n_v = n_vehicles or max(len(s.vehicles) for s in scenarios)
    k = table_length(scenarios)
    flat = scenarios[0].road.points is None
    params, drivers, valid, states, roads, pairs = [], [], [], [], [], []
    n_pairs = len(pair_indices(n_v)[0])
    for sc in scenarios:
        vp, dp, st = [], [], []
        road = None if flat else road_mod.build_road(sc.road)
        for i in range(n_v):
            veh = sc.vehicles[min(i, len(sc.vehicles) - 1)]
            model = sc.models[veh.model]
            vp.append(vehicle_params(model, tire))
            s_t, s_v, s_l = table_arrays(veh.steering, k, math.pi / 180.0)
            v_t, v_v, v_l = table_arrays(veh.tire_speed, k, 1.0)
            dp.append(DriverParams(s_t, s_v, np.asarray(s_l), v_t, v_v, np.asarray(v_l)))
            th = veh.orientation * math.pi / 180.0  # init.c: ORIENTATION in degrees
            Q = np.array([[math.cos(th), -math.sin(th), 0.0], [math.sin(th), math.cos(th), 0.0], [0.0, 0.0, 1.0]])
            s0 = VehicleState(r=np.array([veh.x, veh.y, model.eq_r3]), F=Q @ np.asarray(model.eq_F, float),
                              v=np.array([veh.speed * math.cos(th), veh.speed * math.sin(th), 0.0]),
                              W=np.zeros((3, 3)), alpha_lag=np.zeros(4), alpha_rate=np.zeros(4),
                              road_seg=np.asarray(0, np.int32), road_s=np.asarray(0.0))
            if road is not None:
                seg, s = road_mod.initial_tracking(road, s0.r)
                s0 = dataclasses.replace(s0, road_seg=np.asarray(seg, np.int32), road_s=np.asarray(s, np.float64))
            st.append(s0)
        params.append(_stack(vp))
        drivers.append(_stack(dp))
        valid.append(np.arange(n_v) < len(sc.vehicles))
        states.append(_stack(st))
        roads.append(road)
        pairs.append(PairState(gamma=np.zeros((n_pairs, 2)), warm=np.zeros((n_pairs, CONTACT_WARM_SIZE)),
                               in_contact=np.zeros((n_pairs,), bool), crush=np.zeros((n_pairs, CRUSH_MEMORY))))
    cp = contact or contact_params()
    batch = Batch(vehicle=_stack(params), driver=_stack(drivers), valid=np.stack(valid),
                  contact=_stack([cp] * len(scenarios)), road=None if flat else _stack(roads))
    dev = lambda tree: jax.tree.map(jnp.asarray, tree)  # noqa: E731
    return dev(batch), initial_state(dev(_stack(states)), dev(_stack(pairs)), dt)


def assert_same(a, b):
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)


@pytest.mark.parametrize("folder", ["offset", "evade", "banked", "merge"])
def test_builder_equals_the_reference(examples, folder):
    """Flat and spline roads, 1-4 vehicles, driver tables of different lengths."""
    sc, _ = load_scenario(examples / folder)
    other = dataclasses.replace(sc, vehicles=[dataclasses.replace(v, y=v.y + 0.5, orientation=3.0)
                                              for v in sc.vehicles])
    # the reference stacks every field as an array: the exponents too (not compiled in)
    assert_same(build_batch([sc, other], dt=5e-5, static_exponents=False), reference_build([sc, other], 5e-5))


def test_padding_tables_tires_and_contact(examples):
    """A one-vehicle scenario padded to two vehicles (repeats its last vehicle, valid False),
    a one-knot table padded to three knots, and tire and contact overrides."""
    sc, _ = load_scenario(examples / "offset")
    one = dataclasses.replace(sc, vehicles=[dataclasses.replace(
        sc.vehicles[0], steering=DriverTable(times=(0.0, 0.1, 0.2), values=(0.0, 1.0, 0.0), kind="linear"))])
    two = dataclasses.replace(sc, vehicles=sc.vehicles[:1])
    cp = contact_params(p1=1e4, stiffness=2e6)
    got = build_batch([one, two], dt=1e-4, contact=cp, n_vehicles=2, tire={"k_mu": 0.3}, static_exponents=False)
    assert_same(got, reference_build([one, two], 1e-4, contact=cp, n_vehicles=2, tire={"k_mu": 0.3}))
    batch, state = got
    assert batch.valid.tolist() == [[True, False], [True, False]]
    assert batch.driver.steer_times.shape == (2, 2, 3) and batch.driver.steer_times[1, 0].tolist() == [0.0] * 3
    assert float(batch.vehicle.tire.params[0].k_mu[0, 0]) == 0.3 and float(batch.contact.p1[1]) == 1e4
    # per-scenario contact: a list with one dict per scenario
    b2, _ = build_batch([one, two], dt=1e-4, contact=[{"p1": 1.0}, {"p1": 2.0}], n_vehicles=2)
    assert b2.contact.p1.tolist() == [1.0, 2.0] and b2.contact.p2.tolist() == [100.0, 100.0]


def test_builder_rejects_bad_batches(examples):
    flat, _ = load_scenario(examples / "offset")
    spline, _ = load_scenario(examples / "banked")
    with pytest.raises(ValueError, match="cannot mix"):
        build_batch([flat, spline])
    with pytest.raises(ValueError, match="more than n_vehicles=1"):
        build_batch([flat], n_vehicles=1)
    with pytest.raises(ValueError, match="unknown contact parameter"):
        build_batch([flat], contact={"p3": 1.0})
