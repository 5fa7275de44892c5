"""Jackknife on split mu (qualitative): the tractor-semitrailer of studies/semitrailer.toml
brakes hard from 20 m/s on a straight road whose right half is icy (mu_peak 0.2, mu_slide
0.15; the left half has the tires' own 0.8). The tractor asks every wheel for a brake force
of 0.4 Fz (half the dry peak: brake fraction 0.5 on the left; 0.4/0.2 = 2 > 1 on the ice, so
its right wheels lock, as equal brake pressure without ABS does); the semitrailer's brakes
are not applied (an unbraked or disconnected trailer, the textbook cause of a tractor
jackknife, with the trailer's mass pushing on the fifth wheel).

Hand figures: the tractor's axles carry 238.5 kN with the kingpin load
(test_semitrailer_statics.py); their brake force is about (0.4 + 0.15)/2 x 238.5 kN = 66 kN,
decelerating the 42.9 t combination at 1.5 m/s^2, so the unbraked semitrailer pushes on the
fifth wheel with 33.1 t x 1.5 m/s^2 = 51 kN. Once the tractor yaws (the split-mu brake moment turns it to the
high-mu side) that push has a sideways component at the fifth wheel, 2.0 m behind the
tractor's centre of mass, which the drive and tag axles (their right wheels sliding) cannot
hold: the articulation grows. Without the trailer the same tractor with the same brakes only
yaws by the brake moment, which its tires hold.

Thresholds: the combination's articulation passes JACKKNIFE_DEG (60 deg, the jackknife
metric's threshold: contact/articulation.py says why) within 3 s (measured 92.6 deg at 3.0 s
on the fifth wheel with roll locked; 79 deg with the joint free in roll, 28 deg at 2.0 s: it
grows about 1.6x per 0.5 s); the tractor alone turns by less than 15 deg (a quarter of the
jackknife threshold; measured 4.8 deg, the brake moment's own yaw), and in the combination the
tractor turns by more than 60 deg (measured 100.6 deg; 87 deg free in roll).
Both runs are one batch of two scenarios (the solo tractor padded with an invalid vehicle).
dt 2e-4 s gave the same articulation as 5e-5 s within 0.1 deg (79.22 and 79.21 deg at 3 s,
measured with the joint free in roll).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.contact.articulation import JACKKNIFE_DEG
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import DriverTable, ZoneSpec
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate

STUDY = Path(__file__).resolve().parents[2] / "studies" / "semitrailer.toml"
ICE = (0.2, 0.15)  # mu_peak, mu_slide of the right half of the road
DRY = 0.8  # the tires' own mu_p (studies/semitrailer.toml)
DEMAND = 0.4  # brake force asked of every tractor wheel [Fz]
T_BRAKE = 0.2  # [s]


def _brake(n_wheels: int) -> DriverTable:
    """The brake fraction per wheel (FL, FR, RL, RR, further axles left, right) for the force
    DEMAND Fz: DEMAND / mu_peak on each side (> 1 on the ice: locked)."""
    row = tuple(DEMAND / DRY if w % 2 == 0 else DEMAND / ICE[0] for w in range(n_wheels))
    return DriverTable((0.0, T_BRAKE), (tuple(0.0 for _ in range(n_wheels)), row))


def split_mu_runs(end_time: float):
    """(max articulation [deg], jackknife flag, tractor's largest heading change [deg]) of the
    combination (row 0) and the tractor alone (row 1)."""
    sc, sim = load_scenario(STUDY)
    ice = ZoneSpec(polygon=((-50.0, -30.0), (500.0, -30.0), (500.0, 0.0), (-50.0, 0.0)), mu_peak=ICE[0],
                   mu_slide=ICE[1])
    tractor = dataclasses.replace(sc.vehicles[0], steering=DriverTable((0.0,), (0.0,)), lock=None,
                                  tire_speed=DriverTable((0.0, T_BRAKE), (20.0, 0.0)), brake=_brake(6))
    road = dataclasses.replace(sc.road, zones=(ice,))
    combination = dataclasses.replace(sc, name="combination", vehicles=[tractor, sc.vehicles[1]], road=road)
    alone = dataclasses.replace(sc, name="tractor alone", vehicles=[tractor], road=road)
    settings = Settings(**{**sim, "end_time": end_time, "dt": 2e-4, "contact": False, "step_control": "constant",
                           "save_every": end_time})
    batch, state = build_batch([combination, alone], dt=settings.dt, n_vehicles=2)
    tracker = Outcomes(damage=False, rest=False)  # reads the articulation and handling metrics only
    res = simulate(batch, state, settings, tracker=tracker, record=False)
    assert np.all(np.asarray(res.final.clock.status) == 0)
    out = outcome_arrays(batch, res.final, res.metrics, tracker)
    return (np.asarray(out["max_articulation"])[:, 1], np.asarray(out["jackknife"])[:, 1],
            np.asarray(out["max_heading_change"])[:, 0])


def test_split_mu_braking_jackknifes_the_combination_not_the_tractor_alone():
    art, jack, turn = split_mu_runs(3.0)
    assert jack[0] and art[0] > JACKKNIFE_DEG, art  # measured 92.6 deg (79 free in roll)
    assert turn[0] > JACKKNIFE_DEG, turn  # the tractor itself is pushed round: measured 100.6 deg
    assert turn[1] < 15.0 and art[1] == 0.0 and not jack[1], turn  # alone: measured 4.8 deg
