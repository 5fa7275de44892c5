"""Values (not only names) of the result tables: trajectory heading/pitch/roll against rotations
built by hand, and contact_events.parquet of a collinear rear-end against the time the two
superellipsoids first touch, computed from their support function."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import polar
from scipy.spatial.transform import Rotation

from jaxmedusa.io import trajectory_table
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.run import run_scenario

from helpers import EXAMPLES


def rz(a):
    return Rotation.from_euler("z", a).as_matrix()


def test_heading_pitch_roll_of_known_rotations():
    """MEDUSA's angles (main.c) of directors F = R (columns d_i = R E_i): for R = Rz(psi) Ry(theta)
    the heading is psi and the pitch theta; for R = Rz(psi) Rx(phi) the roll is phi (by hand:
    d1 = (c_psi c_theta, s_psi c_theta, -s_theta), d3 = (c_psi s_theta, s_psi s_theta, c_theta),
    so atan2(d12, d11) = psi and (d31 d11 + d12 d32) / |d1_xy| = s_theta)."""
    cases = [(30.0, 0.0, 0.0), (-120.0, 5.0, 0.0), (170.0, 0.0, -4.0), (45.0, -2.5, 0.0), (0.0, 0.0, 3.0)]
    F = []
    for psi, theta, phi in cases:
        R = Rotation.from_euler("ZYX", [psi, theta, phi], degrees=True).as_matrix()
        F.append(R)
    n = len(cases)
    samples = SimpleNamespace(saved=np.ones((1, n), bool), t=np.arange(n, dtype=float)[None],
                              r=np.zeros((1, n, 1, 3)), F=np.array(F)[None, :, None], v=np.zeros((1, n, 1, 3)),
                              W=np.zeros((1, n, 1, 3, 3)), energy=np.zeros((1, n, 1)),
                              energy_medusa=np.zeros((1, n, 1)))
    table = trajectory_table(samples, np.ones((1, 1), bool)).to_pandas()
    expected = np.array(cases)
    # exact rotations: equal to the rounding of atan2 and the degree factor (~1e-14 deg)
    np.testing.assert_allclose(table[["heading", "pitch", "roll"]].to_numpy(), expected, atol=1e-10)


REAR_END = """
name = "collinear"
[medusa]
folder = "{folder}"
[overrides.vehicles.2]
x = {x2}
y = 0.0
speed = 20.0
[simulation]
end_time = 0.05
save_every = 0.005
contact_geometry = "superellipsoid"  # compiles in seconds (medusa_search, the MEDUSA law's default, ~40 s)
[road]
flat = true
"""
GAP = 0.05  # [m] between the bumpers along the axis (semi-axis a1 each)
CLOSING = 2.0  # [m/s] 22 - 20


@pytest.fixture(scope="module")
def collinear(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("collinear")
    model = read_models(EXAMPLES / "offset" / "model.dat")[0]
    x2 = model.contact_dims[0] + GAP
    path = tmp / "collinear.toml"
    path.write_text(REAR_END.format(folder=(EXAMPLES / "offset").as_posix(), x2=x2))
    out = run_scenario(path, out_root=tmp)
    return model, x2, out, pd.read_parquet(out.out_dir / "trajectory.parquet"), \
        pd.read_parquet(out.out_dir / "contact_events.parquet")


def test_contact_events_of_a_collinear_rear_end(collinear):
    model, x2, out, traj, events = collinear
    first = events.iloc[0]
    assert (first["vehicle_a"], first["vehicle_b"], first["episode"]) == (1, 2, 1)
    # By hand: identical convex bodies in the same orientation, one translated along E1 by d,
    # first touch when d = 2 h(E1), h the support function of the body: for the superellipsoid
    # |y|_p = 1, p = 2/eps = 5, mapped by B = F diag(a), h(u) = |B^T u|_q with 1/p + 1/q = 1.
    # F is the model's equilibrium directors (the pitch makes h(E1) > a1).
    p = 2.0 / 0.4
    q = p / (p - 1.0)
    B = np.asarray(model.eq_F) * (0.5 * np.asarray(model.contact_dims))[None, :]
    h = np.sum(np.abs(B.T @ [1.0, 0.0, 0.0]) ** q) ** (1.0 / q)
    t_touch = (x2 - 2.0 * h) / CLOSING
    # MEDUSA's broad phase (contact.c) reports nothing until the centres are closer than the
    # sum of the largest semi-axes, 2 a1: at GAP / CLOSING = 0.025 s, after the pitched
    # bodies have begun to overlap (t_touch = 0.015 s): contact starts at the broad phase,
    # already 2 h - 2 a1 (~2 cm) deep (the original program's first contact in the offset
    # example is 1.95 cm deep, tests/data/offset_trace_first_contact.txt).
    a1 = 0.5 * model.contact_dims[0]
    t_broad = (x2 - 2.0 * a1) / CLOSING
    assert t_touch < t_broad
    # Contact is detected on the predicted positions, one step (5e-5 s) ahead, and the event
    # time is the end of the accepted step: within 2 steps.
    assert first["start"] == pytest.approx(t_broad, abs=2 * out.settings.dt)
    # the deepest gap of the episode is at least the overlap at detection (half of it leaves
    # room for the normal's tilt and the suspension motion)
    assert first["min_phi1"] < -0.5 * (2.0 * h - 2.0 * a1)
    # MEDUSA's law kicks the bodies apart after a step in contact, so the episode has ended
    # (an accepted step without contact) before the run's end: a finite end after the start
    assert np.isfinite(first["end"]) and first["start"] < first["end"] <= out.settings.end_time + 1e-12
    # The geometry of the episode's first step, by symmetry: identical bodies in the same
    # orientation on the E1 axis meet halfway between their centres, with the normal in the
    # E1-E3 plane pointing forward. The point is that of the predicted state, one step
    # (5e-5 s at ~21 m/s: 1e-3 m) ahead of the sampled centres, interpolated linearly
    # between 0.01 s samples: 2e-3 m.
    x1, x2_now = (np.interp(first["start"], traj.time[traj.vehicle == n], traj.x[traj.vehicle == n]) for n in (1, 2))
    assert first["geometry_time"] == first["start"]
    assert first["point_x"] == pytest.approx(0.5 * (x1 + x2_now), abs=2e-3)
    assert abs(first["point_y"]) < 1e-9 and abs(first["normal_y"]) < 1e-9 and first["normal_x"] > 0.99


def test_trajectory_angles_of_the_run(collinear):
    """The cars drive straight along E1: heading and roll 0 by symmetry (y = 0 for both); the
    pitch equals the pitch of the rotation part of F (polar decomposition, Z-Y-X angles) to
    first order in the departure of F from a rotation: main.c's formula reads d1 and d3
    separately, which differ from R's columns by ~|F^T F - I| (here ~1e-4, mostly the 4-digit
    equilibrium directors of model.dat: d1.d3 = 1e-4), so to |F^T F - I| rad."""
    model, x2, out, traj, events = collinear
    # before contact symmetric to rounding (measured 2e-19 deg); after it, the contact normal
    # on the flat faces is fixed only to ~1e-5 (docs/medusa-notes.md, Contact, limit (ii)): a lateral impulse ~1e-5
    # of the ~4 m/s exchanged turns the car by ~1e-6 rad (6e-5 deg) in 25 ms; allow 1e-4 deg
    before = traj["time"] < events.iloc[0]["start"] - 1e-9
    np.testing.assert_allclose(traj.loc[before, ["heading", "roll"]].to_numpy(), 0.0, atol=1e-12)  # rounding
    np.testing.assert_allclose(traj[["heading", "roll"]].to_numpy(), 0.0, atol=1e-4)
    for _, row in traj.iloc[:: max(1, len(traj) // 6)].iterrows():
        F = np.array([[row[f"d{i}{j}"] for i in (1, 2, 3)] for j in (1, 2, 3)])  # columns d_i
        R, _ = polar(F)
        psi, theta, phi = Rotation.from_matrix(R).as_euler("ZYX", degrees=True)
        strain = np.max(np.abs(F.T @ F - np.eye(3)))
        assert row["pitch"] == pytest.approx(theta, abs=np.degrees(strain))
        assert abs(row["pitch"]) > 1e-3  # the equilibrium pitch is not zero: the check has content
    assert set(traj["vehicle"]) == {1, 2}
    # samples on the exact 5 ms grid up to end_time, although contact shrank the steps off
    # it (solver/save_grid.py; main.c's save times would drift here)
    times = np.unique(traj["time"])
    np.testing.assert_array_equal(times, np.arange(len(times)) * 0.005)
    assert times[-1] == out.settings.end_time


def test_arrow_array_equals_pyarrows_own_conversion():
    """io.tables.arrow_array (built from the buffer) against pa.array, for every dtype the
    tables use, strided and empty inputs included."""
    import pyarrow as pa

    from jaxmedusa.io.tables import arrow_array

    rng = np.random.default_rng(1)
    m = rng.normal(size=(7, 3, 3))
    cases = [m[:, 0, 2], np.arange(5, dtype=np.int32), np.arange(-3, 4, dtype=np.int64),
             rng.random(13) > 0.5, np.zeros(0), np.zeros(0, bool), np.array([np.nan, np.inf, -0.0])]
    for x in cases:
        got, ref = arrow_array(x), pa.array(x)
        assert got.type == ref.type and got.null_count == ref.null_count == 0, x
        # (Arrow's equals treats NaN as unequal to itself; numpy's array_equal does not)
        np.testing.assert_array_equal(got.to_numpy(zero_copy_only=False), ref.to_numpy(zero_copy_only=False))
    with pytest.raises(ValueError, match="1-D"):
        arrow_array(m)
    # nulls, strings (UTF-8 included) and a requested type, as the sweep's tables hold them
    x, mask = m[:, 1, 1], np.array([True, False, False, True, False, False, True])
    for got, ref in [(arrow_array(x, mask=mask), pa.array(x, mask=mask)),
                     (arrow_array(x, mask=np.zeros(7, bool)), pa.array(x, mask=np.zeros(7, bool))),
                     (arrow_array(["ok", "energy_gain", "", "Δv"]), pa.array(["ok", "energy_gain", "", "Δv"])),
                     (arrow_array([3, 1], type=pa.int32()), pa.array([3, 1], type=pa.int32())),
                     (arrow_array([], type=pa.string()), pa.array([], type=pa.string())),
                     (arrow_array([0.5, 2], type=pa.float64()), pa.array([0.5, 2], type=pa.float64()))]:
        assert got.type == ref.type and got.null_count == ref.null_count and got.equals(ref), (got, ref)


def test_a_run_writes_its_tables_without_importing_pandas(tmp_path):
    """`jaxmedusa run` writes trajectory, contact events and crash pulse, and `jaxmedusa sweep`
    its scenario and damage rows, with pyarrow alone (pandas takes 0.5-0.6 s to import): in a
    fresh interpreter, the writers on small hand-made inputs leave pandas unimported, and the
    files read back."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        from types import SimpleNamespace
        from jaxmedusa.io.tables import write_columns, write_pulse, write_trajectory
        S, V = 3, 2
        samples = SimpleNamespace(saved=np.ones((1, S), bool), t=np.arange(S)[None] * 0.01,
                                  r=np.zeros((1, S, V, 3)), F=np.tile(np.eye(3), (1, S, V, 1, 1)),
                                  v=np.ones((1, S, V, 3)), W=np.zeros((1, S, V, 3, 3)),
                                  energy=np.ones((1, S, V)), energy_medusa=np.ones((1, S, V)))
        write_trajectory(samples, SimpleNamespace(valid=np.ones((1, V), bool)), r"{tmp_path}/t.parquet")
        write_columns(dict(vehicle_a=np.array([1]), start=np.array([0.5])), r"{tmp_path}/e.parquet")
        write_pulse(dict(vehicle=np.array([1, 1]), in_contact=np.array([True, False]), ax=np.zeros(2)),
                    r"{tmp_path}/p.parquet")
        # and a sweep's: its scenario rows (a null among them) and damage rows
        from jaxmedusa.io.tables import scenarios_table, write_damage, write_table
        metrics = dict(status=np.zeros(2), end_time=np.ones(2), steps=np.array([5, 6]),
                       first_contact_time=np.array([[0.5, 0.5], [-1.0, -1.0]]))
        write_table(scenarios_table([1, 2], dict(speed=np.array([20.0, 21.0])), metrics, 2, ["first_contact_time"]),
                    r"{tmp_path}/s.parquet")
        row = dict(vehicle=1, collision=1, **{{f"c{{i}}": 0.1 * i for i in range(1, 7)}}, damage_width=1.5,
                   damage_offset=0.0, area="F", crash3_energy=1e4, max_residual_crush=0.6, delta_v=5.0,
                   pdof_clock=12, cdc="12FDEW2")
        write_damage([row], r"{tmp_path}/d.parquet")
        print("pandas" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert len(pd.read_parquet(tmp_path / "t.parquet")) == 6
    assert pd.read_parquet(tmp_path / "p.parquet")["in_contact"].tolist() == [True, False]
    rows = pd.read_parquet(tmp_path / "s.parquet")
    assert rows["status_name"].tolist() == ["ok", "ok"]
    assert rows["v1_first_contact_time"].isna().tolist() == [False, True]
    assert pd.read_parquet(tmp_path / "d.parquet")["cdc"].tolist() == ["12FDEW2"]
