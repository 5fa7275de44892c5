"""Parquet tables (io/tables.py): values, masks, nulls and units, against hand-built samples."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from jaxmedusa.core.status import Status
from jaxmedusa.io.tables import metric_columns, scenarios_table, trajectory_table
from jaxmedusa.solver.simulate import Samples


def rot(yaw, pitch):
    """Directors as columns of R_z(yaw) R_y(pitch): d1 = (cos p, 0, -sin p) turned by `yaw`,
    i.e. nose down by `pitch`, which main.c's formula reports as positive pitch."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    Ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    return Rz @ Ry


def samples(b=2, s=3, v=2):
    F = np.broadcast_to(np.eye(3), (b, s, v, 3, 3)).copy()
    F[0, 1, 0] = rot(math.radians(30.0), math.radians(5.0))
    r = np.arange(b * s * v * 3, dtype=float).reshape(b, s, v, 3)
    vel = np.zeros((b, s, v, 3))
    vel[..., 0], vel[..., 1] = 3.0, 4.0
    saved = np.array([[True, True, False], [True, False, False]])
    return Samples(saved=saved, t=np.array([[0.0, 0.01, 0.0], [0.0, 0.0, 0.0]]), r=r, F=F, v=vel,
                   W=np.zeros((b, s, v, 3, 3)), energy=np.ones((b, s, v)), energy_medusa=np.zeros((b, s, v)))


def test_trajectory_rows_values_and_units():
    valid = np.array([[True, True], [True, False]])  # scenario 1 has one real vehicle
    t = trajectory_table(samples(), valid, ids=np.array([10, 11]))
    # rows: saved samples x valid vehicles = 2*2 + 1*1
    assert t.num_rows == 5 and t.column("sample_id").to_pylist() == [10, 10, 10, 10, 11]
    row = t.slice(2, 1).to_pylist()[0]  # scenario 0, sample 1, vehicle 1
    assert row["time"] == 0.01 and row["vehicle"] == 1
    # heading 30 deg and pitch 5 deg (nose down) by main.c's formulas; roll 0
    assert math.isclose(row["heading"], 30.0, abs_tol=1e-12) and math.isclose(row["pitch"], 5.0, abs_tol=1e-12)
    assert abs(row["roll"]) < 1e-12
    assert row["speed"] == 5.0  # hypot(3, 4)
    assert row["d11"] == math.cos(math.radians(30)) * math.cos(math.radians(5))  # component 1 of director 1
    assert t.schema.field("heading").metadata == {b"unit": b"deg"} and t.schema.field("x").metadata == {b"unit": b"m"}


def test_scenario_rows_nulls_and_status_labels():
    n, v = 3, 2
    metrics = {
        "status": np.array([Status.OK, Status.OFF_ROAD, 7]), "end_time": np.array([1.0, 0.5, 0.1]),
        "steps": np.array([10, 5, 1]),
        "first_contact_time": np.array([[0.2, -1.0], [-1.0, -1.0], [0.1, 0.3]]),
        "delta_v_vec": np.arange(n * v * 3, dtype=float).reshape(n, v, 3),
        "pdof_deg": np.array([[90.0, 0.0], [0.0, 0.0], [180.0, 270.0]]),
        "pdof_clock": np.array([[3, 0], [0, 0], [6, 9]]),
    }
    names = ["first_contact_time", "delta_v_vec", "pdof_deg"]
    t = scenarios_table(np.arange(n), {"vehicles.2.y": np.array([0.1, 0.2, 0.3])}, metrics, v, names)
    assert t.column("status_name").to_pylist() == ["ok", "off_road", "code7"]
    assert t.column("v1_first_contact_time").to_pylist() == [0.2, None, 0.1]  # -1: never touched -> null
    assert t.column("v2_pdof_deg").to_pylist() == [None, None, 270.0]  # clock 0: no force -> null
    assert metric_columns("delta_v_vec", 1) == ["v1_delta_v_x", "v1_delta_v_y", "v1_delta_v_z"]
    assert t.column("v2_delta_v_z").to_pylist() == [5.0, 11.0, 17.0]
    assert t.schema.field("v1_delta_v_x").metadata == {b"unit": b"m/s"}
    assert t.schema.field("vehicles.2.y").type == pa.float64()
