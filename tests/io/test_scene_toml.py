"""TOML schema of per-wheel driver tables and friction zones, and their study paths."""
import json
import tomllib
from pathlib import Path

import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.scenario_toml import scenario_from_dict
from jaxmedusa.study import scenario_for, study_from_dict
from jaxmedusa.study.spec import StudyError

pytestmark = pytest.mark.filterwarnings("ignore:road segment")  # the report's road.dat runs backwards (benign)
STUDIES = Path(__file__).resolve().parents[2] / "studies"
SCENE = """
[medusa]
folder = "medusa/offset"
[[road.zones]]
polygon = [[10, -5], [40, -5], [40, 5], [10, 5]]
mu_peak = 0.5
mu_slide = 0.4
width = 0.5
[overrides.vehicles.1]
brake = { times = [0.0, 0.5], values = [0.0, 0.8], kind = "linear" }
lock = { times = [0.0, 1.0], values = [[0, 0, 0, 0], [1, 1, 0, 0]] }
[overrides.vehicles.2]
throttle = 300.0
"""


def _scene(text=SCENE):
    return scenario_from_dict(tomllib.loads(text), base_dir=STUDIES, source="<scene>")[0]


def test_tables_and_zones_reach_the_batch():
    sc = _scene()
    assert sc.road.points is not None  # zones alone keep road.dat
    batch, _ = build_batch([sc])
    w = batch.driver.wheels
    assert w.brake_values.shape == (1, 2, 2, 4)  # [B, V, Kw, W]
    assert w.brake_values[0, 0, 1].tolist() == [0.8] * 4 and float(w.brake_linear[0, 0]) == 1.0
    assert w.lock_values[0, 0, 1].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert w.throttle_values[0, 1, 0].tolist() == [300.0] * 4 and w.brake_values[0, 1].tolist() == [[0.0] * 4] * 2
    assert batch.zones.corners.shape == (1, 1, 4, 2) and float(batch.zones.width[0, 0]) == 0.5


@pytest.mark.parametrize("old, new, key", [
    ("values = [[0, 0, 0, 0], [1, 1, 0, 0]]", "values = [[0, 0, 0, 0], [0.5, 1, 0, 0]]", "overrides.vehicles.1.lock.values[2]"),
    ("values = [0.0, 0.8]", "values = [0.0, -0.8]", "overrides.vehicles.1.brake.values[2]"),
    ("mu_slide = 0.4", "mu_slide = 0.0", "road.zones[1].mu_slide"),
    ("width = 0.5", "width = 0.5\nfoo = 1", "road.zones[1]"),
    ("[40, 5], [10, 5]]", "[40, 5]]\n", None),  # 3 corners are fine
])
def test_bad_tables_and_zones_name_the_key(old, new, key):
    text = SCENE.replace(old, new)
    if key is None:
        _scene(text)
        return
    with pytest.raises(MedusaInputError, match=key.replace("[", r"\[").replace("]", r"\]")):
        _scene(text)


def test_per_wheel_list_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="one value per wheel"):
        build_batch([_scene(SCENE.replace("[1, 1, 0, 0]]", "[1, 1, 0]]").replace("[0, 0, 0, 0],", "[0, 0, 0],"))])


def _study(parameters):
    data = tomllib.loads((STUDIES / "offset.toml").read_text())
    data["scenario"]["road"]["zones"] = tomllib.loads(SCENE)["road"]["zones"]  # [[scenario.road.zones]]
    data["sampler"] = {"kind": "grid"}
    data["parameters"] = parameters
    return study_from_dict(data, base_dir=STUDIES, source="<s>", default_name="s", text=json.dumps(data))


def test_study_paths_of_wheel_tables_and_zones():
    st = _study({"b": {"values": [0.7], "path": "vehicles.1.brake"},
                 "rr": {"values": [0.9], "path": "vehicles.2.lock.values.1.3"},
                 "mu": {"values": [0.3], "path": "road.zones.1.mu_slide"}})
    sc, _, _ = scenario_for(st, {"b": 0.7, "rr": 0.9, "mu": 0.3})
    assert sc.vehicles[0].brake.values == (0.7,)  # absent table: starts from 0 for every wheel
    assert sc.vehicles[1].lock.values == ((0.0, 0.0, 0.9, 0.0),)  # wheel 3 = rear left
    assert sc.road.zones[0].mu_slide == 0.3 and sc.road.points is None


def test_study_refuses_impossible_wheel_values():
    with pytest.raises(StudyError, match="lock values must lie in"):
        _study({"l": {"values": [2.0], "path": "vehicles.1.lock"}})
    with pytest.raises(StudyError, match="a wheel number 1..4"):
        _study({"l": {"values": [2.0], "path": "vehicles.1.brake.values.1.9"}})


def test_truck_example_loads_with_three_axles_and_per_axle_tires():
    from jaxmedusa.io.scenario_toml import load_scenario

    sc, settings = load_scenario(STUDIES / "truck.toml")
    m = sc.models[0]
    assert m.n_axles == 3 and m.extra_axles[0].equalised and len(m.tires_by_axle) == 3
    batch, state = build_batch([sc])
    assert batch.vehicle.X.shape == (1, 1, 6, 3) and batch.vehicle.tire.params[0].c_alpha.shape == (1, 1, 6)
    assert batch.vehicle.equalise[0, 0, 2, 4] == 0.5  # left wheels of the tandem share their load
    text = (STUDIES / "truck.toml").read_text().replace("mu_p = 0.8, mu_s = 0.6, fz_ref = 26732.25",
                                                        "mu_q = 0.8, mu_s = 0.6, fz_ref = 26732.25")
    with pytest.raises(MedusaInputError, match=r"models\[1\]\.tires_by_axle\[1\]\.mu_q"):
        scenario_from_dict(tomllib.loads(text), base_dir=STUDIES, source="<truck>")
