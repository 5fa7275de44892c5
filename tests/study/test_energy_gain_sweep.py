"""Status energy_gain in sweeps (issue 33): the energy balance runs beside the outcome
tracker in every chunk (study/runner.py), and a scenario that ends healthy having created
more than ENERGY_GAIN_MARGIN of its initial energy plus its drivers' work is flagged."""
from __future__ import annotations

import json

import numpy as np
import pytest

from jaxmedusa.core.status import Status
from jaxmedusa.solver.trackers import ENERGY_GAIN_MARGIN, EnergyBalance, with_energy_gain
from jaxmedusa.study import run_study, study_from_dict

from sweep_helpers import STUDIES


def test_flag_by_hand():
    """E(0) = 1 MJ, W_drive = 0.5 MJ: the threshold is 1.5 MJ x margin (1.5 MJ at 100 %).
    An excess of 1.6 MJ is flagged, 1.4 MJ is not, and a scenario that already failed (NaN)
    keeps its own status."""
    assert ENERGY_GAIN_MARGIN == 1.0
    b = EnergyBalance(initial=np.array([1e6, 1e6, 1e6]), drive_work=np.array([5e5, 5e5, 5e5]),
                      max_gain=np.array([1.6e6, 1.4e6, 1.6e6]))
    status = np.array([Status.OK, Status.OK, Status.NAN], np.int32)
    assert with_energy_gain(status, b).tolist() == [Status.ENERGY_GAIN, Status.OK, Status.NAN]


@pytest.mark.slow
def test_sweep_flags_the_overlapping_sample(tmp_path):
    """Two samples of the offset example under the MEDUSA law (superellipsoid), vehicle 2 at
    x = 6 m (the report's start, 2 m ahead) and at x = 3 m (1 m inside vehicle 1): the
    second ends energy_gain, the first ok. (A study's base scenario is checked for overlap
    by the CLI; a perturbed sample is not, so this is what catches it.)"""
    data = {"scenario": {"medusa": {"folder": "medusa/offset"}, "road": {"flat": True}},
            "simulation": {"end_time": 0.05, "contact_geometry": "superellipsoid"},
            "sampler": {"kind": "grid"},
            "parameters": {"x2": {"values": [6.0, 3.0], "path": "vehicles.2.x"}},
            "run": {"batch": 2}}
    study = study_from_dict(data, base_dir=STUDIES, source="<overlap>", default_name="overlap", text=json.dumps(data))
    s = run_study(study, out=tmp_path, progress=False)
    assert s.status_counts == {"energy_gain": 1, "ok": 1}, s.status_counts
    import pyarrow.parquet as pq

    t = pq.read_table(tmp_path / "scenarios.parquet").to_pydict()
    assert t["status_name"] == ["ok", "energy_gain"] and t["status"] == [0, int(Status.ENERGY_GAIN)]
