"""MEDUSA's .asc files (io/asc.py): main.c write_to_file()'s layout, parsed back against the table."""
import numpy as np
import pandas as pd
import pytest

from jaxmedusa.io.asc import write_asc

REL = 5e-7  # "%e" keeps 7 significant digits: the printed value is within 5e-7 relative


def _table(n_times=3, n_vehicles=2, seed=0):
    """A trajectory table with distinct random values in every column."""
    rng = np.random.default_rng(seed)
    cols = ["x", "y", "z"] + [f"d{i}{j}" for i in range(1, 4) for j in range(1, 4)] + ["vx", "vy", "vz"] \
        + [f"w{i}{j}" for i in range(1, 4) for j in range(1, 4)] + ["energy", "energy_medusa"]
    rows = []
    for k in range(n_times):
        for v in range(1, n_vehicles + 1):
            rows.append({"time": 0.01 * k, "vehicle": v, **dict(zip(cols, rng.normal(size=len(cols)) * 10.0))})
    t = pd.DataFrame(rows)
    for i in range(1, 4):  # directors near the identity (positive d11, d33) as in a real run
        t[f"d{i}{i}"] = 1.0 + 0.01 * t[f"d{i}{i}"]
    return t.sample(frac=1.0, random_state=1)  # row order must not matter


def test_line_format_is_main_c_printf(tmp_path):
    # one vehicle, one sample, hand-chosen values: the exact bytes fprintf("%e\t") writes
    t = pd.DataFrame([{"time": 0.0, "vehicle": 1, "x": 1.5, "y": -2.0, "z": 0.05, "d11": 1.0, "d12": 0.0, "d13": 0.0,
                       "d21": 0.0, "d22": 1.0, "d23": 0.0, "d31": 0.0, "d32": 0.0, "d33": 1.0, "vx": 3.0, "vy": 4.0,
                       "vz": 0.0, "w11": 0.0, "w12": 0.0, "w13": 0.0, "w21": 0.0, "w22": 0.0, "w23": 0.0,
                       "w31": 0.0, "w32": 0.0, "w33": 1e-3, "energy": 5.0, "energy_medusa": 123456.789}])
    write_asc(t, tmp_path)
    d = (tmp_path / "director.asc").read_text()
    assert d == ("0.000000e+00\t1.500000e+00\t-2.000000e+00\t5.000000e-02\t1.000000e+00\t0.000000e+00\t"
                 "0.000000e+00\t0.000000e+00\t1.000000e+00\t0.000000e+00\t0.000000e+00\t0.000000e+00\t"
                 "1.000000e+00\t\n")
    assert (tmp_path / "velocity.asc").read_text().endswith("\t0.000000e+00\t1.000000e-03\t\n")
    assert (tmp_path / "energy.asc").read_text() == "0.000000e+00\t1.234568e+05\t\n"
    # heading atan2(0, 1) = 0, pitch = roll = 0, speed sqrt(3^2 + 4^2) = 5
    assert (tmp_path / "path.asc").read_text() == (
        "0.000000e+00\t1\t0\t0\t1.500000e+00\t-2.000000e+00\t5.000000e-02\t0.000000e+00\t0.000000e+00\t"
        "0.000000e+00\t0\t5.000000e+00\t0 0 0 0 0 0 0 \n")


def test_files_parse_back_to_the_table(tmp_path):
    t = _table()
    write_asc(t, tmp_path)
    s = t.sort_values(["time", "vehicle"])
    director = np.loadtxt(tmp_path / "director.asc")
    velocity = np.loadtxt(tmp_path / "velocity.asc")
    energy = np.loadtxt(tmp_path / "energy.asc")
    assert director.shape == velocity.shape == (3, 1 + 2 * 12) and energy.shape == (3, 3)
    names_d = ["x", "y", "z"] + [f"d{i}{j}" for i in range(1, 4) for j in range(1, 4)]
    names_v = ["vx", "vy", "vz"] + [f"w{i}{j}" for i in range(1, 4) for j in range(1, 4)]
    for k, (time, rows) in enumerate(s.groupby("time")):
        assert director[k, 0] == pytest.approx(time, rel=REL, abs=1e-300)
        for v in (1, 2):
            row = rows[rows["vehicle"] == v].iloc[0]
            block = slice(1 + 12 * (v - 1), 1 + 12 * v)  # 12 columns per vehicle, vehicle 1 first
            np.testing.assert_allclose(director[k, block], row[names_d].to_numpy(float), rtol=REL)
            np.testing.assert_allclose(velocity[k, block], row[names_v].to_numpy(float), rtol=REL)
            assert energy[k, v] == pytest.approx(row["energy_medusa"], rel=REL)


def test_path_angles_and_speed_are_each_rows_own(tmp_path):
    # main.c computes them from the buffer's last row; here every row has its own values,
    # compared with the angle formulas written out by hand (report eq. for heading: the
    # angle of d1's horizontal part; pitch and roll as main.c's atan2 expressions).
    t = _table(n_times=4)
    write_asc(t, tmp_path)
    path = np.loadtxt(tmp_path / "path.asc", usecols=range(12))
    assert path.shape == (8, 12)
    s = t.sort_values(["time", "vehicle"])
    np.testing.assert_array_equal(path[:, 1], s["vehicle"].to_numpy())
    np.testing.assert_array_equal(path[:, [2, 3, 10]], 0.0)  # the "0\t0\t" and segment id fields
    np.testing.assert_allclose(path[:, 4:7], s[["x", "y", "z"]].to_numpy(), rtol=REL)
    d11, d12, d31, d32, d33 = (s[c].to_numpy() for c in ("d11", "d12", "d31", "d32", "d33"))
    h = np.hypot(d11, d12)
    np.testing.assert_allclose(path[:, 7], np.arctan2(d12, d11), rtol=REL, atol=1e-12)
    np.testing.assert_allclose(path[:, 8], np.arctan2((d31 * d11 + d12 * d32) / h, d33), rtol=REL, atol=1e-12)
    np.testing.assert_allclose(path[:, 9], np.arctan2((d12 * d31 - d11 * d32) / h, d33), rtol=REL, atol=1e-12)
    np.testing.assert_allclose(path[:, 11], np.hypot(s["vx"], s["vy"]), rtol=REL)
    assert len(set(np.round(path[:, 7], 6))) == 8  # no two rows share a heading (unlike main.c's bug)


def test_several_scenarios_are_refused(tmp_path):
    t = pd.concat([_table().assign(scenario=0), _table().assign(scenario=1)])
    with pytest.raises(ValueError, match="scenario"):
        write_asc(t, tmp_path)


def test_docs_example_runs_as_written(tmp_path, monkeypatch):
    """docs/asc-files.md's Python example, run verbatim (its import once named a module that
    does not exist) on a table saved where it reads one: it writes the four files there."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "asc-files.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    (table_path,) = re.findall(r'read_parquet\("([^"]+)"\)', code)  # where the example reads a run's table
    monkeypatch.chdir(tmp_path)
    (tmp_path / table_path).parent.mkdir(parents=True)
    _table().to_parquet(tmp_path / table_path)
    exec(compile(code, "docs/asc-files.md", "exec"), {})
    written = sorted(p.name for p in (tmp_path / table_path).parent.glob("*.asc"))
    assert written == ["director.asc", "energy.asc", "path.asc", "velocity.asc"]
