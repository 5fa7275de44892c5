"""analysis/damage.py without a simulation: CDC strings from codes (SAE J224's seven
characters), the profile of hand-made station rows, and the tables that carry them
(scenarios_table's v{n}_cdc string column, damage.parquet, the plan view's crush points)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pyarrow.parquet as pq
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.crash3 import crash3_energy
from jaxmedusa.analysis.damage import (FRONT, LEFT, N_BINS, SLOTS, DamageState, cdc_string, damage_summary)
from jaxmedusa.io.tables import scenarios_table, write_damage
from jaxmedusa.plot.plan_view import crush_points


class Vehicle:  # the fields damage_summary reads of VehicleParams, one vehicle
    contact_axes = jnp.array([[2.0, 0.8, 0.65]])
    crush_a = jnp.array([[44e3, 40e3, 20e3]])
    crush_b = jnp.array([[550e3, 500e3, 350e3]])


def _state(face, row, normal):
    bins = jnp.zeros((1, SLOTS, 4, N_BINS)).at[0, 0, face].set(row)
    nrm = jnp.zeros((1, SLOTS, 3)).at[0, 0].set(normal)
    dv = jnp.zeros((1, SLOTS, 3)).at[0, 0].set(jnp.array([-10.0, 0.0, 0.0]))
    return DamageState(bins=bins, normal=nrm, dv_world=dv, dv_body=dv, collisions=jnp.array([1]),
                       last_contact=jnp.array([0.1]))


def test_cdc_strings():
    assert cdc_string([12, FRONT, 5, 0, 2]) == "12FDEW2"
    assert cdc_string([9, LEFT, 1, 0, 3]) == "09LPEW3"  # sides: F, P, B thirds
    assert cdc_string([11, FRONT, 0, 1, 1]) == "11FLEN1"
    assert cdc_string([12, FRONT, 5, 0, 0]) == ""  # nothing stays


def test_uniform_front_row_gives_flat_profile_and_crash3_energy():
    """Every front station at 0.3 m: C1..C6 = 0.3 m, L = 1.6 m (the 32 stations span the
    contact width), offset 0, CRASH3 energy w (A C + B C^2/2 + A^2/2B) by hand, CDC 12FDEW1
    (0.3 m < 0.4 m: zone 1), delta-V 10 m/s from the front (12 o'clock)."""
    s = damage_summary(_state(FRONT, jnp.full(N_BINS, 0.3), jnp.array([1.0, 0.0, 0.0])), Vehicle)
    np.testing.assert_allclose(np.asarray(s["profile"][0, 0]), 0.3, rtol=1e-12)
    assert float(s["width"][0, 0]) == pytest.approx(1.6) and float(s["offset"][0, 0]) == pytest.approx(0.0, abs=1e-12)
    assert float(s["crash3_energy"][0, 0]) == pytest.approx(1.6 * (44e3 * 0.3 + 550e3 * 0.09 / 2 + 44e3**2 / 1.1e6))
    assert cdc_string(s["cdc"][0, 0]) == "12FDEW1" and float(s["delta_v"][0, 0]) == pytest.approx(10.0)


def test_left_third_damage_is_located_left_and_narrow_profile_linear():
    """Crush on the left 8 of 32 stations (0.4 m from the left edge), rising linearly towards
    the edge: width 0.4 m, centre 0.6 m left of the centre line, location L, narrow (N: 0.4 m
    < 16 in), and C1..C6 the linear interpolation of the station values (C1 at the edge)."""
    row = jnp.zeros(N_BINS).at[:8].set(jnp.linspace(0.35, 0.0, 9)[:8] + 0.01)
    s = damage_summary(_state(FRONT, row, jnp.array([1.0, 0.0, 0.0])), Vehicle)
    assert float(s["width"][0, 0]) == pytest.approx(0.4) and float(s["offset"][0, 0]) == pytest.approx(0.6)
    cdc = cdc_string(s["cdc"][0, 0])
    assert cdc[2:4] == "FL" and cdc[5] == "N"
    idx = np.clip(-0.5 + np.linspace(0, 1, 6) * 8, 0, 7)  # the stations in bin units (ends: the edge stations)
    np.testing.assert_allclose(np.asarray(s["profile"][0, 0]), np.interp(idx, np.arange(8), np.asarray(row[:8])),
                               rtol=1e-12)
    c = np.asarray(s["profile"][0, 0])
    assert float(s["crash3_energy"][0, 0]) == pytest.approx(float(crash3_energy(c, 0.4, 44e3, 550e3)), rel=1e-12)


def test_cdc_column_and_damage_table(tmp_path):
    """scenarios_table writes v{n}_cdc as strings; damage.parquet keeps its rows and units."""
    metrics = {"status": np.zeros(2, np.int32), "end_time": np.ones(2), "steps": np.ones(2, np.int64),
               "cdc": np.array([[[12, 0, 5, 0, 2]], [[0, 0, 0, 0, 0]]], np.int32)}
    t = scenarios_table(np.arange(2), {}, metrics, 1, ["cdc"])
    assert t.column("v1_cdc").to_pylist() == ["12FDEW2", ""]
    row = {"vehicle": 1, "collision": 1, **{f"c{i}": 0.5 for i in range(1, 7)}, "damage_width": 1.6,
           "damage_offset": 0.0, "area": "F", "crash3_energy": 1.5e5, "max_residual_crush": 0.5, "delta_v": 17.0,
           "pdof_clock": 12, "cdc": "12FDEW2"}
    path = write_damage([row], tmp_path / "damage.parquet")
    back = pq.read_table(path)
    assert back.to_pylist() == [row]
    assert back.schema.field("c1").metadata[b"unit"] == b"m"


def test_crush_points_lie_on_the_crushed_face():
    """Front damage: the points are C behind the front face (x = a0 - C), C1 on the left."""
    row = {**{f"c{i}": 0.1 * i for i in range(1, 7)}, "damage_width": 1.0, "damage_offset": 0.2, "area": "F"}
    p = crush_points(row, [2.0, 0.8, 0.65])
    np.testing.assert_allclose(p[:, 0], 2.0 - 0.1 * np.arange(1, 7))
    np.testing.assert_allclose(p[[0, -1], 1], [0.7, -0.3])
