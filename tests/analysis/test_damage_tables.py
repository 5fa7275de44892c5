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


def _row_writes(nb, nv, rng, n_writing):
    """A batch's RowWrite [nb, nv]: n_writing vehicles write, at random faces, force points,
    widths and residuals."""
    from jaxmedusa.analysis.damage import RowWrite
    write = np.zeros(nb * nv, bool)
    write[rng.choice(nb * nv, n_writing, replace=False)] = True
    shape = (nb, nv)
    return RowWrite(write=jnp.asarray(write.reshape(shape)), slot=jnp.zeros(shape, jnp.int32),
                    face=jnp.asarray(rng.integers(0, 4, shape), jnp.int32),
                    centre=jnp.asarray(rng.uniform(-1.0, 1.0, shape)), width=jnp.asarray(rng.uniform(0.1, 1.5, shape)),
                    residual=jnp.asarray(rng.uniform(0.0, 0.3, shape)))


def test_rows_written_in_place_take_the_residual_inside_the_engaged_interval():
    """write_rows by hand: the front face of a car with 0.8 m lateral semi-axis has its 32
    stations at y_i = 0.8 (1 - 2 (i + 1/2) / 32) = 0.775 - 0.05 i m; a contact centred at
    y = 0.2 m, 0.3 m wide, engages |y_i - 0.2| <= 0.15 m: stations 9..14 (0.325 .. 0.075 m, the
    interval's edges 0.025 m from the nearest stations). They take max(old, residual 0.1 m):
    0.1, except station 11, which holds 0.25 m already; every other station of the batch, and
    the vehicle that does not write, keep their values exactly."""
    from jaxmedusa.analysis.damage import RowWrite, write_rows
    axes = jnp.tile(jnp.array([2.0, 0.8, 0.65]), (2, 2, 1))  # [B = 2, V = 2, 3]
    old = np.zeros((2, 2, 1, 4, N_BINS))
    old[1, 0, 0, FRONT, 11] = 0.25
    old[1, 1, 0, FRONT, :] = 0.05  # the vehicle that does not write
    rows = RowWrite(write=jnp.array([[False, False], [True, False]]), slot=jnp.zeros((2, 2), jnp.int32),
                    face=jnp.full((2, 2), FRONT, jnp.int32), centre=jnp.full((2, 2), 0.2),
                    width=jnp.full((2, 2), 0.3), residual=jnp.full((2, 2), 0.1))
    expect = old.copy()
    expect[1, 0, 0, FRONT, 9:15] = [0.1, 0.1, 0.25, 0.1, 0.1, 0.1]
    np.testing.assert_array_equal(np.asarray(write_rows(jnp.asarray(old), rows, axes)), expect)


def test_rows_written_in_place_are_the_dense_select_to_the_bit():
    """write_rows (the batch's rows, in place, a round of ROW_ROUND writers at a time) against
    dense_rows (every station of every scenario selected), bit for bit: 40 writers among
    64 x 2 vehicles (three rounds, the last one partly padding), all four faces."""
    import jax
    from jaxmedusa.analysis.damage import dense_rows, write_rows
    rng = np.random.default_rng(7)
    nb, nv = 64, 2
    rows = _row_writes(nb, nv, rng, 40)
    axes = jnp.asarray(np.tile([2.3, 0.9, 0.7], (nb, nv, 1)) * rng.uniform(0.8, 1.2, (nb, nv, 1)))
    old = jnp.asarray(rng.uniform(0.0, 0.2, (nb, nv, 1, 4, N_BINS)))
    dense = jax.vmap(dense_rows)(old, rows, axes)
    assert int(jnp.sum(dense != old)) > 40  # the writers changed stations
    np.testing.assert_array_equal(np.asarray(jax.jit(write_rows)(old, rows, axes)), np.asarray(dense))
