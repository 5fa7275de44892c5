"""MEDUSA file readers (jaxmedusa.io.medusa_files): the report's example inputs and every error case."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jaxmedusa.io.medusa_files import (
    MedusaInputError,
    read_medusa_folder,
    read_models,
    read_platoon,
    read_road,
    write_model_block,
    write_models,
    write_platoon,
    write_road,
)
from jaxmedusa.core.params import inertia_parameters

STUDIES = Path(__file__).resolve().parents[2] / "studies" / "medusa"
EXAMPLES = ["straight", "offset", "wave", "merge", "evade", "banked"]
FLAT = ((0.0, 0.0, 0.0, 0.0), (100.0, 0.0, 0.0, 0.0), (500.0, 0.0, 0.0, 0.0), (1000.0, 0.0, 0.0, 0.0))


# ---------------------------------------------------------------- the report's examples


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_parse(name):
    s = read_medusa_folder(STUDIES / name)
    assert s.name == name
    assert len(s.models) == 2
    assert all(v.model == 0 for v in s.vehicles)
    assert s.road.points[0] == (0.0, 0.0, 0.0, 5.0 if name == "banked" else 0.0)


def test_appendix_c_models():
    m1, m2 = read_models(STUDIES / "offset" / "model.dat")
    assert (m1.mass, m1.ix, m1.iy, m1.iz) == (1573.0, 479.6, 2594.6, 2782.0)
    assert (m1.young, m1.nu, m1.volume) == (600.0e6, 0.30, 0.42)
    assert (m1.l1, m1.l2, m1.track, m1.h1, m1.h2, m1.spring_ref) == (1.034, 1.491, 1.2, 0.0, 0.0, 0.15)
    assert (m1.c1, m1.c2, m1.d1, m1.d2, m1.tire_lag) == (40000.0, 40000.0, 1500.0, 1200.0, 0.0016)
    assert m1.contact_dims == (4.0, 1.6, 1.3)
    assert m1.eq_r3 == 5.039617e-02
    # columns of eq_F are the directors: d1 = (D11, D12, D13) = (0.9972, 0, -0.0748)
    F = np.array(m1.eq_F)
    np.testing.assert_array_equal(F[:, 0], [0.9972, 0.0, -0.0748])
    np.testing.assert_array_equal(F[:, 2], [0.0749, 0.0, 0.9972])
    assert (m2.young, m2.nu, m2.track, m2.c1, m2.contact_dims, m2.eq_r3) == (
        200.0e7, 0.33, 0.725, 17000.0, (4.5, 2.5, 1.5), 0.03644925
    )
    assert m2.ix == 479.6  # lost in the printed listing, reconstructed


def test_appendix_c_inertia_parameters():
    m1 = read_models(STUDIES / "offset" / "model.dat")[0]
    np.testing.assert_allclose(inertia_parameters(m1.ix, m1.iy, m1.iz), [2448.5, 333.5, 146.1], atol=1e-9)


def test_example_platoons():
    off = read_medusa_folder(STUDIES / "offset").vehicles
    assert [(v.x, v.y, v.speed) for v in off] == [(0.0, 0.0, 22.0), (6.0, 0.4, 20.0)]
    assert off[1].tire_speed.values == (0.0,) and off[1].steering.kind == "constant"
    wave = read_medusa_folder(STUDIES / "wave").vehicles
    assert [v.x for v in wave] == [0.0, 6.0, 12.0, 18.0]
    assert [v.speed for v in wave] == [22.0, 22.0, 22.0, 20.0]
    merge = read_medusa_folder(STUDIES / "merge").vehicles
    assert len(merge) == 5
    assert (merge[4].x, merge[4].y, merge[4].speed, merge[4].steering.values) == (6.0, -4.0, 25.0, (8.0,))
    evade = read_medusa_folder(STUDIES / "evade").vehicles
    assert [(v.x, v.speed, v.tire_speed.values) for v in evade] == [(0.0, 22.0, (0.0,)), (8.0, 20.0, (0.0,))]
    banked = read_medusa_folder(STUDIES / "banked")
    (v,) = banked.vehicles
    assert (v.x, v.y, v.speed, v.tire_speed.values, v.steering.values) == (0.0, 0.0, 12.0, (12.0,), (0.0,))
    straight = read_medusa_folder(STUDIES / "straight").vehicles
    assert [(v.x, v.y, v.speed, v.tire_speed.values) for v in straight] == [(0.0, 0.0, 22.0, (0.0,))]


def test_example_roads():
    assert read_road(STUDIES / "offset" / "road.dat").points == FLAT
    banked = read_road(STUDIES / "banked" / "road.dat").points
    assert [p[0] for p in banked] == [0.0, 30.0, 60.0, 90.0, 200.0, 400.0, 800.0]
    assert [p[3] for p in banked] == [5.0, 2.5, -4.0, 0.0, 0.0, 0.0, 0.0]


def test_medusa_syntax_quirks(tmp_path):
    """Case-insensitive keywords, comments glued to tokens, any whitespace, C numbers."""
    text = write_models(read_models(STUDIES / "offset" / "model.dat"))
    text = text.replace("MASS", "mAsS").replace("NU ", "nu\n\n\t").replace("% mass [kg]", "%mass")
    text = text.replace("1573.0", "1573.%glued comment").replace("0.0016", ".16E-2")
    (tmp_path / "model.dat").write_text(text)
    m1, _ = read_models(tmp_path / "model.dat")
    assert (m1.mass, m1.tire_lag) == (1573.0, 0.0016)


# ---------------------------------------------------------------- round trips


def test_write_model_block_round_trip(tmp_path):
    models = read_models(STUDIES / "offset" / "model.dat")
    # a solved equilibrium with full-precision digits
    models[1].eq_F = ((0.99999123456789, 1e-17, -0.0042), (0.0, 1.0, 0.0), (0.0042, -3.3e-9, 0.99999123456789))
    models[1].eq_r3 = 0.0512345678901234
    text = "NUMBER_OF_MODELS 2\n" + write_model_block(models[0], 1) + write_model_block(models[1], 2)
    (tmp_path / "model.dat").write_text(text)
    assert read_models(tmp_path / "model.dat") == models


def test_write_platoon_and_road_round_trip(tmp_path):
    s = read_medusa_folder(STUDIES / "merge")
    (tmp_path / "model.dat").write_text(write_models(s.models))
    (tmp_path / "platoon.dat").write_text(write_platoon(s.vehicles))
    (tmp_path / "road.dat").write_text(write_road(read_road(STUDIES / "banked" / "road.dat")))
    t = read_medusa_folder(tmp_path)
    assert (t.models, t.vehicles) == (s.models, s.vehicles)
    assert t.road == read_road(STUDIES / "banked" / "road.dat")


# ---------------------------------------------------------------- error messages


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _broken(tmp_path, name: str, source: Path, edit) -> Path:
    """Copy `source` into tmp_path/name with `edit(lines)` applied; return the path."""
    lines = edit(_lines(source))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _line_of(path: Path, text: str) -> int:
    """1-based number of the first line of `path` containing `text` (before any comment)."""
    for n, line in enumerate(_lines(path), start=1):
        if text in line.split("%", 1)[0]:
            return n
    raise AssertionError(text)


def _replace(old, new, count=1):
    def edit(lines):
        done = 0
        out = []
        for line in lines:
            code = line.split("%", 1)[0]
            if done < count and old in code:
                line = line.replace(old, new, 1)
                done += 1
            out.append(line)
        assert done, old
        return out

    return edit


def _check(exc_info, path: Path, line: int, *words: str):
    msg = str(exc_info.value)
    assert str(path) in msg, msg
    assert f"line {line}:" in msg, msg
    for w in words:
        assert w in msg, msg


MODEL = STUDIES / "offset" / "model.dat"
PLATOON = STUDIES / "offset" / "platoon.dat"
ROAD = STUDIES / "offset" / "road.dat"


def test_error_misspelled_keyword(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, _replace("MASS 1573.0", "MAS 1573.0"))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, "MAS 1573.0"), "'MAS'", "MASS expected", "model 1")


def test_error_missing_keyword(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, lambda ls: [l for l in ls if l.strip() != "SUSPENSION"])
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, "L1 1.034"), "'L1'", "SUSPENSION expected")


def test_error_missing_group_keyword_in_road(tmp_path):
    p = _broken(tmp_path, "road.dat", ROAD, _replace("XYZ_COORDINATES_&_ANGLE:", "XYZ_COORDINATES_&_ANGLE"))
    with pytest.raises(MedusaInputError) as e:
        read_road(p)
    _check(e, p, 3, "XYZ_COORDINATES_&_ANGLE: expected")


def test_error_model_out_of_sequence(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, _replace("MODEL 2", "MODEL 3"))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, "MODEL 3"), "out of sequence", "MODEL 2 expected")


def test_error_vehicle_model_out_of_range(tmp_path):
    p = _broken(tmp_path, "platoon.dat", PLATOON, _replace("VEHICLE_HAS_MODEL 1", "VEHICLE_HAS_MODEL 3", count=2))
    with pytest.raises(MedusaInputError) as e:
        read_platoon(p, n_models=2)
    _check(e, p, _line_of(p, "VEHICLE_HAS_MODEL 3"), "VEHICLE_HAS_MODEL 3", "1..2 expected")
    q = _broken(tmp_path, "zero.dat", PLATOON, _replace("VEHICLE_HAS_MODEL 1", "VEHICLE_HAS_MODEL 0"))
    with pytest.raises(MedusaInputError, match="1..2 expected"):
        read_platoon(q, n_models=2)


def test_error_non_numeric_value(tmp_path):
    p = _broken(tmp_path, "platoon.dat", PLATOON, _replace("SPEED 20.0", "SPEED twenty"))
    with pytest.raises(MedusaInputError) as e:
        read_platoon(p, n_models=2)
    _check(e, p, _line_of(p, "SPEED twenty"), "'twenty' in vehicle 2", "number (the value of SPEED) expected")


def test_error_missing_value(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, _replace("IY 2594.6", "IY"))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, "IZ 2782.0"), "'IZ'", "value of IY")


def test_error_python_only_number_syntax(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, _replace("C1 40000.0", "C1 40_000.0"))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, "40_000"), "'40_000.0'", "value of C1")


def test_error_non_finite(tmp_path):
    for bad in ("1e999", "inf", "nan"):
        p = _broken(tmp_path, "model.dat", MODEL, _replace("VOLUME 0.42", f"VOLUME {bad}"))
        with pytest.raises(MedusaInputError) as e:
            read_models(p)
        _check(e, p, _line_of(p, f"VOLUME {bad}"), f"'{bad}' in model 1 is not a finite number", "value of VOLUME")


def test_error_truncated_model_file(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, lambda ls: ls[: _line_of(MODEL, "D1 1500.0")])
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, len(_lines(p)), "end of file in model 1", "D2 expected")


def test_error_fewer_models_than_announced(tmp_path):
    p = _broken(tmp_path, "model.dat", MODEL, _replace("NUMBER_OF_MODELS 2", "NUMBER_OF_MODELS 3"))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, len(_lines(p)), "end of file", "MODEL 3 expected", "2 found")


def test_error_fewer_vehicles_than_announced(tmp_path):
    p = _broken(tmp_path, "platoon.dat", PLATOON, _replace("NUMBER_OF_VEHICLES 2", "NUMBER_OF_VEHICLES 3"))
    with pytest.raises(MedusaInputError) as e:
        read_platoon(p, n_models=2)
    _check(e, p, len(_lines(p)), "end of file", "VEHICLE_HAS_MODEL expected for vehicle 3", "2 found")


def test_error_truncated_platoon(tmp_path):
    p = _broken(tmp_path, "platoon.dat", PLATOON, lambda ls: ls[:-1])  # drop vehicle 2's STEERING
    with pytest.raises(MedusaInputError) as e:
        read_platoon(p, n_models=2)
    _check(e, p, len(_lines(p)), "end of file in vehicle 2", "STEERING expected")


def test_error_trailing_junk(tmp_path):
    p = _broken(tmp_path, "platoon.dat", PLATOON, _replace("NUMBER_OF_VEHICLES 2", "NUMBER_OF_VEHICLES 1"))
    with pytest.raises(MedusaInputError) as e:
        read_platoon(p, n_models=2)
    _check(e, p, _line_of(p, "X 6.0") - 1, "'VEHICLE_HAS_MODEL'", "End of file expected")
    q = _broken(tmp_path, "model.dat", MODEL, lambda ls: ls + ["MODEL 3"])
    with pytest.raises(MedusaInputError) as e:
        read_models(q)
    _check(e, q, len(_lines(q)), "'MODEL'", "End of file expected")
    r = _broken(tmp_path, "road.dat", ROAD, lambda ls: ls + ["5.0"])
    with pytest.raises(MedusaInputError) as e:
        read_road(r)
    _check(e, r, len(_lines(r)), "'5.0'", "after END_OF_FILE")


def test_error_too_few_road_points(tmp_path):
    p = tmp_path / "road.dat"
    p.write_text("NUMBER_OF_POINTS:\n3\nXYZ_COORDINATES_&_ANGLE:\n0 0 0 0\n10 0 0 0\n20 0 0 0\nEND_OF_FILE\n")
    with pytest.raises(MedusaInputError) as e:
        read_road(p)
    _check(e, p, 2, "NUMBER_OF_POINTS: 3", "At least 4 expected")


def test_error_fewer_road_points_than_announced(tmp_path):
    p = _broken(tmp_path, "road.dat", ROAD, lambda ls: [l for l in ls if not l.startswith("1000.")])
    with pytest.raises(MedusaInputError) as e:
        read_road(p)
    _check(e, p, _line_of(p, "END_OF_FILE"), "'END_OF_FILE'", "x of road point 4 of 4")


def test_error_road_end_keyword(tmp_path):
    p = _broken(tmp_path, "road.dat", ROAD, _replace("END_OF_FILE", "END_OF_FILES"))
    with pytest.raises(MedusaInputError) as e:
        read_road(p)
    _check(e, p, _line_of(p, "END_OF_FILES"), "'END_OF_FILES'", "END_OF_FILE expected")


def test_error_road_geometry(tmp_path):
    p = _broken(tmp_path, "road.dat", ROAD, _replace("500.     0.0    0.0    0.0", "100.     0.0    0.0    0.0"))
    with pytest.raises(MedusaInputError) as e:
        read_road(p)
    _check(e, p, 6, "road point 3 repeats road point 2")
    q = _broken(tmp_path, "bank.dat", ROAD, _replace("500.     0.0    0.0    0.0", "500.     0.0    0.0    95"))
    with pytest.raises(MedusaInputError) as e:
        read_road(q)
    _check(e, q, 6, "banking angle 95")


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ("MASS 1573.0", "MASS -1573.0", "MASS", ["must be > 0"]),
        ("MASS 1573.0", "MASS 0", "MASS", ["must be > 0"]),
        ("IX 479.6", "IX 5400.0", "IX", ["triangle inequality", "my^11"]),
        ("IZ 2782.0", "IZ 3100.0", "IZ", ["triangle inequality", "my^33"]),
        ("E 600.0e6", "E 0.0", "E", ["must be > 0"]),
        ("NU 0.30", "NU 0.5", "NU", ["(-1, 0.5)"]),
        ("NU 0.30", "NU -1.0", "NU", ["(-1, 0.5)"]),
        ("VOLUME 0.42", "VOLUME -0.42", "VOLUME", ["must be > 0"]),
        ("TIRE 0.0016", "TIRE 0.0", "TIRE", ["must be > 0"]),
        ("C2 40000.0", "C2 -40000.0", "C2", ["must be >= 0"]),
        ("D1 1500.0", "D1 -1.0", "D1", ["must be >= 0"]),
        ("A2 1.6", "A2 0.0", "A2", ["must be > 0"]),
        ("B 1.2", "B -1.2", "B", ["must be > 0"]),
    ],
)
def test_error_impossible_values(tmp_path, old, new, key, words):
    p = _broken(tmp_path, "model.dat", MODEL, _replace(old, new))
    with pytest.raises(MedusaInputError) as e:
        read_models(p)
    _check(e, p, _line_of(p, new), key, "model 1", *words)


def test_error_missing_file(tmp_path):
    with pytest.raises(MedusaInputError, match="cannot open"):
        read_medusa_folder(tmp_path)
