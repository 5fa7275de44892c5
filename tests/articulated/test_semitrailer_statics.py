"""A tractor-semitrailer at rest (studies/semitrailer.toml): its axle loads by hand statics.

The semitrailer rests on the kingpin and its equalised tridem (whose resultant acts at the
tridem's centre): the kingpin load is P = m_t g a_t / (a_t + k_t) (a_t: centre of mass to
tridem centre, k_t: centre of mass to kingpin). The tractor carries m_c g and P at the fifth
wheel on its steer axle and its equalised drive+tag pair: moments about the pair's centre.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.step import predict, rates_of_vehicles

STUDY = Path(__file__).resolve().parents[2] / "studies" / "semitrailer.toml"


def hand_axle_loads(tractor, trailer, hitch_x, kingpin_x):
    """(steer, drive pair, tridem, kingpin) loads [N] by statics of two rigid bodies."""
    g = GRAVITY
    a_t = 0.5 * (trailer.l2 + trailer.extra_axles[-1].l)  # CM to tridem centre
    P = trailer.mass * g * a_t / (a_t + kingpin_x)
    pair = 0.5 * (tractor.l2 + tractor.extra_axles[0].l)  # CM to drive+tag centre
    steer = (tractor.mass * g * pair + P * (pair + hitch_x)) / (tractor.l1 + pair)  # hitch_x < 0: behind the CM
    return steer, tractor.mass * g + P - steer, trailer.mass * g - P, P


def test_semitrailer_static_axle_loads_by_hand_statics():
    sc, sim = load_scenario(STUDY)
    still = DriverTable((0.0,), (0.0,))
    sc.vehicles[0] = dataclasses.replace(sc.vehicles[0], speed=0.0, tire_speed=still, steering=still, lock=None)
    sc.vehicles[1] = dataclasses.replace(sc.vehicles[1], speed=0.0)
    settings = Settings(**{**sim, "end_time": 2.0, "save_every": 1.0, "contact": False, "step_control": "constant"})
    batch, state = build_batch([sc], dt=settings.dt)
    res = simulate(batch, state, settings, record=False)
    assert int(res.final.clock.status[0]) == 0
    item = jax.tree.map(lambda x: x[0], batch)
    final = jax.tree.map(lambda x: x[0], res.final)
    r_pred, F_pred = predict(final)
    _, wheels, _ = rates_of_vehicles(item, final, r_pred, F_pred, settings)
    fz = np.asarray(wheels.fz)  # (V, W)
    tractor, trailer = sc.models
    steer, pair, tridem, P = hand_axle_loads(tractor, trailer, sc.vehicles[1].hitch[0], sc.vehicles[1].kingpin[0])
    got = (fz[0, 0:2].sum(), fz[0, 2:6].sum(), fz[1, 2:8].sum())
    # 0.5 %: the tolerance. What separates the model from the rigid-body statics:
    # pitch of a few mrad moves the assembly points 1 m below the centres of mass by mm
    # against levers of 3.7 and 7.7 m (< 0.1 %), the chassis' own strain and the settling
    # left after 2 s (20 % damped springs of ~1.7 Hz: 1e-4)
    for name, x, want in zip(("steer", "drive+tag", "tridem"), got, (steer, pair, tridem)):
        assert abs(x - want) < 0.005 * want, (name, x, want)
    assert abs(fz[1, 0:2]).sum() == 0.0  # the semitrailer's springless front axle carries nothing
    # and the kingpin carries the rest: P from the tridem's share of the trailer's weight
    assert abs((trailer.mass * GRAVITY - got[2]) - P) < 0.005 * P
