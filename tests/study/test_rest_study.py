"""A study whose runs end at rest ([simulation] end_condition = "rest"): the scenarios table's
rest columns and statuses. The car's driven front wheels (tire speed 0.11 m/s) brake it to a
crawl below rest_speed = 0.2 m/s (tests/solver/test_end_at_rest.py); at 0.1 m/s the front
wheels roll freely and the car never rests within end_time."""
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from jaxmedusa.study import run_study, study_from_dict
from jaxmedusa.study.spec import StudyError

STRAIGHT = Path(__file__).resolve().parents[2] / "studies" / "medusa" / "straight"


def _study(simulation):
    return {"name": "rest", "scenario": {"medusa": {"folder": str(STRAIGHT)}, "road": {"flat": True},
                                         "overrides": {"vehicles": {"1": {"speed": 2.0}}}},
            "simulation": simulation, "sampler": {"kind": "grid"},
            "parameters": {"vehicles.1.tire_speed": {"values": [0.11, 0.1]}}}


SIM = {"end_time": 1.2, "dt": 2e-4, "step_control": "constant", "end_condition": "rest", "rest_speed": 0.2}


def test_study_table_has_rest_columns_and_the_not_at_rest_status(tmp_path):
    run_study(study_from_dict(_study(SIM)), out=tmp_path, progress=False)
    t = pq.read_table(tmp_path / "scenarios.parquet").to_pandas()
    assert list(t["status_name"]) == ["ok", "not_at_rest"]
    # the braked car stopped at rest, rest_hold (0.2 s) after its rest time, before end_time
    assert t["end_time"][0] == pytest.approx(t["v1_rest_time"][0] + 0.2, abs=2e-4 + 1e-9) and t["end_time"][0] < 1.2
    assert t["v1_rest_x"][0] == pytest.approx(t["v1_final_x"][0], abs=0.0)
    # the free-rolling car: a complete run to the limit, its rest columns null, its distance 2 m/s x 1.2 s
    assert np.isnan(t["v1_rest_x"][1]) and np.isnan(t["v1_rest_time"][1])
    assert t["v1_distance"][1] == pytest.approx(2.4, rel=1e-3)


@pytest.mark.parametrize("key, value", [("end_condition", "halt"), ("rest_speed", 0.0), ("rest_hold", -0.2)])
def test_impossible_rest_settings_name_the_key(key, value):
    with pytest.raises(StudyError, match=rf"simulation\.{key}"):
        study_from_dict({**_study({**SIM, key: value})})
