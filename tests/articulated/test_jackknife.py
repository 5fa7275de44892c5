"""Jackknife (qualitative): the tractor-semitrailer of studies/semitrailer.toml at 20 m/s on a
1 deg steer. With its drive and tag axles locked from 1 s the tractor's rear loses its side
force and the semitrailer pushes it round: the articulation passes JACKKNIFE_DEG (60 deg)
within 4 s. The same combination rolling freely holds the curve with a few degrees of
articulation (a 1 deg steer on the tractor's 3.685 m wheelbase: radius ~210 m; the kinematic
articulation is about l_t / R = 7.7 m / 210 m = 2.1 deg)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from jaxmedusa.contact.articulation import JACKKNIFE_DEG
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate

STUDY = Path(__file__).resolve().parents[2] / "studies" / "semitrailer.toml"


def max_articulation(end_time):
    """(locked, rolling) largest |articulation| of the semitrailer [deg] and its jackknife flags."""
    sc, sim = load_scenario(STUDY)
    rolling = dataclasses.replace(sc, name="rolling", vehicles=[dataclasses.replace(sc.vehicles[0], lock=None),
                                                                 sc.vehicles[1]])
    settings = Settings(**{**sim, "end_time": end_time, "contact": False, "step_control": "constant",
                           "save_every": end_time})
    batch, state = build_batch([sc, rolling], dt=settings.dt)
    tracker = Outcomes(damage=False, rest=False)  # reads the articulation metrics only
    res = simulate(batch, state, settings, tracker=tracker, record=False)
    assert np.all(np.asarray(res.final.clock.status) == 0)
    out = outcome_arrays(batch, res.final, res.metrics, tracker)
    return np.asarray(out["max_articulation"])[:, 1], np.asarray(out["jackknife"])[:, 1]


@pytest.mark.slow
def test_drive_axle_lock_jackknifes_a_semitrailer():
    art, jack = max_articulation(5.0)
    assert jack[0] and art[0] > JACKKNIFE_DEG  # measured: 180 deg (contact with the tow vehicle is excluded)
    assert not jack[1] and art[1] < 5.0


def test_drive_axle_lock_starts_a_jackknife():
    """Reduced twin: 1.5 s after the lock the articulation has grown past 10 deg (measured
    40 deg at 2.5 s, 5 deg at 1.5 s: it grows about 1.6x per 0.25 s), while rolling freely it
    stays below 5 deg."""
    art, jack = max_articulation(2.5)
    assert art[0] > 10.0 and art[1] < 5.0, art
