"""Failed scenarios are contained in a sweep (issue 17): a scenario that leaves the road or
goes NaN is flagged in the table (status, status_name), and the other scenarios of its
chunk are bit-identical to their solo runs, through the sliced chunk runner.

Complements tests/physics/test_road_dynamics.py (off the road, `simulate` level),
tests/study/test_study.py (NaN in a chunk) and test_failure_isolation.py (contact with a
NaN mid-run and a non-converged contact search, `simulate` level): here the failures sit
in one chunk of a sweep and the check is the written table.
"""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from jaxmedusa.core.status import Status
from jaxmedusa.study import design, run_chunk, run_study, scenarios_for, study_from_dict

from sweep_helpers import STUDIES

END = 0.5  # [s]: at 12 m/s a car starting 5 m before the road's last point (x = 800 m) passes it


def _study():
    data = {
        "name": "failing",
        "scenario": {"path": "medusa/banked"},  # one car at 12 m/s on the report's banked road (ends at x = 800 m)
        "simulation": {"end_time": END, "save_every": 0.1},
        "sampler": {"kind": "grid"},
        # x = 795 m: off the road's end within 0.5 s; a tire lag of 1e-12 s (valid: > 0)
        # makes the explicit slip-angle lag (1.27) blow up within a few steps: NaN
        "parameters": {"vehicles.1.x": {"values": [0.0, 795.0]},
                       "models.1.tire_lag": {"values": [0.0016, 1e-12]}},
        "run": {"batch": 4},
    }
    return study_from_dict(data, base_dir=STUDIES, source="<failing>", default_name="failing")


def test_failures_are_flagged_in_the_table_and_the_rest_runs_as_alone(tmp_path):
    st = _study()
    s = run_study(st, out=tmp_path, progress=False)
    df = pq.read_table(tmp_path / "scenarios.parquet").to_pandas()
    assert s.complete and list(df.sample_id) == [0, 1, 2, 3]
    # grid order: the first parameter varies slowest -> (x, lag) = (0, ok), (0, 1e-12), (795, ok), (795, 1e-12)
    assert list(df["vehicles.1.x"]) == [0.0, 0.0, 795.0, 795.0]
    assert df.status_name[0] == "ok" and df.status[0] == Status.OK
    assert df.status_name[1] == "nan" and df.status_name[3] == "nan"
    assert df.status_name[2] == "off_road" and df.status[2] == Status.OFF_ROAD
    assert s.status_counts == {"nan": 2, "off_road": 1, "ok": 1}
    # the off-road car stopped where the road ends (x = 800 m), before the end time
    assert 799.0 < df.v1_final_x[2] < 801.0 and df.end_time[2] < END
    # the healthy row: bit for bit its solo run (same chunk shape, padded with itself)
    ids, cols = design(st)
    items = scenarios_for(st, cols, ids)
    alone, _, _ = run_chunk(st, [items[0]], 4)
    together, _, _ = run_chunk(st, items, 4)
    for k in alone:
        assert np.array_equal(np.asarray(together[k][0]), np.asarray(alone[k][0]), equal_nan=True), k
    assert df.v1_final_x[0] == float(alone["final_x"][0, 0])
    # and the off-road row is its own solo run too (a failure does not depend on its neighbours)
    alone2, _, _ = run_chunk(st, [items[2]], 4)
    for k in alone2:
        assert np.array_equal(np.asarray(together[k][2]), np.asarray(alone2[k][0]), equal_nan=True), k
