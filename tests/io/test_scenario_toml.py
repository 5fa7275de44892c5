"""TOML scenarios and load_scenario (jaxmedusa.io.scenario_toml)."""
from __future__ import annotations

from pathlib import Path

import pytest

from jaxmedusa.io.scenario_toml import driver_table, load_scenario
from jaxmedusa.io.medusa_files import MedusaInputError, read_medusa_folder
from jaxmedusa.core.scenario import BarrierSpec, DriverTable, RoadSpec

STUDIES = Path(__file__).resolve().parents[2] / "studies" / "medusa"

WALL = """
[[barriers]]
type = "plane"
position = [2.3, 0.0, 0.0]
normal = [-1.0, 0.0, 0.0]
"""
BOX = """
[[barriers]]
type = "box"
position = [10.0, 3.0, 0.5]
size = [20.0, 0.5, 1.0]
yaw_deg = 10.0
"""

APPENDIX_C = """
[[models]]
mass = 1573.0
ix = 479.6
iy = 2594.6
iz = 2782.0
young = 600.0e6
nu = 0.30
volume = 0.42
l1 = 1.034
l2 = 1.491
track = 1.2
h1 = 0.0
h2 = 0.0
spring_ref = 0.15
c1 = 40000.0
c2 = 40000.0
d1 = 1500.0
d2 = 1200.0
tire_lag = 0.0016
contact_dims = [4.0, 1.6, 1.3]
eq_r3 = 5.039617e-02
eq_F = [[0.9972, 0.0, 0.0749], [0.0, 1.0, 0.0], [-0.0748, 0.0, 0.9972]]

[[models]]
mass = 1573.0
ix = 479.6
iy = 2594.6
iz = 2782.0
young = 200.0e7
nu = 0.33
volume = 0.42
l1 = 1.034
l2 = 1.491
track = 0.725
h1 = 0.0
h2 = 0.0
spring_ref = 0.15
c1 = 17000.0
c2 = 40000.0
d1 = 1500.0
d2 = 1200.0
tire_lag = 0.0016
contact_dims = [4.5, 2.5, 1.5]
eq_r3 = 0.03644925
eq_F = [[0.9972, 0.0, 0.0749], [0.0, 1.0, 0.0], [-0.0748, 0.0, 0.9972]]
"""

OFFSET_INLINE = (
    'name = "offset"\n'
    + APPENDIX_C
    + """
[[vehicles]]
model = 1
x = 0.0
y = 0.0
orientation_deg = 0.0
speed = 22.0
tire_speed = 0.0
steering_deg = 0.0

[[vehicles]]
model = 1
x = 6.0
y = 0.4
speed = 20.0

[road]
points = [[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0], [500.0, 0.0, 0.0, 0.0], [1000.0, 0.0, 0.0, 0.0]]

[simulation]
end_time = 3.0
dt = 1e-4
save_every = 0.02
contact_law = "medusa"
contact_geometry = "superellipsoid"
tires = true
"""
)


def _toml(tmp_path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_inline_equals_medusa_folder(tmp_path):
    s, settings = load_scenario(_toml(tmp_path, OFFSET_INLINE))
    assert s == read_medusa_folder(STUDIES / "offset")
    assert settings == dict(
        end_time=3.0, dt=1e-4, save_every=0.02, contact_law="medusa", contact_geometry="superellipsoid", tires=True
    )


def test_inline_default_road_is_ideal_plane(tmp_path):
    text = OFFSET_INLINE.split("[road]")[0]
    s, settings = load_scenario(_toml(tmp_path, text, "plain.toml"))
    assert s.road == RoadSpec(points=None)
    assert settings == {}
    assert s.name == "offset"


def test_folder_and_dat_and_default_toml():
    s, settings = load_scenario(STUDIES / "wave")
    assert (s.name, len(s.vehicles), settings) == ("wave", 4, {})
    s, _ = load_scenario(STUDIES / "merge" / "platoon.dat")
    assert len(s.vehicles) == 5
    s, settings = load_scenario(STUDIES / "default.toml")
    plain = read_medusa_folder(STUDIES / "offset")
    assert (s.models, s.vehicles) == (plain.models, plain.vehicles)
    assert s.road.points is None  # [road] flat = true: the report's plane road
    assert settings == {"end_time": 3.0, "contact_geometry": "superellipsoid"}  # the fast shape, named


def test_evade_scenario_toml():
    s, settings = load_scenario(STUDIES / "evade")  # picks evade/scenario.toml
    assert s.name == "evade" and settings == {}
    steer = s.vehicles[0].steering
    assert steer == DriverTable(
        times=(0.0, 0.30, 0.50, 0.70, 0.85, 1.10, 1.25, 1.45, 1.60),
        values=(0.0, 3.0, 9.0, 3.0, 0.0, -3.0, -7.0, -3.0, 0.0),
        kind="constant",
    )
    plain = read_medusa_folder(STUDIES / "evade")
    assert s.vehicles[1] == plain.vehicles[1]
    assert s.models == plain.models and s.road.points is None and plain.road.points is not None


def test_overrides_on_medusa_folder(tmp_path):
    text = f"""
[medusa]
folder = "{STUDIES / 'offset'}"
[road]
flat = true
[overrides.models.2]
mass = 1600.0
[overrides.vehicles.2]
model = 2
y = 0.8
tire_speed = {{ times = [0.0, 1.0], values = [20.0, 15.0], kind = "linear" }}
"""
    s, _ = load_scenario(_toml(tmp_path, text))
    base = read_medusa_folder(STUDIES / "offset")
    assert s.name == "s"
    assert s.models[0] == base.models[0] and s.models[1].mass == 1600.0
    assert s.models[1].young == base.models[1].young
    v = s.vehicles[1]
    assert (v.model, v.x, v.y, v.speed) == (1, 6.0, 0.8, 20.0)
    assert v.tire_speed == DriverTable((0.0, 1.0), (20.0, 15.0), "linear")
    assert s.road.points is None
    assert base.models[1].mass == 1573.0  # the base was not mutated


def test_driver_table():
    assert driver_table(3) == DriverTable((0.0,), (3.0,), "constant")
    assert driver_table({"times": [0, 1], "values": [1, 2]}).kind == "constant"
    with pytest.raises(MedusaInputError, match="non-decreasing"):
        driver_table({"times": [0, 2, 1], "values": [1, 2, 3]}, "steering_deg", "f.toml")
    with pytest.raises(MedusaInputError, match="'constant' or 'linear'"):
        driver_table({"times": [0], "values": [1], "kind": "cubic"})
    with pytest.raises(MedusaInputError, match="as many values as times"):
        driver_table({"times": [0, 1], "values": [1]})


def test_barriers_and_crush_coefficients_are_read(tmp_path):
    """[[barriers]] become BarrierSpecs in order; crush coefficients default (the values of
    docs/crash-law.md) unless given."""
    sc, _ = load_scenario(_toml(tmp_path, OFFSET_INLINE.replace("mass = 1573.0", "mass = 1573.0\ncrush_b_front = 6e5", 1)
                                + WALL + BOX))
    assert sc.barriers == [BarrierSpec("plane", (2.3, 0.0, 0.0), (-1.0, 0.0, 0.0)),
                           BarrierSpec("box", (10.0, 3.0, 0.5), size=(20.0, 0.5, 1.0), yaw_deg=10.0)]
    assert sc.models[0].crush_b_front == 6e5 and sc.models[1].crush_b_front == 550e3
    assert (sc.models[0].crush_a_front, sc.models[0].crush_a_side) == (44e3, 20e3)


@pytest.mark.parametrize(
    "edit, key, words",
    [
        (lambda t: t.replace("mass = 1573.0", "mas = 1573.0", 1), "models[1].mas", ["unknown key 'mas'"]),
        (lambda t: t.replace("mass = 1573.0", "mass = -1.0", 1), "models[1].mass", ["MASS -1 must be > 0"]),
        (lambda t: t.replace("ix = 479.6", "ix = 5400.0", 1), "models[1].ix", ["triangle inequality"]),
        (lambda t: t.replace("nu = 0.30", "nu = 0.6", 1), "models[1].nu", ["(-1, 0.5)"]),
        (lambda t: t.replace("contact_dims = [4.0, 1.6, 1.3]", "contact_dims = [4.0, 0.0, 1.3]", 1),
         "models[1].contact_dims[1]", ["A2 0 must be > 0"]),
        (lambda t: t.replace("tire_lag = 0.0016", "", 1), "models[1].tire_lag", ["missing"]),
        (lambda t: t.replace("x = 6.0", 'x = "six"'), "vehicles[2].x", ["a number expected"]),
        (lambda t: t.replace("y = 0.4", "y = 0.4\nspeeed = 3"), "vehicles[2].speeed", ["unknown key"]),
        (lambda t: t.replace("model = 1\nx = 6.0", "model = 3\nx = 6.0"), "vehicles[2].model", ["1..2 expected"]),
        (lambda t: t.replace("steering_deg = 0.0", 'steering_deg = { times = [1.0, 0.5], values = [1, 2] }'),
         "vehicles[1].steering_deg.times", ["non-decreasing"]),
        (lambda t: t.replace("tire_speed = 0.0", 'tire_speed = { times = [0], values = [1], kind = "step" }'),
         "vehicles[1].tire_speed.kind", ["'constant' or 'linear'"]),
        (lambda t: t.replace("[0.0, 0.0, 0.0, 0.0], ", ""), "road.points", ["at least 4"]),
        (lambda t: t.replace("end_time = 3.0", "end_tme = 3.0"), "simulation.end_tme", ["unknown key"]),
        (lambda t: t.replace("end_time = 3.0", "end_time = -3.0"), "simulation.end_time", ["> 0"]),
        (lambda t: t.replace('contact_law = "medusa"', 'contact_law = "soft"'), "simulation.contact_law",
         ["medusa, physical"]),
        (lambda t: t.replace("tires = true", "tires = 1"), "simulation.tires", ["true or false"]),
        (lambda t: "colour = 1\n" + t, "colour", ["unknown key 'colour'"]),
        (lambda t: t.replace("mass = 1573.0", "mass = 1573.0\ncrush_b_side = 0.0", 1), "models[1].crush_b_side",
         ["a crush coefficient > 0 [N/m^2] expected"]),
        (lambda t: t + WALL.replace('"plane"', '"wall"'), "barriers[1].type", ["'plane' or 'box' expected"]),
        (lambda t: t + WALL.replace("normal = [-1.0, 0.0, 0.0]", ""), "barriers[1].normal", ["missing"]),
        (lambda t: t + WALL.replace("normal = [-1.0, 0.0, 0.0]", "normal = [0, 0, 0]"), "barriers[1].normal",
         ["a nonzero vector"]),
        (lambda t: t + WALL + BOX.replace("[20.0, 0.5, 1.0]", "[20.0, -0.5, 1.0]"), "barriers[2].size",
         ["3 numbers > 0 [m]"]),
        (lambda t: t + BOX + "normal = [1, 0, 0]\n", "barriers[1].normal", ["unknown key 'normal'"]),
        (lambda t: t + BOX.replace("yaw_deg = 10.0", 'yaw_deg = "ten"'), "barriers[1].yaw_deg",
         ["a number expected"]),
    ],
)
def test_toml_errors(tmp_path, edit, key, words):
    p = _toml(tmp_path, edit(OFFSET_INLINE), "bad.toml")
    with pytest.raises(MedusaInputError) as e:
        load_scenario(p)
    msg = str(e.value)
    assert str(p) in msg and f"{key}:" in msg, msg
    for w in words:
        assert w in msg, msg


def test_toml_structure_errors(tmp_path):
    with pytest.raises(MedusaInputError, match="not valid TOML"):
        load_scenario(_toml(tmp_path, "x = = 1"))
    with pytest.raises(MedusaInputError, match="not both"):
        load_scenario(_toml(tmp_path, '[medusa]\nfolder = "."\n[[vehicles]]\nmodel = 1\n'))
    with pytest.raises(MedusaInputError, match="does not exist"):
        load_scenario(_toml(tmp_path, '[medusa]\nfolder = "nowhere"\n'))
    text = f'[medusa]\nfolder = "{STUDIES / "offset"}"\n[overrides.vehicles.3]\nx = 1.0\n'
    with pytest.raises(MedusaInputError, match=r"overrides.vehicles.3: a number 1..2 expected"):
        load_scenario(_toml(tmp_path, text))
    with pytest.raises(MedusaInputError, match="not a MEDUSA folder"):
        load_scenario(tmp_path / "missing.txt")
